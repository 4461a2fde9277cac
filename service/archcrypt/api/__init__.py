"""HTTP routes, one router per resource; they call archcrypt.crypto, never the cffi module."""

from __future__ import annotations

from fastapi import APIRouter

from .aead import router as aead_router
from .ecb import router as ecb_router
from .hash import router as hash_router
from .hash_batch import router as hash_batch_router
from .mac import router as mac_router
from .system import router as system_router

ROUTERS: tuple[APIRouter, ...] = (
    aead_router,
    mac_router,
    hash_router,
    hash_batch_router,
    ecb_router,
    system_router,
)

__all__ = ["ROUTERS"]
