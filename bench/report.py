"""Write BENCHMARKS.md from one run of bench/run.sh (C and Python peer tables).

Regenerated on every run: the header (command, date, machine, measured clock), the
at-a-glance ratios and the full tables. Kept across runs: the hand-written reading
between the `reading:begin` / `reading:end` markers of the existing file.

Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import re
import subprocess
from collections import defaultdict
from pathlib import Path

BEGIN, END = "<!-- reading:begin -->", "<!-- reading:end -->"
PLACEHOLDER = (
    "_No reading yet: write one here (where archcrypt wins, where it loses and why). "
    "Text between these markers survives `make bench-md`._"
)


def size_label(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine() -> str:
    info: dict[str, str] = {}
    for line in run(["lscpu"]).splitlines():
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    model = info.get("Model name", platform.processor() or "?")
    family, number = info.get("CPU family", ""), info.get("Model", "")
    micro = ""
    if info.get("Vendor ID") == "AuthenticAMD" and family.isdigit() and number.isdigit():
        fam, mod = int(family), int(number)
        if fam == 25:
            micro = "Zen 4" if 0x10 <= mod <= 0x1F or 0x60 <= mod <= 0xAF else "Zen 3"
        elif fam == 26:
            micro = "Zen 5"
        elif fam == 23:
            micro = "Zen 2" if mod >= 0x30 else "Zen/Zen+"
    cpus = info.get("CPU(s)", "?")
    hyp = info.get("Hypervisor vendor")
    desc = f"{model} (family {family} model {number}" + (f": {micro}" if micro else "") + ")"
    desc += f", {cpus} vCPU" + (f" under {hyp}" if hyp else "")
    flags = info.get("Flags", "").split()
    if flags:
        has512 = any(f.startswith("avx512") for f in flags)
        desc += ", " + ("AVX-512 present" if has512 else "no AVX-512")
    return f"{desc}; Linux {platform.release()}"


def glance_c(path: Path) -> str:
    rows: dict[str, dict[int, dict[str, float | str]]] = defaultdict(dict)
    chosen: dict[str, str] = {}
    best: dict[tuple[str, int], tuple[float, str]] = {}
    sizes: set[int] = set()
    with path.open(encoding="utf-8") as f:
        for r in csv.DictReader(f):
            alg, size, ns = r["algorithm"], int(r["size_bytes"]), float(r["ns_per_call"])
            sizes.add(size)
            if r["library"] == "archcrypt":
                if r["chosen"] == "1":
                    chosen[alg] = r["implementation"]
                    rows[alg][size] = {"ours": ns}
            elif r["output_ok"] == "1":
                key = (alg, size)
                if key not in best or ns < best[key][0]:
                    best[key] = (ns, r["library"])
    order = sorted(sizes)
    out = [
        "| algorithm (archcrypt row chosen) | " + " | ".join(map(size_label, order)) + " |",
        "|---|" + "--:|" * len(order),
    ]
    for alg, cells in rows.items():
        parts = []
        for size in order:
            if size in cells and (alg, size) in best:
                ours = float(cells[size]["ours"])
                ns, lib = best[(alg, size)]
                ratio = ours / ns
                text = f"{ratio:.2f} {lib}"
                parts.append(f"**{text}**" if ratio <= 1.0 else text)
            else:
                parts.append("n/a")
        out.append(f"| {alg} ({chosen.get(alg, '?')}) | " + " | ".join(parts) + " |")
    return "\n".join(out)


def glance_py(path: Path) -> str:
    ours: dict[tuple[str, int], float] = {}
    best: dict[tuple[str, int], tuple[float, str]] = {}
    sizes: set[int] = set()
    ops: list[str] = []
    with path.open(encoding="utf-8") as f:
        for r in csv.DictReader(f):
            op, size, ns = r["operation"], int(r["size_bytes"]), float(r["ns_per_call"])
            sizes.add(size)
            if op not in ops:
                ops.append(op)
            if r["library"] == "archcrypt":
                ours[(op, size)] = ns
            elif (op, size) not in best or ns < best[(op, size)][0]:
                best[(op, size)] = (ns, r["library"])
    order = sorted(sizes)
    out = [
        "| operation | " + " | ".join(map(size_label, order)) + " |",
        "|---|" + "--:|" * len(order),
    ]
    for op in ops:
        parts = []
        for size in order:
            ns, lib = best[(op, size)]
            ratio = ours[(op, size)] / ns
            text = f"{ratio:.2f} {lib}"
            parts.append(f"**{text}**" if ratio <= 1.0 else text)
        out.append(f"| {op} | " + " | ".join(parts) + " |")
    return "\n".join(out)


def kept_reading(path: Path) -> str:
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if BEGIN in text and END in text:
            return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")
    return PLACEHOLDER


def kept_sections(path: Path) -> str:
    """Sections other tools own in the same file (e.g. bench/insn/run.py's
    `insn-ppc64le:begin/end`), each with the heading right above its begin marker: carried
    over as they are, so rewriting this table never drops another tool's results."""
    if not path.exists():
        return ""
    kept = []
    text = path.read_text(encoding="utf-8")
    for match in re.finditer(r"(?m)^(## [^\n]*\n\s*)?<!-- ([\w-]+):begin -->", text):
        name = match.group(2)
        end = f"<!-- {name}:end -->"
        if name == "reading" or end not in text[match.end():]:
            continue
        stop = text.index(end, match.end()) + len(end)
        kept.append(text[match.start():stop])
    return "".join(f"\n{block}\n" for block in kept)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in (
        "out",
        "command",
        "c-md",
        "c-csv",
        "py-md",
        "py-csv",
        "started",
        "elapsed",
        "load-before",
        "load-after",
        "bench-binary",
    ):
        p.add_argument(f"--{name}", required=True)
    a = p.parse_args()
    out = Path(a.out)
    c_md = Path(a.c_md).read_text(encoding="utf-8").strip()
    py_md = Path(a.py_md).read_text(encoding="utf-8").strip()

    clock = re.search(r"Core clock ([0-9.]+) GHz", c_md)
    not_runnable = []
    alg = ""
    for line in c_md.splitlines():
        if line.startswith("### "):
            alg = line[4:].split(":", 1)[0]
        if line.startswith("Not runnable on this CPU:"):
            names = re.findall(r"`([^`]+)`", line)
            not_runnable += [f"{alg} `{n}`" for n in names]
    commit = run(["git", "rev-parse", "--short", "HEAD"]) or "?"
    # Only code changes make the measured tree differ from the commit (not this file).
    dirty = bool(
        run(["git", "status", "--porcelain", "--untracked-files=no", "--", "native", "service"])
    ) or bool(
        run(["git", "ls-files", "--others", "--exclude-standard", "native/src"])
    )
    tree = f"`{commit}`" + (" plus uncommitted kernel work in the tree" if dirty else "")

    doc = f"""# Benchmarks

archcrypt side by side with the libraries a user would pick instead, measured in one
run on one machine. Regenerate with `make bench-md`; `make bench` prints the same
tables without writing this file.

- **Command:** `{a.command}` (builds `make -C native lib bench-peers`, then runs
  `{os.path.relpath(a.bench_binary)}` and `.venv/bin/python bench/python/peers.py`)
- **Date:** {a.started} (took {a.elapsed} s)
- **Tree:** {tree}
- **Machine:** {machine()}; load average {a.load_before} before, {a.load_after} after
  (a shared machine: other jobs ran during the measurement)
- **Clock:** {clock.group(1) if clock else "?"} GHz, measured by `archcrypt_core_hz()`
  timing a chain of dependent one-cycle adds. Cycles per byte are at that clock, not at
  the TSC rate (the TSC ticks at a fixed nominal frequency whatever the core does).
- **Not measured here:** {", ".join(not_runnable) if not_runnable else "nothing"}
  {"(the CPU has no AVX-512)" if not_runnable else ""}

## Reading

{BEGIN}
{kept_reading(out)}
{END}

## At a glance: time per call, archcrypt (chosen row) / fastest peer

Below 1 (bold) archcrypt is faster; the name is the fastest peer of that cell.

C, kernel against kernel:

{glance_c(Path(a.c_csv))}

Python, call against call (archcrypt.crypto vs pyca/cryptography and hashlib):

{glance_py(Path(a.py_csv))}

## C: archcrypt vs OpenSSL, libsodium, libgcrypt

{c_md}

## Python: archcrypt.crypto vs pyca/cryptography and hashlib

{py_md}

## How it is measured

- One process per language; every contestant gets the same 64-byte-aligned input and
  output buffers, the same key and nonce. Before timing, every output is compared with
  archcrypt's `portable` row (C, twice in a row, to catch a reused context that is not
  reset) or with the other contestants (Python).
- Per cell (operation x size) each contestant is calibrated to a sample of about 0.5 ms;
  then the contestants take turns, one sample each, round after round, in a fresh
  random order every round. Each cell reports the median of its samples, so a burst of noise from a
  neighbour lands on every contestant of the cell alike. The whole plan is swept three
  times, each sweep taking a third of every cell's samples, so a cell's samples span the
  run and a load burst that happens to favour one contestant moves only one sweep's
  share. A sample during which the thread was descheduled (a context switch counted by
  `getrusage(RUSAGE_THREAD)`) is taken again, up to four times; one that never runs
  undisturbed (a single call longer than a scheduler time slice, e.g. portable code over
  1 MiB) counts the thread's CPU time instead of wall time. Absolute c/B still drift
  between cells as the load on the machine changes (compare 64 KiB with 1 MiB of one
  row); the ratios within a cell are the robust numbers.
- Peers are used the way a careful user would: contexts and algorithm objects fetched
  or opened once and re-keyed per message (OpenSSL `EVP_*_ex2` init on a reused
  context, libgcrypt `setkey`/`setiv` on an open handle), Camellia keys scheduled once
  for everyone. For SHA-2 OpenSSL gets two rows: the one-shot `EVP_Digest` (it sets up
  a context per call) and a reused `EVP_MD_CTX`; the ratio takes the faster.
- archcrypt rows are iterated from the dispatch tables through the public API
  (`archcrypt_implementation_count/_runnable/_name`) and pinned per sample with
  `archcrypt_use_on_this_thread`, so kernels added later show up without editing the
  harness. The ChaCha20-Poly1305 row runs whichever ChaCha20 and Poly1305 rows are chosen.
"""
    doc += kept_sections(out)
    out.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    main()
