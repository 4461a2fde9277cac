"""What the native library runs on this machine, and the knobs to choose it.

Every algorithm has an ordered dispatch table (fastest first, portable last). The
report shows each row, whether this CPU can run it, and which row is in effect.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Literal

from . import errors
from ._lib import check, cstr, ffi, init, lib

__all__ = [
    "DISPATCH_ALGORITHMS",
    "Algorithm",
    "BackendReport",
    "CpuFeature",
    "Implementation",
    "backends",
    "core_hz",
    "force",
    "self_test",
    "use_implementation",
]

FeatureState = Literal["present", "absent", "masked"]
_FEATURE_STATES: Final[dict[int, FeatureState]] = {0: "absent", 1: "present", 2: "masked"}
_NO_INDEX: Final = int(ffi.cast("size_t", -1))


@dataclass(frozen=True)
class Implementation:
    """One dispatch row: its name, the CPU features it needs, and whether they are usable.

    A row with a `min_len` runs only inputs at least that long; shorter ones run on the
    row `below_min_len` names (None when min_len is 0), so that is what a short call reports.
    """

    name: str
    requires: tuple[str, ...]
    runnable: bool
    min_len: int = 0
    below_min_len: str | None = None


@dataclass(frozen=True)
class Algorithm:
    """One dispatch table; `selected` is the process-wide choice (thread overrides aside)."""

    name: str
    selected: str
    forced: bool
    implementations: tuple[Implementation, ...]


@dataclass(frozen=True)
class CpuFeature:
    name: str
    state: FeatureState


@dataclass(frozen=True)
class BackendReport:
    arch: str
    version: str
    compiler: str
    features: tuple[CpuFeature, ...]
    algorithms: tuple[Algorithm, ...]


# The tables are static data in the library: readable before (and without) init.
DISPATCH_ALGORITHMS: Final[tuple[str, ...]] = tuple(
    cstr(lib.archcrypt_algorithm_name(i)) for i in range(int(lib.archcrypt_algorithm_count()))
)


def _algorithm_index(algorithm: str) -> int:
    index = _NO_INDEX
    if isinstance(algorithm, str):
        index = int(lib.archcrypt_algorithm_index(algorithm.encode()))
    if index == _NO_INDEX:
        raise errors.UnknownAlgorithmError(
            f"unknown algorithm {algorithm!r}; expected one of {', '.join(DISPATCH_ALGORITHMS)}"
        )
    return index


def _implementation_names(algorithm: int) -> tuple[str, ...]:
    count = int(lib.archcrypt_implementation_count(algorithm))
    return tuple(cstr(lib.archcrypt_implementation_name(algorithm, i)) for i in range(count))


def _implementation_index(algorithm: str, index: int, implementation: str) -> int:
    names = _implementation_names(index)
    wanted = implementation.lower() if isinstance(implementation, str) else None
    for i, name in enumerate(names):
        if name.lower() == wanted:  # the C library matches names case-insensitively
            return i
    raise errors.UnknownImplementationError(
        f"{algorithm} has no implementation {implementation!r}; expected one of {', '.join(names)}"
    )


def _requires(algorithm: int, implementation: int) -> tuple[str, ...]:
    text = cstr(lib.archcrypt_implementation_requires(algorithm, implementation))
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _name_at(names: tuple[str, ...], index: int) -> str | None:
    return names[index] if 0 <= index < len(names) else None


def backends() -> BackendReport:
    """A snapshot of CPU features and every dispatch table."""
    init()
    features = tuple(
        CpuFeature(
            cstr(lib.archcrypt_cpu_feature_name(i)),
            _FEATURE_STATES.get(int(lib.archcrypt_cpu_feature_state(i)), "absent"),
        )
        for i in range(int(lib.archcrypt_cpu_feature_count()))
    )
    algorithms = []
    for a in range(int(lib.archcrypt_algorithm_count())):
        names = _implementation_names(a)
        rows = tuple(
            Implementation(
                name,
                _requires(a, i),
                bool(lib.archcrypt_implementation_runnable(a, i)),
                int(lib.archcrypt_implementation_min_len(a, i)),
                _name_at(names, int(lib.archcrypt_implementation_below(a, i))),
            )
            for i, name in enumerate(names)
        )
        selected = int(lib.archcrypt_selected_implementation(a))
        algorithms.append(
            Algorithm(
                name=cstr(lib.archcrypt_algorithm_name(a)),
                selected=names[selected] if 0 <= selected < len(names) else "",
                forced=bool(lib.archcrypt_implementation_forced(a)),
                implementations=rows,
            )
        )
    return BackendReport(
        arch=cstr(lib.archcrypt_arch()),
        version=cstr(lib.archcrypt_version()),
        compiler=cstr(lib.archcrypt_compiler()),
        features=features,
        algorithms=tuple(algorithms),
    )


def _name(value: str | None, what: str) -> Any:
    if value is None:
        return ffi.NULL
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    return value.encode()


def force(algorithm: str, implementation: str | None) -> None:
    """Pin the process-wide implementation of an algorithm; None returns to automatic."""
    init()
    status = int(
        lib.archcrypt_force(_name(algorithm, "algorithm"), _name(implementation, "implementation"))
    )
    check(status, "force", explained=True)


_thread = threading.local()


def _thread_overrides() -> dict[str, str]:
    overrides: dict[str, str] | None = getattr(_thread, "overrides", None)
    if overrides is None:
        overrides = _thread.overrides = {}
    return overrides


def _use_on_this_thread(algorithm: str, implementation: str | None) -> None:
    status = int(
        lib.archcrypt_use_on_this_thread(
            _name(algorithm, "algorithm"), _name(implementation, "implementation")
        )
    )
    check(status, "use_implementation", explained=True)


@contextmanager
def use_implementation(algorithm: str, implementation: str) -> Iterator[None]:
    """Run the block with this implementation on the calling thread only (tests, benchmarks).

    Nests: on exit the thread gets back whatever override it had before.
    """
    init()
    if implementation is None:
        raise TypeError("implementation must be a str")
    _use_on_this_thread(algorithm, implementation)
    overrides = _thread_overrides()
    previous = overrides.get(algorithm)
    overrides[algorithm] = implementation
    try:
        yield
    finally:
        if previous is None:
            del overrides[algorithm]
        else:
            overrides[algorithm] = previous
        _use_on_this_thread(algorithm, previous)


def self_test(algorithm: str, implementation: str | None = None) -> bool:
    """Known answers of one implementation (default: the selected one); False on a mismatch.

    UnsupportedImplementationError when this CPU cannot run the implementation.
    """
    init()
    a = _algorithm_index(algorithm)
    if implementation is None:
        i = int(lib.archcrypt_selected_implementation(a))
    else:
        i = _implementation_index(algorithm, a, implementation)
    status = int(lib.archcrypt_self_test(a, i))
    if status == int(lib.ARCHCRYPT_ERR_SELFTEST):
        return False
    check(status, f"self-test {algorithm}", explained=True)
    return True


def core_hz(seconds: float = 0.05) -> float:
    """The core clock in Hz, measured over about `seconds` (not the fixed-rate TSC)."""
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
        raise errors.InvalidInputError(f"seconds must be a positive number, got {seconds!r}")
    init()
    return float(lib.archcrypt_core_hz(float(seconds)))
