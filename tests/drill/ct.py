"""Constant-time check by the ctgrind method: native/tests/ct/ctgrind.c under valgrind
memcheck, one run per dispatch row, its XML report read back.

A finding is any memcheck error in a run: with the secrets marked undefined, "conditional
jump depends on uninitialised value" is a secret-dependent branch and "use of uninitialised
value" a secret-dependent address (a table lookup). Each finding is reported by its
innermost frame inside the library. `KNOWN_EXCEPTIONS` lists the rows that are not
constant time by design; every other row must have none.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "native"

# Rows that look up tables by secret bytes, by design, and say so (README: "The portable
# Camellia kernel uses lookup tables and is not constant-time"). Their findings are
# reported, and the check insists they are found: that proves the harness can fail.
KNOWN_EXCEPTIONS = {("camellia", "portable"): "S-box table lookups indexed by key and data bytes"}

# What valgrind 3.19's amd64 front end cannot decode (its CPUID hides them, so the
# dispatcher does not offer these rows under valgrind), for the report.
VALGRIND_LACKS = "AVX-512 (F/VL/BW/DQ/IFMA), SHA-NI, VAES, GFNI"

VALGRIND_ARGS = (
    "--error-exitcode=0",  # the XML is read instead; the exit status is ctgrind's own
    "--track-origins=yes",  # each finding says it came from a client request (a secret)
    "--num-callers=12",
    "--child-silent-after-fork=yes",
)


# Findings that are how memcheck models an instruction, not a secret-dependent branch or
# address, per architecture (where they have been shown to be): on s390x memcheck 3.19
# insists that VPERM's selector be defined (Iop_Perm8x16x2), so a register-only permute by
# a secret nibble (the vector Camellia's S-box, as pshufb/tbl/vperm elsewhere) is reported
# as "use of uninitialised value of size 16". No address or branch is 16 bytes wide; a
# secret-indexed load is reported at pointer size (8), a branch as UninitCondition, and
# both still fail the row. RELIABILITY.md has the five-line program that shows it.
VECTOR_OPERAND_ARTIFACT = {
    "s390x": "memcheck requires VPERM's selector to be defined (register-only permute, no "
    "address or branch)"
}


# In the AVX-512 emulation build (make -C native ctgrind-emu) an emulated instruction is C
# code in native/tests/emu/emu512.h: its GF(2^8) inverse reads a table and its IFMA checks
# the 52-bit input range with a branch, where the instructions do neither. A finding whose
# innermost library frame is there is the emulation's, not the row's: reported, not
# counted. Anything the row's own code does with a secret (a branch, an address) has its
# innermost frame in the row's file and still fails it.
EMULATION_FRAME = "tests/emu/emu512.h"


def is_emulation_artifact(finding: Finding) -> bool:
    return EMULATION_FRAME in finding.frame


def is_artifact(arch: str, finding: Finding) -> bool:
    return (
        arch in VECTOR_OPERAND_ARTIFACT
        and finding.kind == "UninitValue"
        and finding.what.rstrip().endswith("of size 16")
    )


@dataclass(frozen=True)
class Finding:
    kind: str  # memcheck's: UninitCondition (a branch), UninitValue (an address)
    what: str
    frame: str  # innermost frame in the library: function (file:line)
    origin: str  # where the undefined value came from


@dataclass
class RowResult:
    table: str
    row: str
    findings: list[Finding] = field(default_factory=list)
    answers_ok: bool = False
    seconds: float = 0.0
    log: str = ""
    # set when valgrind itself could not check the row (see not_covered_reason): the row is
    # reported as not covered, neither passed nor failed
    not_covered: str = ""
    # findings set aside by is_artifact (reported, not counted)
    artifacts: list[Finding] = field(default_factory=list)

    def set_aside(self, arch: str) -> None:
        """Move the findings that are memcheck's model of an instruction on `arch`
        (VECTOR_OPERAND_ARTIFACT) into `artifacts`. A known exception keeps all of its own."""
        if self.exception:
            return
        self.artifacts += [f for f in self.findings if is_artifact(arch, f)]
        self.findings = [f for f in self.findings if not is_artifact(arch, f)]

    def set_aside_emulation(self) -> None:
        """Move the findings inside the AVX-512 emulation (is_emulation_artifact) into
        `artifacts`: for runs of the ctgrind-emu build."""
        self.artifacts += [f for f in self.findings if is_emulation_artifact(f)]
        self.findings = [f for f in self.findings if not is_emulation_artifact(f)]

    @property
    def key(self) -> tuple[str, str]:
        return (self.table, self.row)

    @property
    def exception(self) -> str | None:
        return KNOWN_EXCEPTIONS.get(self.key)

    @property
    def verdict(self) -> str:
        if self.not_covered:
            return "not covered"
        if not self.answers_ok:
            return "FAILED (wrong answers or crash)"
        if self.exception:
            return "known exception" if self.findings else "FAILED (exception not detected)"
        return "constant time" if not self.findings else "FAILED (secret-dependent)"

    @property
    def ok(self) -> bool:
        return self.verdict in ("constant time", "known exception", "not covered")


def _make_binary(target: str, print_target: str, args: list[str]) -> Path:
    """`make target args` in native/, then the binary's path as `make print_target` says."""
    proc = subprocess.run(
        ["make", "-s", "-C", str(NATIVE), f"-j{os.cpu_count() or 2}", target, *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"make {target} {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return Path(
        subprocess.run(
            ["make", "-s", "--no-print-directory", "-C", str(NATIVE), print_target, *args],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )


def build(cc: str | None = None, declassify: bool = True, assume: Iterable[str] = ()) -> Path:
    """Build native/build/<triple>-ctgrind[-nodeclassify][-assume-...]/ctgrind; returns its
    path. `declassify=False` leaves out AC_DECLASSIFY, so the tag check's branch must show;
    `assume` claims CPU features the environment hides (make ctgrind CT_ASSUME). A cross
    build links dynamically: valgrind then loads the target's own libc, whose
    suppressions it knows (a static glibc gives false reports of its own)."""
    assume = sorted(assume)
    args = [
        *([f"CC={cc}", "STATIC=0"] if cc else []),
        *([] if declassify else ["CT_DECLASSIFY=0"]),
        *([f"CT_ASSUME={','.join(assume)}"] if assume else []),
    ]
    return _make_binary("ctgrind", "print-ctgrind-bin", args)


def build_emulated() -> Path:
    """Build native/build/<triple>-emu512-ctgrind/ctgrind (make ctgrind-emu): the AVX-512
    and GFNI rows as plain C through the emulation, so valgrind runs them; returns its path."""
    return _make_binary("ctgrind-emu", "print-ctgrind-emu-bin", [])


def without_unwind_tables(binary: Path, triple: str) -> Path:
    """A copy of a cross-built ctgrind without .eh_frame (`<triple>-objcopy`), for valgrind
    3.19 under qemu-user: GCC 12 describes the frames of the arm64 SVE kernels with CFA
    expressions over the VG register (DW_OP_bregx 46), on which valgrind's CFI reader
    asserts (m_debuginfo/readdwarf.c:2761) while loading the executable, before any row
    runs. The code, its addresses and the DWARF line tables are unchanged (only the
    unwinding tables go), so each finding's innermost frame and origin still name the
    function and line; only the outer frames of a stack may be missing."""
    out = binary.with_name(binary.name + "-nocfi")
    subprocess.run(
        [
            f"{triple}-objcopy",
            "--remove-section=.eh_frame",
            "--remove-section=.eh_frame_hdr",
            str(binary),
            str(out),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


def list_rows(prefix: list[str], binary: Path) -> list[tuple[str, str]]:
    """Rows runnable as `prefix` presents the CPU (prefix: [] for the host, valgrind's
    launcher for valgrind's view of it)."""
    proc = subprocess.run(
        [*prefix, str(binary), "--list"], capture_output=True, text=True, check=True, timeout=600
    )
    pairs = [line.split() for line in proc.stdout.splitlines()]
    return [(p[0], p[1]) for p in pairs if len(p) == 2 and not p[0].startswith("#")]


def cpu_features(prefix: list[str], binary: Path, timeout: float = 600) -> list[str]:
    """The CPU features as `prefix` presents them (ctgrind --list's first line). Raises
    CalledProcessError or TimeoutExpired when that does not run (start_failure says why)."""
    proc = subprocess.run(
        [*prefix, str(binary), "--list"],
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
    )
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("# ")), "")
    return line.split(":", 1)[1].split() if ":" in line else []


def _text(node: ET.Element | None, tag: str) -> str:
    found = node.find(tag) if node is not None else None
    return found.text or "" if found is not None else ""


def _frame(frame: ET.Element) -> str:
    """function (path:line), the path relative to native/src or native/ where it is there."""
    fn, file, line = _text(frame, "fn"), _text(frame, "file"), _text(frame, "line")
    if not file:
        return fn or _text(frame, "ip")
    path = Path(_text(frame, "dir")) / file
    for base in (NATIVE / "src", NATIVE):
        if path.is_relative_to(base):
            path = path.relative_to(base)
            break
    return f"{fn} ({path}:{line})"


def _finding(error: ET.Element) -> Finding:
    """One <error>, by its innermost frame outside the harness (the library's own code, or
    libc when the library called it)."""
    frames = error.find("stack")
    chosen = None
    for frame in frames if frames is not None else []:
        if not _text(frame, "file").endswith("ctgrind.c"):
            chosen = frame
            break
    if chosen is None and frames is not None and len(frames):
        chosen = frames[0]
    origin_stack = error.find("auxwhat/../stack[2]")
    origin = ""
    aux = [a.text or "" for a in error.findall("auxwhat")]
    if aux:
        origin = aux[0]
    if origin_stack is not None and len(origin_stack):
        origin += ": " + _frame(origin_stack[0])
    what = _text(error, "what") or _text(error.find("xwhat"), "text")
    return Finding(
        _text(error, "kind"), what, _frame(chosen) if chosen is not None else "?", origin
    )


def parse_report(xml_text: str) -> list[Finding]:
    """Every <error> of a memcheck XML report."""
    return [_finding(error) for error in ET.fromstring(xml_text).iter("error")]


def parse_rows(xml_text: str) -> dict[tuple[str, str], list[Finding]]:
    """The <error>s of a report of several rows, each under the row whose marker (ctgrind's
    `ctgrind-row TABLE ROW` client message) precedes it."""
    by_row: dict[tuple[str, str], list[Finding]] = {}
    current: tuple[str, str] | None = None
    for node in ET.fromstring(xml_text):
        if node.tag == "clientmsg":
            words = _text(node, "text").split()
            if len(words) == 3 and words[0] == "ctgrind-row":
                current = (words[1], words[2])
                by_row.setdefault(current, [])
        elif node.tag == "error":
            by_row.setdefault(current or ("?", "?"), []).append(_finding(node))
    return by_row


def run_row(
    prefix: list[str], binary: Path, table: str, row: str, workdir: Path, timeout: float = 900
) -> RowResult:
    import time

    workdir.mkdir(parents=True, exist_ok=True)
    xml_file = workdir / f"{table}-{row}.xml"
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [
                *prefix,
                *VALGRIND_ARGS,
                "--xml=yes",
                f"--xml-file={xml_file}",
                str(binary),
                table,
                row,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = _decoded(exc.stdout) + _decoded(exc.stderr)
        return RowResult(
            table, row, seconds=time.monotonic() - start, log=out + f"\n{TIMED_OUT} {timeout:.0f} s"
        )
    result = RowResult(table, row, seconds=time.monotonic() - start, log=proc.stdout + proc.stderr)
    result.log += f"\n(exit status {proc.returncode})"
    result.answers_ok = proc.returncode == 0 and "answers ok" in proc.stdout
    if xml_file.exists() and xml_file.stat().st_size:
        result.findings = parse_report(xml_file.read_text(errors="replace"))
    elif result.answers_ok:
        result.answers_ok = False
        result.log += "\n(no valgrind XML report)"
    return result


def run_batch(
    prefix: list[str],
    binary: Path,
    rows: list[tuple[str, str]],
    workdir: Path,
    timeout: float = 1800,
) -> list[RowResult]:
    """Several rows in one valgrind process (its start-up costs seconds), told apart by
    ctgrind's markers. A finding in code two rows share is reported under the first."""
    import time

    workdir.mkdir(parents=True, exist_ok=True)
    xml_file = workdir / f"batch-{'-'.join(f'{t}.{r}' for t, r in rows)[:150]}.xml"
    start = time.monotonic()
    proc = subprocess.run(
        [
            *prefix,
            *VALGRIND_ARGS,
            "--xml=yes",
            f"--xml-file={xml_file}",
            str(binary),
            *(word for row in rows for word in row),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    seconds = (time.monotonic() - start) / max(1, len(rows))
    log = proc.stdout + proc.stderr
    by_row = (
        parse_rows(xml_file.read_text(errors="replace"))
        if xml_file.exists() and xml_file.stat().st_size
        else {}
    )
    results = []
    for table, row in rows:
        result = RowResult(
            table, row, seconds=seconds, log=log, findings=by_row.get((table, row), [])
        )
        # each row says its own verdict on the answers; a crash leaves the rest unsaid
        result.answers_ok = f"ctgrind {table}/{row}: answers ok" in proc.stdout and bool(by_row)
        results.append(result)
    stray = by_row.get(("?", "?"))
    if stray:  # before any marker: the harness itself, charged to the first row
        results[0].findings = stray + results[0].findings
    return results


def run_all(
    rows: Iterable[tuple[str, str]],
    binary: Path,
    workdir: Path,
    prefix: list[str] | None = None,
    jobs: int = 2,
    progress: Callable[[RowResult], None] | None = None,
    batched: bool = False,
    deadline: float | None = None,
    row_timeout: float = 900,
) -> list[RowResult]:
    """One valgrind process per row, `jobs` at a time; `batched`: the rows split over
    `jobs` processes instead (the suite's short form: a valgrind start-up per row costs
    more than most rows' checks). `deadline` (time.monotonic()): a row not started by
    then is not run, and reported as not covered (valgrind under qemu-user is slow)."""
    import time

    prefix = prefix if prefix is not None else valgrind()
    rows = list(rows)

    def one(r: tuple[str, str]) -> RowResult:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left < 5:
                return RowResult(r[0], r[1], not_covered="not run: the time budget was spent")
        else:
            left = row_timeout
        result = run_row(prefix, binary, r[0], r[1], workdir, timeout=min(row_timeout, left))
        if progress:
            progress(result)
        return result

    if batched:
        # the slow rows (the AEAD, Camellia, SHA-512) spread over the processes
        chunks = [rows[i :: max(1, jobs)] for i in range(max(1, jobs))]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            done = {
                r.key: r
                for batch in pool.map(
                    lambda c: run_batch(prefix, binary, c, workdir), [c for c in chunks if c]
                )
                for r in batch
            }
        return [done[r] for r in rows]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, rows))


def valgrind() -> list[str]:
    """The host's memcheck, as a command prefix."""
    path = shutil.which("valgrind")
    if path is None:
        raise FileNotFoundError("valgrind is not installed (Debian: valgrind; scripts/setup.sh)")
    return [path, "--tool=memcheck"]


def valgrind_version(prefix: list[str] | None = None) -> str:
    out = subprocess.run(
        [*(prefix or valgrind()), "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return re.sub(r"^valgrind-", "", out)


# ---- foreign architectures: the target's own valgrind under qemu-user ---------------------


@dataclass(frozen=True)
class Foreign:
    """Debian's valgrind for another architecture, run under qemu-user from a foreign tree
    (scripts/foreign-tree.sh ARCH DIR valgrind). The tool binary is started directly (the
    `valgrind` launcher would exec it, which qemu-user without binfmt cannot); it reads
    VALGRIND_LAUNCHER and VALGRIND_LIB as the launcher would set them, and loads the
    client's dynamic loader from the tree through qemu's -L."""

    arch: str  # archcrypt's name: arm64, ppc64le, s390x
    debian: str  # the tree's Debian architecture
    triple: str
    qemu: str
    valgrind_arch: str  # memcheck-<this>-linux
    models: tuple[str, ...]
    # further CPU models for the constant-time drill only (see FOREIGN)
    ct_models: tuple[str, ...] = ()

    def tree(self) -> Path:
        return ROOT / "build" / "drill" / "foreign" / self.debian

    def prefix(self, cpu: str) -> list[str]:
        tree = self.tree()
        lib = tree / "usr" / "libexec" / "valgrind"
        return [
            "env",
            f"VALGRIND_LAUNCHER={tree}/usr/bin/valgrind",
            f"VALGRIND_LIB={lib}",
            self.qemu,
            "-cpu",
            cpu,
            "-L",
            str(tree),
            str(lib / f"memcheck-{self.valgrind_arch}-linux"),
        ]

    def native(self, cpu: str) -> list[str]:
        """The same CPU without valgrind."""
        return [self.qemu, "-cpu", cpu, "-L", str(self.tree())]


# One model per arch that offers every row of that arch (the self-tests cover the rungs).
FOREIGN = {
    # Under max the AEAD's ChaCha20 is the SVE2 row, which valgrind 3.19 cannot decode, so
    # the AEAD (its tag check) is checked again on a CPU without SVE, where it runs on NEON.
    "arm64": Foreign(
        "arm64",
        "arm64",
        "aarch64-linux-gnu",
        "qemu-aarch64-static",
        "arm64",
        ("max",),
        ct_models=("neoverse-n1",),
    ),
    "ppc64le": Foreign(
        "ppc64le",
        "ppc64el",
        "powerpc64le-linux-gnu",
        "qemu-ppc64le-static",
        "ppc64le",
        ("power10",),
    ),
    "s390x": Foreign("s390x", "s390x", "s390x-linux-gnu", "qemu-s390x-static", "s390x", ("max",)),
}


def make_tree(target: Foreign) -> subprocess.CompletedProcess[str]:
    """The foreign tree with valgrind in it (idempotent; needs root and the network once)."""
    return subprocess.run(
        [str(ROOT / "scripts" / "foreign-tree.sh"), target.debian, str(target.tree()), "valgrind"],
        capture_output=True,
        text=True,
        check=False,
    )


def summarize(findings: list[Finding]) -> list[tuple[str, int]]:
    """Distinct (kind, frame) with their counts, most frequent first."""
    counts: dict[str, int] = {}
    for f in findings:
        label = f"{f.kind} at {f.frame}"
        counts[label] = counts.get(label, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


TIMED_OUT = "(timed out after"


def _decoded(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode(errors="replace")


# What valgrind (or qemu beneath it) says when it, not the row, gave up: each pattern with the
# reason reported. Checked in order; the first that matches names the cause.
_VALGRIND_GAVE_UP = (
    (re.compile(r"vex \S+->IR: unimplemented insn[^\n]*"), ""),
    (re.compile(r"unhandled instruction", re.I), "valgrind cannot decode one of its instructions"),
    (re.compile(r"the 'impossible' happened", re.I), "valgrind crashed ('impossible' happened)"),
    (re.compile(r"qemu: uncaught target signal \d+[^\n]*"), ""),
    (re.compile(r"Process terminating with default action of signal \d+ \((SIG\w+)\)"), ""),
    (
        re.compile(
            r"valgrind: m_\w+[^\n]*|valgrind: [^\n]*(fatal|failed|cannot|unable)[^\n]*", re.I
        ),
        "",
    ),
    (re.compile(r"Unsupported syscall[^\n]*|unimplemented[^\n]*syscall[^\n]*", re.I), ""),
)


def start_failure(exc: BaseException) -> str:
    """Why `valgrind ... ctgrind --list` did not run, in a line: the pattern valgrind or qemu
    printed, or the last line of its output, and its status."""
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"no answer within {exc.timeout:.0f} s"
    if isinstance(exc, subprocess.CalledProcessError):
        log = _decoded(exc.stdout) + _decoded(exc.stderr)
        for pattern, reason in _VALGRIND_GAVE_UP:
            found = pattern.search(log)
            if found:
                return (reason or found.group(0).strip()[:160]) + f" (exit status {exc.returncode})"
        last = [ln.strip() for ln in log.splitlines() if ln.strip()]
        return (last[-1][:160] if last else "no output") + f" (exit status {exc.returncode})"
    return f"{type(exc).__name__}: {exc}"[:200]


def not_covered_reason(result: RowResult) -> str:
    """Why valgrind could not check the row, or "" when it did. A run that reached
    ctgrind's verdict line ("answers ok" or "WRONG ANSWERS") was checked, whatever its
    findings; one that never did died in valgrind or qemu (a crash, an instruction it
    cannot decode, a time-out) and says nothing about the row. Used for the foreign
    architectures, where valgrind runs under qemu-user; on the host valgrind must work."""
    if result.not_covered:
        return result.not_covered
    if result.answers_ok:
        return ""
    tag = f"ctgrind {result.table}/{result.row}: "
    if tag + "answers ok" in result.log or tag + "WRONG ANSWERS" in result.log:
        return ""  # ctgrind ran the row to its end: a failure is the row's
    log = result.log
    if TIMED_OUT in log:
        return log[log.rindex(TIMED_OUT) + 1 :].rstrip(")").strip() + " under valgrind and qemu"
    for pattern, reason in _VALGRIND_GAVE_UP:
        found = pattern.search(log)
        if found:
            where = _ILLEGAL_AT.search(log)
            return (reason or found.group(0).strip()[:160]) + (
                f" (in {where.group(1).strip()})" if where else ""
            )
    last = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return "valgrind stopped before the row's verdict: " + (last[-1][:160] if last else "no output")


# memcheck's report of an instruction it cannot decode, then the frame it is in
_ILLEGAL_AT = re.compile(
    r"(?:Illegal opcode|Unrecognised instruction) at address \S+\s*\n==\d+==\s+at \S+: ([^\n]+)"
)
