"""Backends report, health probes and the Prometheus endpoint."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request, Response
from pydantic import Field

from .. import crypto
from ..buildinfo import EventLoop, HttpParser, http_stack
from ..errors import NOT_READY, ProblemError
from ..metrics import CONTENT_TYPE
from .common import ResponseModel
from .deps import State
from .wire import octet_response, read_body

router = APIRouter(tags=["system"])


class ImplementationInfo(ResponseModel):
    name: str
    requires: list[str]
    runnable: bool
    min_len: int = Field(description="Shortest input this row runs; 0 for any length")
    below_min_len: str | None = Field(
        description="The row that runs shorter inputs instead (null when min_len is 0)"
    )


class AlgorithmInfo(ResponseModel):
    name: str
    selected: str
    forced: bool
    self_test_passed: bool | None
    implementations: list[ImplementationInfo]


class CpuFeatureInfo(ResponseModel):
    name: str
    state: Literal["present", "absent", "masked"]


class AuthInfo(ResponseModel):
    """How this instance authenticates (guard.AuthPolicy): never which tokens it holds."""

    mode: Literal["tokens", "open-loopback", "disabled"]
    tokens: int = Field(description="Tokens in the store (0 unless mode is tokens)")
    warning: str | None = Field(description="Set whenever operations need no token")


class HttpStackInfo(ResponseModel):
    """What uvicorn serves this process with."""

    parser: HttpParser
    event_loop: EventLoop


class BackendsResponse(ResponseModel):
    arch: str
    version: str
    compiler: str
    features: list[CpuFeatureInfo]
    algorithms: list[AlgorithmInfo]
    auth: AuthInfo
    http: HttpStackInfo


class Status(ResponseModel):
    status: str


@router.get("/v1/backends")
async def backends(state: State, request: Request) -> BackendsResponse:
    """The CPU's features and, per algorithm, the chosen implementation and every other one;
    and how this instance authenticates."""
    report = crypto.backends()
    auth = AuthInfo(**request.app.state.archcrypt_security.policy.describe())
    stack = http_stack(state.settings.http)
    return BackendsResponse(
        auth=auth,
        arch=report.arch,
        version=report.version,
        compiler=report.compiler,
        features=[CpuFeatureInfo(name=f.name, state=f.state) for f in report.features],
        algorithms=[
            AlgorithmInfo(
                name=a.name,
                selected=a.selected,
                forced=a.forced,
                self_test_passed=state.self_tests.get(a.name),
                implementations=[
                    ImplementationInfo(
                        name=i.name,
                        requires=list(i.requires),
                        runnable=i.runnable,
                        min_len=i.min_len,
                        below_min_len=i.below_min_len,
                    )
                    for i in a.implementations
                ],
            )
            for a in report.algorithms
        ],
        http=HttpStackInfo(parser=stack.http_parser, event_loop=stack.event_loop),
    )


@router.get("/livez")
async def livez() -> Status:
    """The process serves requests."""
    return Status(status="alive")


@router.get("/readyz", responses={503: {"description": "Startup self-test not passed"}})
async def readyz(state: State) -> Status:
    """Ready once every chosen implementation passed its known-answer self-test at startup."""
    if not state.ready:
        failed = sorted(name for name, ok in state.self_tests.items() if not ok)
        detail = (
            f"Self-test failed for: {', '.join(failed)}." if failed else "Startup has not finished."
        )
        raise ProblemError(NOT_READY, detail)
    return Status(status="ready")


@router.get("/metrics", response_class=Response)
async def metrics(state: State) -> Response:
    """Prometheus text exposition."""
    return Response(state.metrics.render(), media_type=CONTENT_TYPE)


bench_router = APIRouter(tags=["system"], include_in_schema=False)


@bench_router.post("/v1/bench/null")
async def null(request: Request) -> Response:
    """The body back, through the same middleware and body reading as every binary route:
    the ceiling a binary crypto route can reach (ARCHCRYPT_BENCHMARK_NULL_ROUTE only)."""
    return octet_response(await read_body(request))
