"""Instructions per byte under qemu-user, ppc64le or arm64: archcrypt (every runnable row)
against Debian's libgcrypt, OpenSSL and libsodium for that arch and Go's x/crypto, per CPU
model.

    bench/insn/setup.sh [ppc64le|arm64]      # once: packages, the plugin, the peers' tree
    python3 bench/insn/run.py [--arch ppc64le|arm64] [--write BENCHMARKS.md]
                              [--models power8,power9,power10] [--sizes 64,1024,65536]
                              [--total 4194304] [--jobs N]

Each cell runs a harness twice under `qemu-<arch> -cpu MODEL -plugin libinsn.so,inline=on`:
with CALLS = total/size messages and with none (same binary, same set-up, one warm-up
message in both); the difference divided by the bytes is the cell. Counts are exact and
repeatable for a given binary and model, so one run per cell is enough. Instructions are
not cycles: a vector instruction and a scalar one count the same, and a peer may execute
more instructions and still run faster on a real chip.

Not in the test suite (see `make bench-insn`). Standard library only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime
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


@dataclass(frozen=True)
class Arch:
    name: str  # as archcrypt and BENCHMARKS.md name it
    debian: str  # Debian's name: the tree's directory and the packages' architecture
    triple: str
    qemu: str  # the dynamic build: qemu-<arch>-static has no -plugin
    go_env: tuple[tuple[str, str], ...]  # GOARCH and its level
    chip: str  # "a real POWER chip"
    models: str  # the default --models
    cpu: tuple[tuple[str, str], ...] = ()  # a model's -cpu value where it is not its name

    def cpu_option(self, model: str) -> str:
        return dict(self.cpu).get(model, model)

    @property
    def tree(self) -> Path:
        return OUT / self.debian

    @property
    def cc(self) -> str:
        return f"{self.triple}-gcc"

    @property
    def results(self) -> Path:
        return OUT / f"results-{self.name}.json"

    @property
    def heading(self) -> str:
        return f"## {self.name}: instructions per byte under qemu"

    @property
    def markers(self) -> tuple[str, str]:
        return f"<!-- insn-{self.name}:begin -->", f"<!-- insn-{self.name}:end -->"


ARCHES = {
    "ppc64le": Arch("ppc64le", "ppc64el", "powerpc64le-linux-gnu", "qemu-ppc64le",
                    (("GOARCH", "ppc64le"), ("GOPPC64", "power8")), "POWER",
                    "power8,power9,power10"),
    # Go 1.19 has no GOARM64 level: its arm64 port detects the extensions at run time.
    # max runs SVE at 512 bits unless told otherwise; counted at 128 (Graviton4, Neoverse
    # V2: the width SVE code meets on servers).
    "arm64": Arch("arm64", "arm64", "aarch64-linux-gnu", "qemu-aarch64",
                  (("GOARCH", "arm64"),), "Arm", "cortex-a72,max",
                  (("max", "max,sve-default-vector-length=16"),)),
}
A = ARCHES["ppc64le"]  # set by main() from --arch

OPERATIONS = ("chacha20", "poly1305", "chacha20-poly1305", "sha256", "sha512", "camellia-128-ecb")
# The dispatch table behind each operation (the AEAD composes the chacha20 and poly1305 rows).
TABLE = {
    "chacha20": "chacha20",
    "poly1305": "poly1305",
    "sha256": "sha256",
    "sha512": "sha512",
    "camellia-128-ecb": "camellia",
}
PEERS = ("libgcrypt", "OpenSSL", "libsodium", "Go")


def sh(
    cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=cwd, env=env)


# ---- building the harnesses -------------------------------------------------------------


def build() -> dict[str, Path]:
    """One binary of the target per library; archcrypt's is static, the Debian peers link the
    tree's shared libraries (found at run time through qemu -L), Go's is Go's."""
    missing = [p for p in (PLUGIN, A.tree / ".archcrypt-foreign-tree") if not p.exists()]
    if missing:
        sys.exit(f"run.py: {', '.join(map(str, missing))} missing: "
                 f"run bench/insn/setup.sh {A.name} first")
    subprocess.run(
        ["make", "-s", "-C", str(ROOT / "native"), f"CC={A.cc}", f"-j{os.cpu_count() or 2}", "lib"],
        check=True,
    )
    lib = sh(
        ["make", "-s", "--no-print-directory", "-C", str(ROOT / "native"), f"CC={A.cc}", "print-lib"]
    ).stdout.strip()
    source = HERE / "harness.c"
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra"]
    bins = {"archcrypt": OUT / f"harness-archcrypt-{A.name}"}
    sh(
        [
            A.cc,
            *flags,
            "-static",
            "-DLIB_ARCHCRYPT",
            f"-I{ROOT / 'native' / 'include'}",
            str(source),
            lib,
            "-pthread",
            "-o",
            str(bins["archcrypt"]),
        ]
    )
    libdir = A.tree / "usr" / "lib" / A.triple
    # The tree's headers after the cross toolchain's own (the same glibc), and each shared
    # library by path: -L into the tree would pick up its libc.so linker script, whose
    # absolute paths name the host's /lib.
    peer_flags = [
        "-idirafter",
        str(A.tree / "usr" / "include"),
        "-idirafter",
        str(A.tree / "usr" / "include" / A.triple),
        f"-Wl,-rpath-link,{libdir}",
    ]
    for name, macro, libs in (
        ("libgcrypt", "LIB_GCRYPT", ["libgcrypt.so.20"]),
        ("OpenSSL", "LIB_OPENSSL", ["libcrypto.so.3"]),
        ("libsodium", "LIB_SODIUM", ["libsodium.so.23"]),
    ):
        bins[name] = OUT / f"harness-{name.lower()}-{A.name}"
        sh(
            [
                A.cc,
                *flags,
                f"-D{macro}",
                *peer_flags,
                str(source),
                *(str(libdir / so) for so in libs),
                "-o",
                str(bins[name]),
            ]
        )
    bins["Go"] = OUT / f"harness-go-{A.name}"
    sh(
        ["go", "build", "-trimpath", "-o", str(bins["Go"]), "main.go"],
        cwd=HERE / "go",
        env={
            **os.environ,
            "GO111MODULE": "off",
            "GOPATH": "/usr/share/gocode",
            "GOOS": "linux",
            **dict(A.go_env),
            "CGO_ENABLED": "0",
            "GOCACHE": str(OUT / f"gocache-{A.name}"),
        },
    )
    return bins


