"""Fault injection against real servers: each scenario starts its own `archcrypt serve`
(tests/drill/soak.serve), drives it with clients whose every answer is checked against
pyca/cryptography or hashlib, breaks something, and reports what the clients saw.

- worker_killed: three workers under load, one SIGKILLed; the others keep answering, no
  answer is wrong, uvicorn's supervisor starts a replacement.
- postgres_stopped: named keys on a real PostgreSQL (tests/service/pgserver.py) that is
  stopped under load: what needs the store is 503 problem+json with Retry-After, cached
  keys keep sealing and opening; started again, the store-bound requests succeed again
  without a restart of archcrypt.
- disk_full: the SQLite store on a small tmpfs (as root) that is then filled: creating a key
  is a problem+json (not a 500, not a crash), existing keys keep working, and once space is
  back creation works again; the database passes `PRAGMA integrity_check`.
- corrupted_row: one key's wrapped material altered in the SQLite file while the server is
  down: that key answers a clear problem, every other key and route works, nothing else lost.
- sigterm_drains: slow uploads in flight when SIGTERM arrives complete with the right digest,
  the server exits 0, and a connection after the signal is refused.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.service.helpers import reference_seal

from .soak import b64, serve

KEY = bytes(range(32))
NONCE = bytes(range(100, 112))


@dataclass
class Outcome:
    name: str
    ok: bool = False
    figures: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: str = ""


# ---- checked clients ---------------------------------------------------------------------------


@dataclass
class Tally:
    ok: int = 0
    wrong: int = 0  # a 200 whose answer differs from the reference
    transport: int = 0  # connection refused/reset while a worker died
    statuses: dict[int, int] = field(default_factory=dict)  # anything but 200
    problems: list[str] = field(default_factory=list)
    last_ok: float = 0.0
    times: list[tuple[float, str]] = field(default_factory=list)

    def note(self, what: str) -> None:
        if len(self.problems) < 5:
            self.problems.append(what)


def seal_check(client: httpx.Client, i: int) -> tuple[int, bool]:
    pt = os.urandom(64 + i % 1500)
    r = client.post(
        "/v1/aead/chacha20-poly1305/seal",
        json={"key": b64(KEY), "nonce": b64(NONCE), "plaintext": b64(pt)},
    )
    if r.status_code != 200:
        return r.status_code, False
    want = reference_seal("chacha20-poly1305", KEY, NONCE, pt, b"")
    return 200, base64.b64decode(r.json()["ciphertext"]) == want


def hash_check(client: httpx.Client, i: int) -> tuple[int, bool]:
    data = os.urandom(i % 5000)
    r = client.post(
        "/v1/hash/sha256", content=data, headers={"Content-Type": "application/octet-stream"}
    )
    if r.status_code != 200:
        return r.status_code, False
    return 200, base64.b64decode(r.json()["digest"]) == hashlib.sha256(data).digest()


def hammer(
    base_url: str,
    stop: threading.Event,
    tally: Tally,
    checks: tuple[Callable[[httpx.Client, int], tuple[int, bool]], ...] = (seal_check, hash_check),
    threads: int = 6,
) -> list[threading.Thread]:
    """`threads` clients, each on its own keep-alive connection, until `stop`."""
    lock = threading.Lock()

    def worker(n: int) -> None:
        i = n
        client = httpx.Client(base_url=base_url, timeout=10)
        while not stop.is_set():
            i += threads
            check = checks[i % len(checks)]
            try:
                status, good = check(client, i)
            except httpx.TransportError as exc:
                with lock:
                    tally.transport += 1
                    tally.times.append((time.monotonic(), "transport"))
                    tally.note(f"{check.__name__}: {type(exc).__name__}")
                client.close()
                client = httpx.Client(base_url=base_url, timeout=10)
                continue
            with lock:
                if status != 200:
                    tally.statuses[status] = tally.statuses.get(status, 0) + 1
                    tally.note(f"{check.__name__}: status {status}")
                elif good:
                    tally.ok += 1
                    tally.last_ok = time.monotonic()
                    tally.times.append((tally.last_ok, "ok"))
                else:
                    tally.wrong += 1
                    tally.note(f"{check.__name__}: wrong answer")
        client.close()

    out = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(threads)]
    for t in out:
        t.start()
    return out


def children(pid: int) -> list[int]:
    """Live children (a SIGKILLed worker stays a zombie until the supervisor reaps it)."""
    try:
        pids = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    live = []
    for child in pids:
        try:
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            live.append(child)
    return live


# ---- 1. a worker SIGKILLed ---------------------------------------------------------------------


def worker_killed(directory: Path, seconds: float = 12.0) -> Outcome:
    out = Outcome("worker SIGKILLed under load (3 workers)")
    with serve(directory / "workers", "--workers", "3") as server:
        deadline = time.monotonic() + 30
        while len(children(server.process.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        before = children(server.process.pid)
        stop, tally = threading.Event(), Tally()
        threads = hammer(server.base_url, stop, tally)
        time.sleep(seconds / 3)
        victim = before[0]
        killed_at = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        time.sleep(seconds * 2 / 3)
        stop.set()
        for t in threads:
            t.join(timeout=15)
        deadline = time.monotonic() + 10
        after = children(server.process.pid)
        while (victim in after or len(after) < 3) and time.monotonic() < deadline:
            time.sleep(0.2)
            after = children(server.process.pid)
        replaced = victim not in after and len(after) == 3
        served_after = sum(1 for t, what in tally.times if what == "ok" and t > killed_at)
        first_ok_after = min(
            (t - killed_at for t, what in tally.times if what == "ok" and t > killed_at),
            default=None,
        )
        out.figures = {
            "answers checked": tally.ok,
            "wrong answers": tally.wrong,
            "other statuses": dict(tally.statuses),
            "connection errors": tally.transport,
            "answered after the kill": served_after,
            "first answer after the kill (s)": round(first_ok_after, 3) if first_ok_after else None,
            "workers after": len(after),
            "replacement started": replaced,
        }
        out.ok = (
            tally.wrong == 0
            and not tally.statuses
            and served_after > 0
            and replaced
            and first_ok_after is not None
            and first_ok_after < 1.0
        )
        if tally.transport:
            out.notes.append(
                f"{tally.transport} requests in flight on the killed worker (or on "
                "its connections) failed at the transport level and were retried "
                "on a new connection; none got a wrong answer or an error status"
            )
    return out


# ---- 2. PostgreSQL stopped ---------------------------------------------------------------------


def postgres_stopped(directory: Path, down_seconds: float = 4.0) -> Outcome:
    out = Outcome("PostgreSQL stopped under load, then started")
    from tests.service.pgserver import running_postgres

    with (
        running_postgres() as postgres,
        serve(directory / "pg", ARCHCRYPT_KEYSTORE_URL=postgres.url) as server,
        httpx.Client(base_url=server.base_url, timeout=30) as client,
    ):
        name = "cached-" + os.urandom(3).hex()
        assert client.post("/v1/keys", json={"name": name}).status_code == 201
        sealed = client.post(f"/v1/keys/{name}/seal", json={"plaintext": b64(b"before")}).json()

        def cached_open(c: httpx.Client, i: int) -> tuple[int, bool]:
            r = c.post(f"/v1/keys/{name}/open", json={"ciphertext": sealed["ciphertext"]})
            return r.status_code, r.status_code == 200 and r.json()["plaintext"] == b64(b"before")

        stop, tally = threading.Event(), Tally()
        threads = hammer(server.base_url, stop, tally, checks=(cached_open, seal_check), threads=4)
        time.sleep(1)
        postgres.control("stop")
        stopped = time.monotonic()
        down: list[httpx.Response] = []
        try:
            while time.monotonic() - stopped < down_seconds:
                down.append(client.post("/v1/keys", json={"name": "new-" + os.urandom(4).hex()}))
                time.sleep(0.25)
        finally:
            postgres.control("start")
        started = time.monotonic()
        recovered = None
        while time.monotonic() - started < 30:
            r = client.post("/v1/keys", json={"name": "after-" + os.urandom(4).hex()})
            if r.status_code == 201:
                recovered = time.monotonic() - started
                break
            time.sleep(0.1)
        stop.set()
        for t in threads:
            t.join(timeout=15)
        problems = [
            r
            for r in down
            if r.status_code == 503
            and r.headers.get("content-type", "").startswith("application/problem+json")
            and r.headers.get("retry-after") == "1"
            and r.json().get("type", "").endswith("/keystore-unavailable")
        ]
        statuses = sorted({r.status_code for r in down})
        out.figures = {
            "store-bound requests while down": len(down),
            "503 problem+json": len(problems),
            "their statuses": statuses,
            "cached-key answers checked": tally.ok,
            "wrong answers": tally.wrong,
            "other statuses": dict(tally.statuses),
            "recovered after (s)": round(recovered, 2) if recovered is not None else None,
            "archcrypt restarted": False,
        }
        out.ok = (
            bool(down)
            and len(problems) == len(down)
            and tally.wrong == 0
            and not tally.statuses
            and tally.transport == 0
            and recovered is not None
        )
    return out


# ---- 3. a full disk under the SQLite store ------------------------------------------------------


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str = "8m") -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise PermissionError(f"mount tmpfs: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def fill(directory: Path) -> Path:
    """Write zeros until the file system says ENOSPC, in ever smaller pieces."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 16, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)
    return filler


