"""`make drill`: every reliability drill in its long form, with progress while it runs and
the figures as tables at the end (RELIABILITY.md explains them).

    python -m tests.drill [fuzz|ct|schema|faults|soak ...] [--quick] [--soak-seconds 600]
                          [--fuzz-seconds 300] [--examples 500] [--write RELIABILITY.md]
                          [--json FILE]

No section named: all of them, soak last. --quick shortens each (a minute of soak, 30 s of
fuzzing, 50 examples) and leaves out the foreign architectures (their rows say so) and the
libFuzzer builds with broken intrinsics (the suite's broken build under the PRNG driver
instead). --write replaces the figures between the drill markers of that
file. The exit status is 1 when any drill failed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from . import ct, faults, fuzzing, schema, soak

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- drill:begin -->", "<!-- drill:end -->"
console = Console(stderr=True)


def say(text: str) -> None:
    console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {escape(text)}", highlight=False)


@dataclass
class Section:
    title: str
    command: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    ok: bool = True
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, *cells: Any) -> None:
        self.rows.append(
            [
                c
                if isinstance(c, str)
                else json.dumps(c)
                if isinstance(c, (dict, list))
                else str(c)
                for c in cells
            ]
        )


def verdict(ok: bool) -> str:
    return "pass" if ok else "FAIL"


# ---- fuzzing ---------------------------------------------------------------------------------


def drill_fuzz(seconds: float, work: Path, quick: bool = False) -> Section:
    emulated = not fuzzing.host_has_avx512()
    section = Section(
        "Native fuzzing (libFuzzer + ASan + UBSan; every runnable row against portable)",
        f"python -m tests.drill fuzz --fuzz-seconds {seconds:.0f}",
        ["build", "rows", "seconds", "runs", "runs/s", "edges", "corpus", "result"],
    )
    say(
        "fuzz: building the libFuzzer harness"
        + (" (AVX-512 rows on the emulation)" if emulated else "")
    )
    binary = fuzzing.build(emulated)
    say(f"fuzz: {seconds:.0f} s of libFuzzer")
    corpus = ROOT / "native" / "build" / "fuzz-corpus" / ("emu512" if emulated else "host")
    result = fuzzing.run(binary, seconds, corpus, work / "fuzz-artifacts")
    rows = result.rows.split("runnable rows:", 1)[-1].strip()
    section.add(
        f"clang libFuzzer{', emulated AVX-512' if emulated else ''}",
        rows,
        f"{result.wall:.0f}",
        result.runs,
        f"{result.execs_per_second:.0f}",
        result.coverage,
        result.corpus,
        verdict(result.ok) + (f": {result.failure}" if result.failure else ""),
    )
    section.ok &= result.ok
    # The must-fail runs break an emulated intrinsic, which any x86-64 host can build and
    # run: on a host with AVX-512 too (where the main run is native), or nothing would show
    # that this fuzzer can find a wrong kernel.
    can_break = platform.machine() in ("x86_64", "AMD64")
    if can_break and quick:
        # It can fail: the suite's build with four emulated intrinsics broken (no library
        # build of its own), under the PRNG driver, must fail within its first inputs.
        broken = "MADD52HI ROL_EPI32 GF2P8AFFINEINV ROR_EPI64"
        say(f"fuzz: the PRNG driver over a library with {broken} broken (must fail)")
        binary = fuzzing.build_standalone(emulated=True, asan=False, break_=broken)
        start = time.monotonic()
        proc = subprocess.run(
            [str(binary), f"-max_total_time={seconds:.0f}", "-seed=17"],
            capture_output=True,
            text=True,
            check=False,
            timeout=seconds + 300,
        )
        failure = next(
            (
                ln
                for ln in proc.stderr.splitlines()
                if ln.startswith("fuzz-api: ") and "runnable rows" not in ln
            ),
            "",
        )
        found = proc.returncode != 0 and bool(failure)
        section.add(
            f"EMU_BREAK={broken}, PRNG driver (must fail)",
            "",
            f"{time.monotonic() - start:.0f}",
            "",
            "",
            "",
            "",
            ("found: " + failure) if found else "FAIL: not found",
        )
        section.ok &= found
    elif can_break:
        # It can fail: a broken emulated intrinsic must be found, and quickly.
        for broken in ("MADD52HI", "GF2P8AFFINE"):
            say(f"fuzz: the harness over a library with {broken} broken (must fail)")
            bad = fuzzing.run(
                fuzzing.build(True, broken),
                min(seconds, 300),
                work / f"corpus-{broken}",
                work / f"artifacts-{broken}",
            )
            found = bad.crash is not None
            section.add(
                f"EMU_BREAK={broken} (must fail)",
                "",
                f"{bad.wall:.0f}",
                bad.runs,
                "",
                bad.coverage,
                bad.corpus,
                ("found: " + bad.failure) if found else "FAIL: not found",
            )
            section.ok &= found
    # The same harness from a PRNG on the foreign architectures (no sanitizers under qemu).
    for target in ct.FOREIGN.values():
        if quick:
            section.add(f"{target.arch} PRNG driver", "", "", "", "", "", "", "not run (--quick)")
            continue
        say(f"fuzz: the PRNG driver on {target.arch} under qemu")
        try:
            binary = fuzzing.build_standalone(emulated=False, asan=False, cc=f"{target.triple}-gcc")
        except RuntimeError as exc:
            section.add(f"{target.arch} PRNG driver", "", "", "", "", "", "", f"FAIL: {exc}"[:200])
            section.ok = False
            continue
        for model in target.models:
            from tests.cross.harness import cpu_option

            start = time.monotonic()
            proc = subprocess.run(
                [
                    target.qemu,
                    "-cpu",
                    cpu_option(target.qemu, model),
                    str(binary),
                    f"-max_total_time={min(seconds, 120):.0f}",
                    "-seed=5",
                ],
                capture_output=True,
                text=True,
                check=False,
                timeout=900,
            )
            runs = next(
                (ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("Done ")), "0"
            )
            banner = next((ln for ln in proc.stderr.splitlines() if "runnable rows:" in ln), "")
            took = time.monotonic() - start
            ok = proc.returncode == 0
            section.add(
                f"{target.arch} {model}, PRNG driver, no sanitizer",
                banner.split("runnable rows:", 1)[-1].strip(),
                f"{took:.0f}",
                runs,
                f"{int(runs) / took:.0f}" if took else "",
                "",
                "",
                verdict(ok) + ("" if ok else ": " + proc.stderr[-300:]),
            )
            section.ok &= ok
    section.notes.append(
        "libFuzzer runs on the host only (clang's fuzzer runtime is not built for the foreign "
        "targets and ASan does not run under qemu-user); there the same harness runs from a "
        "PRNG without coverage feedback or sanitizers, beside the self-test's sweeps."
    )
    return section


# ---- constant time ----------------------------------------------------------------------------

# Valgrind under qemu-user: seconds for it to start and list the rows (natively ~1 s; a
# valgrind that cannot start under qemu usually dies at once, or hangs), for one row, and
# for all of one arch's rows (a row not started by then is listed as not covered).
FOREIGN_PROBE_SECONDS = 300
FOREIGN_ROW_SECONDS = 600
FOREIGN_BUDGET_SECONDS = 900


def drill_ct(work: Path, quick: bool = False) -> Section:
    section = Section(
        "Constant time (ctgrind: valgrind memcheck, secrets undefined)",
        "python -m tests.drill ct",
        ["arch", "table", "row", "findings", "verdict", "where"],
    )
    say("ct: building the ctgrind harness (host)")
    binary = ct.build()
    native = ct.list_rows([], binary)
    under = ct.list_rows(ct.valgrind(), binary)
    hidden = [r for r in native if r not in under]
    say(
        f"ct: {len(under)} rows under valgrind {ct.valgrind_version()}, {len(hidden)} it cannot run"
    )

    def report(arch: str) -> Callable[[ct.RowResult], None]:
        def one(r: ct.RowResult) -> None:
            say(
                f"ct: {arch} {r.table}/{r.row}: {r.verdict} ({len(r.findings)} findings, "
                f"{r.seconds:.0f} s)"
            )

        return one

    results = ct.run_all(under, binary, work / "ct-host", progress=report("amd64"))
    for r in results:
        where = "; ".join(f"{n} x {label}" for label, n in ct.summarize(r.findings)[:4])
        section.add(
            "amd64",
            r.table,
            r.row,
            len(r.findings),
            r.verdict,
            (r.exception + ": " if r.exception else "") + where,
        )
        section.ok &= r.ok
    # The rows valgrind cannot decode, through the AVX-512 emulation (make -C native
    # ctgrind-emu): their own code under memcheck, the emulation's findings set aside.
    say("ct: the AVX-512/GFNI rows through the emulation (ctgrind-emu)")
    emulated_binary = ct.build_emulated()
    # (also on a host without AVX-512, where the rows are not in `hidden`: the emulation
    # build offers them whatever the CPU has)
    emulated = [r for r in ct.list_rows(ct.valgrind(), emulated_binary) if r not in under]
    for r in ct.run_all(emulated, emulated_binary, work / "ct-emu", progress=report("amd64")):
        r.set_aside_emulation()
        where = "; ".join(f"{n} x {label}" for label, n in ct.summarize(r.findings)[:4])
        if r.artifacts:
            where += f"{'; ' if where else ''}set aside (the emulation's own code): " + "; ".join(
                f"{n} x {label}" for label, n in ct.summarize(r.artifacts)[:2]
            )
        section.add("amd64 (AVX-512 emulated)", r.table, r.row, len(r.findings), r.verdict, where)
        section.ok &= r.ok
    for table, row in hidden:
        if (table, row) in emulated:
            continue
        section.add(
            "amd64",
            table,
            row,
            "",
            "not covered",
            "valgrind cannot execute it "
            f"(valgrind {ct.valgrind_version()} lacks {ct.VALGRIND_LACKS})",
        )
    # The tag checks are seen: without AC_DECLASSIFY the branch on their result must show.
    say("ct: the build without AC_DECLASSIFY (the tag check's branch must be reported)")
    raw = ct.build(declassify=False)
    for r in ct.run_all([t for t in under if t[0] == "chacha20-poly1305"], raw, work / "ct-raw"):
        seen = any("open_words" in f.frame and "aead/aead.c" in f.frame for f in r.findings)
        section.add(
            "amd64",
            r.table,
            r.row + " (no declassify)",
            len(r.findings),
            "tag check seen" if seen else "FAIL: tag check not seen",
            "; ".join(f"{n} x {label}" for label, n in ct.summarize(r.findings)[:2]),
        )
        section.ok &= seen
    # Foreign architectures: their own valgrind under qemu-user. Valgrind there is a guest
    # of an emulator: where it cannot start, crashes or stalls, that arch (or row) is "not
    # covered" with the reason, and the rest of the drill goes on; only a build that fails,
    # or a row valgrind ran to its end with findings or wrong answers, fails the drill.
    for target in ct.FOREIGN.values():
        if quick:
            section.add(
                target.arch, "", "", "", "not run (--quick)", "valgrind under qemu-user: make drill"
            )
            continue
        if not (target.tree() / "usr" / "bin" / "valgrind").exists():
            say(f"ct: making the {target.debian} tree with valgrind")
            made = ct.make_tree(target)
            if made.returncode != 0:
                section.add(
                    target.arch, "", "", "", "not covered", "no tree: " + made.stderr[-200:]
                )
                continue
        for model in (*target.models, *target.ct_models):
            try:
                section.ok &= drill_ct_foreign(section, target, model, work, report)
            except Exception as exc:  # a cross build that fails: this arch fails, not the rest
                section.add(
                    f"{target.arch} {model}",
                    "",
                    "",
                    "",
                    "FAIL",
                    f"{type(exc).__name__}: {exc}"[:300],
                )
                section.ok = False
    return section


def drill_ct_foreign(
    section: Section,
    target: ct.Foreign,
    model: str,
    work: Path,
    report: Callable[[str], Callable[[ct.RowResult], None]],
) -> bool:
    """One foreign CPU model's rows under its own valgrind under qemu-user, added to
    `section`; False when a row failed. Valgrind that cannot start there, or gives up on a
    row (crash, undecodable instruction, time-out), leaves it "not covered" with the reason."""
    from tests.cross.harness import cpu_option

    label = f"{target.arch} {model}"
    cpu = cpu_option(target.qemu, model)
    say(f"ct: {label}: cross build, valgrind under qemu")
    cross = ct.without_unwind_tables(ct.build(cc=f"{target.triple}-gcc"), target.triple)
    seen_native = set(ct.cpu_features(target.native(cpu), cross))
    try:
        seen_valgrind = set(
            ct.cpu_features(target.prefix(cpu), cross, timeout=FOREIGN_PROBE_SECONDS)
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        reason = ct.start_failure(exc)
        say(f"ct: {label}: valgrind does not start under qemu-user: {reason}")
        section.add(label, "", "", "", "not covered", f"valgrind under qemu-user: {reason}")
        return True
    assume = sorted(seen_native - seen_valgrind)
    if assume:
        cross = ct.without_unwind_tables(
            ct.build(cc=f"{target.triple}-gcc", assume=assume), target.triple
        )
        section.notes.append(
            f"{label}: valgrind hides {', '.join(assume)} from the hwcaps; "
            f"the build claims {'it' if len(assume) == 1 else 'them'} back "
            "(CT_ASSUME) and each row shows whether valgrind executes it"
        )
    rows = ct.list_rows(target.native(cpu), cross)
    said = report(target.arch)

    def classified(r: ct.RowResult) -> None:
        r.not_covered = ct.not_covered_reason(r)  # valgrind gave up: not the row's verdict
        r.set_aside(target.arch)
        said(r)

    results = ct.run_all(
        rows,
        cross,
        work / f"ct-{target.arch}",
        prefix=target.prefix(cpu),
        progress=classified,
        deadline=time.monotonic() + FOREIGN_BUDGET_SECONDS,
        row_timeout=FOREIGN_ROW_SECONDS,
    )
    ok = True
    for r in results:
        reason = r.not_covered = ct.not_covered_reason(r)
        if reason:
            section.add(label, r.table, r.row, "", "not covered", reason)
            continue
        where = "; ".join(f"{n} x {lab}" for lab, n in ct.summarize(r.findings)[:3])
        if r.artifacts:
            where += ("; " if where else "") + (
                f"not counted: {len(r.artifacts)} x use of a 16-byte value "
                f"({ct.VECTOR_OPERAND_ARTIFACT[target.arch]}), e.g. "
                + ct.summarize(r.artifacts)[0][0]
            )
        section.add(
            label,
            r.table,
            r.row,
            len(r.findings),
            r.verdict,
            (r.exception + ": " if r.exception else "") + where,
        )
        ok &= r.ok
    return ok


# ---- schema ----------------------------------------------------------------------------------


def drill_schema(examples: int, work: Path) -> Section:
    section = Section(
        f"Schema fuzzing (schemathesis, every check and phase, {examples} examples per operation)",
        f"python -m tests.drill schema --examples {examples}",
        [
            "server",
            "operations",
            "test cases",
            "seconds",
            "must-pass checks",
            "request-schema checks (reported)",
            "result",
        ],
    )
    token_file = work / "schema" / "tokens"
    token_file.parent.mkdir(parents=True, exist_ok=True)
    scopes = [
        "aead:seal",
        "aead:open",
        "mac",
        "mac:verify",
        "hash",
        "ecb",
        "poly1305",
        "keys:admin",
        "keys:read",
        *(f"key:*:{op}" for op in ("datakey", "mac", "open", "rewrap", "seal", "verify")),
    ]
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "archcrypt",
            "tokens",
            "create",
            "--file",
            str(token_file),
            "--name",
            "drill",
            *(arg for s in scopes for arg in ("--scope", s)),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    token = next(w for w in made.stdout.split() if w.startswith("act_"))
    with soak.serve(work / "schema" / "server", "--tokens-file", str(token_file)) as server:
        say(f"schema: schemathesis, {examples} examples per operation (this takes a while)")
        result = schema.run(server.base_url, token, work / "schema", examples)
    section.add(
        "one worker, tokens on, named keys on SQLite",
        result.operations,
        result.test_cases,
        f"{result.seconds:.0f}",
        json.dumps(result.failures) if result.failures else "none found",
        json.dumps(result.reported) if result.reported else "none",
        verdict(result.ok) + ("; " + "; ".join(result.errors) if result.errors else ""),
    )
    section.ok = result.ok
    return section


# ---- faults ----------------------------------------------------------------------------------


def drill_faults(work: Path) -> Section:
    section = Section(
        "Fault injection", "python -m tests.drill faults", ["scenario", "figures", "result"]
    )

    def one(o: faults.Outcome) -> None:
        say(f"faults: {o.name}: {'skipped: ' + o.skipped if o.skipped else verdict(o.ok)}")

    for o in faults.run_all(work / "faults", progress=one):
        figures = "; ".join(f"{k}: {v}" for k, v in o.figures.items())
        if o.notes:
            figures += " (" + "; ".join(o.notes) + ")"
        section.add(o.name, figures, "skipped: " + o.skipped if o.skipped else verdict(o.ok))
        section.ok &= o.ok or bool(o.skipped)
    return section


# ---- soak ------------------------------------------------------------------------------------


def drill_soak(seconds: float, work: Path, tamper: bool = False) -> Section:
    section = Section(
        f"Soak ({seconds / 60:.0f} min, wrk -t1 -c16, every route)",
        f"make soak SOAK_SECONDS={seconds:.0f}",
        [
            "requests",
            "req/s",
            "p50 ms",
            "p99 ms",
            "max ms",
            "answers checked",
            "errors",
            "RSS after warm-up -> end (MiB)",
            "growth",
            "fds",
            "result",
        ],
    )
    result = soak.run(seconds, work / "soak", progress=say, tamper=tamper)
    section.add(
        result.requests,
        f"{result.requests_per_second:.0f}",
        f"{result.p50_ms:.1f}",
        f"{result.p99_ms:.1f}",
        f"{result.max_ms:.0f}",
        f"{result.checked_answers} + {result.sampler_checked} sampled",
        result.errors,
        f"{result.rss_start_mib:.1f} -> {result.rss_end_mib:.1f} (peak {result.rss_peak_mib:.1f})",
        f"{100 * result.rss_growth:+.2f} %",
        f"{result.fds_min}..{result.fds_max}",
        verdict(result.ok) + (f": {result.problem}" if result.problem else ""),
    )
    section.ok = result.ok
    section.notes.append(
        f"{result.routes} routes in the rotation; warm-up {result.warmup:.0f} s; "
        f"threads at most {result.threads_max}"
    )
    return section


@dataclass
class Options:
    work: Path
    quick: bool = False
    tamper: bool = False
    soak_seconds: float = 600
    fuzz_seconds: float = 300
    examples: int = 500


# In the order they run: the soak last, as the longest.
DRILLS: dict[str, Callable[[Options], Section]] = {
    "fuzz": lambda o: drill_fuzz(o.fuzz_seconds, o.work, o.quick),
    "ct": lambda o: drill_ct(o.work, o.quick),
    "schema": lambda o: drill_schema(o.examples, o.work),
    "faults": lambda o: drill_faults(o.work),
    "soak": lambda o: drill_soak(o.soak_seconds, o.work, tamper=o.tamper),
}


# ---- output ----------------------------------------------------------------------------------


def render_console(sections: list[Section]) -> None:
    out = Console()
    for s in sections:
        # Text, not markup: "[pass, 3 s]" and a report's brackets are shown as they are
        title = Text(
            f"{s.title} [{verdict(s.ok)}, {s.seconds:.0f} s]", style="bold" if s.ok else "bold red"
        )
        table = Table(title=title, title_justify="left", show_lines=False)
        for c in s.columns:
            table.add_column(Text(c), overflow="fold")
        for row in s.rows:
            table.add_row(*(Text(c) for c in row))
        out.print(table)
        for note in s.notes:
            out.print(Text(f"  note: {note}"))
        out.print(Text(f"  command: {s.command}\n"))


def render_markdown(sections: list[Section], started: str, command: str, tree: str) -> str:
    lines = [
        f"Last run: {started} on {platform.node() or 'a host'} ({platform.machine()}, "
        f"{os.cpu_count()} CPUs), tree {tree}, `{command}` (each section says "
        "the command that runs it alone).",
        "",
    ]
    for s in sections:
        lines += [
            f"### {s.title}: {verdict(s.ok)}",
            "",
            f"`{s.command}` ({s.seconds:.0f} s)",
            "",
            "| " + " | ".join(s.columns) + " |",
            "|" + "---|" * len(s.columns),
        ]
        for row in s.rows:
            cells = (c.replace("|", "\\|").replace("\n", " ") for c in row)
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        for note in s.notes:
            lines.append(f"- {note}")
        if s.notes:
            lines.append("")
    return "\n".join(lines)


def _revision() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "-uno"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return (done.stdout.strip() or "unknown") + (" with local changes" if dirty else "")


def write_into(path: Path, text: str) -> None:
    """Replace what lies between the drill markers of `path`, each a line of its own (the
    prose may name them), the rest kept as it is; a file without them gets them at its end."""
    doc = path.read_text() if path.exists() else ""
    marked = re.compile(rf"^{re.escape(BEGIN)}$.*?^{re.escape(END)}$", re.M | re.S)
    if not marked.search(doc):
        doc = f"{doc.rstrip()}\n\n{BEGIN}\n{END}\n".lstrip()
    path.write_text(marked.sub(lambda _: f"{BEGIN}\n{text}\n{END}", doc, count=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.drill",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # not choices=: argparse checks an empty list against them (bpo-9625)
    parser.add_argument(
        "sections",
        nargs="*",
        metavar="DRILL",
        help=f"one or more of {', '.join(DRILLS)} (default: all, in that order)",
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--soak-seconds", type=float)
    parser.add_argument("--fuzz-seconds", type=float)
    parser.add_argument("--examples", type=int)
    parser.add_argument("--write", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument(
        "--tamper",
        action="store_true",
        help="alter one of the soak's expected answers by a byte: the soak must "
        "count wrong answers and the drill exit 1 (the failure path)",
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.sections if name not in DRILLS]
    if unknown:
        parser.error(f"no drill named {', '.join(unknown)} (choose from {', '.join(DRILLS)})")
    chosen = args.sections or list(DRILLS)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="archcrypt-drill-"))
    opts = Options(
        work=work,
        quick=args.quick,
        tamper=args.tamper,
        soak_seconds=args.soak_seconds or (60 if args.quick else 600),
        fuzz_seconds=args.fuzz_seconds or (30 if args.quick else 300),
        examples=args.examples or (50 if args.quick else 500),
    )
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    tree = _revision()  # as the run starts: what was measured
    say(f"drill: {', '.join(chosen)}; work in {work}")
    sections = []
    for name in DRILLS:
        if name not in chosen:
            continue
        start = time.monotonic()
        try:
            section = DRILLS[name](opts)
        except Exception as exc:  # a drill that cannot run has failed, and says why
            section = Section(name, f"python -m tests.drill {name}", ["error"], ok=False)
            section.add(f"{type(exc).__name__}: {exc}"[:3000])
        section.seconds = time.monotonic() - start
        say(f"drill: {name} {verdict(section.ok)} in {section.seconds:.0f} s")
        sections.append(section)
    render_console(sections)
    if args.write:
        command = " ".join(["python -m tests.drill", *(sys.argv[1:] if argv is None else argv)])
        write_into(args.write, render_markdown(sections, started, command, tree))
        say(f"drill: figures written into {args.write}")
    if args.json:
        args.json.write_text(json.dumps([s.__dict__ for s in sections], indent=1))
    failed = [s.title for s in sections if not s.ok]
    say("drill: " + ("all passed" if not failed else "FAILED: " + "; ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
