"""The hardening building blocks on their own: scopes, the token store, token buckets,
the memory budget's queue, the JSON shape bound, audit lines (no server; milliseconds)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from archcrypt.audit import AuditRecord, AuditSink, outcome_of
from archcrypt.auth import (
    Operation,
    TokenStore,
    TokenStoreError,
    create_token,
    hash_token,
    parse_duration,
    revoke_token,
    scope_grants,
    validate_scope,
)
from archcrypt.budget import (
    BudgetExhaustedError,
    CostModel,
    JsonShape,
    JsonShapeCounter,
    MemoryBudget,
    Reservation,
)
from archcrypt.config import Settings
from archcrypt.guard import RouteTable, SecurityConfigError, auth_policy, is_loopback
from archcrypt.ratelimit import RateLimiter, retry_after_header


@pytest.mark.parametrize(
    ("held", "required", "granted"),
    [
        ("aead:seal", "aead:seal", True),
        ("aead:seal", "aead:open", False),
        ("mac", "poly1305", False),  # raw Poly1305 is never implied by mac
        ("mac", "mac:verify", False),
        ("key:billing:seal", "key:billing:seal", True),
        ("key:billing:seal", "key:billing:open", False),
        ("key:billing:seal", "key:payroll:seal", False),
        ("key:billing:*", "key:billing:rewrap", True),
        ("key:*:open", "key:payroll:open", True),
        ("key:*:open", "key:payroll:seal", False),
        ("key:*:open", "aead:open", False),
        ("keys:admin", "keys:read", False),
    ],
)
def test_scope_grants(held: str, required: str, granted: bool) -> None:
    assert scope_grants(held, required) is granted


@pytest.mark.parametrize(
    "scope", ["admin", "key:*:*", "key:Billing:seal", "key:billing:delete", "aead", "key:x"]
)
def test_unknown_or_too_wide_scopes_are_refused(scope: str) -> None:
    with pytest.raises(TokenStoreError):
        validate_scope(scope)


def test_operation_scope_templates() -> None:
    seal = Operation.on_key("seal")
    assert seal.required_scope({"name": "billing"}) == "key:billing:seal"
    assert seal.key_param == "name"
    mac = Operation("mac", "mac", {"poly1305": "poly1305"})
    assert mac.required_scope({"algorithm": "hmac-sha256"}) == "mac"
    assert mac.required_scope({"algorithm": "poly1305"}) == "poly1305"
    assert Operation("backends").required_scope({}) is None
    assert Operation.from_extension(seal.openapi_extra()["x-archcrypt-operation"]) == seal


def test_route_table_reads_route_declarations_and_refuses_none() -> None:
    document = {
        "paths": {
            "/v1/keys/{name}/seal": {"post": Operation.on_key("seal").openapi_extra()},
            "/v1/hash/{algorithm}": {"post": {}},  # from guard.OPERATIONS
            "/v1/keys/{name}/rewrap": {"post": {"x-archcrypt-scope": "key:{name}:rewrap"}},
            "/v1/keys/{name}/frob": {"post": {"x-archcrypt-scope": "key:{name}:frob"}},
            "/v1/new-thing": {"post": {}},  # declared nowhere
            "/livez": {"get": {}},
        }
    }
    table = RouteTable(document)
    op, template, params = table.match("POST", "/v1/keys/billing/seal") or (None, "", {})
    assert op is not None and op.scope == "key:{name}:seal"
    assert template == "/v1/keys/{name}/seal" and params == {"name": "billing"}
    assert table.match("POST", "/v1/keys/billing/seal/extra") is None
    assert table.match("POST", "/v1/hash/sha256") is not None
    assert table.undeclared == ["POST /v1/new-thing"]
    # a route that states only its scope template: the table's name, the route's scope
    rewrap = table.match("POST", "/v1/keys/payroll/rewrap")
    assert rewrap is not None and rewrap[0].name == "keys.rewrap"
    assert rewrap[0].required_scope(rewrap[2]) == "key:payroll:rewrap"
    frob = table.match("POST", "/v1/keys/payroll/frob")
    assert frob is not None and frob[0].name == "keys.frob"
    found = table.match("GET", "/livez")
    assert found is not None and found[0].public


def test_token_store_create_lookup_reload_revoke(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    token, _record = create_token(path, "ci", ["hash", "key:*:seal"])
    assert token.startswith("act_")
    assert token not in path.read_text()
    assert hash_token(token) in path.read_text()
    store = TokenStore(path)
    found = store.lookup(token)
    assert found is not None and found.name == "ci" and found.allows("key:x:seal")
    assert store.lookup(token + "x") is None
    with pytest.raises(TokenStoreError, match="exists"):
        create_token(path, "ci", ["hash"])
    second, _ = create_token(path, "other", ["mac"])
    revoke_token(path, "ci")
    store._checked = 0.0  # as if a second had passed
    assert store.lookup(token) is None
    assert store.lookup(second) is not None
    # a broken file keeps the last good set
    path.write_text("{not json")
    store._checked = 0.0
    assert store.lookup(second) is not None


def test_token_expiry(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    _token, record = create_token(path, "short", ["hash"], expires_in=60)
    assert record.expires is not None
    assert not record.expired()
    assert record.expired(now=time.time() + 61)
    assert parse_duration("90d") == 90 * 86400
    assert parse_duration("12h") == 43200
    with pytest.raises(TokenStoreError):
        parse_duration("soon")


def test_auth_policy(tmp_path: Path) -> None:
    assert auth_policy(Settings(host="127.0.0.1")).mode == "open-loopback"
    assert auth_policy(Settings(host="::1")).mode == "open-loopback"
    with pytest.raises(SecurityConfigError, match=r"refusing to listen on 0\.0\.0\.0"):
        auth_policy(Settings(host="0.0.0.0"))
    with pytest.raises(SecurityConfigError, match="ARCHCRYPT_AUTH=required"):
        auth_policy(Settings(auth="required"))
    assert auth_policy(Settings(host="0.0.0.0", auth="disabled")).mode == "disabled"
    path = tmp_path / "tokens.json"
    create_token(path, "a", ["hash"])
    assert auth_policy(Settings(host="0.0.0.0", tokens_file=path)).mode == "tokens"
    revoke_token(path, "a")
    with pytest.raises(SecurityConfigError, match="holds no tokens"):
        auth_policy(Settings(host="0.0.0.0", tokens_file=path))
    with pytest.raises(SecurityConfigError, match="does not exist"):
        auth_policy(Settings(host="0.0.0.0", tokens_file=tmp_path / "missing.json"))
    assert is_loopback("127.0.0.9") and is_loopback("localhost")
    assert not is_loopback("10.0.0.1") and not is_loopback("example.com")


def test_token_bucket() -> None:
    limiter = RateLimiter(rate=2.0, burst=3)
    assert [limiter.acquire("a", now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire("a", now=0.0) == pytest.approx(0.5)
    assert limiter.acquire("b", now=0.0) == 0.0  # its own bucket
    assert limiter.acquire("a", now=0.5) == 0.0  # one back after 1/rate
    assert retry_after_header(0.01) == "1" and retry_after_header(1.2) == "2"


def test_token_bucket_keys_stay_bounded() -> None:
    limiter = RateLimiter(rate=1.0, burst=1, max_keys=100)
    for i in range(1000):
        limiter.acquire(f"client-{i}", now=float(i) * 0.001)
    assert len(limiter) <= 100


def test_memory_budget_is_first_come_first_served_and_times_out() -> None:
    async def scenario() -> list[str]:
        budget = MemoryBudget(capacity=100, wait=0.2)
        events: list[str] = []
        await budget.acquire(80)

        async def want(name: str, amount: int) -> None:
            try:
                await budget.acquire(amount)
            except BudgetExhaustedError:
                events.append(f"{name} refused")
                return
            events.append(f"{name} got {amount}")

        large = asyncio.create_task(want("large", 50))
        await asyncio.sleep(0)
        small = asyncio.create_task(want("small", 10))  # fits, but queues behind `large`
        await asyncio.sleep(0.05)
        assert events == []
        budget.release(80)
        await asyncio.gather(large, small)
        budget.release(60)
        assert budget.in_use == 0
        await budget.acquire(100)
        await want("late", 1)  # nothing frees: refused after the wait
        with pytest.raises(BudgetExhaustedError):
            await budget.acquire(101)  # larger than the whole budget: refused at once
        return events

    assert asyncio.run(scenario()) == ["large got 50", "small got 10", "late refused"]


def test_reservation_grows_in_steps_and_releases_once() -> None:
    async def scenario() -> None:
        budget = MemoryBudget(capacity=64 << 20, wait=0)
        reservation = Reservation(budget)
        await reservation.ensure(10)
        assert reservation.held == 1 << 20
        await reservation.ensure((1 << 20) + 1)
        assert reservation.held == 2 << 20 == budget.in_use
        reservation.release()
        reservation.release()
        assert budget.in_use == 0

    asyncio.run(scenario())


def test_cost_model() -> None:
    costs = CostModel()
    assert costs.cost("application/json", 1 << 20) > costs.cost("application/octet-stream", 1 << 20)
    streamed = costs.cost("application/octet-stream", 1 << 30, streamed=True)
    assert streamed == costs.base + costs.stream_chunk


def test_json_shape_counter() -> None:
    single = JsonShapeCounter(JsonShape.single())
    assert single.feed(b'{"key":"AAAA","plaintext":"AAAA","aad":""}') is None
    junk = JsonShapeCounter(JsonShape.single())
    assert junk.feed(b'{"data":"aGk=","x":[' + b"{}," * 10) is not None
    many = JsonShapeCounter(JsonShape.single())
    assert many.feed(b'{"data":"aGk=","x":"' + b'",""' * 40) is not None
    batch = JsonShapeCounter(JsonShape.batch(100))
    items = b",".join([b'{"key":"AA==","data":"AA=="}'] * 100)
    assert batch.feed(b'{"items":[' + items + b"]}") is None


def test_audit_line_and_sink(tmp_path: Path) -> None:
    record = AuditRecord("rid", "aead.seal", "/v1/aead/{algorithm}/seal", "127.0.0.1")
    record.status, record.token, record.algorithm = 200, "ci", "chacha20-poly1305"
    line = json.loads(record.line(0.0))
    assert line["time"] == "1970-01-01T00:00:00.000Z"
    assert json.loads(record.line(86400.25))["time"] == "1970-01-02T00:00:00.250Z"
    # a value that would need escaping is escaped (the line stays one JSON object)
    odd = AuditRecord('say "hi"\n', "hash", "/x", None)
    assert json.loads(odd.line(0.0))["request_id"] == 'say "hi"\n'
    assert "\n" not in odd.line(0.0)[:-1]
    assert line["outcome"] == "ok" and line["token"] == "ci"
    assert "key" not in line  # only present when there is one
    assert [outcome_of(s) for s in (200, 401, 403, 422, 429, 503, 500)] == [
        "ok", "unauthenticated", "forbidden", "invalid_input", "rate_limited", "refused", "error",
    ]  # fmt: skip
    path = tmp_path / "audit.log"
    sink = AuditSink(str(path))
    assert sink.write("one\n")
    sink.flush()
    path.rename(tmp_path / "audit.log.1")  # logrotate
    sink._checked = 0.0
    assert sink.write("two\n")
    sink.close()
    assert path.read_text() == "two\n"
    full = AuditSink("/dev/full", fail_closed=True)
    assert not full.write("x\n")
    assert not full.healthy and full.recently_failed()
    # a sink that comes back is used again: fail-closed is not fail-forever
    back = AuditSink(str(tmp_path / "back.log"), fail_closed=True)
    back._failed(OSError("disk full"))
    assert back.recently_failed() and not back.recently_failed(within=0.0)
    assert back.write("after\n") and back.healthy
    assert (tmp_path / "back.log").read_text() == "after\n"