def disk_full(directory: Path) -> Outcome:
    out = Outcome("disk full under the SQLite store (8 MiB tmpfs)")
    if os.geteuid() != 0 or shutil.which("mount") is None:
        out.skipped = "needs root to mount a tmpfs"
        return out
    mount = Path(tempfile.mkdtemp(prefix="archcrypt-full-"))
    try:
        with small_tmpfs(mount):
            data = mount / "data"
            with (
                serve(directory / "full", ARCHCRYPT_DATA_DIR=str(data)) as server,
                httpx.Client(base_url=server.base_url, timeout=30) as client,
            ):
                names = []
                for _ in range(3):
                    name = "k-" + os.urandom(4).hex()
                    assert client.post("/v1/keys", json={"name": name}).status_code == 201
                    names.append(name)
                sealed = {
                    n: client.post(
                        f"/v1/keys/{n}/seal", json={"plaintext": b64(n.encode())}
                    ).json()["ciphertext"]
                    for n in names
                }
                filler = fill(mount)
                full = [
                    client.post("/v1/keys", json={"name": "f-" + os.urandom(4).hex()})
                    for _ in range(3)
                ]
                rotate = client.post(f"/v1/keys/{names[0]}/rotate")
                still = [
                    client.post(f"/v1/keys/{n}/open", json={"ciphertext": c})
                    for n, c in sealed.items()
                ]
                fresh = [
                    client.post(f"/v1/keys/{n}/seal", json={"plaintext": b64(b"x")}) for n in names
                ]
                listing = client.get("/v1/keys")
                stateless = seal_check(client, 1)
                filler.unlink()
                again = client.post("/v1/keys", json={"name": "back-" + os.urandom(4).hex()})
                alive = server.process.poll() is None
            integrity = (
                sqlite3.connect(data / "keys.sqlite3")
                .execute("PRAGMA integrity_check")
                .fetchone()[0]
            )
        refused = [
            r
            for r in [*full, rotate]
            if r.status_code >= 400
            and r.headers.get("content-type", "").startswith("application/problem+json")
        ]
        opened = [
            r
            for (n, _), r in zip(sealed.items(), still, strict=True)
            if r.status_code == 200 and r.json()["plaintext"] == b64(n.encode())
        ]
        out.figures = {
            "writes while full": len(full) + 1,
            "their statuses": sorted({r.status_code for r in [*full, rotate]}),
            "problem+json": len(refused),
            "opens of existing keys": f"{len(opened)}/{len(still)}",
            "seals while full (statuses)": sorted({r.status_code for r in fresh}),
            "list while full": listing.status_code,
            "stateless route": stateless,
            "create after space is back": again.status_code,
            "server alive": alive,
            "integrity_check": integrity,
        }
        out.ok = (
            len(refused) == len(full) + 1
            and all(r.status_code < 500 or r.status_code == 503 for r in [*full, rotate])
            and len(opened) == len(still)
            and again.status_code == 201
            and alive
            and integrity == "ok"
            and stateless == (200, True)
            and listing.status_code == 200
        )
    finally:
        with contextlib.suppress(OSError):
            mount.rmdir()
    return out


