"""Instructions per byte under qemu-user: archcrypt (every runnable row) against Debian's
libgcrypt, OpenSSL and libsodium for that architecture and Go's x/crypto, per CPU model.

    bench/insn/setup.sh [ARCH]               # once: packages, the plugin, the peers' tree
    python3 bench/insn/run.py [--arch ppc64le] [--write BENCHMARKS.md]
                              [--models power8,power9,power10] [--sizes 64,1024,65536]
                              [--total 4194304] [--jobs N] [--operations chacha20,...]

Each cell runs a harness twice under `qemu-<arch> -cpu MODEL -plugin libinsn.so,inline=on`:
with CALLS = total/size messages and with none (same binary, same set-up, one warm-up
message in both); the difference divided by the bytes is the cell. Counts are exact and
repeatable for a given binary and model, so one run per cell is enough. Instructions are
not cycles: a vector instruction and a scalar one count the same, and a peer may execute
more instructions and still run faster on a real chip.

The operations are bench/c/workloads.h's (`harness workloads` lists them); the harness
makes each call as that table says, for archcrypt and for each C peer. An architecture is
one entry of ARCHES (its triple, qemu, Debian name, models, Go environment) and a case of
setup.sh; models that need qemu options (s390x's `,<feature>=off`) go in as such.

Not in the test suite (see `make bench-insn`). Standard library only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
OUT = ROOT / "build" / "bench" / "insn"
PLUGIN = OUT / "libinsn.so"
PEERS = ("libgcrypt", "OpenSSL", "libsodium", "Go")


@dataclass(frozen=True)
class Arch:
    name: str  # container platform name, as archcrypt_arch() reports it
    triple: str
    qemu: str  # the dynamic build (qemu-<arch>-static has no -plugin)
    debian: str  # Debian's name for it (the peers' tree)
    models: tuple[str, ...]  # default -cpu models, each one that changes a dispatch choice
    go_env: tuple[tuple[str, str], ...]
    notes: tuple[str, ...] = ()  # Markdown bullets for the report: what reads differently here

    @property
    def cc(self) -> str:
        return f"{self.triple}-gcc"

    @property
    def tree(self) -> Path:
        return OUT / self.debian

    @property
    def results(self) -> Path:
        return OUT / ("results.json" if self.name == "ppc64le" else f"results-{self.name}.json")

    @property
    def markers(self) -> tuple[str, str]:
        return f"<!-- insn-{self.name}:begin -->", f"<!-- insn-{self.name}:end -->"

    @property
    def heading(self) -> str:
        return f"## {self.name}: instructions per byte under qemu"


ARCHES = {
    "ppc64le": Arch(
        "ppc64le",
        "powerpc64le-linux-gnu",
        "qemu-ppc64le",
        "ppc64el",
        ("power8", "power9", "power10"),
        (("GOARCH", "ppc64le"), ("GOPPC64", "power8")),
    ),
    # Go 1.19 has no GOARM64 level: its arm64 port detects the extensions at run time.
    # max runs SVE at 512 bits unless told otherwise; counted at 128 (Graviton4, Neoverse
    # V2: the width SVE code meets on servers).
    "arm64": Arch(
        "arm64",
        "aarch64-linux-gnu",
        "qemu-aarch64",
        "arm64",
        ("cortex-a72", "max,sve-default-vector-length=16"),
        (("GOARCH", "arm64"),),
    ),
    # z13: the vx rows; z14: Poly1305's vxe (vmslg); max: what qemu emulates in full,
    # CPACF's SHA-512 included (KIMD on every model). Go's s390x port needs z13.
    "s390x": Arch(
        "s390x",
        "s390x-linux-gnu",
        "qemu-s390x",
        "s390x",
        ("z13", "z14", "max"),
        (("GOARCH", "s390x"),),
        (
            "- The models run with every feature qemu cannot emulate switched off",
            "  (`-cpu z13,<feature>=off,...`, as the cross tests run them).",
            "- **CPACF rows cannot be compared by count**: a KIMD/KLMD instruction counts as one",
            "  under qemu whatever it hashes (qemu 7.2 stops it every 64 blocks, so about one",
            "  instruction per 8 KiB of SHA-512 plus the loop around it). OpenSSL's and Go's",
            "  SHA-512 use CPACF too wherever the KIMD query offers it (qemu offers SHA-512 on",
            "  every model, never SHA-256), so their SHA-512 cells are as meaningless as",
            "  archcrypt's `cpacf` row; the `vx` row is the software figure to compare.",
        ),
    ),
}


def sh(
    cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=cwd, env=env)


# ---- building the harnesses -------------------------------------------------------------


def build(arch: Arch) -> dict[str, Path]:
    """One binary per library; archcrypt's is static, the Debian peers link the tree's
    shared libraries (found at run time through qemu -L), Go's is Go's."""
    tree, cc = arch.tree, arch.cc
    missing = [p for p in (PLUGIN, tree / ".archcrypt-foreign-tree") if not p.exists()]
    if missing:
        sys.exit(
            f"run.py: {', '.join(map(str, missing))} missing: "
            f"run bench/insn/setup.sh {arch.name} first"
        )
    subprocess.run(
        ["make", "-s", "-C", str(ROOT / "native"), f"CC={cc}", f"-j{os.cpu_count() or 2}", "lib"],
        check=True,
    )
    lib = sh(
        ["make", "-s", "--no-print-directory", "-C", str(ROOT / "native"), f"CC={cc}", "print-lib"]
    ).stdout.strip()
    source = HERE / "harness.c"
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra"]
    bins_dir = OUT / arch.name
    bins_dir.mkdir(parents=True, exist_ok=True)
    bins = {"archcrypt": bins_dir / "harness-archcrypt"}
    sh(
        [
            cc,
            *flags,
            "-static",
            "-DBENCH_ARCHCRYPT",
            f"-I{ROOT / 'native' / 'include'}",
            str(source),
            lib,
            "-pthread",
            "-o",
            str(bins["archcrypt"]),
        ]
    )
    libdir = tree / "usr" / "lib" / arch.triple
    # The tree's headers after the cross toolchain's own (the same glibc), and each shared
    # library by path: -L into the tree would pick up its libc.so linker script, whose
    # absolute paths name the host's /lib.
    peer_flags = [
        "-idirafter",
        str(tree / "usr" / "include"),
        "-idirafter",
        str(tree / "usr" / "include" / arch.triple),
        f"-Wl,-rpath-link,{libdir}",
    ]
    for name, macro, libs in (
        ("libgcrypt", "BENCH_GCRYPT", ["libgcrypt.so.20"]),
        ("OpenSSL", "BENCH_OPENSSL", ["libcrypto.so.3"]),
        ("libsodium", "BENCH_SODIUM", ["libsodium.so.23"]),
    ):
        bins[name] = bins_dir / f"harness-{name.lower()}"
        sh(
            [
                cc,
                *flags,
                f"-D{macro}",
                *peer_flags,
                str(source),
                *(str(libdir / so) for so in libs),
                "-o",
                str(bins[name]),
            ]
        )
    bins["Go"] = bins_dir / "harness-go"
    sh(
        ["go", "build", "-trimpath", "-o", str(bins["Go"]), "main.go"],
        cwd=HERE / "go",
        env={
            **os.environ,
            "GO111MODULE": "off",
            "GOPATH": "/usr/share/gocode",
            "GOOS": "linux",
            **dict(arch.go_env),
            "CGO_ENABLED": "0",
            "GOCACHE": str(OUT / "gocache"),
        },
    )
    return bins


def versions(arch: Arch) -> dict[str, str]:
    """Versions of the peers as built here: Debian's from the tree's .deb names."""
    debs = (arch.tree / "debootstrap" / "debpaths").read_text()

    def deb(package: str) -> str:
        match = re.search(rf"^{re.escape(package)} \S*/{re.escape(package)}_([^_]+)_", debs, re.M)
        return match.group(1).replace("%3a", ":") if match else "?"

    go = sh(["go", "version"]).stdout.split()[2].removeprefix("go")
    xcrypto = sh(["dpkg-query", "-W", "-f=${Version}", "golang-golang-x-crypto-dev"]).stdout
    return {
        "libgcrypt": f"libgcrypt20 {deb('libgcrypt20')}",
        "OpenSSL": f"libssl3 {deb('libssl3')}",
        "libsodium": f"libsodium23 {deb('libsodium23')}",
        "Go": f"Go {go}, x/crypto {xcrypto}",
        "qemu": sh(["dpkg-query", "-W", "-f=${Version}", "qemu-user"]).stdout,
    }


# ---- counting ---------------------------------------------------------------------------


@functools.cache
def cpu_value(arch: Arch, model: str) -> str:
    """The -cpu value for a model: qemu's s390x models abort until every feature qemu
    cannot emulate is switched off (which ones depends on the qemu version; as
    tests/cross/harness.cpu_option does). Other arches' models pass as they are. Probed
    with the static archcrypt harness that build() made."""
    probe = subprocess.run(
        [arch.qemu, "-cpu", model, str(OUT / arch.name / "harness-archcrypt"), "workloads"],
        capture_output=True,
        text=True,
        env=environment(),
        check=False,
    )
    match = re.search(r"not available in the configuration:\s*(.*)", probe.stderr)
    if not match:
        return model
    return ",".join([model, *(f"{feature}=off" for feature in match.group(1).split())])


@dataclass(frozen=True)
class Cell:
    model: str
    library: str  # "archcrypt" or a peer
    row: str  # archcrypt: the ARCHCRYPT_FORCE value ("" = automatic); peers: ""
    operation: str
    size: int


def count(arch: Arch, binary: Path, model: str, args: list[str], env: dict[str, str]) -> int | None:
    """Guest instructions of one run (None: the library lacks the operation, exit 2)."""
    log = OUT / "logs" / f"{os.getpid()}-{time.monotonic_ns()}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        arch.qemu,
        "-cpu",
        cpu_value(arch, model),
        "-L",
        str(arch.tree),
        "-plugin",
        f"{PLUGIN},inline=on",
        "-d",
        "plugin",
        "-D",
        str(log),
        str(binary),
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    try:
        if proc.returncode == 2:
            return None
        if proc.returncode != 0:
            raise RuntimeError(f"{shlex.join(cmd)}: exit {proc.returncode}\n{proc.stderr}")
        match = re.search(r"^insns: (\d+)$", log.read_text(), re.M)
        if not match:
            raise RuntimeError(f"{shlex.join(cmd)}: no instruction count in {log}")
        return int(match.group(1))
    finally:
        log.unlink(missing_ok=True)


def environment(force: str = "") -> dict[str, str]:
    """The same environment, byte for byte in size, for every run: glibc's memcpy and memset
    take alignment-dependent paths, so where the stack starts (below the environment
    strings) moves a count by up to ~25 instructions per call. ARCHCRYPT_FORCE is padded
    by a second variable; argv is padded in measure()."""
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C",
        "OPENSSL_CONF": "/dev/null",  # not the host's openssl.cnf through qemu's -L fallback
        "GOGC": "off",  # no collector in Go's count
        "GOMAXPROCS": "1",
        "ARCHCRYPT_FORCE": force,
        "ARCHCRYPT_BENCH_PAD": "x" * (48 - len(force)),
    }


def measure(arch: Arch, cell: Cell, binary: Path, total: int) -> float | None:
    env = environment(cell.row)
    calls = max(1, total // cell.size)
    size = f"{cell.size:09d}"  # fixed-width arguments: the stack starts at the same place
    empty = count(arch, binary, cell.model, [cell.operation, size, f"{0:09d}"], env)
    full = count(arch, binary, cell.model, [cell.operation, size, f"{calls:09d}"], env)
    if empty is None or full is None:
        return None
    return (full - empty) / (calls * cell.size)


def workload_tables(arch: Arch, binary: Path) -> dict[str, str]:
    """bench/c/workloads.h, in its order: operation -> archcrypt's dispatch table."""
    proc = subprocess.run(
        [arch.qemu, str(binary), "workloads"],
        capture_output=True,
        text=True,
        env=environment(),
        check=True,
    )
    return {op: table for op, table, _unit in (line.split() for line in proc.stdout.splitlines())}


