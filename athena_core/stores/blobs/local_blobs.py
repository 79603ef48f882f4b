"""Local-directory blob store (embedded default): payloads under `<data_dir>/blobs/<tenant>/<user>/`."""
from __future__ import annotations

import shutil
import uuid
from pathlib import Path

from athena_core.models.scope import UserScope
from athena_core.stores.blobs.contained_path import PathEscape, contained_path

SCHEME = "local://"


class LocalBlobs:
    engine = "local"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, uri: str) -> Path:
        """The file of a blob URI `local://<tenant>/<user>/<name>`, resolved and contained in the root."""
        if not uri.startswith(SCHEME):
            raise ValueError(f"not a local blob uri: {uri!r}")
        parts = uri[len(SCHEME):].split("/")
        if len(parts) != 3:
            raise PathEscape(f"blob uri is not <tenant>/<user>/<name>: {uri!r}")
        return contained_path(self.root, *parts)

    def _user_dir(self, scope: UserScope) -> Path:
        """`root/<tenant>/<user>`, strictly below `root/<tenant>`, which is strictly below the root."""
        return contained_path(self.root, scope.tenant_id, scope.user_id)

    def put(self, scope: UserScope, name: str, data: bytes) -> str:
        self._user_dir(scope).mkdir(parents=True, exist_ok=True)
        path = contained_path(self.root, scope.tenant_id, scope.user_id, name)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)  # atomic: a reader never sees half a blob
        return f"{SCHEME}{scope.tenant_id}/{scope.user_id}/{name}"

    def get(self, scope: UserScope, uri: str) -> bytes:
        if not uri.startswith(f"{SCHEME}{scope.tenant_id}/{scope.user_id}/"):
            raise PermissionError("blob belongs to another scope")
        path = self._path(uri)
        if path.parent != self._user_dir(scope):
            raise PermissionError("blob belongs to another scope")
        return path.read_bytes()

    def delete(self, uri: str) -> None:
        self._path(uri).unlink(missing_ok=True)

    def delete_user(self, scope: UserScope) -> None:
        """Remove the user's directory. Refuses (PathEscape) any scope whose directory would not be
        strictly below `root/<tenant>`; a missing directory is nothing to do, any other failure raises."""
        user_dir = self._user_dir(scope)
        if user_dir.is_dir():
            shutil.rmtree(user_dir)

    def count_user(self, scope: UserScope) -> int:
        """Files left under the user's directory (purge verification)."""
        user_dir = self._user_dir(scope)
        return sum(1 for p in user_dir.rglob("*") if not p.is_dir()) if user_dir.is_dir() else 0

    def ping(self) -> None:
        if not self.root.is_dir():
            raise RuntimeError(f"blob root {self.root} is missing")