# ---- 4. a corrupted key row ---------------------------------------------------------------------


def corrupted_row(directory: Path) -> Outcome:
    out = Outcome("a corrupted key row (SQLite)")
    work = directory / "corrupt"
    with serve(work) as server, httpx.Client(base_url=server.base_url, timeout=30) as client:
        names = ["good-a", "bad", "good-b"]
        sealed = {}
        for n in names:
            assert client.post("/v1/keys", json={"name": n}).status_code == 201
            sealed[n] = client.post(
                f"/v1/keys/{n}/seal", json={"plaintext": b64(n.encode())}
            ).json()["ciphertext"]
        db_path = server.data_dir / "keys.sqlite3"
    with sqlite3.connect(db_path) as db:
        (wrapped,) = db.execute(
            "SELECT wrapped FROM archcrypt_key_versions WHERE name = 'bad'"
        ).fetchone()
        damaged = bytearray(wrapped)
        damaged[30] ^= 0x40
        db.execute(
            "UPDATE archcrypt_key_versions SET wrapped = ? WHERE name = 'bad'", (bytes(damaged),)
        )
    with serve(work) as server, httpx.Client(base_url=server.base_url, timeout=30) as client:
        bad_open = client.post("/v1/keys/bad/open", json={"ciphertext": sealed["bad"]})
        bad_seal = client.post("/v1/keys/bad/seal", json={"plaintext": b64(b"x")})
        bad_meta = client.get("/v1/keys/bad")
        good = [
            client.post(f"/v1/keys/{n}/open", json={"ciphertext": sealed[n]})
            for n in ("good-a", "good-b")
        ]
        listing = client.get("/v1/keys")
        created = client.post("/v1/keys", json={"name": "new"})
        stateless = seal_check(client, 3)
        log = server.log.read_text(errors="replace")
    good_ok = [
        r
        for n, r in zip(("good-a", "good-b"), good, strict=True)
        if r.status_code == 200 and r.json()["plaintext"] == b64(n.encode())
    ]
    listed = (
        {k["name"] for k in listing.json().get("keys", [])} if listing.status_code == 200 else set()
    )
    is_problem = bad_open.headers.get("content-type", "").startswith("application/problem+json")
    problem = bad_open.json() if is_problem else {}
    detail = problem.get("detail", "") if is_problem else bad_open.text[:200]
    problem_type = problem.get("type", "").rsplit("/", 1)[-1]
    out.figures = {
        "damaged key open": (
            f"{bad_open.status_code} {problem_type}" if is_problem else bad_open.status_code
        ),
        # a damaged row is permanent: a Retry-After would invite retries that cannot succeed
        "damaged key Retry-After": bad_open.headers.get("retry-after", "none"),
        "damaged key seal": bad_seal.status_code,
        "damaged key metadata": bad_meta.status_code,
        "detail": detail,
        "other keys open": f"{len(good_ok)}/2",
        "listed": sorted(listed),
        "create": created.status_code,
        "stateless route": stateless,
        "logged the cause": "bad" in log
        and ("unwrap" in log.lower() or "kek" in log.lower() or "authentic" in log.lower()),
    }
    out.ok = (
        bad_open.status_code == 503
        and problem_type == "key-unavailable"
        and "retry-after" not in bad_open.headers
        and bad_open.headers.get("content-type", "").startswith("application/problem+json")
        and len(good_ok) == 2
        and {"good-a", "good-b", "bad"} <= listed
        and created.status_code == 201
        and stateless == (200, True)
    )
    return out


