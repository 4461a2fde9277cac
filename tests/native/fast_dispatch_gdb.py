"""gdb's side of test_fast_dispatch.py: run by `gdb -batch -x` inside gdb's Python, never
collected by pytest (its name does not start with test_).

Breaks on every function a dispatch row's kernel struct points to (archcrypt_<table>_<slug>,
read from memory once the library is initialised) and on archcrypt_use_on_this_thread (the
per-thread override: it marks the phase), and records for every kernel call the row(s)
owning the function, the phase, and whether it was reached from an archcrypt._fast entry
point (a frame named fast_*) or from cffi's (_cffi_f_*). Nothing stops: each breakpoint
records and continues. The records go to $FAST_DISPATCH_OUT as JSON.
"""

from __future__ import annotations

import json
import os

import gdb  # type: ignore[import-not-found]

CONFIG = json.loads(os.environ["FAST_DISPATCH_CONFIG"])
ARGS = CONFIG["argument_registers"]  # the C ABI's first two integer argument registers
records: list[dict[str, object]] = []
phase: list[object] = [None]


def _string(register: str) -> str | None:
    value = gdb.selected_frame().read_register(register)
    if int(value) == 0:
        return None
    return str(value.cast(gdb.lookup_type("char").pointer()).string())


def _via() -> tuple[str, list[str]]:
    """Which binding's entry point the call came through, and the frames walked."""
    frame, names = gdb.newest_frame(), []
    for _ in range(24):
        if frame is None:
            break
        name = frame.name() or "?"
        names.append(name)
        if name.startswith("fast_"):
            return "fast", names
        if name.startswith("_cffi_f_"):
            return "cffi", names
        frame = frame.older()
    return "other", names


class Kernel(gdb.Breakpoint):  # type: ignore[misc]
    def __init__(self, address: int, owners: list[list[str]]) -> None:
        super().__init__(f"*{address:#x}", internal=True)
        self.owners = owners

    def stop(self) -> bool:
        via, frames = _via()
        records.append({"owners": self.owners, "phase": phase[0], "via": via, "frames": frames})
        return False


class Override(gdb.Breakpoint):  # type: ignore[misc]
    def stop(self) -> bool:
        phase[0] = [_string(ARGS[0]), _string(ARGS[1])]
        return False


class Initialised(gdb.Breakpoint):
    """The library's first archcrypt_init(): relocations are done, the rows' kernel structs
    hold their functions' addresses. Break on each of them, once."""

    done = False

    def stop(self) -> bool:
        if Initialised.done:
            return False
        Initialised.done = True
        pointer = gdb.lookup_type("void").pointer()
        owners: dict[int, list[list[str]]] = {}
        for table, rows in CONFIG["structs"].items():
            for row, (symbol, size) in rows.items():
                base = int(gdb.parse_and_eval(f"(unsigned long)&{symbol}"))
                for offset in range(0, size, pointer.sizeof):
                    word = int(gdb.parse_and_eval(f"*(void **){base + offset:#x}"))
                    if word and ".text" in gdb.execute(f"info symbol {word:#x}", to_string=True):
                        owners.setdefault(word, []).append([table, row])
        for address, owned_by in owners.items():
            Kernel(address, owned_by)
        return False


gdb.execute("set breakpoint pending on")
gdb.execute("set pagination off")
Initialised("archcrypt_init", internal=True)
Override("archcrypt_use_on_this_thread", internal=True)
gdb.execute("run")
with open(os.environ["FAST_DISPATCH_OUT"], "w", encoding="utf-8") as out:
    json.dump({"records": records, "kernels_found": Initialised.done}, out)
