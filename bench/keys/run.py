#!/usr/bin/env python3
"""Named keys against raw keys through HTTP: what the name costs a request.

Starts one `archcrypt serve` (embedded SQLite store in a temporary directory, no start-up
benchmark), creates the keys, and drives each route with wrk on identical 64-byte bodies,
the cases interleaved round by round. The figure is the server's CPU time per request
(user + system of its process over the run, divided by the requests wrk counted): on a
shared machine wall-clock req/s mostly measures the neighbours, CPU per request does not.
Prints a markdown table of the median per case and its ratio to the raw-key route.

    .venv/bin/python bench/keys/run.py [--seconds 4] [--rounds 3] [--connections 16]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def lua(path: str, body: bytes, content_type: str, headers: dict[str, str]) -> str:
    extra = "".join(f'wrk.headers["{k}"] = "{v}"\n' for k, v in headers.items())
    escaped = "".join(f"\\{b}" for b in body)
    return (
        f'wrk.method = "POST"\nwrk.path = "{path}"\nwrk.body = "{escaped}"\n'
        f'wrk.headers["Content-Type"] = "{content_type}"\n{extra}'
    )


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_wrk(url: str, script: Path, seconds: int, connections: int, pid: int) -> float:
    """Server CPU microseconds per request."""
    before = cpu_seconds(pid)
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-s", str(script), url],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    if "Non-2xx" in out:
        raise SystemExit(f"{script.name}: non-2xx answers:\n{out}")
    spent = cpu_seconds(pid) - before
    match = re.search(r"(\d+) requests in", out)
    assert match, out
    return 1e6 * spent / int(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="archcrypt-keys-bench-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "ARCHCRYPT_DATA_DIR": str(work / "data"),
           "ARCHCRYPT_BENCHMARK_ENABLED": "false"}  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-m", "archcrypt", "serve", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("server not ready")
            time.sleep(0.1)
        for name, key_type in (("x", "xchacha20-poly1305"), ("c", "chacha20-poly1305"),
                               ("h", "hmac-sha256")):  # fmt: skip
            httpx.post(f"{url}/v1/keys", json={"name": name, "type": key_type}).raise_for_status()
        data = secrets.token_bytes(64)
        b64 = base64.b64encode(data).decode()
        key = base64.b64encode(secrets.token_bytes(32)).decode()
        sealed = httpx.post(f"{url}/v1/keys/x/seal", json={"plaintext": b64}).json()["ciphertext"]
        raw = httpx.post(
            f"{url}/v1/aead/xchacha20-poly1305/seal", json={"key": key, "plaintext": b64}
        ).json()
        binary = httpx.post(
            f"{url}/v1/keys/x/seal", content=data, headers={"content-type": "application/octet-stream"}
        ).content
        j = "application/json"
        cases = {
            "raw xchacha20-poly1305 seal (key in the body)": (
                "/v1/aead/xchacha20-poly1305/seal", json.dumps({"key": key, "plaintext": b64}), j),
            "named xchacha20-poly1305 seal": ("/v1/keys/x/seal", json.dumps({"plaintext": b64}), j),
            "named chacha20-poly1305 seal (nonce budget)": (
                "/v1/keys/c/seal", json.dumps({"plaintext": b64}), j),
            "named seal, binary body": ("/v1/keys/x/seal", data, "application/octet-stream"),
            "raw xchacha20-poly1305 open": ("/v1/aead/xchacha20-poly1305/open", json.dumps(
                {"key": key, "nonce": raw["nonce"], "ciphertext": raw["ciphertext"]}), j),
            "named open": ("/v1/keys/x/open", json.dumps({"ciphertext": sealed}), j),
            "named open, binary body": ("/v1/keys/x/open", binary, "application/octet-stream"),
            "raw hmac-sha256": ("/v1/mac/hmac-sha256", json.dumps({"key": key, "data": b64}), j),
            "named hmac-sha256 mac": ("/v1/keys/h/mac", json.dumps({"data": b64}), j),
        }  # fmt: skip
        scripts = {}
        for index, (label, (path, body, ctype)) in enumerate(cases.items()):
            script = work / f"case{index}.lua"
            script.write_text(lua(path, body.encode() if isinstance(body, str) else body, ctype, {}))
            scripts[label] = script
        results: dict[str, list[float]] = {label: [] for label in cases}
        for _ in range(args.rounds):
            for label, script in scripts.items():
                results[label].append(
                    run_wrk(url, script, args.seconds, args.connections, server.pid)
                )
    finally:
        server.terminate()
        server.wait(timeout=10)
    medians = {label: statistics.median(v) for label, v in results.items()}
    base = {
        "seal": medians["raw xchacha20-poly1305 seal (key in the body)"],
        "open": medians["raw xchacha20-poly1305 open"],
        "mac": medians["raw hmac-sha256"],
    }
    print("| route (64 B) | server CPU per request (median) | vs the raw-key route |")
    print("|---|---|---|")
    for label, value in medians.items():
        kind = "open" if "open" in label else "mac" if "mac" in label or "hmac" in label else "seal"
        print(f"| {label} | {value:.0f} us | {value / base[kind]:.2f}x |")


if __name__ == "__main__":
    main()