@dataclass(frozen=True)
class Rows:
    runnable: dict[str, list[str]]  # operation -> rows this model can run, best first
    selected: dict[str, str]  # dispatch table -> the row dispatch picks on this model


def archcrypt_rows(arch: Arch, binary: Path, model: str, tables: dict[str, str]) -> Rows:
    """What the library itself reports on this model (`harness rows`)."""
    proc = subprocess.run(
        [arch.qemu, "-cpu", cpu_value(arch, model), str(binary), "rows"],
        capture_output=True,
        text=True,
        env=environment(),
        check=True,
    )
    runnable: dict[str, list[str]] = {}
    selected: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        table, row, can_run, chosen = line.split()
        if can_run == "1":
            runnable.setdefault(table, []).append(row)
        if chosen == "1":
            selected[table] = row
    return Rows({op: runnable.get(table, []) for op, table in tables.items()}, selected)


def auto_label(rows: Rows, tables: dict[str, str], operation: str) -> str:
    row = rows.selected[tables[operation]]
    if row == "composed":  # the AEAD over the chacha20 and poly1305 rows in effect
        return f"`{rows.selected['chacha20']}`+`{rows.selected['poly1305']}`"
    return f"`{row}`"


# ---- the report ---------------------------------------------------------------------------


def fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def size_label(n: int) -> str:
    return f"{n >> 10} KiB" if n >= 1024 and n % 1024 == 0 else f"{n} B"


