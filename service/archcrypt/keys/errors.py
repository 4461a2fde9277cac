"""What can go wrong with a named key, independent of HTTP (api/keys.py maps each to a
problem type and status)."""

from __future__ import annotations

from .store import (
    DeletionNotAllowedError,
    InvalidUpdateError,
    KeyExistsError,
    KeyNotFoundError,
    StoreError,
)

__all__ = [
    "DeletionNotAllowedError",
    "InvalidUpdateError",
    "KeyExistsError",
    "KeyNotFoundError",
    "KeyTypeMismatchError",
    "KeyUnavailableError",
    "NonceBudgetExhaustedError",
    "StoreError",
    "UnknownVersionError",
    "VersionRetiredError",
]


class KeyTypeMismatchError(Exception):
    def __init__(self, name: str, key_type: str, operation: str) -> None:
        super().__init__(f"key {name!r} is of type {key_type}, which has no {operation} operation")
        self.name, self.key_type, self.operation = name, key_type, operation


class VersionRetiredError(Exception):
    def __init__(self, name: str, version: int, minimum: int) -> None:
        super().__init__(
            f"version {version} of key {name!r} is below its min_decryption_version ({minimum}); "
            "nothing is decrypted or verified with it"
        )


class UnknownVersionError(Exception):
    def __init__(self, name: str, version: int) -> None:
        super().__init__(f"key {name!r} has no version {version}")


class NonceBudgetExhaustedError(Exception):
    def __init__(self, name: str, version: int, budget: int) -> None:
        super().__init__(
            f"version {version} of key {name!r} has used its budget of {budget} random nonces; "
            "rotate the key (POST /v1/keys/{name}/rotate) to seal again"
        )


class KeyUnavailableError(Exception):
    """The stored material cannot be unwrapped here: a KEK this instance does not hold, or a
    wrapped blob that does not authenticate (the row was altered or damaged)."""

    def __init__(self, message: str, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name
