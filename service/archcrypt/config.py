"""One Settings object for the service: each field is read from ARCHCRYPT_<NAME>."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

LogLevel = Literal["critical", "error", "warning", "info", "debug", "trace"]
AuthMode = Literal["auto", "required", "disabled"]
HttpParser = Literal["auto", "h11", "httptools"]

MiB = 1024 * 1024
KiB = 1024
GiB = 1024 * MiB


class Settings(BaseSettings):
    """Runtime configuration. Byte limits of 0 mean "no limit".

    ARCHCRYPT_FORCE and ARCHCRYPT_DISABLE_CPU_FEATURES share the prefix but belong to the
    native library, which reads them itself in crypto.init(); they are not fields here.
    """

    model_config = SettingsConfigDict(env_prefix="ARCHCRYPT_", extra="forbid", frozen=True)

    host: str = Field(
        default="127.0.0.1", description="Interface to bind (0.0.0.0 in a container)."
    )
    port: int = Field(default=8000, ge=0, le=65535)
    log_level: LogLevel = "info"
    max_body_bytes: int = Field(
        default=16 * MiB,
        ge=0,
        description="Largest request body; larger ones get 413 before they are read.",
    )
    max_json_body_bytes: int = Field(
        default=16 * MiB,
        ge=0,
        description="Largest JSON body (0: no limit of its own). A JSON body costs about 5x "
        "its size in memory at its peak, a raw one about 3x: README, Memory.",
    )
    max_stream_bytes: int = Field(
        default=GiB,
        ge=0,
        description="Largest application/octet-stream body hashed as a stream (0: unlimited).",
    )
    max_batch_messages: int = Field(
        default=1024,
        ge=1,
        description="Most messages in one POST /v1/hash/{algorithm}/batch.",
    )
    max_batch_bytes: int = Field(
        default=4 * MiB,
        ge=1,
        description=(
            "Most message bytes (decoded) in one batch. The route's body limit, checked "
            "before the body is read, is the base64 JSON these two limits allow."
        ),
    )
    offload_threshold_bytes: int = Field(
        default=64 * KiB,
        ge=0,
        description=(
            "Inputs at least this large run in a worker thread (the C call releases the GIL); "
            "smaller ones run inline, where a thread hop would cost more than the kernel."
        ),
    )
    access_log: bool = Field(
        default=False,
        description="uvicorn's access log; it costs about a quarter of a small request.",
    )
    workers: int = Field(
        default=1,
        ge=1,
        le=64,
        description=(
            "uvicorn worker processes. One is the default and the norm (scale with replicas); "
            "more switch the metrics to prometheus-client's multiprocess mode."
        ),
    )
    benchmark_null_route: bool = Field(
        default=False,
        description=(
            "Serve POST /v1/bench/null, which reads the body and sends it back: the ceiling "
            "of a binary route, for `make bench-service` only. Never on in production."
        ),
    )
    benchmark_enabled: bool = Field(
        default=True,
        description=(
            "Benchmark every runnable implementation at startup and publish bytes/s on "
            "/metrics; /readyz waits for it."
        ),
    )
    benchmark_budget_seconds: float = Field(
        default=2.0,
        gt=0,
        le=600,
        description="Total time of one benchmark run, shared by all its cells.",
    )
    benchmark_interval_seconds: float = Field(
        default=0.0,
        ge=0,
        description=(
            "Repeat the benchmark this often while serving (0: only at startup). A run takes "
            "one core for its budget, so the interval must be at least ten budgets."
        ),
    )

    # ---- named keys (archcrypt.keys) -----------------------------------------------------
    data_dir: Path | None = Field(
        default=None,
        description=(
            "Directory of the embedded key store (SQLite) and, without ARCHCRYPT_KEK_FILE, its "
            "generated KEK. Default: $XDG_DATA_HOME/archcrypt, else ~/.local/share/archcrypt."
        ),
    )
    kek_file: Path | None = Field(
        default=None,
        description=(
            "The key-encryption key(s): one base64 32-byte KEK per line, the first wraps, the "
            "others only unwrap. Required with ARCHCRYPT_KEYSTORE_URL."
        ),
    )
    keystore_url: SecretStr | None = Field(
        default=None,
        description="postgresql://... : keys shared by every instance on one PostgreSQL.",
    )
    keystore_url_file: Path | None = Field(
        default=None,
        description="A file holding ARCHCRYPT_KEYSTORE_URL (a Docker or Compose secret).",
    )
    chacha20_nonce_budget: int = Field(
        default=1 << 32,
        ge=1,
        le=1 << 32,
        description="Random 96-bit nonces one chacha20-poly1305 key version may use.",
    )
    nonce_budget_exhausted: Literal["rotate", "refuse"] = Field(
        default="rotate",
        description="At the budget: rotate the key and go on, or refuse seals (409).",
    )
    metrics_key_labels: int = Field(
        default=100,
        ge=0,
        description="Distinct key names a process labels its metrics with; the rest are 'other'.",
    )

    # ---- hardening (issue 11): auth, TLS, limits, deadlines, audit ----------------------
    auth: AuthMode = Field(
        default="auto",
        description=(
            "auto: bearer tokens from tokens_file when it is set; without one, open on "
            "loopback and a refusal to start anywhere else. required: tokens always. "
            "disabled: no authentication anywhere (logged loudly, shown on /v1/backends)."
        ),
    )
    tokens_file: Path | None = Field(
        default=None,
        description="JSON token store written by `archcrypt tokens` (hashes only); re-read "
        "within a second of a change.",
    )
    tls_cert: Path | None = Field(default=None, description="PEM certificate chain: serve HTTPS.")
    tls_key: Path | None = Field(default=None, description="PEM private key of tls_cert.")
    tls_client_ca: Path | None = Field(
        default=None,
        description="PEM CA bundle: require a client certificate signed by it (mTLS).",
    )
    http: HttpParser = Field(
        default="auto", description="uvicorn's HTTP parser (auto: httptools when installed)."
    )
    keep_alive_timeout_seconds: float = Field(
        default=5.0, gt=0, le=300, description="Idle time allowed between two requests."
    )
    header_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="From connection (or the previous response) to a complete request head; "
        "also the TLS handshake's limit.",
    )
    body_timeout_seconds: float = Field(
        default=15.0,
        gt=0,
        le=300,
        description="Longest wait for the next body bytes while the server is reading.",
    )
    request_timeout_seconds: float = Field(
        default=300.0,
        gt=0,
        description="From a complete request head to the end of the response.",
    )
    max_header_count: int = Field(default=100, ge=8, le=10_000)
    max_header_bytes: int = Field(
        default=16 * KiB, ge=1024, le=1 * MiB, description="Request line plus all header lines."
    )
    max_connections: int = Field(
        default=1024, ge=1, description="Open connections; beyond them new requests get 503."
    )
    memory_budget_bytes: int = Field(
        default=256 * MiB,
        ge=16 * MiB,
        description="Estimated peak memory all requests in flight may hold together; a "
        "request that does not fit waits up to budget_wait_seconds, then gets 503.",
    )
    budget_wait_seconds: float = Field(default=2.0, ge=0, le=60)
    rate_limit_per_second: float = Field(
        default=0.0, ge=0, description="Token bucket per bearer token (0: off)."
    )
    rate_limit_burst: int = Field(default=0, ge=0, description="Bucket size (0: 2 s worth).")
    client_rate_limit_per_second: float = Field(
        default=0.0,
        ge=0,
        description="Token bucket per client address for requests without a token (0: off).",
    )
    client_rate_limit_burst: int = Field(default=0, ge=0)
    audit_log: str = Field(
        default="stdout",
        description="Where audit lines go: stdout, stderr, off, or a file path (appended).",
    )
    audit_fail_closed: bool = Field(
        default=False,
        description="Refuse operations (503) while the audit sink cannot be written.",
    )
    docs_enabled: bool = Field(
        default=True, description="/docs: Swagger UI served from this process, no CDN."
    )

    @model_validator(mode="after")
    def _tls_pair(self) -> Self:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together")
        if self.tls_client_ca is not None and self.tls_cert is None:
            raise ValueError("tls_client_ca (mTLS) needs tls_cert and tls_key")
        return self

    @model_validator(mode="after")
    def _benchmark_interval(self) -> Self:
        interval, budget = self.benchmark_interval_seconds, self.benchmark_budget_seconds
        if interval and interval < 10 * budget:
            raise ValueError(
                f"benchmark_interval_seconds ({interval:g}) must be 0 or at least ten times "
                f"benchmark_budget_seconds ({budget:g}): a run takes a core for its budget"
            )
        return self
