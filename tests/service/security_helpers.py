"""What the security tests share: token stores, a test CA, servers with chosen settings,
raw-socket probes and the peak RSS of a server process."""

from __future__ import annotations

import datetime
import os
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from .conftest import launch

# Every family scope and every named-key scope: what the suite's "full" token holds, so
# that schemathesis reaches the named-key routes with a real grant (`key:*:*` is no scope).
KEY_OPERATION_SCOPES = tuple(
    f"key:*:{op}" for op in ("seal", "open", "rewrap", "datakey", "mac", "verify")
)
ALL_SCOPES = (
    "aead:seal", "aead:open", "mac", "mac:verify", "hash", "ecb", "poly1305",
    "keys:admin", "keys:read", *KEY_OPERATION_SCOPES,
)  # fmt: skip


def archcrypt(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "archcrypt", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def create_token(store: Path, name: str, *scopes: str, expires_in: str | None = None) -> str:
    args = ["tokens", "create", "--file", str(store), "--name", name]
    for scope in scopes:
        args += ["--scope", scope]
    if expires_in:
        args += ["--expires-in", expires_in]
    done = archcrypt(*args)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert token.startswith("act_") and len(token) > 40
    return token


# ---- a CA of our own ------------------------------------------------------------------------


@dataclass
class Pki:
    directory: Path
    ca_cert: Path = field(init=False)
    server_cert: Path = field(init=False)
    server_key: Path = field(init=False)
    client_cert: Path = field(init=False)
    client_key: Path = field(init=False)
    rogue_cert: Path = field(init=False)  # a client certificate from a CA the server does not trust
    rogue_key: Path = field(init=False)

    def __post_init__(self) -> None:
        ca_key, ca = _ca("archcrypt test CA")
        rogue_ca_key, rogue_ca = _ca("someone else's CA")
        self.ca_cert = self._write("ca.pem", ca)
        server_key, server = _leaf(ca_key, ca, "localhost", server=True)
        self.server_cert, self.server_key = self._pair("server", server_key, server)
        client_key, client = _leaf(ca_key, ca, "client-a", server=False)
        self.client_cert, self.client_key = self._pair("client", client_key, client)
        rogue_key, rogue = _leaf(rogue_ca_key, rogue_ca, "client-a", server=False)
        self.rogue_cert, self.rogue_key = self._pair("rogue", rogue_key, rogue)

    def _write(self, name: str, cert: x509.Certificate) -> Path:
        path = self.directory / name
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return path

    def _pair(
        self, stem: str, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate
    ) -> tuple[Path, Path]:
        key_path = self.directory / f"{stem}-key.pem"
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return self._write(f"{stem}.pem", cert), key_path


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _ca(name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_now() - datetime.timedelta(minutes=5))
        .not_valid_after(_now() + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _leaf(
    ca_key: ec.EllipticCurvePrivateKey, ca: x509.Certificate, name: str, *, server: bool
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_now() - datetime.timedelta(minutes=5))
        .not_valid_after(_now() + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False
        )
    return key, builder.sign(ca_key, hashes.SHA256())


# ---- servers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Running:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    scheme: str = "http"

    @property
    def base_url(self) -> str:
        host = "localhost" if self.scheme == "https" else "127.0.0.1"
        return f"{self.scheme}://{host}:{self.port}"


@contextmanager
def running(
    directory: Path,
    *args: str,
    ready_client: dict[str, object] | None = None,
    scheme: str = "http",
    **env: str,
) -> Iterator[Running]:
    """conftest.launch() without the start-up benchmark; yields once /readyz answers 200
    (asked with `ready_client`'s httpx options, e.g. a TLS context)."""
    directory.mkdir(parents=True, exist_ok=True)
    with launch(directory, *args, ARCHCRYPT_BENCHMARK_ENABLED="false", **env) as launched:
        process = launched.process
        server = Running(process, launched.server.port, launched.server.log, scheme)
        deadline = time.monotonic() + 30
        with httpx.Client(timeout=1.0, **(ready_client or {})) as http:  # type: ignore[arg-type]
            while True:
                if process.poll() is not None:
                    pytest.fail(
                        f"server exited with {process.returncode}:\n{server.log.read_text()}"
                    )
                try:
                    if http.get(f"{server.base_url}/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"server not ready:\n{server.log.read_text()}")
                time.sleep(0.05)
        yield server


def tls_args(pki: Pki, *, client_ca: bool = False) -> tuple[str, ...]:
    args = ("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    return (*args, "--tls-client-ca", str(pki.ca_cert)) if client_ca else args


# ---- probes -----------------------------------------------------------------------------------


def probe(port: int, payload: bytes, timeout: float = 30.0) -> tuple[float, bytes]:
    """Send `payload` and read until the server closes: (seconds until closed, what it sent)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        start = time.monotonic()
        if payload:
            sock.sendall(payload)
        received = b""
        while True:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            received += data
        return time.monotonic() - start, received


def peak_rss(pid: int) -> int:
    """VmHWM of a process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def reset_peak_rss(pid: int) -> None:
    """Start a new peak (proc(5): writing 5 to clear_refs resets VmHWM to VmRSS)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def tls_context(pki: Pki, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca_cert))
    if cert is not None:
        context.load_cert_chain(str(cert), str(key))
    return context
