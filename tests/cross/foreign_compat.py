"""pytest plugin loaded (`-p archcrypt_foreign_compat`) when tests/native runs under qemu on
a Debian 12 foreign tree (tests/cross/test_foreign_python.py). Not collected by the host.

The one difference it bridges, explicitly: Debian 12 ships pyca/cryptography 38.0.4, and
cryptography 43 moved Camellia from `cryptography.hazmat.primitives.ciphers.algorithms` to
`cryptography.hazmat.decrepit.ciphers.algorithms`, where tests/native/reference.py imports
it. When the new module is missing, it is created as an alias of the old class: the same
OpenSSL Camellia, so no test is skipped or weakened. The report header says what ran.
"""

from __future__ import annotations

import platform
import sys
import types

import cryptography

ALIASED: list[str] = []

try:
    import cryptography.hazmat.decrepit.ciphers.algorithms
except ModuleNotFoundError:
    from cryptography.hazmat.primitives.ciphers import algorithms as _primitives

    for _name in ("cryptography.hazmat.decrepit", "cryptography.hazmat.decrepit.ciphers"):
        _package = types.ModuleType(_name)
        _package.__path__ = []
        sys.modules[_name] = _package
    _algorithms = types.ModuleType("cryptography.hazmat.decrepit.ciphers.algorithms")
    _algorithms.Camellia = _primitives.Camellia  # type: ignore[attr-defined]
    sys.modules[_algorithms.__name__] = _algorithms
    ALIASED.append(
        "cryptography.hazmat.decrepit.ciphers.algorithms.Camellia = "
        "cryptography.hazmat.primitives.ciphers.algorithms.Camellia"
    )


def pytest_report_header() -> list[str]:
    lines = [
        f"foreign: {platform.machine()} python {platform.python_version()}, "
        f"cryptography {cryptography.__version__} (Debian), executable {sys.executable}"
    ]
    lines += [f"foreign compat alias: {alias}" for alias in ALIASED]
    return lines
