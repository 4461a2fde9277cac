"""A real uvicorn server, started once per session as `python -m archcrypt serve`, over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from .helpers import free_port, wait_until_ready
from .pgserver import Postgres, running_postgres

# Small enough that the 413 tests send little, large enough for every other request.
MAX_BODY_BYTES = 1 << 20
STREAM_LIMIT_BYTES = 1 << 20
STARTUP_TIMEOUT = 30.0
# The startup benchmark runs as deployed (readiness waits for it), on a budget that keeps
# the suite fast.
BENCHMARK_BUDGET_SECONDS = "0.3"


@dataclass(frozen=True)
class Server:
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Launched:
    """A server process that may not be ready yet."""

    process: subprocess.Popen[bytes]
    server: Server

    def wait_ready(self) -> Server:
        _wait_ready(self.process, self.server)
        return self.server


@contextmanager
def launch(log_dir: Path, *args: str, **env: str) -> Iterator[Launched]:
    """Start `python -m archcrypt serve` on a free port with `args` and `env` added, without
    waiting for it; stop it on exit."""
    port = free_port()
    log = log_dir / "server.log"
    environment = {
        **os.environ,
        "ARCHCRYPT_BENCHMARK_BUDGET_SECONDS": BENCHMARK_BUDGET_SECONDS,
        # the embedded key store and its KEK, never the per-user default of whoever runs this
        "ARCHCRYPT_DATA_DIR": str(log_dir / "data"),
        **env,
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "archcrypt",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                *args,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environment,
        )
    try:
        yield Launched(process, Server(port, log))
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve_subprocess(log_dir: Path, *args: str, **env: str) -> Iterator[Server]:
    """Like launch(), but yields the server once /readyz answers 200."""
    with launch(log_dir, *args, **env) as launched:
        yield launched.wait_ready()


def _wait_ready(process: subprocess.Popen[bytes], server: Server) -> None:
    wait_until_ready(process, f"{server.base_url}/readyz", server.log, STARTUP_TIMEOUT, "server")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The service as deployed, with a 1 MiB body limit and an unlimited octet-stream hash."""
    yield from serve_subprocess(
        tmp_path_factory.mktemp("server"),
        ARCHCRYPT_MAX_BODY_BYTES=str(MAX_BODY_BYTES),
        ARCHCRYPT_MAX_STREAM_BYTES="0",
    )


@pytest.fixture(scope="session")
def stream_limited_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A second instance whose octet-stream hash is capped at 1 MiB."""
    yield from serve_subprocess(
        tmp_path_factory.mktemp("stream-limited"),
        ARCHCRYPT_MAX_BODY_BYTES=str(MAX_BODY_BYTES),
        ARCHCRYPT_MAX_STREAM_BYTES=str(STREAM_LIMIT_BYTES),
    )


# Batch limits of the `limited` instance: 8 items, 4 KiB in all.
LIMIT_MESSAGES = 8
LIMIT_BYTES = 4096


@pytest.fixture(scope="session")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """An instance with small batch limits (every batch route's limits at their edges)."""
    yield from serve_subprocess(
        tmp_path_factory.mktemp("batch-limited"),
        ARCHCRYPT_MAX_BATCH_MESSAGES=str(LIMIT_MESSAGES),
        ARCHCRYPT_MAX_BATCH_BYTES=str(LIMIT_BYTES),
    )


@pytest.fixture(scope="session")
def limited_client(limited: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=limited.base_url, timeout=60.0) as http:
        yield http


@pytest.fixture(scope="session")
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=60.0) as http:
        yield http


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """One throwaway PostgreSQL cluster for the session (tests/service/pgserver.py)."""
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="session", autouse=True)
def _isolated_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Apps built in this process (create_app(Settings())) open the embedded key store: in
    a temporary directory, never the per-user data directory of whoever runs the tests."""
    previous = os.environ.get("ARCHCRYPT_DATA_DIR")
    os.environ["ARCHCRYPT_DATA_DIR"] = str(tmp_path_factory.mktemp("data"))
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("ARCHCRYPT_DATA_DIR", None)
        else:
            os.environ["ARCHCRYPT_DATA_DIR"] = previous
