"""S3-compatible blob store (production: MinIO). Keys are `<tenant>/<user>/<name>` under one bucket.

Same contract as `LocalBlobs`: put returns a URI, reads check the scope, archive and purge delete.
Every key segment is a plain name (no `.`/`..`, no `/`, SPEC S1), so a key is only ever under its
own `tenant/user/` prefix and a user's prefix never covers another user's keys.
"""
from __future__ import annotations

from typing import Any

from athena_core.models.scope import UserScope
from athena_core.stores.blobs.contained_path import PathEscape, contained_key

SCHEME = "s3://"


class S3Blobs:
    engine = "s3"

    def __init__(self, endpoint_url: str | None, bucket: str, access_key_id: str, secret_access_key: str,
                 *, client: Any = None) -> None:
        import boto3  # only deployments with an S3 blob store need it

        self.bucket = bucket
        self.client = client or boto3.client(
            "s3", endpoint_url=endpoint_url or None, aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key, region_name="us-east-1",
        )

    def _key(self, uri: str) -> str:
        prefix = f"{SCHEME}{self.bucket}/"
        if not uri.startswith(prefix):
            raise ValueError(f"not a blob of bucket {self.bucket!r}: {uri!r}")
        parts = uri[len(prefix):].split("/")
        if len(parts) != 3:
            raise PathEscape(f"blob key is not <tenant>/<user>/<name>: {uri!r}")
        return contained_key(*parts)

    @staticmethod
    def _user_prefix(scope: UserScope) -> str:
        return contained_key(scope.tenant_id, scope.user_id) + "/"

    def put(self, scope: UserScope, name: str, data: bytes) -> str:
        key = contained_key(scope.tenant_id, scope.user_id, name)
        self.client.put_object(Bucket=self.bucket, Key=key, Body=data)
        return f"{SCHEME}{self.bucket}/{key}"

    def get(self, scope: UserScope, uri: str) -> bytes:
        key = self._key(uri)
        if not key.startswith(self._user_prefix(scope)):
            raise PermissionError("blob belongs to another scope")
        return self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()

    def delete(self, uri: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(uri))

    def _user_keys(self, scope: UserScope) -> list[str]:
        prefix = self._user_prefix(scope)
        paginator = self.client.get_paginator("list_objects_v2")
        return [item["Key"] for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix)
                for item in page.get("Contents", []) if item["Key"].startswith(prefix)]

    def delete_user(self, scope: UserScope) -> None:
        keys = self._user_keys(scope)
        for start in range(0, len(keys), 1000):  # DeleteObjects takes at most 1000 keys
            answer = self.client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in keys[start:start + 1000]]})
            if answer.get("Errors"):
                raise RuntimeError(f"S3 refused to delete {len(answer['Errors'])} blobs of the user")

    def count_user(self, scope: UserScope) -> int:
        """Objects left under the user's prefix (purge verification)."""
        return len(self._user_keys(scope))

    def ping(self) -> None:
        self.client.head_bucket(Bucket=self.bucket)
