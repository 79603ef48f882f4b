"""Local-directory blob store (embedded default): payloads under `<data_dir>/blobs/<tenant>/<user>/`."""
from __future__ import annotations

import shutil
from pathlib import Path

from athena_core.models.scope import UserScope

SCHEME = "local://"


class LocalBlobs:
    engine = "local"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, uri: str) -> Path:
        if not uri.startswith(SCHEME):
            raise ValueError(f"not a local blob uri: {uri!r}")
        relative = Path(uri[len(SCHEME):])
        if relative.is_absolute() or ".." in relative.parts:
            raise ValueError(f"blob uri escapes the blob root: {uri!r}")
        return self.root / relative

    def put(self, scope: UserScope, name: str, data: bytes) -> str:
        uri = f"{SCHEME}{scope.tenant_id}/{scope.user_id}/{name}"
        path = self._path(uri)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)  # atomic: a reader never sees half a blob
        return uri

    def get(self, scope: UserScope, uri: str) -> bytes:
        if not uri.startswith(f"{SCHEME}{scope.tenant_id}/{scope.user_id}/"):
            raise PermissionError("blob belongs to another scope")
        return self._path(uri).read_bytes()

    def delete(self, uri: str) -> None:
        self._path(uri).unlink(missing_ok=True)

    def delete_user(self, scope: UserScope) -> None:
        shutil.rmtree(self.root / scope.tenant_id / scope.user_id, ignore_errors=True)

    def ping(self) -> None:
        if not self.root.is_dir():
            raise RuntimeError(f"blob root {self.root} is missing")
