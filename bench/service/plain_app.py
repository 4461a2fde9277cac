"""The yardstick: the FastAPI + pyca/cryptography app a user would write in an afternoon.

Deliberately ordinary, and kept that way: pydantic models with base64 string fields,
`async def` handlers, the standard library's base64 and hashlib, the response models
FastAPI serializes, raw bodies read with `await request.body()`. Nothing here is tuned;
do not tune it, or the comparison in BENCHMARKS.md stops meaning anything.

    uvicorn --app-dir bench/service plain_app:app --workers N
"""

from __future__ import annotations

import base64
import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as crypto_hmac
from cryptography.hazmat.primitives.ciphers import Cipher, modes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.poly1305 import Poly1305
from fastapi import FastAPI, HTTPException, Request, Response
from pydantic import BaseModel

app = FastAPI(title="plain crypto service")

HASHES = {
    "sha224": hashes.SHA224,
    "sha256": hashes.SHA256,
    "sha384": hashes.SHA384,
    "sha512": hashes.SHA512,
}


class SealRequest(BaseModel):
    key: str
    nonce: str | None = None
    plaintext: str
    aad: str = ""


class SealResponse(BaseModel):
    nonce: str
    ciphertext: str


class OpenRequest(BaseModel):
    key: str
    nonce: str
    ciphertext: str
    aad: str = ""


class OpenResponse(BaseModel):
    plaintext: str


class MacRequest(BaseModel):
    key: str
    data: str


class MacResponse(BaseModel):
    tag: str


class HashRequest(BaseModel):
    data: str


class HashResponse(BaseModel):
    digest: str


class EcbRequest(BaseModel):
    key: str
    data: str


class EcbResponse(BaseModel):
    data: str


class SealBatch(BaseModel):
    items: list[SealRequest]


class SealBatchResponse(BaseModel):
    items: list[SealResponse]


def b64d(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise HTTPException(400, "bad base64") from None


def b64e(data: bytes) -> str:
    return base64.b64encode(data).decode()


def seal_one(req: SealRequest) -> SealResponse:
    nonce = b64d(req.nonce) if req.nonce else os.urandom(12)
    try:
        ct = ChaCha20Poly1305(b64d(req.key)).encrypt(nonce, b64d(req.plaintext), b64d(req.aad))
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    return SealResponse(nonce=b64e(nonce), ciphertext=b64e(ct))


def mac_of(algorithm: str, key: bytes, data: bytes) -> bytes:
    if algorithm == "poly1305":
        return Poly1305.generate_tag(key, data)
    h = crypto_hmac.HMAC(key, HASHES[algorithm.removeprefix("hmac-")]())
    h.update(data)
    return h.finalize()


def camellia(key: bytes, data: bytes, encrypt: bool) -> bytes:
    cipher = Cipher(Camellia(key), modes.ECB())
    ctx = cipher.encryptor() if encrypt else cipher.decryptor()
    return ctx.update(data) + ctx.finalize()


@app.post("/v1/aead/chacha20-poly1305/seal")
async def seal(req: SealRequest) -> SealResponse:
    return seal_one(req)


@app.post("/v1/aead/chacha20-poly1305/open")
async def open_(req: OpenRequest) -> OpenResponse:
    try:
        pt = ChaCha20Poly1305(b64d(req.key)).decrypt(
            b64d(req.nonce), b64d(req.ciphertext), b64d(req.aad)
        )
    except InvalidTag:
        raise HTTPException(400, "authentication failed") from None
    return OpenResponse(plaintext=b64e(pt))


@app.post("/v1/aead/chacha20-poly1305/seal/batch")
async def seal_batch(req: SealBatch) -> SealBatchResponse:
    return SealBatchResponse(items=[seal_one(item) for item in req.items])


@app.post("/v1/mac/{algorithm}")
async def mac(algorithm: str, req: MacRequest) -> MacResponse:
    return MacResponse(tag=b64e(mac_of(algorithm, b64d(req.key), b64d(req.data))))


@app.post("/v1/hash/{algorithm}")
async def digest(algorithm: str, req: HashRequest) -> HashResponse:
    return HashResponse(digest=b64e(hashlib.new(algorithm, b64d(req.data)).digest()))


@app.post("/v1/ecb/camellia/encrypt")
async def ecb_encrypt(req: EcbRequest) -> EcbResponse:
    return EcbResponse(data=b64e(camellia(b64d(req.key), b64d(req.data), True)))


@app.post("/v1/ecb/camellia/decrypt")
async def ecb_decrypt(req: EcbRequest) -> EcbResponse:
    return EcbResponse(data=b64e(camellia(b64d(req.key), b64d(req.data), False)))


# Binary: the body is the data, small parameters in headers, raw bytes back.


@app.post("/raw/v1/aead/chacha20-poly1305/seal")
async def seal_raw(request: Request) -> Response:
    key = b64d(request.headers["archcrypt-key"])
    nonce = b64d(request.headers["archcrypt-nonce"])
    ct = ChaCha20Poly1305(key).encrypt(nonce, await request.body(), None)
    return Response(ct, media_type="application/octet-stream")


@app.post("/raw/v1/aead/chacha20-poly1305/open")
async def open_raw(request: Request) -> Response:
    key = b64d(request.headers["archcrypt-key"])
    nonce = b64d(request.headers["archcrypt-nonce"])
    try:
        pt = ChaCha20Poly1305(key).decrypt(nonce, await request.body(), None)
    except InvalidTag:
        raise HTTPException(400, "authentication failed") from None
    return Response(pt, media_type="application/octet-stream")


@app.post("/raw/v1/hash/{algorithm}")
async def digest_raw(algorithm: str, request: Request) -> HashResponse:
    h = hashlib.new(algorithm)
    async for chunk in request.stream():
        h.update(chunk)
    return HashResponse(digest=b64e(h.digest()))


@app.post("/raw/v1/mac/{algorithm}")
async def mac_raw(algorithm: str, request: Request) -> MacResponse:
    key = b64d(request.headers["archcrypt-key"])
    return MacResponse(tag=b64e(mac_of(algorithm, key, await request.body())))


@app.post("/raw/v1/ecb/camellia/encrypt")
async def ecb_encrypt_raw(request: Request) -> Response:
    key = b64d(request.headers["archcrypt-key"])
    data = camellia(key, await request.body(), True)
    return Response(data, media_type="application/octet-stream")


@app.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}
