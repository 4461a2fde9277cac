"""What the generic cross tests cannot see on s390x.

- qemu runs vector-enhancements instructions (z14's vmsl, z15's vlbr, vstbr, vsld, ...) on
  every CPU model, z13 included, so a z13 row that slipped one in would pass every run
  and trap on a real z13 (CROSS-ARCH.md). Only its code shows it: every instruction of the
  objects built for the vx slug (-march=z13) must assemble for z13, and of the vxe slug
  for z14, with binutils' own opcode table (s390x-linux-gnu-as -march=...) as the oracle.
- qemu 7.2 emulates CPACF KIMD for SHA-512 only, so sha256/cpacf never runs here: its row
  must be gated by the KIMD query (not runnable, refused when forced), and the code it
  would run is sha512/cpacf's, the same ac_kimd call (cpu/s390x_cpacf.h) with function 3.
- The dispatch ladder when features are masked, written out by hand as everywhere.
- camellia/vx.c's vperm tables are what scripts/gen-camellia-vx-tables.py derives.

About 5 s: one cross build (shared with test_c_selftest), objdump and as, a few qemu runs
of `selftest --dispatch` (0.1 s each).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import NATIVE, ROOT, TARGETS, make, parse_dispatch, require_tools, run_under_qemu
from .test_c_selftest import BASELINE, EXPECTED_DISPATCH, cross_build

S390X = TARGETS["s390x"]
OBJDUMP = f"{S390X.triple}-objdump"
AS = f"{S390X.triple}-as"

# Named outright as well, in case an assembler ever accepted them for z13: the
# vector-enhancements facilities 1 (z14) and 2 (z15) by their best-known members.
DENIED_Z14 = (r"vmsl\w*|vbperm|vnn|vnx|voc|vpopct[bhfg]|vllezlf|vlrlr?|vstrlr?|vfmax\w*|"
              r"vfmin\w*|vfnm[as]\w*")
DENIED_Z15 = (r"vlbr\w*|vstbr\w*|vlebr\w*|vstebr\w*|vllebrz\w*|vler\w*|vster\w*|vsld|vsrd|"
              r"vstrs\w*|vcfp[sl]|vcsfp|vclfp")
DENIED = {"z13": re.compile(rf"^({DENIED_Z14}|{DENIED_Z15})$"),
          "z14": re.compile(rf"^({DENIED_Z15})$")}
# The slugs whose objects must hold nothing newer than a machine (native/isa.mk).
SLUG_MARCH = {"vx": "z13", "vxe": "z14"}


def disassembly(obj: Path) -> list[tuple[str, str]]:
    """(mnemonic, operands) of every instruction in obj."""
    proc = subprocess.run([OBJDUMP, "-d", "--no-show-raw-insn", str(obj)],
                          capture_output=True, text=True, check=True)
    out = []
    for line in proc.stdout.splitlines():
        fields = line.split("\t")
        if len(fields) >= 2 and re.fullmatch(r"\s*[0-9a-f]+:", fields[0]):
            out.append((fields[1].strip(), fields[2].strip() if len(fields) > 2 else ""))
    return out


def rejected_by(march: str, lines: list[str], workdir: Path) -> set[int]:
    """Indexes of the lines that `as -march=<march>` refuses."""
    src = workdir / f"check-{march}.s"
    src.write_text("".join(f"\t{line}\n" for line in lines))
    proc = subprocess.run([AS, f"-march={march}", "-o", str(workdir / f"check-{march}.o"),
                           str(src)], capture_output=True, text=True, check=False)
    return {int(m.group(1)) - 1 for m in re.finditer(rf"{re.escape(str(src))}:(\d+): Error",
                                                      proc.stderr)}


def newer_than(march: str, objects: list[Path], workdir: Path) -> dict[str, set[str]]:
    """Per object, the instructions that a `march` machine cannot execute. An instruction
    is reassembled from objdump's text (PC-relative ones, printed with a <symbol>, are left
    out: branches and larl are z900-era); one that `march` refuses but z16 (arch14)
    accepts is newer. One that neither accepts means the round trip itself failed."""
    found: dict[str, set[str]] = {}
    for obj in objects:
        insns = [(m, ops) for m, ops in disassembly(obj) if "<" not in ops]
        lines = [f"{m} {ops}".strip() for m, ops in insns]
        old, new = rejected_by(march, lines, workdir), rejected_by("arch14", lines, workdir)
        assert not new, f"{obj}: objdump's text does not reassemble: {[lines[i] for i in new]}"
        bad = {insns[i][0] for i in old} | {m for m, _ in insns if DENIED[march].match(m)}
        if bad:
            found[f"{obj.parent.name}/{obj.name}"] = bad
    return found


@pytest.fixture(scope="module")
def objects() -> Path:
    require_tools(S390X.cc, OBJDUMP, AS)
    make(f"CC={S390X.cc}", "lib")
    return NATIVE / "build" / S390X.triple / "obj"


@pytest.mark.parametrize("slug", sorted(SLUG_MARCH))
def test_rows_hold_nothing_newer_than_their_machine(objects: Path, slug: str,
                                                   tmp_path: Path) -> None:
    """Every object of the slug (isa.mk: vx is -march=z13, vxe -march=z14), one per
    algorithm that has a row of that slug in its rows.h, assembles for that machine
    instruction by instruction."""
    algorithms = sorted(p.parent.name for p in (NATIVE / "src").glob("*/rows.h")
                        if re.search(rf"^AC_ROW\w*\({slug},", p.read_text(), re.M))
    assert {"vx": {"chacha20", "poly1305", "sha256", "sha512", "camellia"},
            "vxe": {"poly1305"}}[slug] <= set(algorithms)
    rows = [objects / alg / f"{slug}.o" for alg in algorithms]
    missing = [str(p) for p in rows if not p.exists()]
    assert not missing, f"not built: {missing}"
    assert sum(len(disassembly(p)) for p in rows) > 200
    assert newer_than(SLUG_MARCH[slug], rows, tmp_path) == {}


def test_the_check_catches_newer_instructions(tmp_path: Path) -> None:
    """The check fails on a z14 (vmslg) and on z15 instructions (vlbrf, vstbrf, vsld) for
    z13, on the z15 ones for z14, and passes their z13 neighbours."""
    require_tools(AS, OBJDUMP)
    samples = {
        "z13": "vmalof %v0,%v1,%v2,%v0\n\tvperm %v1,%v2,%v3,%v4\n",
        "z14": "vmslg %v1,%v2,%v3,%v4,0\n",
        "z15": "vlbrf %v1,0(%r2)\n\tvstbrf %v1,0(%r2)\n\tvsld %v1,%v2,%v3,4\n",
    }
    objs = {}
    (tmp_path / "check").mkdir()
    for arch, text in samples.items():
        src = tmp_path / f"{arch}.s"
        src.write_text(f"\t{text}")
        objs[arch] = tmp_path / "check" / f"{arch}.o"
        subprocess.run([AS, f"-march={arch}", "-o", str(objs[arch]), str(src)], check=True)
    found = newer_than("z13", list(objs.values()), tmp_path)
    assert found == {"check/z14.o": {"vmslg"}, "check/z15.o": {"vlbrf", "vstbrf", "vsld"}}
    assert newer_than("z14", list(objs.values()), tmp_path) == {
        "check/z15.o": {"vlbrf", "vstbrf", "vsld"}}


def dispatch(model: str, **env: str) -> subprocess.CompletedProcess[str]:
    require_tools(S390X.cc, S390X.qemu)
    return run_under_qemu(S390X, model, cross_build("s390x"), "--dispatch", env=env, timeout=60)


def row_lists(stdout: str) -> dict[str, list[str]]:
    """'dispatch sha256 -> vx [cpacf(unavailable) vx portable]': every row, marked."""
    return {alg: rows.split() for alg, rows in
            re.findall(r"^dispatch (\S+)\s+-> \S+.*\[(.*)\]$", stdout, flags=re.M)}


def test_cpacf_sha256_is_gated_by_the_kimd_query() -> None:
    """qemu's KIMD query lacks SHA-256 on every model: the row is listed, not runnable,
    and forcing it is refused with the features it needs, before anything runs."""
    for model in ("z13", "max"):
        proc = dispatch(model)
        assert proc.returncode == 0, proc.stderr
        rows = row_lists(proc.stdout)
        assert rows["sha256"] == ["cpacf(unavailable)", "vx", "portable"]
        assert rows["sha512"] == ["cpacf", "vx", "portable"]
    forced = dispatch("max", ARCHCRYPT_FORCE="sha256=cpacf")
    assert forced.returncode == 2
    assert 'sha256 implementation "cpacf" needs CPU features {msa,kimd_sha256}' in forced.stderr


# (masked features) -> the rows that change from EXPECTED_DISPATCH's on `max`. Masking a
# feature masks what requires it (cpu.c): msa takes both KIMD functions along.
LADDER = {
    "vxe": {"poly1305": "vx"},
    "kimd_sha512": {"sha512": "vx"},
    "msa": {"sha512": "vx"},
    "vx": {"chacha20": "portable", "poly1305": "scalar64", "sha256": "portable",
           "camellia": "portable"},
    "vx,msa": {"chacha20": "portable", "poly1305": "scalar64", "sha256": "portable",
               "sha512": "portable", "camellia": "portable"},
}


@pytest.mark.parametrize("masked", sorted(LADDER))
def test_s390x_dispatch_ladder(masked: str) -> None:
    proc = dispatch("max", ARCHCRYPT_DISABLE_CPU_FEATURES=masked)
    assert proc.returncode == 0, proc.stderr
    expected = {**BASELINE, **EXPECTED_DISPATCH[("s390x", "max")], **LADDER[masked]}
    assert parse_dispatch(proc.stdout) == expected


def test_camellia_vx_tables_are_derived() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen-camellia-vx-tables.py"),
                           "--check"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