def versions() -> dict[str, str]:
    """Versions of the peers as built here: Debian's from the tree's .deb names."""
    debs = (A.tree / "debootstrap" / "debpaths").read_text()

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


@dataclass(frozen=True)
class Cell:
    model: str
    library: str  # "archcrypt" or a peer
    row: str  # archcrypt: the ARCHCRYPT_FORCE value ("" = automatic); peers: ""
    operation: str
    size: int


def count(binary: Path, model: str, args: list[str], env: dict[str, str]) -> int | None:
    """Guest instructions of one run (None: the library lacks the operation, exit 2)."""
    log = OUT / "logs" / f"{os.getpid()}-{time.monotonic_ns()}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        A.qemu,
        "-cpu",
        A.cpu_option(model),
        "-L",
        str(A.tree),
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


def measure(cell: Cell, binary: Path, total: int) -> float | None:
    env = environment(cell.row)
    calls = max(1, total // cell.size)
    size = f"{cell.size:09d}"  # fixed-width arguments: the stack starts at the same place
    empty = count(binary, cell.model, [cell.operation, size, f"{0:09d}"], env)
    full = count(binary, cell.model, [cell.operation, size, f"{calls:09d}"], env)
    if empty is None or full is None:
        return None
    return (full - empty) / (calls * cell.size)


@dataclass(frozen=True)
class Rows:
    runnable: dict[str, list[str]]  # operation -> rows this model can run, best first
    selected: dict[str, str]  # dispatch table -> the row dispatch picks on this model


def archcrypt_rows(binary: Path, model: str) -> Rows:
    """What the library itself reports on this model (`harness rows`)."""
    proc = subprocess.run(
        [A.qemu, "-cpu", A.cpu_option(model), str(binary), "rows"],
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
    return Rows({op: runnable.get(table, []) for op, table in TABLE.items()}, selected)


def auto_label(rows: Rows, operation: str) -> str:
    if operation == "chacha20-poly1305":
        return f"`{rows.selected['chacha20']}`+`{rows.selected['poly1305']}`"
    return f"`{rows.selected[TABLE[operation]]}`"


# ---- the report ---------------------------------------------------------------------------


def fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def size_label(n: int) -> str:
    return f"{n >> 10} KiB" if n >= 1024 and n % 1024 == 0 else f"{n} B"


def report(
    results: dict[Cell, float | None],
    rows: dict[str, Rows],
    models: list[str],
    sizes: list[int],
    meta: dict[str, str],
    command: str,
) -> str:
    begin, end = A.markers
    go_level = ", ".join(f"{k}={v}" for k, v in A.go_env if k != "GOARCH")
    lines = [
        A.heading,
        "",
        begin,
        "",
        "Guest instructions executed per byte of message, counted by the `insn` TCG plugin",
        f"of Debian's qemu source (qemu-user {meta['qemu']}, `-plugin libinsn.so,inline=on`),",
        f"over {meta['total_mib']} MiB per cell in messages of the given size, minus a run of the",
        "same binary with no messages (set-up and one warm-up message in both). Lower is",
        "better. **Instructions are not cycles**: qemu models no pipeline, a vector instruction",
        "counts as one like a scalar one, and a library can execute more instructions and still",
        f"be faster on a real {A.chip} chip. The counts are exact and repeatable, so they compare",
        "implementations of one ISA where no such hardware is at hand. (They move by up to ~25",
        "instructions per call with stack alignment, through glibc's memcpy and memset: every",
        "run gets an environment and arguments of the same size.)",
        "",
        f"- **Command:** `{command}` (after `bench/insn/setup.sh {A.name}`; "
        f"`make bench-insn-{A.name}` runs both)",
        f"- **Date:** {meta['date']} (took {meta['elapsed']} s)",
        f"- **Tree:** {meta['tree']}",
        f"- **Peers** (Debian 12 {A.debian} builds, run from a debootstrap tree): "
        f"{meta['libgcrypt']}, {meta['OpenSSL']}, {meta['libsodium']}; {meta['Go']} "
        f"({go_level + ', ' if go_level else ''}GOGC=off).",
        "- Per message, as a user would: ChaCha20 and the AEAD keyed with a fresh nonce (no AAD),",
        "  Poly1305 with a fresh one-time key, SHA-2 one-shot, a Camellia key scheduled once.",
        "- archcrypt (auto): the row dispatch picks on that model, named after the figure (the",
        "  AEAD: its ChaCha20 and Poly1305 rows); every runnable row, pinned with",
        "  `ARCHCRYPT_FORCE`, is listed in the second table of each model.",
        "",
    ]
    for model in models:
        lines += [f"### `-cpu {A.cpu_option(model)}`", ""]
        lines.append(
            "| operation | size | archcrypt (auto) | "
            + " | ".join(PEERS)
            + " | archcrypt / best peer |"
        )
        lines.append("|---|---|---|" + "---|" * len(PEERS) + "---|")
        for operation in OPERATIONS:
            for size in sizes:
                ours = results.get(Cell(model, "archcrypt", "", operation, size))
                peers = [results.get(Cell(model, p, "", operation, size)) for p in PEERS]
                known = [(v, p) for v, p in zip(peers, PEERS, strict=True) if v is not None]
                best = min(known) if known else None
                cells = [f"**{fmt(v)}**" if best and v == best[0] else fmt(v) for v in peers]
                ratio = f"{ours / best[0]:.2f} ({best[1]})" if ours and best else "n/a"
                lines.append(
                    f"| {operation} | {size_label(size)} | {fmt(ours)} "
                    f"{auto_label(rows[model], operation)} | " + " | ".join(cells) + f" | {ratio} |"
                )
        behind = [
            f"{operation} at {size_label(size)}"
            for operation in OPERATIONS
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
        for operation in OPERATIONS:
            for row in rows[model].runnable.get(operation, []):
                values = [
                    results.get(Cell(model, "archcrypt", f"{TABLE[operation]}={row}", operation, s))
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


def write_section(path: Path, section: str) -> None:
    """Replace the marked section of `path`, or append it (other sections stay as they are)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = text.find(A.heading)
    _, marker = A.markers
    if start >= 0 and marker in text[start:]:
        end = text.index(marker, start) + len(marker)
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
    parser.add_argument("--models", help="CPU models (default: per arch, e.g. power8,power9,power10)")
    parser.add_argument("--operations", default=",".join(OPERATIONS),
                        help="a subset, for a quick look (the report lists only these)")
    parser.add_argument("--sizes", default="64,1024,65536")
    parser.add_argument("--total", type=int, default=4 << 20, help="bytes per cell")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--write", type=Path, help="put the Markdown section into this file")
    parser.add_argument(
        "--report-only", action="store_true", help="render the last run's results again"
    )
    args = parser.parse_args()
    global A
    A = ARCHES[args.arch]
    if args.report_only:
        publish(json.loads(A.results.read_text(encoding="utf-8")), args.write)
        return
    command = f"python3 bench/insn/run.py --arch {A.name}" + (
        f" --write {args.write}" if args.write else ""
    )
    for tool in (A.qemu, A.cc, "go"):
        if not shutil.which(tool):
            sys.exit(f"run.py: {tool} not found: run bench/insn/setup.sh {A.name} first")
    models = (args.models or A.models).split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.monotonic()
    bins = build()
    meta = versions()
    meta["tree"] = tree_state()  # what the harness was built from

    rows = {m: archcrypt_rows(bins["archcrypt"], m) for m in models}
    cells: list[tuple[Cell, Path]] = []
    for model in models:
        for operation in args.operations.split(","):
            for size in sizes:
                cells.append((Cell(model, "archcrypt", "", operation, size), bins["archcrypt"]))
                for row in rows[model].runnable.get(operation, []):
                    cell = Cell(model, "archcrypt", f"{TABLE[operation]}={row}", operation, size)
                    cells.append((cell, bins["archcrypt"]))
                for peer in PEERS:
                    cells.append((Cell(model, peer, "", operation, size), bins[peer]))
    print(f"run.py: {len(cells)} cells, 2 qemu runs each, {args.jobs} at a time", file=sys.stderr)
    results: dict[Cell, float | None] = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(measure, cell, binary, args.total): cell for cell, binary in cells}
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
        "rows": {m: dataclasses.asdict(r) for m, r in rows.items()},
        "results": [{**dataclasses.asdict(c), "value": v} for c, v in results.items()],
    }
    A.results.write_text(json.dumps(saved, indent=1), encoding="utf-8")
    publish(saved, args.write)


def publish(saved: dict[str, Any], write: Path | None) -> None:
    results = {
        Cell(r["model"], r["library"], r["row"], r["operation"], r["size"]): r["value"]
        for r in saved["results"]
    }
    rows = {m: Rows(**r) for m, r in saved["rows"].items()}
    meta = saved["meta"]
    section = report(results, rows, saved["models"], saved["sizes"], meta, meta["command"])
    (OUT / f"report-{A.name}.md").write_text(section, encoding="utf-8")
    if write:
        write_section(write, section)
        print(f"run.py: wrote the section into {write}", file=sys.stderr)
    else:
        print(section)


if __name__ == "__main__":
    main()
