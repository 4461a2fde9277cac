"""Metrics counts requests and operations in plain Python and adds them to prometheus-client
in bulk (metrics.py): what /metrics renders must be what prometheus-client's own Counter and
Histogram render for the same observations, one update at a time. ~0.1 s."""

from __future__ import annotations

import random

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from archcrypt.metrics import HTTP_BUCKETS, OPERATION_BUCKETS, Metrics

FAMILIES = (
    "archcrypt_http_requests",
    "archcrypt_http_request_duration_seconds",
    "archcrypt_operations",
    "archcrypt_processed_bytes",
    "archcrypt_operation_duration_seconds",
)


Sample = tuple[str, tuple[tuple[str, str], ...]]


def samples(text: bytes) -> dict[Sample, float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text.decode())
        if family.name in FAMILIES
        for s in family.samples
    }


def test_bulk_counts_render_as_prometheus_clients_own() -> None:
    metrics = Metrics()
    registry = CollectorRegistry()
    ns = "archcrypt"
    requests = Counter(
        "http_requests", "x", ["method", "route", "status"], namespace=ns, registry=registry
    )
    request_duration = Histogram(
        "http_request_duration_seconds",
        "x",
        ["method", "route"],
        buckets=HTTP_BUCKETS,
        namespace=ns,
        registry=registry,
    )
    per_operation = ["operation", "algorithm", "outcome"]
    operations = Counter("operations", "x", per_operation, namespace=ns, registry=registry)
    processed = Counter("processed_bytes", "x", per_operation, namespace=ns, registry=registry)
    operation_duration = Histogram(
        "operation_duration_seconds",
        "x",
        ["operation", "algorithm"],
        buckets=OPERATION_BUCKETS,
        namespace=ns,
        registry=registry,
    )
    rng = random.Random(7)
    # every bound exactly (a value equal to a bound is in that bucket), either side of it,
    # zero, and beyond the last bound (+Inf)
    values = [0.0, 20.0, 1e9]
    for bound in (*HTTP_BUCKETS, *OPERATION_BUCKETS):
        values += [bound, bound * (1 - 1e-12), bound * (1 + 1e-12)]
    values += [rng.uniform(0, 3) ** 4 for _ in range(500)]
    for i, seconds in enumerate(values):
        route, status = ("/v1/aead/{algorithm}/seal", 200) if i % 3 else ("/livez", 404)
        metrics.observe_request("POST", route, status, seconds)
        requests.labels("POST", route, str(status)).inc()
        request_duration.labels("POST", route).observe(seconds)
        outcome = ("ok", "auth_failed", "invalid_input")[i % 3]
        nbytes = rng.randrange(0, 1 << 20)
        metrics.observe_operation("seal", "chacha20-poly1305", outcome, nbytes, seconds)
        operations.labels("seal", "chacha20-poly1305", outcome).inc()
        processed.labels("seal", "chacha20-poly1305", outcome).inc(nbytes)
        operation_duration.labels("seal", "chacha20-poly1305").observe(seconds)
        if i == len(values) // 2:  # a scrape in between: what is flushed is not counted twice
            assert samples(metrics.render())
    ours, theirs = samples(metrics.render()), samples(generate_latest(registry))
    assert len(ours) > 60
    assert_same(ours, theirs)
    assert_same(samples(metrics.render()), theirs)  # a scrape changes nothing


def assert_same(ours: dict[Sample, float], theirs: dict[Sample, float]) -> None:
    """Counts exactly; a histogram's sum to the last bits (a float sum's value depends on
    the order of its terms: added as one total per flush, not one at a time)."""
    assert ours.keys() == theirs.keys()
    for sample, value in theirs.items():
        if sample[0].endswith("_sum"):
            assert ours[sample] == pytest.approx(value, rel=1e-12), sample
        else:
            assert ours[sample] == value, sample