# ---- 5. SIGTERM drains ---------------------------------------------------------------------------


def sigterm_drains(directory: Path, uploads: int = 4, seconds: float = 3.0) -> Outcome:
    out = Outcome("SIGTERM with uploads in flight")
    with serve(directory / "drain") as server:
        results: list[tuple[int, bool] | str] = [""] * uploads
        started = threading.Barrier(uploads + 1)

        def upload(k: int) -> None:
            chunks = [os.urandom(65536) for _ in range(12)]

            def body() -> Iterator[bytes]:
                started.wait()
                for chunk in chunks:
                    yield chunk
                    time.sleep(seconds / len(chunks))

            try:
                r = httpx.post(
                    server.base_url + "/v1/hash/sha256",
                    content=body(),
                    headers={"Content-Type": "application/octet-stream"},
                    timeout=60,
                )
                want = hashlib.sha256(b"".join(chunks)).digest()
                results[k] = (
                    r.status_code,
                    r.status_code == 200 and base64.b64decode(r.json()["digest"]) == want,
                )
            except httpx.HTTPError as exc:
                results[k] = f"{type(exc).__name__}"

        threads = [threading.Thread(target=upload, args=(k,)) for k in range(uploads)]
        for t in threads:
            t.start()
        started.wait()
        time.sleep(seconds / 4)
        server.process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        time.sleep(0.3)
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=2):
                refused = False
        except OSError:
            refused = True
        for t in threads:
            t.join(timeout=60)
        try:
            code = server.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            code = None
        exited_after = time.monotonic() - signalled
        log = server.log.read_text(errors="replace")
    completed = [r for r in results if isinstance(r, tuple) and r == (200, True)]
    # uvicorn (>= 0.29) re-raises the signal once it has shut down, so a drained server ends
    # "killed by SIGTERM" (-15) after its "Finished server process" line; a server killed
    # before draining has no such line.
    finished = "Waiting for connections to close" in log and "Finished server process" in log
    out.figures = {
        "uploads in flight": uploads,
        "completed with the right digest": len(completed),
        "their results": [r if isinstance(r, str) else r[0] for r in results],
        "new connection after SIGTERM": "refused" if refused else "accepted",
        "exit status": code,
        "shut down in order (log)": finished,
        "exited after (s)": round(exited_after, 2),
    }
    out.ok = len(completed) == uploads and refused and code in (0, -signal.SIGTERM) and finished
    return out


SCENARIOS: dict[str, Callable[[Path], Outcome]] = {
    "worker": worker_killed,
    "postgres": postgres_stopped,
    "disk": disk_full,
    "corrupt": corrupted_row,
    "sigterm": sigterm_drains,
}


def run_all(
    directory: Path, only: tuple[str, ...] = (), progress: Callable[[Outcome], None] | None = None
) -> list[Outcome]:
    outcomes = []
    for key, scenario in SCENARIOS.items():
        if only and key not in only:
            continue
        try:
            outcome = scenario(directory)
        except Exception as exc:  # a scenario that could not run is a failure, said so
            outcome = Outcome(key, ok=False, notes=[f"{type(exc).__name__}: {exc}"[:2000]])
        outcomes.append(outcome)
        if progress:
            progress(outcome)
    return outcomes
