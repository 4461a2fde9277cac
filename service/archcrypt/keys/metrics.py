"""Metrics per named key, with a bounded `key` label.

Key names are chosen by API clients, so a label per name would let a client grow the
series count (the server's memory, Prometheus' index) without limit by creating keys. The
`key` label therefore takes at most ARCHCRYPT_METRICS_KEY_LABELS distinct names per process,
the first ones it sees; every later name is counted under `key="other"`. The other labels
come from fixed sets (operation, outcome).

- archcrypt_key_operations_total{key, operation, outcome}: per item, batches included.
- archcrypt_key_primary_version{key}: what this instance seals with (instances that agree
  have seen the same rotations).
- archcrypt_key_nonces_reserved{key, version} and archcrypt_key_nonce_budget{key, version}:
  for chacha20-poly1305 keys, the random nonces claimed from the primary version's budget
  by all instances together (read from the store every few seconds). For `other`, the
  figures of its key nearest to its budget.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Final

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from .store import PrimaryLevel

OTHER: Final = "other"
OUTCOMES: Final = ("ok", "auth_failed", "invalid_input", "refused", "error")


class KeyLabels:
    """The bounded label value for each key name, first come, first labelled."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._labels: dict[str, str] = {}
        self._lock = threading.Lock()

    def __call__(self, name: str) -> str:
        label = self._labels.get(name)
        if label is not None:
            return label
        with self._lock:
            label = self._labels.get(name)
            if label is None:
                # "other" is never a name's own label: a key called "other" joins the bucket
                own = len(self._labels) < self.limit and name != OTHER
                label = self._labels[name] = name if own else OTHER
            return label


class KeyMetrics:
    def __init__(self, registry: CollectorRegistry, max_key_labels: int) -> None:
        self.labels = KeyLabels(max_key_labels)
        self.operations = Counter(
            "operations",
            "Operations with named keys, per item, by key (bounded: see the README), "
            "operation and outcome (ok, auth_failed, invalid_input, refused, error).",
            ["key", "operation", "outcome"],
            namespace="archcrypt_key",
            registry=registry,
        )
        self._series: dict[tuple[str, str, str], Counter] = {}

    def observe(self, name: str, operation: str, outcome: str, count: int = 1) -> None:
        series_key = (name, operation, outcome)
        child = self._series.get(series_key)
        if child is None:
            child = self._series[series_key] = self.operations.labels(
                self.labels(name), operation, outcome
            )
        child.inc(count)


class KeyLevelCollector(Collector):
    """Gauges computed at scrape time from what the key service last read from the store."""

    def __init__(
        self,
        levels: Callable[[], Iterable[PrimaryLevel]],
        labels: KeyLabels,
        budget: int,
    ) -> None:
        self._levels = levels
        self._labels = labels
        self._budget = budget

    def collect(self) -> Iterable[GaugeMetricFamily]:
        primary = GaugeMetricFamily(
            "archcrypt_key_primary_version",
            "The version this instance seals or MACs with, per key (bounded key label).",
            labels=["key"],
        )
        reserved = GaugeMetricFamily(
            "archcrypt_key_nonces_reserved",
            "chacha20-poly1305: random nonces claimed from the primary version's budget by "
            "all instances (an upper bound of the nonces drawn).",
            labels=["key", "version"],
        )
        budget = GaugeMetricFamily(
            "archcrypt_key_nonce_budget",
            "chacha20-poly1305: random nonces one version may use before it must be rotated.",
            labels=["key", "version"],
        )
        primaries: dict[str, int] = {}
        nearest: dict[str, PrimaryLevel] = {}
        for level in self._levels():
            label = self._labels(level.name)
            if label != OTHER:
                primaries[label] = level.version
            if level.type == "chacha20-poly1305":
                best = nearest.get(label)
                if best is None or level.nonces_reserved > best.nonces_reserved:
                    nearest[label] = level
        for label, version in primaries.items():
            primary.add_metric([label], version)
        for label, level in nearest.items():
            reserved.add_metric([label, str(level.version)], level.nonces_reserved)
            budget.add_metric([label, str(level.version)], self._budget)
        yield primary
        yield reserved
        yield budget
