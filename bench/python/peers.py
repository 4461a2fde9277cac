"""What a Python user would pick instead: archcrypt.crypto facade vs pyca/cryptography and hashlib.

The same operation, same inputs, in one process. Per (operation, size) cell every
contestant is calibrated to a short sample (~1 ms); then they take turns, one sample
each, round after round (in a fresh random order), and each reports the median of its
samples. A sample during which the thread was descheduled (getrusage RUSAGE_THREAD
context switches) is taken again, up to 4 times, and the whole plan is swept several
times (--passes) so each cell's samples span the run. Each statement runs inline in a
timeit loop, so no wrapper call is counted. Outputs are checked against each other
before timing.

    python bench/python/peers.py [--sizes 64,1024,65536] [--cell-time 3]
                                 [--passes 3] [--csv FILE]

The workload table is operations(): one entry per operation, each contestant's statement
and the expression its output is checked by.

Markdown to stdout, progress to stderr. Run it with the project's virtualenv
(archcrypt installed, cryptography from the test extras).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import resource
import ssl
import statistics
import sys
import time
import timeit
import warnings
from dataclasses import dataclass, field
from typing import Any

import cryptography
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.poly1305 import Poly1305

import archcrypt
from archcrypt import crypto

try:  # cryptography >= 43 moved Camellia to "decrepit"; the old name goes away in 49
    from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia as PycaCamellia
except ImportError:  # pragma: no cover - older cryptography
    PycaCamellia = algorithms.Camellia

KEY = bytes(range(0x42, 0x42 + 32))
NONCE = bytes((0x24 + 5 * i) & 0xFF for i in range(12))
NONCE16 = (1).to_bytes(4, "little") + NONCE  # pyca ChaCha20: 32-bit LE counter (1), nonce


@dataclass
class Contestant:
    label: str
    library: str  # "archcrypt", "pyca/cryptography", "hashlib"
    stmt: str  # timed inline by timeit; `data` is the message
    check: str  # expression whose value must equal the reference
    setup: dict[str, Any] = field(default_factory=dict)
    numbers: dict[int, int] = field(default_factory=dict)  # size -> calls per sample
    samples: dict[int, list[float]] = field(default_factory=dict)  # size -> seconds per call


def _pyca_openssl() -> str:
    try:
        from cryptography.hazmat.backends.openssl.backend import backend

        return str(backend.openssl_version_text())
    except Exception:  # pragma: no cover - informational only
        return "OpenSSL ?"


PYCA = f"pyca/cryptography {cryptography.__version__} ({_pyca_openssl()})"
HASHLIB = f"hashlib (Python {sys.version.split()[0]}, {ssl.OPENSSL_VERSION.rsplit(' ', 3)[0]})"
OURS = f"archcrypt {archcrypt.crypto.version()} facade"


def operations() -> dict[str, tuple[str, list[Contestant]]]:
    """operation -> (title, contestants). Objects a user would keep (keys) are made once."""
    camellia_key = KEY[:16]
    ours_camellia = crypto.Camellia(camellia_key)
    pyca_camellia = Cipher(PycaCamellia(camellia_key), modes.ECB()).encryptor()
    pyca_aead = ChaCha20Poly1305(KEY)
    common = {
        "crypto": crypto,
        "KEY": KEY,
        "NONCE": NONCE,
        "NONCE16": NONCE16,
        "Cipher": Cipher,
        "algorithms": algorithms,
        "Poly1305": Poly1305,
        "hashes": hashes,
        "hashlib": hashlib,
    }

    def c(label: str, lib: str, stmt: str, check: str | None = None, **extra: Any) -> Contestant:
        return Contestant(label, lib, stmt, check or stmt, {**common, **extra})

    def hash_row(name: str) -> list[Contestant]:
        upper = name.upper()
        return [
            c(
                f"{OURS}: crypto.digest('{name}', data)",
                "archcrypt",
                f"crypto.digest('{name}', data)",
            ),
            c(
                f"{HASHLIB}: hashlib.{name}(data).digest()",
                "hashlib",
                f"hashlib.{name}(data).digest()",
            ),
            c(
                f"{PYCA}: hashes.Hash({upper}()) update/finalize",
                "pyca/cryptography",
                f"h = hashes.Hash(hashes.{upper}()); h.update(data); h.finalize()",
                f"(lambda h: (h.update(data), h.finalize())[1])(hashes.Hash(hashes.{upper}()))",
            ),
        ]

    return {
        "chacha20-poly1305": (
            "ChaCha20-Poly1305 seal (no AAD)",
            [
                c(
                    f"{OURS}: crypto.aead_seal(alg, key, nonce, data)",
                    "archcrypt",
                    "crypto.aead_seal('chacha20-poly1305', KEY, NONCE, data)",
                ),
                c(
                    f"{PYCA}: ChaCha20Poly1305(key).encrypt(nonce, data, None), key object reused",
                    "pyca/cryptography",
                    "aead.encrypt(NONCE, data, None)",
                    aead=pyca_aead,
                ),
            ],
        ),
        "chacha20": (
            "ChaCha20 keystream XOR (counter 1)",
            [
                c(
                    f"{OURS}: crypto.chacha20_xor(key, nonce, data, 1)",
                    "archcrypt",
                    "crypto.chacha20_xor(KEY, NONCE, data, 1)",
                ),
                c(
                    f"{PYCA}: Cipher(ChaCha20(key, nonce16), None).encryptor().update(data)",
                    "pyca/cryptography",
                    "Cipher(algorithms.ChaCha20(KEY, NONCE16), None).encryptor().update(data)",
                ),
            ],
        ),
        "poly1305": (
            "Poly1305 tag (one-time key)",
            [
                c(
                    f"{OURS}: crypto.mac('poly1305', key, data)",
                    "archcrypt",
                    "crypto.mac('poly1305', KEY, data)",
                ),
                c(
                    f"{PYCA}: Poly1305.generate_tag(key, data)",
                    "pyca/cryptography",
                    "Poly1305.generate_tag(KEY, data)",
                ),
            ],
        ),
        "sha256": ("SHA-256 one-shot", hash_row("sha256")),
        "sha512": ("SHA-512 one-shot", hash_row("sha512")),
        "camellia": (
            "Camellia-128 ECB encrypt (key object reused)",
            [
                c(
                    f"{OURS}: Camellia(key).encrypt_ecb(data), key object reused",
                    "archcrypt",
                    "cam.encrypt_ecb(data)",
                    cam=ours_camellia,
                ),
                c(
                    f"{PYCA}: Cipher(Camellia(key), ECB()).encryptor().update(data), reused",
                    "pyca/cryptography",
                    "enc.update(data)",
                    enc=pyca_camellia,
                ),
            ],
        ),
    }


_rng = random.Random(0x9E3779B9)  # contestant order per round; fixed seed


def _switches() -> int:
    ru = resource.getrusage(resource.RUSAGE_THREAD)
    return ru.ru_nvcsw + ru.ru_nivcsw


class Stats:
    taken = 0
    disturbed = 0
    cpu_time = 0


class _Clock:
    """timeit's timer: wall time (perf_counter), and the thread's CPU time over the same
    interval on the side, read outside the wall interval at both ends."""

    def __init__(self) -> None:
        self.starting = True
        self.cpu_start = self.cpu = 0.0

    def __call__(self) -> float:
        if self.starting:
            self.starting = False
            self.cpu_start = time.thread_time()
            return time.perf_counter()
        wall = time.perf_counter()
        self.cpu = time.thread_time() - self.cpu_start
        self.starting = True
        return wall


def _timer(con: Contestant, data: bytes, clock: _Clock) -> timeit.Timer:
    return timeit.Timer(con.stmt, timer=clock, globals={**con.setup, "data": data})


def measure_cell(
    cons: list[Contestant], size: int, data: bytes, sample: float, cell_time: float
) -> int:
    """One pass over one cell: calibrate (first pass only), then take turns."""
    clock = _Clock()
    timers = [_timer(con, data, clock) for con in cons]
    round_est = 0.0
    for con, timer in zip(cons, timers, strict=True):
        if size in con.numbers:
            round_est += timer.timeit(con.numbers[size])  # also a warm-up
            continue
        n = 1
        while True:
            t = timer.timeit(n)
            if t >= sample * 0.8 or n > 1 << 30:
                break
            grow = sample / t if t > 0 else 100.0
            n = max(n + 1, int(n * min(grow * 1.05, 100.0)))
        con.numbers[size] = n
        round_est += t
    rounds = max(3, min(400, int(cell_time / round_est)))
    # As in bench/c/peers.c: a sample during which the thread was descheduled is taken again,
    # up to 4 times; one that never runs undisturbed counts the thread's CPU time.
    order = list(range(len(cons)))
    for _round in range(rounds):
        # A fresh random order every round: periodic noise cannot line up with one contestant.
        _rng.shuffle(order)
        for i in order:
            n = cons[i].numbers[size]
            for attempt in range(4):
                s0 = _switches()
                t = timers[i].timeit(n)
                disturbed = _switches() != s0
                Stats.taken += 1
                if not disturbed:
                    break
                Stats.disturbed += 1
                if attempt == 3:
                    t = clock.cpu
                    Stats.cpu_time += 1
            cons[i].samples.setdefault(size, []).append(t / n)
    return rounds


def verify(op: str, cons: list[Contestant], data: bytes) -> None:
    values = []
    for con in cons:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values.append(eval(con.check, {**con.setup, "data": data}))
    for con, value in zip(cons, values, strict=True):
        if value != values[0]:
            raise SystemExit(
                f"bench/python/peers.py: {op}: {con.label} disagrees with {cons[0].label}"
            )


def size_label(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,1024,65536")
    parser.add_argument("--cell-time", type=float, default=3.0, help="seconds per cell")
    parser.add_argument("--passes", type=int, default=3, help="sweeps over all cells")
    parser.add_argument("--sample-ms", type=float, default=0.5)
    parser.add_argument("--csv", help="also write the raw medians here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if any(s <= 0 or s % 16 for s in sizes):
        parser.error("sizes must be positive multiples of 16 (Camellia ECB)")

    crypto.init()
    chosen = {a.name: a.selected for a in crypto.backends().algorithms}
    ops = operations()
    cells = len(ops) * len(sizes)
    start = time.monotonic()
    cell = 0
    messages = {size: bytes((i * 131 + 7) & 0xFF for i in range(size)) for size in sizes}
    for op, (_title, cons) in ops.items():
        for size in sizes:
            verify(op, cons, messages[size])
    # Several sweeps over every cell, each with a share of cell_time, so each cell's
    # samples span the run (a burst of load that favours one contestant moves one pass).
    for pass_no in range(1, args.passes + 1):
        for op, (_title, cons) in ops.items():
            for size in sizes:
                cell += 1
                print(
                    f"[pass {pass_no}/{args.passes} {cell:3d}/{cells * args.passes} "
                    f"{time.monotonic() - start:4.0f}s] python {op:18s} {size_label(size):8s} "
                    f"{len(cons)} contestants ... ",
                    end="",
                    file=sys.stderr,
                    flush=True,
                )
                t0 = time.monotonic()
                rounds = measure_cell(
                    cons, size, messages[size], args.sample_ms * 1e-3, args.cell_time / args.passes
                )
                print(f"{rounds:3d} rounds, {time.monotonic() - t0:.1f}s", file=sys.stderr)
    results = {
        op: {size: [statistics.median(con.samples[size]) for con in cons] for size in sizes}
        for op, (_title, cons) in ops.items()
    }

    out = sys.stdout
    out.write(
        "Cells: ns per call (GB/s), median of interleaved samples, each call from Python "
        "with its argument checks, output allocation and (for archcrypt) the cffi call. "
        "Lower ns is better.\n\n"
    )
    for op, (title, cons) in ops.items():
        kernel = chosen.get(op, "?")
        out.write(f"### Python: {op}: {title} (archcrypt kernel: {kernel})\n\n")
        out.write("| implementation | " + " | ".join(size_label(s) for s in sizes) + " |\n")
        out.write("|---|" + "--:|" * len(sizes) + "\n")
        for i, con in enumerate(cons):
            cells_md = []
            for size in sizes:
                t = results[op][size][i]
                fastest = t <= min(results[op][size])
                cell_md = f"{t * 1e9:,.0f} ({size / t / 1e9:.2f})"
                cells_md.append(f"**{cell_md}**" if fastest else cell_md)
            out.write(f"| {con.label} | " + " | ".join(cells_md) + " |\n")
        ratios = []
        for size in sizes:
            ours = results[op][size][0]
            peers = [(t, cons[i].library) for i, t in enumerate(results[op][size]) if i > 0]
            best, name = min(peers)
            ratios.append(f"*{ours / best:.2f}* {name}")
        out.write("| *archcrypt / best peer* | " + " | ".join(ratios) + " |\n\n")
    out.write(
        f"Below 1 archcrypt is faster. {100 * Stats.disturbed / max(Stats.taken, 1):.1f}% of "
        f"{Stats.taken} samples were re-taken because the thread was descheduled during them; "
        f"{Stats.cpu_time} never ran undisturbed and count thread CPU time instead. "
        f"{cells} cells, {time.monotonic() - start:.0f} s.\n"
    )
    if args.csv:
        with open(args.csv, "w", encoding="utf-8") as f:
            f.write("operation,library,label,size_bytes,ns_per_call,bytes_per_second\n")
            for op, (_title, cons) in ops.items():
                for i, con in enumerate(cons):
                    for size in sizes:
                        t = results[op][size][i]
                        label = con.label.replace('"', "'")
                        f.write(
                            f'{op},{con.library},"{label}",{size},{t * 1e9:.1f},{size / t:.0f}\n'
                        )
    print(f"bench/python/peers.py: done in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