def report(
    arch: Arch,
    tables: dict[str, str],
    results: dict[Cell, float | None],
    rows: dict[str, Rows],
    models: list[str],
    sizes: list[int],
    meta: dict[str, str],
    command: str,
) -> str:
    begin, end = arch.markers
    go_env = ", ".join(f"{k}={v}" for k, v in arch.go_env if k != "GOARCH")
    lines = [
        arch.heading,
        "",
        begin,
        "",
        "Guest instructions executed per byte of message, counted by the `insn` TCG plugin",
        f"of Debian's qemu source (qemu-user {meta['qemu']}, `-plugin libinsn.so,inline=on`),",
        f"over {meta['total_mib']} MiB per cell in messages of the given size, minus a run of the",
        "same binary with no messages (set-up and one warm-up message in both). Lower is",
        "better. **Instructions are not cycles**: qemu models no pipeline, a vector instruction",
        "counts as one like a scalar one, and a library can execute more instructions and still",
        "be faster on a real chip. The counts are exact and repeatable, so they compare",
        "implementations of one ISA where no such hardware is at hand. (They move by up to ~25",
        "instructions per call with stack alignment, through glibc's memcpy and memset: every",
        "run gets an environment and arguments of the same size.)",
        "",
        f"- **Command:** `{command}` (after `bench/insn/setup.sh {arch.name}`; "
        f"`make bench-insn-{arch.name}` runs both)",
        f"- **Date:** {meta['date']} (took {meta['elapsed']} s)",
        f"- **Tree:** {meta['tree']}",
        f"- **Peers** (Debian 12 {arch.debian} builds, run from a debootstrap tree): "
        f"{meta['libgcrypt']}, {meta['OpenSSL']}, {meta['libsodium']}; {meta['Go']} "
        f"({go_env + ', ' if go_env else ''}GOGC=off).",
        "- Per message, as a user would (bench/c/workloads.h): ChaCha20 and the AEAD keyed with",
        "  a fresh nonce (no AAD), Poly1305 with a fresh one-time key, SHA-2 one-shot, a",
        "  Camellia key scheduled once. poly1305-stream is Go's BenchmarkWrite64/Write1K: one",
        "  MAC keyed once, one write of the size per call through each library's streaming",
        "  API (`archcrypt_poly1305_update`, EVP_MAC_update, crypto_onetimeauth_poly1305_update,",
        "  gcry_mac_write, Go's poly1305.MAC.Write), the tag after the last write.",
        "- archcrypt (auto): the row dispatch picks on that model, named after the figure (the",
        "  composed AEAD: its ChaCha20 and Poly1305 rows); every runnable row, pinned with",
        "  `ARCHCRYPT_FORCE`, is listed in the second table of each model.",
        *arch.notes,
        "",
    ]
    for model in models:
        lines += [f"### `-cpu {model}`", ""]
        lines.append(
            "| operation | size | archcrypt (auto) | "
            + " | ".join(PEERS)
            + " | archcrypt / best peer |"
        )
        lines.append("|---|---|---|" + "---|" * len(PEERS) + "---|")
        for operation in tables:
            for size in sizes:
                ours = results.get(Cell(model, "archcrypt", "", operation, size))
                peers = [results.get(Cell(model, p, "", operation, size)) for p in PEERS]
                known = [(v, p) for v, p in zip(peers, PEERS, strict=True) if v is not None]
                best = min(known) if known else None
                cells = [f"**{fmt(v)}**" if best and v == best[0] else fmt(v) for v in peers]
                ratio = f"{ours / best[0]:.2f} ({best[1]})" if ours and best else "n/a"
                lines.append(
                    f"| {operation} | {size_label(size)} | {fmt(ours)} "
                    f"{auto_label(rows[model], tables, operation)} | "
                    + " | ".join(cells)
                    + f" | {ratio} |"
                )
        behind = [
            f"{operation} at {size_label(size)}"
            for operation in tables
            for size in sizes
            if _ratio(results, model, operation, size) > 1
        ]
        lines += [
            "",
            "More instructions than the best peer: "
            + (", ".join(behind) if behind else "none")
            + ".",
        ]
        lines += ["", "Every archcrypt row on this model:", ""]
        lines.append("| operation | row | " + " | ".join(size_label(s) for s in sizes) + " |")
        lines.append("|---|---|" + "---|" * len(sizes))
        for operation, table in tables.items():
            for row in rows[model].runnable.get(operation, []):
                values = [
                    results.get(Cell(model, "archcrypt", f"{table}={row}", operation, s))
                    for s in sizes
                ]
                lines.append(f"| {operation} | `{row}` | " + " | ".join(map(fmt, values)) + " |")
        lines.append("")
    lines += [end, ""]
    return "\n".join(lines)


