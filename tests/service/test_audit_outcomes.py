"""A MAC that does not verify answers 200 {"valid": false}: its audit line says auth_failed
(not ok), as a failed AEAD open's does, and so do the operation metrics, for JSON, streamed
octet-stream and named-key verifies alike. Through a real server with the audit log in a file."""

from __future__ import annotations

import base64
import hmac
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import Server, serve_subprocess
from .helpers import b64, metric_value

KEY = os.urandom(40)
DATA = b"ledger line 42"
TAG = hmac.digest(KEY, DATA, "sha256")
WRONG = bytes(b ^ 1 for b in TAG)


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    directory = tmp_path_factory.mktemp("audit-outcomes")
    log = directory / "audit.log"
    for server in serve_subprocess(directory, ARCHCRYPT_AUDIT_LOG=str(log)):
        yield server, log


def _line(log: Path, request_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while True:
        for text in log.read_text().splitlines():
            line = json.loads(text)
            if line["request_id"] == request_id:
                return line
        assert time.monotonic() < deadline, f"no audit line for {request_id}"
        time.sleep(0.05)


def _verify(server: Server, tag: bytes, kind: str, request_id: str) -> httpx.Response:
    url = server.base_url + "/v1/mac/hmac-sha256/verify"
    headers = {"X-Request-ID": request_id}
    if kind == "json":
        body = {"key": b64(KEY), "data": b64(DATA), "tag": b64(tag)}
        return httpx.post(url, json=body, headers=headers)
    headers |= {
        "Content-Type": "application/octet-stream",
        "Archcrypt-Key": b64(KEY),
        "Archcrypt-Tag": b64(tag),
    }
    return httpx.post(url, content=DATA, headers=headers)


@pytest.mark.parametrize("kind", ["json", "octet-stream"])
def test_a_tag_that_does_not_verify_is_audited_and_counted_as_auth_failed(
    audited: tuple[Server, Path], kind: str
) -> None:
    server, log = audited
    metrics = server.base_url + "/metrics"
    labels = {"operation": "verify", "algorithm": "hmac-sha256"}
    before = httpx.get(metrics).text
    marker = f"outcome-{kind}-{os.urandom(4).hex()}"

    good = _verify(server, TAG, kind, marker + "-good")
    bad = _verify(server, WRONG, kind, marker + "-bad")

    assert (good.status_code, good.json()) == (200, {"valid": True})
    assert (bad.status_code, bad.json()) == (200, {"valid": False})
    ok_line, failed_line = _line(log, marker + "-good"), _line(log, marker + "-bad")
    assert (ok_line["outcome"], ok_line["status"]) == ("ok", 200)
    assert (failed_line["outcome"], failed_line["status"]) == ("auth_failed", 200)
    assert failed_line["operation"] == "mac.verify" and failed_line["algorithm"] == "hmac-sha256"
    after = httpx.get(metrics).text
    for outcome in ("ok", "auth_failed"):
        name = "archcrypt_operations_total"
        counted = metric_value(after, name, **labels, outcome=outcome)
        assert counted - metric_value(before, name, **labels, outcome=outcome) == 1, outcome


def test_a_named_key_tag_that_does_not_verify_is_auth_failed(audited: tuple[Server, Path]) -> None:
    server, log = audited
    keys = server.base_url + "/v1/keys"
    name = "tags-" + os.urandom(4).hex()
    created = httpx.post(keys, json={"name": name, "type": "hmac-sha256"})
    assert created.status_code == 201, created.text
    tag = httpx.post(f"{keys}/{name}/mac", json={"data": b64(DATA)}).json()["tag"]
    prefix, _, raw = tag.rpartition(":")
    forged = prefix + ":" + base64.b64encode(bytes(b ^ 1 for b in base64.b64decode(raw))).decode()
    marker = "outcome-key-" + os.urandom(4).hex()
    for suffix, given, valid in (("-good", tag, True), ("-bad", forged, False)):
        response = httpx.post(
            f"{keys}/{name}/verify",
            json={"data": b64(DATA), "tag": given},
            headers={"X-Request-ID": marker + suffix},
        )
        assert (response.status_code, response.json()["valid"]) == (200, valid)
    assert _line(log, marker + "-good")["outcome"] == "ok"
    failed = _line(log, marker + "-bad")
    assert (failed["outcome"], failed["operation"], failed["key"]) == (
        "auth_failed",
        "keys.verify",
        name,
    )
    text = httpx.get(server.base_url + "/metrics").text
    assert (
        metric_value(
            text, "archcrypt_key_operations_total", operation="verify", outcome="auth_failed"
        )
        >= 1
    )
