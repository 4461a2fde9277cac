"""What this process was built from: versions of the pieces and the source revision."""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Final

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
