"""Which HTTP parser and event loop uvicorn serves with, in /v1/backends and build_info.

pyproject installs httptools and uvloop on every platform, so the deployed server runs on
them. A server whose httptools and uvloop are present but fail to import (shadowed here by
packages that raise ImportError, as a wheel for the wrong machine would) is served by h11
and asyncio, and must say so: the report follows what uvicorn loaded, not what is merely
installed."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from .conftest import Server, serve_subprocess


def reported(server: Server) -> tuple[dict[str, str], dict[str, str]]:
    """/v1/backends' "http" and the build_info sample's labels."""
    with httpx.Client(base_url=server.base_url, timeout=30.0) as client:
        backends = client.get("/v1/backends").json()
        metrics = client.get("/metrics").text
    (build,) = next(
        f for f in text_string_to_metric_families(metrics) if f.name == "archcrypt_build_info"
    ).samples
    return backends["http"], build.labels


def test_the_deployed_stack_is_httptools_on_uvloop(server: Server) -> None:
    http, build = reported(server)
    assert http == {"parser": "httptools", "event_loop": "uvloop"}
    assert (build["http_parser"], build["event_loop"]) == ("httptools", "uvloop")


@pytest.fixture(scope="module")
def fallback_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    shadow = tmp_path_factory.mktemp("shadow")
    for package in ("httptools", "uvloop"):
        (shadow / package).mkdir()
        (shadow / package / "__init__.py").write_text(
            f"raise ImportError('{package} shadowed by tests/service/test_http_stack.py')\n"
        )
    path = os.pathsep.join(filter(None, [str(shadow), os.environ.get("PYTHONPATH")]))
    yield from serve_subprocess(
        tmp_path_factory.mktemp("fallback"), PYTHONPATH=path, ARCHCRYPT_BENCHMARK_ENABLED="false"
    )


def test_a_stack_that_does_not_load_is_reported_as_what_serves(fallback_server: Server) -> None:
    http, build = reported(fallback_server)
    assert http == {"parser": "h11", "event_loop": "asyncio"}
    assert (build["http_parser"], build["event_loop"]) == ("h11", "asyncio")


@pytest.fixture(scope="module")
def h11_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve_subprocess(
        tmp_path_factory.mktemp("h11"), ARCHCRYPT_HTTP="h11", ARCHCRYPT_BENCHMARK_ENABLED="false"
    )


def test_a_configured_parser_is_reported_not_uvicorns_auto_choice(h11_server: Server) -> None:
    # httptools loads here, so uvicorn's "auto" alone would say httptools; the server was
    # given ARCHCRYPT_HTTP=h11's protocol class, and that is what serves.
    http, build = reported(h11_server)
    assert http == {"parser": "h11", "event_loop": "uvloop"}
    assert (build["http_parser"], build["event_loop"]) == ("h11", "uvloop")
