"""The blob port (SPEC S0, S2, S7): event payloads under the user's prefix."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from athena_core.models.scope import UserScope


@runtime_checkable
class BlobStore(Protocol):
    """Event payloads (SPEC S2, S7). Engines: a local directory (embedded), S3-compatible (MinIO)."""

    engine: str

    def put(self, scope: UserScope, name: str, data: bytes) -> str:
        """Store the bytes under the user's prefix; returns the blob URI kept on the event."""

    def get(self, scope: UserScope, uri: str) -> bytes:
        """Read a blob of this user; another scope's URI raises PermissionError."""

    def delete(self, uri: str) -> None: ...

    def delete_user(self, scope: UserScope) -> None: ...

    def ping(self) -> None: ...
