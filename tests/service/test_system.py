"""GET /v1/backends, /livez, /readyz and /metrics."""

from __future__ import annotations

import os

import httpx
from prometheus_client.parser import text_string_to_metric_families

from .helpers import b64, metric_value

DISPATCH_ALGORITHMS = {"chacha20", "poly1305", "chacha20-poly1305", "sha256", "sha512", "camellia"}


def test_livez(client: httpx.Client) -> None:
    response = client.get("/livez")
    assert response.status_code == 200
    assert response.json() == {"status": "alive"}


def test_readyz_after_startup(client: httpx.Client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready"}


def test_backends_shape(client: httpx.Client) -> None:
    response = client.get("/v1/backends")
    assert response.status_code == 200
    report = response.json()
    assert set(report) == {"arch", "version", "compiler", "features", "algorithms", "auth", "http"}
    # the session server listens on loopback without tokens: open, and says so
    assert report["auth"]["mode"] == "open-loopback" and report["auth"]["warning"]
    assert set(report["http"]) == {"parser", "event_loop"}
    assert report["arch"] in {"amd64", "arm64", "ppc64le", "s390x", "unknown"}
    for feature in report["features"]:
        assert set(feature) == {"name", "state"}
        assert feature["state"] in {"present", "absent", "masked"}
    assert {a["name"] for a in report["algorithms"]} >= DISPATCH_ALGORITHMS
    for algorithm in report["algorithms"]:
        assert set(algorithm) == {
            "name",
            "selected",
            "forced",
            "self_test_passed",
            "implementations",
        }
        assert algorithm["self_test_passed"] is True
        names = [impl["name"] for impl in algorithm["implementations"]]
        assert algorithm["selected"] in names
        for impl in algorithm["implementations"]:
            assert set(impl) == {"name", "requires", "runnable", "min_len", "below_min_len"}
            assert isinstance(impl["requires"], list)
            assert isinstance(impl["runnable"], bool)
        chosen = next(i for i in algorithm["implementations"] if i["name"] == algorithm["selected"])
        assert chosen["runnable"]


def _metrics(client: httpx.Client) -> str:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


def test_metrics_parse_and_describe_the_backends(client: httpx.Client) -> None:
    text = _metrics(client)
    families = {family.name: family for family in text_string_to_metric_families(text)}
    for name in (
        "archcrypt_build_info",
        "archcrypt_backend_info",
        "archcrypt_cpu_feature_info",
        "archcrypt_selftest_ok",
        "archcrypt_operations",
        "archcrypt_processed_bytes",
        "archcrypt_operation_duration_seconds",
        "archcrypt_http_requests",
        "archcrypt_http_request_duration_seconds",
    ):
        assert name in families, name

    report = client.get("/v1/backends").json()
    (build,) = families["archcrypt_build_info"].samples
    assert build.value == 1
    assert build.labels["version"]
    assert build.labels["native_version"] == report["version"]
    for algorithm in report["algorithms"]:
        labels = {"algorithm": algorithm["name"], "backend": algorithm["selected"]}
        assert metric_value(text, "archcrypt_backend_info", arch=report["arch"], **labels) == 1
        assert metric_value(text, "archcrypt_selftest_ok", **labels) == 1
    for state in ("present", "masked"):
        expected = {f["name"] for f in report["features"] if f["state"] == state}
        exported = {
            s.labels["feature"]
            for s in families["archcrypt_cpu_feature_info"].samples
            if s.labels["state"] == state
        }
        assert exported == expected, state


def test_request_and_operation_counters_move(client: httpx.Client) -> None:
    route = "/v1/hash/{algorithm}"
    before = _metrics(client)
    data = os.urandom(1000)
    for _ in range(3):
        assert client.post("/v1/hash/sha512", json={"data": b64(data)}).status_code == 200
    assert client.post("/v1/hash/nope", json={"data": ""}).status_code == 404
    assert client.get("/no/such/route").status_code == 404
    after = _metrics(client)

    def delta(name: str, **labels: str) -> float:
        return metric_value(after, name, **labels) - metric_value(before, name, **labels)

    assert delta("archcrypt_http_requests_total", method="POST", route=route, status="200") == 3
    assert delta("archcrypt_http_requests_total", method="POST", route=route, status="404") == 1
    assert (
        delta("archcrypt_http_requests_total", method="GET", route="unmatched", status="404") == 1
    )
    assert delta("archcrypt_http_request_duration_seconds_count", method="POST", route=route) == 4
    assert (
        delta("archcrypt_operations_total", operation="hash", algorithm="sha512", outcome="ok") == 3
    )
    assert delta("archcrypt_processed_bytes_total", operation="hash", algorithm="sha512") == 3000
    assert (
        delta("archcrypt_operation_duration_seconds_count", operation="hash", algorithm="sha512")
        == 3
    )
    # the previous scrape is itself counted, by its route template
    assert delta("archcrypt_http_requests_total", method="GET", route="/metrics", status="200") == 1


def test_failed_authentication_is_counted(client: httpx.Client) -> None:
    labels = {"operation": "open", "algorithm": "xchacha20-poly1305", "outcome": "auth_failed"}
    before = metric_value(_metrics(client), "archcrypt_operations_total", **labels)
    response = client.post(
        "/v1/aead/xchacha20-poly1305/open",
        json={"key": b64(bytes(32)), "nonce": b64(bytes(24)), "ciphertext": b64(bytes(40))},
    )
    assert response.status_code == 400
    assert metric_value(_metrics(client), "archcrypt_operations_total", **labels) == before + 1