def _ratio(results: dict[Cell, float | None], model: str, operation: str, size: int) -> float:
    ours = results.get(Cell(model, "archcrypt", "", operation, size))
    peers = [results.get(Cell(model, p, "", operation, size)) for p in PEERS]
    known = [v for v in peers if v is not None]
    return ours / min(known) if ours is not None and known else 0.0


def write_section(arch: Arch, path: Path, section: str) -> None:
    """Replace the marked section of `path`, or append it (other sections stay as they are)."""
    _, end_marker = arch.markers
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = text.find(arch.heading)
    if start >= 0 and end_marker in text[start:]:
        end = text.index(end_marker, start) + len(end_marker)
        text = text[:start] + section.rstrip("\n") + text[end:]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def tree_state() -> str:
    try:
        commit = sh(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]).stdout.strip()
        dirty = sh(["git", "-C", str(ROOT), "status", "--porcelain", "native/src"]).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return f"`{commit}`" + (" plus uncommitted kernel work in native/src" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=sorted(ARCHES), default="ppc64le")
    parser.add_argument("--models", help="comma-separated -cpu models (default: the arch's)")
    parser.add_argument("--sizes", default="64,1024,65536")
    parser.add_argument("--operations", help="comma-separated (default: every workload)")
    parser.add_argument("--total", type=int, default=4 << 20, help="bytes per cell")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--write", type=Path, help="put the Markdown section into this file")
    parser.add_argument(
        "--report-only", action="store_true", help="render the arch's last results again"
    )
    args = parser.parse_args()
    arch = ARCHES[args.arch]
    if args.report_only:
        publish(arch, json.loads(arch.results.read_text(encoding="utf-8")), args.write)
        return
    command = "python3 bench/insn/run.py"
    command += f" --arch {arch.name}" if arch.name != "ppc64le" else ""
    command += f" --write {args.write}" if args.write else ""
    for tool in (arch.qemu, arch.cc, "go"):
        if not shutil.which(tool):
            sys.exit(f"run.py: {tool} not found: run bench/insn/setup.sh {arch.name} first")
    models = args.models.split(",") if args.models else list(arch.models)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.monotonic()
    bins = build(arch)
    meta = versions(arch)
    meta["tree"] = tree_state()  # what the harness was built from
    tables = workload_tables(arch, bins["archcrypt"])
    if args.operations:
        unknown = set(args.operations.split(",")) - set(tables)
        if unknown:
            sys.exit(f"run.py: unknown operations {sorted(unknown)}; known: {', '.join(tables)}")
        tables = {op: t for op, t in tables.items() if op in args.operations.split(",")}

    rows = {m: archcrypt_rows(arch, bins["archcrypt"], m, tables) for m in models}
    cells: list[tuple[Cell, Path]] = []
    for model in models:
        for operation, table in tables.items():
            for size in sizes:
                cells.append((Cell(model, "archcrypt", "", operation, size), bins["archcrypt"]))
                for row in rows[model].runnable.get(operation, []):
                    cell = Cell(model, "archcrypt", f"{table}={row}", operation, size)
                    cells.append((cell, bins["archcrypt"]))
                for peer in PEERS:
                    cells.append((Cell(model, peer, "", operation, size), bins[peer]))
    print(f"run.py: {len(cells)} cells, 2 qemu runs each, {args.jobs} at a time", file=sys.stderr)
    results: dict[Cell, float | None] = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {
            pool.submit(measure, arch, cell, binary, args.total): cell for cell, binary in cells
        }
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            cell = futures[future]
            results[cell] = future.result()
            if done % 20 == 0 or done == len(cells):
                print(
                    f"run.py: {done}/{len(cells)} cells ({time.monotonic() - started:.0f} s)",
                    file=sys.stderr,
                )

    meta.update(
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        elapsed=f"{time.monotonic() - started:.0f}",
        total_mib=f"{args.total / (1 << 20):g}",
        command=command,
    )
    saved = {
        "meta": meta,
        "models": models,
        "sizes": sizes,
        "tables": tables,
        "rows": {m: dataclasses.asdict(r) for m, r in rows.items()},
        "results": [{**dataclasses.asdict(c), "value": v} for c, v in results.items()],
    }
    arch.results.write_text(json.dumps(saved, indent=1), encoding="utf-8")
    publish(arch, saved, args.write)


def publish(arch: Arch, saved: dict[str, Any], write: Path | None) -> None:
    results = {
        Cell(r["model"], r["library"], r["row"], r["operation"], r["size"]): r["value"]
        for r in saved["results"]
    }
    rows = {m: Rows(**r) for m, r in saved["rows"].items()}
    meta = saved["meta"]
    section = report(
        arch, saved["tables"], results, rows, saved["models"], saved["sizes"], meta, meta["command"]
    )
    (OUT / f"report-{arch.name}.md").write_text(section, encoding="utf-8")
    if write:
        write_section(arch, write, section)
        print(f"run.py: wrote the section into {write}", file=sys.stderr)
    else:
        print(section)


if __name__ == "__main__":
    main()
