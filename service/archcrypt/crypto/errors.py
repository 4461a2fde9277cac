"""Exceptions raised by the crypto facade; each maps to one HTTP outcome in the service."""

from __future__ import annotations

__all__ = [
    "ArchcryptError",
    "AuthenticationError",
    "ConfigurationError",
    "InvalidInputError",
    "MessageTooLongError",
    "UnknownAlgorithmError",
    "UnknownImplementationError",
    "UnsupportedImplementationError",
]


class ArchcryptError(Exception):
    """Base class of every archcrypt error."""


class InvalidInputError(ArchcryptError, ValueError):
    """A key, nonce, tag or data length outside its contract (HTTP 422)."""


class MessageTooLongError(InvalidInputError):
    """The 32-bit ChaCha20 block counter would wrap (HTTP 422)."""


class AuthenticationError(ArchcryptError):
    """AEAD tag mismatch; no plaintext is released (HTTP 400)."""


class UnknownAlgorithmError(ArchcryptError, LookupError):
    """No algorithm by that name."""


class UnknownImplementationError(ArchcryptError, LookupError):
    """The algorithm has no implementation by that name."""


class UnsupportedImplementationError(ArchcryptError):
    """The implementation exists but this CPU (after masking) cannot run it."""


class ConfigurationError(ArchcryptError):
    """ARCHCRYPT_FORCE or ARCHCRYPT_DISABLE_CPU_FEATURES is malformed (raised by init())."""
