"""A real PostgreSQL (Debian's package) for the tests: a throwaway cluster made by initdb in
a temporary directory, listening only on a unix socket there, stopped and removed after.

PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user the
Debian package creates and the server tools run through runuser; as anyone else they run as
that user. scripts/setup.sh installs the package (when run as root). Without it the tests
fail and say how to get it, unless ARCHCRYPT_SKIP_POSTGRES=1 marks them skipped on purpose.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DATABASE = "archcrypt"
SUPERUSER = "archcrypt"


def _missing(reason: str) -> None:
    if os.environ.get("ARCHCRYPT_SKIP_POSTGRES") == "1":
        pytest.skip(reason)
    pytest.fail(reason + "; set ARCHCRYPT_SKIP_POSTGRES=1 to skip explicitly", pytrace=False)


def bindir() -> Path:
    """The newest Debian PostgreSQL server's bin directory (its tools are not on PATH)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb is not None:
        return Path(initdb).resolve().parent
    _missing(
        "PostgreSQL's server tools (initdb, pg_ctl) not found: the key store tests need a real "
        "PostgreSQL. Run scripts/setup.sh as root (it installs the Debian package `postgresql`) "
        "or `apt-get install postgresql`"
    )
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class Postgres:
    socket_dir: Path
    log: Path
    # pg_ctl stop / start, for tests of an outage
    control: Callable[[str], None] = field(repr=False, compare=False)

    @property
    def url(self) -> str:
        return f"postgresql://{SUPERUSER}@/{DATABASE}?host={self.socket_dir}"


def _runner() -> tuple[list[str], int | None, int | None]:
    """The command prefix that runs a server tool as a user PostgreSQL accepts, and the uid
    and gid that must own its directory (None: ours)."""
    if os.geteuid() != 0:
        return [], None, None
    try:
        user = pwd.getpwnam("postgres")
    except KeyError:
        _missing(
            "running as root, the PostgreSQL tests need the `postgres` user that Debian's "
            "postgresql package creates (PostgreSQL refuses to run as root)"
        )
        raise AssertionError("unreachable") from None
    runuser = shutil.which("runuser")
    if runuser is None:
        _missing("running as root, the PostgreSQL tests need runuser (util-linux)")
    return [str(runuser), "-u", "postgres", "--"], user.pw_uid, user.pw_gid


@contextmanager
def running_postgres() -> Iterator[Postgres]:
    """initdb + pg_ctl start in a fresh directory; ~1-2 s. fsync is off: a test cluster need
    not survive a power cut, and it saves most of the start-up and commit time."""
    tools = bindir()
    prefix, uid, gid = _runner()
    # In /tmp, not pytest's tmp_path: as root that path is 0700 root, and the postgres user
    # must reach its own directory. Short, too: a unix socket path has ~100 bytes.
    root = Path(tempfile.mkdtemp(prefix="archcrypt-pg-"))
    data, log = root / "data", root / "postgres.log"
    if uid is not None:
        os.chown(root, uid, gid or -1)
    env = {**os.environ, "LC_ALL": "C", "TZ": "UTC"}

    def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, *args], capture_output=True, text=True, env=env, check=False, timeout=60,
            **kwargs,  # type: ignore[arg-type]
        )  # fmt: skip

    try:
        made = run(
            str(tools / "initdb"), "-D", str(data), "-U", SUPERUSER, "-A", "trust",
            "--no-sync", "-E", "UTF8", "--no-instructions",
        )  # fmt: skip
        assert made.returncode == 0, f"initdb failed:\n{made.stdout}\n{made.stderr}"
        options = f"-k {root} -c listen_addresses='' -c fsync=off -c synchronous_commit=off"

        def control(action: str) -> None:
            done = run(
                str(tools / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w",
                "-t", "30", "-m", "fast", action,
            )  # fmt: skip
            assert done.returncode == 0, (
                f"pg_ctl {action} failed:\n{done.stdout}\n{done.stderr}\n"
                f"{log.read_text() if log.exists() else ''}"
            )

        control("start")
        server = Postgres(root, log, control)
        created = run(
            str(tools / "psql"), "-h", str(root), "-U", SUPERUSER, "-d", "postgres", "-q",
            "-c", f"CREATE DATABASE {DATABASE}",
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        try:
            yield server
        finally:
            run(str(tools / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
