"""What this process was built from (versions of the pieces, the source revision) and the
HTTP stack uvicorn serves it with."""

from __future__ import annotations

import asyncio
import functools
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Final, Literal

from . import __version__

# An image build knows its commit but ships no .git: it sets this (Dockerfile ARG -> ENV).
REVISION_ENV: Final = "ARCHCRYPT_REVISION"
UNKNOWN: Final = "unknown"


@dataclass(frozen=True)
class BuildInfo:
    version: str
    revision: str
    python_version: str
    cffi_version: str


HttpParser = Literal["httptools", "h11", "other"]
EventLoop = Literal["uvloop", "asyncio", "other"]


@dataclass(frozen=True)
class HttpStack:
    """What uvicorn serves this process with (bounded: metric labels)."""

    http_parser: HttpParser
    event_loop: EventLoop


# uvicorn's HTTP protocol implementations, by module, and what each parses HTTP with.
_PARSERS: Final[dict[str, HttpParser]] = {
    "uvicorn.protocols.http.httptools_impl": "httptools",
    "uvicorn.protocols.http.h11_impl": "h11",
}
_LOOPS: Final[dict[str, EventLoop]] = {"uvloop": "uvloop", "asyncio": "asyncio"}


def http_stack(parser: str = "auto") -> HttpStack:
    """Call in the running server's event loop (the lifespan, a handler).

    The parser is that of the protocol class `archcrypt serve` gives uvicorn for the
    ARCHCRYPT_HTTP setting `parser` (server.protocol_class: "auto" is httptools only when
    its C parser imports, so a package that is present but does not load reads h11, as the
    server then serves), read from the uvicorn implementation that class extends. The loop
    is the type of the loop running this code, whatever chose it."""
    from .server import protocol_class

    implementations = (c.__module__ for c in protocol_class(parser).__mro__)
    loop_package = type(asyncio.get_running_loop()).__module__.partition(".")[0]
    return HttpStack(
        http_parser=next((_PARSERS[m] for m in implementations if m in _PARSERS), "other"),
        event_loop=_LOOPS.get(loop_package, "other"),
    )


@functools.cache
def build_info() -> BuildInfo:
    return BuildInfo(
        version=__version__,
        revision=revision(),
        python_version=platform.python_version(),
        cffi_version=_distribution_version("cffi"),
    )


def revision() -> str:
    """$ARCHCRYPT_REVISION, else the commit of the source tree this package runs from
    (an editable install in a git checkout, "-dirty" when tracked files changed), else
    "unknown"."""
    configured = os.environ.get(REVISION_ENV, "").strip()
    if configured:
        return configured[:64]
    return _git_revision(Path(__file__).resolve().parent) or UNKNOWN


def _git_revision(directory: Path) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None

    def run(*args: str) -> str | None:
        try:
            done = subprocess.run(
                [git, "-C", str(directory), *args],
                capture_output=True,
                text=True,
                timeout=5,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = run("rev-parse", "--short=12", "HEAD")
    if not commit:
        return None
    # Only tracked files count: build outputs and caches are untracked noise.
    changes = run("status", "--porcelain", "--untracked-files=no")
    return f"{commit}-dirty" if changes else commit


def _distribution_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return UNKNOWN
