"""A row forced by name is the row that runs under archcrypt._fast, proven with a debugger.

Every row computes the same bytes, so answers cannot tell which one ran; a breakpoint on
each row's kernel functions can. A child Python runs the facade's one-shot calls under gdb
(fast_dispatch_gdb.py records every kernel call, the row owning it and whether it came from
a _fast entry point). Twice: once taking every runnable row of every table in turn through
the per-thread override (crypto.use_implementation, set through cffi), once with
ARCHCRYPT_FORCE naming a row per table. Each row must be reached, only through _fast, and
no other row of its table may run meanwhile. Were _fast a second copy of the library (its
own .so), neither choice would reach it and these fail.

Host only: the foreign-arch runs (tests/cross/test_foreign_python.py) have no gdb and leave
this file out; there, test_fast.py proves that _fast lives in the module cffi's choices go
to. ~2 x 2 s.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import archcrypt._native

from .rows import REPORT, RUNNABLE

GDB_SCRIPT = Path(__file__).with_name("fast_dispatch_gdb.py")
# The C ABI's first two integer argument registers, as gdb names them.
ARGUMENT_REGISTERS = {
    "x86_64": ("rdi", "rsi"),
    "aarch64": ("x0", "x1"),
    "ppc64le": ("r3", "r4"),
    "s390x": ("r2", "r3"),
}
SELECTED = {a.name: a.selected for a in REPORT.algorithms}
# Long enough that no row's min_len sends the calls to the row below it.
LENGTH = max(1024, *(i.min_len for a in REPORT.algorithms for i in a.implementations))

CHILD = textwrap.dedent(
    """
    import json, os, sys
    from archcrypt import crypto

    plan = json.loads(os.environ["FAST_DISPATCH_PLAN"])
    n = plan["length"]
    key, data = bytes(range(32)), bytes(i % 251 for i in range(n))
    blocks = data[: n // 16 * 16]

    def aead():
        for alg, size in crypto.AEAD_NONCE_SIZES.items():
            sealed = crypto.aead_seal(alg, key, bytes(size), data, b"ad")
            assert crypto.aead_open(alg, key, bytes(size), sealed, b"ad") == data

    def macs(*names):
        def run():
            for name in names:
                assert crypto.mac_verify(name, key, data, crypto.mac(name, key, data))
        return run

    def hashes(*names):
        def run():
            for name in names:
                crypto.digest(name, data)
            macs(*(f"hmac-{name}" for name in names))()
        return run

    def camellia():
        cipher = crypto.Camellia(key[:16])
        assert cipher.decrypt_ecb(cipher.encrypt_ecb(blocks)) == blocks

    ops = {
        "chacha20": lambda: crypto.chacha20_xor(key, bytes(12), data, 1),
        "poly1305": macs("poly1305"),
        "chacha20-poly1305": aead,
        "sha256": hashes("sha224", "sha256"),
        "sha512": hashes("sha384", "sha512"),
        "camellia": camellia,
    }
    crypto.init()
    if plan["rows"] is None:  # ARCHCRYPT_FORCE chose
        for run in ops.values():
            run()
    else:
        for table, rows in plan["rows"].items():
            for row in rows:
                with crypto.use_implementation(table, row):
                    ops[table]()
    print("child done")
    """
)


def _kernel_structs() -> dict[str, dict[str, tuple[str, int]]]:
    """table -> runnable row -> (its kernel struct's symbol, size), from the module's symbol
    table (kept by the recipe's --strip-debug)."""
    listing = subprocess.run(
        ["nm", "-S", "--defined-only", archcrypt._native.__file__],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    sizes = {}
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "dDrR":
            sizes[parts[3]] = int(parts[1], 16)
    structs: dict[str, dict[str, tuple[str, int]]] = {}
    for table, rows in RUNNABLE.items():
        for row in rows:
            symbol = f"archcrypt_{table.replace('-', '_')}_{row}"
            assert symbol in sizes, f"no kernel struct {symbol} in {archcrypt._native.__file__}"
            structs.setdefault(table, {})[row] = (symbol, sizes[symbol])
    return structs


def _run_under_gdb(
    tmp_path: Path, rows: dict[str, tuple[str, ...]] | None, force: str | None
) -> list[dict[str, Any]]:
    gdb = shutil.which("gdb")
    if gdb is None:
        reason = "gdb not found (scripts/setup.sh installs it when run as root)"
        if os.environ.get("ARCHCRYPT_SKIP_GDB") == "1":
            pytest.skip(reason)
        pytest.fail(reason + "; set ARCHCRYPT_SKIP_GDB=1 to skip explicitly")
    machine = platform.machine()
    assert machine in ARGUMENT_REGISTERS, f"no argument registers known for {machine}"
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    out = tmp_path / "records.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCHCRYPT_")}
    env.update(
        FAST_DISPATCH_CONFIG=json.dumps(
            {"structs": _kernel_structs(), "argument_registers": ARGUMENT_REGISTERS[machine]}
        ),
        FAST_DISPATCH_PLAN=json.dumps(
            {
                "length": LENGTH,
                "rows": None if rows is None else {k: list(v) for k, v in rows.items()},
            }
        ),
        FAST_DISPATCH_OUT=str(out),
    )
    if force is not None:
        env["ARCHCRYPT_FORCE"] = force
    proc = subprocess.run(
        [gdb, "-nx", "-batch", "-iex", "set auto-load off", "-iex", "set debuginfod enabled off",
         "-x", str(GDB_SCRIPT), "--args", sys.executable, str(child)],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    tail = f"\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0 and "child done" in proc.stdout, tail
    result = json.loads(out.read_text())
    assert result["kernels_found"], "archcrypt_init was never reached" + tail
    records: list[dict[str, Any]] = result["records"]
    return records


def _table_hits(records: list[dict[str, Any]], table: str, phase: object) -> list[dict[str, Any]]:
    return [r for r in records if r["phase"] == phase and any(t == table for t, _ in r["owners"])]


def test_the_per_thread_override_reaches_the_fast_path(tmp_path: Path) -> None:
    records = _run_under_gdb(tmp_path, dict(RUNNABLE), force=None)
    for table, rows in RUNNABLE.items():
        for row in rows:
            hits = _table_hits(records, table, [table, row])
            assert hits, f"{table}={row}: none of its kernel functions ran"
            assert {r["via"] for r in hits} == {"fast"}, f"{table}={row}: {hits}"
            strays = [r["owners"] for r in hits if [table, row] not in r["owners"]]
            assert not strays, f"{table}={row} in effect, yet other rows ran: {strays}"


def test_archcrypt_force_reaches_the_fast_path(tmp_path: Path) -> None:
    # a row other than the one dispatch would pick wherever the table has one: the last
    # runnable (portable, or the feature-free row)
    forced = {table: rows[-1] for table, rows in RUNNABLE.items()}
    assert any(forced[t] != SELECTED[t] for t in forced), "nothing to force on this host"
    spec = ",".join(f"{table}={row}" for table, row in forced.items())
    records = _run_under_gdb(tmp_path, None, force=spec)
    for table, row in forced.items():
        hits = _table_hits(records, table, None)
        assert hits, f"ARCHCRYPT_FORCE {table}={row}: none of its kernel functions ran"
        assert {r["via"] for r in hits} == {"fast"}, f"{table}={row}: {hits}"
        strays = [r["owners"] for r in hits if [table, row] not in r["owners"]]
        assert not strays, f"ARCHCRYPT_FORCE {table}={row}, yet other rows ran: {strays}"
