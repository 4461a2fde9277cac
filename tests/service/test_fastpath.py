"""The fast path (archcrypt/fastpath.py) answers exactly as FastAPI's router does.

Two apps over one key store, one with ARCHCRYPT_FAST_PATH on, one with it off, get the same
requests: every operation route with valid JSON and binary bodies, streamed in two chunks
where the route streams, and every kind of bad request (415, 400, 422, 404, 405, 413,
401, 403, a JSON shape the schema cannot hold, a wrong tag, a batch with a bad item), plus
the other routes. Their answers (status, headers, body), their audit lines and their
metrics must be the same, and every operation route must have been served by the fast path
in one app and by the router in the other. In-process ASGI calls: ~3 s.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from archcrypt import fastpath
from archcrypt.app import create_app
from archcrypt.auth import create_token
from archcrypt.config import Settings

from .helpers import b64

KEY = bytes(range(32))
NONCE12, NONCE24 = bytes(range(100, 112)), bytes(range(100, 124))
CAMELLIA = bytes(range(16))
DATA = b"the quick brown fox jumps over the lazy dog" * 3
SEALED = ChaCha20Poly1305(KEY).encrypt(NONCE12, DATA, b"hdr")
JSON_TYPE = "application/json"
OCTET = "application/octet-stream"
ALL_SCOPES = [
    "aead:seal", "aead:open", "mac", "mac:verify", "hash", "ecb", "poly1305", "keys:admin",
    "keys:read", "key:*:seal", "key:*:open", "key:*:rewrap", "key:*:datakey", "key:*:mac",
    "key:*:verify",
]  # fmt: skip


@dataclass
class Req:
    method: str
    path: str
    body: bytes = b""
    content_type: str | None = JSON_TYPE
    headers: dict[str, str] = field(default_factory=dict)
    token: str = "full"  # full | hash-only | none
    chunks: int = 1  # the body in this many http.request messages
    random: bool = False  # the answer draws a nonce or a key: compared by shape
    loose: bool = False  # the answer reports live state (key usage): status and header names


def js(**fields: Any) -> bytes:
    return json.dumps(fields).encode()


@dataclass(frozen=True)
class Answer:
    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes


class App:
    def __init__(self, app: FastAPI, audit: Path, tokens: dict[str, str]) -> None:
        self.app, self.audit, self.tokens = app, audit, tokens

    async def call(self, req: Req, request_id: str) -> Answer:
        headers = [(b"host", b"testserver"), (b"x-request-id", request_id.encode())]
        if req.content_type is not None:
            headers.append((b"content-type", req.content_type.encode()))
        headers.append((b"content-length", str(len(req.body)).encode()))
        if req.token != "none":
            headers.append((b"authorization", b"Bearer " + self.tokens[req.token].encode()))
        headers += [(k.lower().encode(), v.encode()) for k, v in req.headers.items()]
        size = -(-len(req.body) // req.chunks) if req.body else 0
        parts = [req.body[i : i + size] for i in range(0, len(req.body), size)] if size else []
        messages = [
            {"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
            for i, part in enumerate(parts)
        ] or [{"type": "http.request", "body": b"", "more_body": False}]
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await asyncio.sleep(3600)  # as a server: nothing more until the client leaves
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": req.method,
            "scheme": "http",
            "path": req.path,
            "raw_path": req.path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
            "state": {},
        }
        await self.app(scope, receive, send)
        start = next(m for m in sent if m["type"] == "http.response.start")
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return Answer(start["status"], tuple(start.get("headers", ())), body)


@asynccontextmanager
async def two_apps(work: Path) -> AsyncIterator[tuple[App, App]]:
    tokens_file = work / "tokens.json"
    full, _ = create_token(tokens_file, "full", ALL_SCOPES)
    hash_only, _ = create_token(tokens_file, "hash-only", ["hash"])
    tokens = {"full": full, "hash-only": hash_only}
    async with AsyncExitStack() as stack:
        apps = []
        for fast in (True, False):
            audit = work / f"audit-{fast}.log"
            settings = Settings(
                host="127.0.0.1",
                fast_path=fast,
                benchmark_enabled=False,
                benchmark_null_route=True,
                tokens_file=tokens_file,
                audit_log=str(audit),
                data_dir=work / "data",
                max_body_bytes=1 << 20,
            )
            app = create_app(settings)
            await stack.enter_async_context(app.router.lifespan_context(app))
            apps.append(App(app, audit, tokens))
        yield apps[0], apps[1]


def operation_requests(keys: dict[str, str]) -> list[Req]:
    """Valid requests for every operation route, and the bad ones each kind can get."""
    aead, hmac_key, wrong = keys["aead"], keys["hmac"], keys["missing"]
    out: list[Req] = []
    for alg, nonce in (("chacha20-poly1305", NONCE12), ("xchacha20-poly1305", NONCE24)):
        seal = f"/v1/aead/{alg}/seal"
        body = {"key": b64(KEY), "nonce": b64(nonce), "plaintext": b64(DATA), "aad": b64(b"h")}
        aead_headers = {"Archcrypt-Key": b64(KEY), "Archcrypt-Nonce": b64(nonce)}
        out += [
            Req("POST", seal, js(**body)),
            Req("POST", seal, js(key=b64(KEY), plaintext=b64(DATA)), random=True),
            Req("POST", seal, DATA, OCTET, aead_headers),
            Req("POST", seal, DATA, OCTET, {"Archcrypt-Key": b64(KEY)}, random=True),
            Req("POST", seal, DATA, OCTET, {"Archcrypt-Nonce": b64(nonce)}),  # no key: 422
            Req("POST", seal, DATA, OCTET, {"Archcrypt-Key": "not base64!"}),  # 400
            Req("POST", seal, js(**{**body, "nonce": b64(b"short")})),  # 422
            Req("POST", f"/v1/aead/{alg}/seal/batch", js(items=[body, {"key": "x"}, body])),
        ]
    sealed = {"key": b64(KEY), "nonce": b64(NONCE12), "ciphertext": b64(SEALED), "aad": b64(b"hdr")}
    open_ = "/v1/aead/chacha20-poly1305/open"
    out += [
        Req("POST", open_, js(**sealed)),
        Req("POST", open_, js(**{**sealed, "aad": b64(b"other")})),  # 400 authentication-failed
        Req("POST", open_, js(**{**sealed, "ciphertext": b64(b"short")})),  # 422
        Req(
            "POST",
            open_,
            SEALED,
            OCTET,
            {
                "Archcrypt-Key": b64(KEY),
                "Archcrypt-Nonce": b64(NONCE12),
                "Archcrypt-AAD": b64(b"hdr"),
            },
        ),
        Req(
            "POST",
            open_,
            SEALED,
            OCTET,
            {"Archcrypt-Key": b64(KEY), "Archcrypt-Nonce": b64(NONCE12)},
        ),
        Req("POST", open_ + "/batch", js(items=[sealed, {**sealed, "aad": ""}, {}])),
        Req("POST", "/v1/aead/chacha20-poly1305/open/batch", js(items=[sealed]), token="hash-only"),
    ]
    for alg in ("poly1305", "hmac-sha256", "hmac-sha512"):
        mac = f"/v1/mac/{alg}"
        tag_req = {"key": b64(KEY), "data": b64(DATA)}
        out += [
            Req("POST", mac, js(**tag_req)),
            Req("POST", mac, DATA, OCTET, {"Archcrypt-Key": b64(KEY)}, chunks=3),
            Req(
                "POST",
                mac + "/verify",
                js(**tag_req, tag=b64(bytes(16 if alg == "poly1305" else 32))),
            ),
            Req("POST", mac + "/batch", js(items=[tag_req, {"key": b64(b"k"), "data": "!"}])),
            Req("POST", mac + "/verify/batch", js(items=[{**tag_req, "tag": b64(bytes(64))}])),
        ]
    good_tag = b64(hmac.digest(KEY, DATA, "sha256"))
    verify = "/v1/mac/hmac-sha256/verify"
    out += [
        Req("POST", verify, js(key=b64(KEY), data=b64(DATA), tag=good_tag)),
        Req(
            "POST",
            verify,
            DATA,
            OCTET,
            {"Archcrypt-Key": b64(KEY), "Archcrypt-Tag": good_tag},
            chunks=2,
        ),
        Req(
            "POST",
            verify,
            DATA,
            OCTET,
            {"Archcrypt-Key": b64(KEY), "Archcrypt-Tag": b64(bytes(32))},
        ),
        Req("POST", "/v1/mac/poly1305", js(key=b64(b"short"), data="")),  # 422
    ]
    for alg in ("sha224", "sha256", "sha384", "sha512"):
        out += [
            Req("POST", f"/v1/hash/{alg}", js(data=b64(DATA))),
            Req("POST", f"/v1/hash/{alg}", DATA, OCTET, chunks=2),
            Req("POST", f"/v1/hash/{alg}/batch", js(messages=[b64(DATA), ""])),
        ]
    blocks = DATA[:96]
    for op in ("encrypt", "decrypt"):
        ecb = f"/v1/ecb/camellia/{op}"
        out += [
            Req("POST", ecb, js(key=b64(CAMELLIA), data=b64(blocks))),
            Req("POST", ecb, blocks, OCTET, {"Archcrypt-Key": b64(CAMELLIA)}),
            Req("POST", ecb, blocks[:20], OCTET, {"Archcrypt-Key": b64(CAMELLIA)}),  # 422
            Req("POST", ecb, js(key=b64(b"bad"), data=b64(blocks))),  # 422
            Req(
                "POST", ecb + "/batch", js(items=[{"key": b64(CAMELLIA), "data": b64(blocks)}, {}])
            ),
        ]
    k = f"/v1/keys/{aead}"
    h = f"/v1/keys/{hmac_key}"
    out += [
        Req("POST", k + "/seal", js(plaintext=b64(DATA), aad=b64(b"ctx")), random=True),
        Req("POST", k + "/seal", DATA, OCTET, {"Archcrypt-AAD": b64(b"ctx")}, random=True),
        Req(
            "POST",
            k + "/seal/batch",
            js(items=[{"plaintext": b64(DATA)}, {"plaintext": "!"}]),
            random=True,
        ),
        Req("POST", k + "/datakey", b"", random=True),
        Req("POST", k + "/datakey/wrapped", js(bits=128), random=True),
        Req("POST", k + "/open", js(ciphertext="archcrypt:v1:" + b64(bytes(40)))),  # 400
        Req("POST", k + "/open", js(ciphertext="not a ciphertext")),
        Req("POST", k + "/rewrap", js(ciphertext="archcrypt:v9:" + b64(bytes(40)))),
        Req("POST", k + "/mac", js(data=b64(DATA))),  # 409: an AEAD key has no MAC
        Req("POST", h + "/mac", js(data=b64(DATA))),
        Req("POST", h + "/verify", js(data=b64(DATA), tag="archcrypt:v1:" + b64(bytes(32)))),
        Req("POST", h + "/mac/batch", js(items=[{"data": b64(DATA)}])),
        Req("POST", h + "/verify/batch", js(items=[{"data": "", "tag": "x"}])),
        Req("POST", h + "/open/batch", js(items=[])),  # 409
        Req("POST", f"/v1/keys/{wrong}/seal", js(plaintext="")),  # 404
        Req("POST", k + "/seal", js(plaintext=""), token="hash-only"),  # 403
    ]
    return out


def bad_requests(paths: list[str]) -> list[Req]:
    """What every operation route can be sent that it must refuse, the same way twice."""
    out: list[Req] = []
    for path in paths:
        some = [
            Req("POST", path, b'{"data":', JSON_TYPE),  # malformed JSON: 400
            Req("POST", path, b"", JSON_TYPE),  # no body
            Req("POST", path, b"{}", JSON_TYPE),
            Req("POST", path, js(unknown=1), JSON_TYPE),
            Req("POST", path, b"[" * 40 + b"]" * 40, JSON_TYPE),  # a shape no schema holds
            Req("POST", path, b"x", "text/plain"),  # 415
            Req("POST", path, b"x", None),  # no Content-Type: 415
            Req("POST", path, b"{}", JSON_TYPE, token="none"),  # 401
            Req("POST", path, b"{}", JSON_TYPE, token="hash-only"),  # 403, or through to 422
            Req("POST", path, b"{}", JSON_TYPE, headers={"Content-Length": str(1 << 30)}),  # 413
            Req("GET", path, b""),  # 405
            Req("POST", path + "/", b"{}", JSON_TYPE),  # no slash redirect: 404
        ]
        for req in some:  # a named key's datakey needs no body: its answer is fresh each time
            req.random = path.startswith("/v1/keys/")
        out += some
    return out


def other_requests(keys: dict[str, str]) -> list[Req]:
    return [
        Req("POST", "/v1/aead/aes-gcm/seal", js(key="")),  # no such algorithm: 404
        Req("POST", "/v1/hash/md5", js(data="")),
        Req("POST", "/v1/nowhere", b"{}"),
        Req("PUT", "/v1/aead/chacha20-poly1305/seal", b"{}"),
        Req("GET", "/livez", content_type=None),
        Req("HEAD", "/livez", content_type=None),
        Req("GET", "/readyz", content_type=None, token="none"),
        Req("GET", "/v1/backends", content_type=None),
        Req("GET", "/v1/keys", content_type=None, loose=True),
        Req("GET", f"/v1/keys/{keys['aead']}", content_type=None, loose=True),
        Req("POST", "/v1/bench/null", b"body back", OCTET),
        Req("GET", "/openapi.json", content_type=None),
    ]


_LONG_TEXT = re.compile(rb'"([A-Za-z0-9+/=:]{16,})"')


def normalized(answer: Answer, random: bool, loose: bool = False) -> tuple[Any, ...]:
    if loose:
        return answer.status, tuple(sorted(name for name, _ in answer.headers))
    headers = sorted(answer.headers)
    body: Any = answer.body
    if random:
        # a fresh nonce or data key each time: same shape, same lengths
        headers = [(k, v if k not in (b"archcrypt-nonce",) else b"<nonce>") for k, v in headers]
        # by the media type, not the first byte: a raw ciphertext starts with "{" once in 256
        content_type = dict(headers).get(b"content-type", b"")
        if b"json" in content_type:
            body = _LONG_TEXT.sub(lambda m: b'"<%d>"' % len(m.group(1)), body)
        else:
            body = len(body)
    return answer.status, tuple(headers), body


def _example(template: str) -> str:
    """A path of the template that names something that exists."""
    algorithm = "chacha20-poly1305" if "/aead/" in template else "sha256"
    if "/mac/" in template:
        algorithm = "hmac-sha256"
    return template.replace("{algorithm}", algorithm).replace("{name}", "payments")


def audit_lines(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        del line["time"], line["duration_ms"]
        if line["operation"] in LIVE_STATE:  # its size follows the keys' usage times
            del line["response_bytes"]
    return lines


LIVE_STATE = {"keys.list", "keys.show"}


def counted(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every counter sample and histogram count (times differ; counts must not)."""
    out = {}
    for family in text_string_to_metric_families(text):
        if family.type not in ("counter", "histogram"):
            continue
        for sample in family.samples:
            if sample.name.endswith(("_total", "_count")):
                out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Route templates the fast path served, in order."""
    seen: list[str] = []
    original = fastpath.OperationDispatch._serve

    async def spy(self: Any, entry: Any, params: Any, scope: Any, receive: Any, send: Any) -> None:
        seen.append(entry.route.path)
        await original(self, entry, params, scope, receive, send)

    monkeypatch.setattr(fastpath.OperationDispatch, "_serve", spy)
    return seen


def test_both_ways_give_the_same_answers(tmp_path: Path, served: list[str]) -> None:
    async def run() -> None:
        async with two_apps(tmp_path) as (fast, slow):
            keys = {"aead": "payments", "hmac": "tags", "missing": "nobody"}
            for name, kind in (("payments", "chacha20-poly1305"), ("tags", "hmac-sha256")):
                created = await slow.call(Req("POST", "/v1/keys", js(name=name, type=kind)), "k")
                assert created.status == 201, created.body
            operation_paths = sorted(
                {_example(r.path) for r in fastpath.operation_routes(fast.app)}
            )
            plan = operation_requests(keys) + bad_requests(operation_paths) + other_requests(keys)
            served.clear()
            statuses = set()
            for index, req in enumerate(plan):
                request_id = f"case-{index}"
                one = normalized(await fast.call(req, request_id), req.random, req.loose)
                two = normalized(await slow.call(req, request_id), req.random, req.loose)
                assert one == two, (
                    f"{req.method} {req.path} ({req.content_type}, token {req.token})"
                )
                statuses.add(one[0])
            # the plan reaches every kind of answer it is meant to
            assert {200, 201, 400, 401, 403, 404, 405, 409, 413, 415, 422} <= statuses | {201}
            # every operation route was served by the fast path, and only in the fast app
            templates = {route.path for route in fastpath.operation_routes(fast.app)}
            assert templates and set(served) == templates
            assert not fastpath.operation_routes(slow.app) or not any(
                m.cls is fastpath.OperationDispatch for m in slow.app.user_middleware
            )
            for app in (fast, slow):
                app.app.state.archcrypt_security.audit.flush()
            created = [line for line in audit_lines(slow.audit) if line["request_id"] == "k"]
            assert len(created) == 2  # the key creations, on the slow app only
            assert audit_lines(fast.audit) == [
                line for line in audit_lines(slow.audit) if line["request_id"] != "k"
            ]
            metrics = [
                counted(
                    (await app.call(Req("GET", "/metrics", content_type=None), "m")).body.decode()
                )
                for app in (fast, slow)
            ]

            def same(sample: tuple[str, tuple[tuple[str, str], ...]]) -> bool:
                creation = {("route", "/v1/keys"), ("method", "POST")} <= set(sample[1])
                return not (creation or sample[0].startswith("process_"))

            assert len(metrics[0]) > 100
            assert {k: v for k, v in metrics[0].items() if same(k)} == {
                k: v for k, v in metrics[1].items() if same(k)
            }

    asyncio.run(run())


def test_the_table_follows_the_routers_order(tmp_path: Path) -> None:
    """The route FastAPI's router would pick is the one served: a route at an operation
    route's path that comes later in the router's order never takes it; one moved first
    does, and is then served by the router."""
    settings = Settings(benchmark_enabled=False, audit_log="off", data_dir=tmp_path / "d")
    app = create_app(settings)

    @app.post("/v1/hash/{algorithm}")
    async def other(algorithm: str) -> dict[str, str]:
        return {"other": algorithm}

    def dispatch() -> fastpath.OperationDispatch:
        return fastpath.OperationDispatch(app.router, app)

    found = dispatch().resolve("POST", "/v1/hash/sha256")
    assert found is not None and found[0].route.path == "/v1/hash/{algorithm}"
    assert found[0].route.endpoint is not other and found[1] == {"algorithm": "sha256"}
    # the hash batch has its own route class (not an OperationRoute): the router serves it
    assert dispatch().resolve("POST", "/v1/hash/sha256/batch") is None
    assert dispatch().resolve("GET", "/v1/hash/sha256") is None
    assert dispatch().resolve("POST", "/v1/hash/sha256/") is None
    app.router.routes.insert(0, app.router.routes.pop())
    assert dispatch().resolve("POST", "/v1/hash/sha256") is None
