"""One Settings object for the service: each field is read from ARCHCRYPT_<NAME>."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

LogLevel = Literal["critical", "error", "warning", "info", "debug", "trace"]

MiB = 1024 * 1024
KiB = 1024


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
    max_stream_bytes: int = Field(
        default=0,
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

    @model_validator(mode="after")
    def _benchmark_interval(self) -> Self:
        interval, budget = self.benchmark_interval_seconds, self.benchmark_budget_seconds
        if interval and interval < 10 * budget:
            raise ValueError(
                f"benchmark_interval_seconds ({interval:g}) must be 0 or at least ten times "
                f"benchmark_budget_seconds ({budget:g}): a run takes a core for its budget"
            )
        return self
