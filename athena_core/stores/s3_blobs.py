"""S3-compatible blob store (production: MinIO). Keys are `<tenant>/<user>/<name>` under one bucket.

Same contract as `LocalBlobs`: put returns a URI, reads check the scope, archive and purge delete.
"""
from __future__ import annotations

from typing import Any

from athena_core.models.scope import UserScope

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
        return uri[len(prefix):]

    def put(self, scope: UserScope, name: str, data: bytes) -> str:
        key = f"{scope.tenant_id}/{scope.user_id}/{name}"
        self.client.put_object(Bucket=self.bucket, Key=key, Body=data)
        return f"{SCHEME}{self.bucket}/{key}"

    def get(self, scope: UserScope, uri: str) -> bytes:
        key = self._key(uri)
        if not key.startswith(f"{scope.tenant_id}/{scope.user_id}/"):
            raise PermissionError("blob belongs to another scope")
        return self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()

    def delete(self, uri: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(uri))

    def delete_user(self, scope: UserScope) -> None:
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=f"{scope.tenant_id}/{scope.user_id}/"):
            keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
            if keys:
                self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": keys})

    def ping(self) -> None:
        self.client.head_bucket(Bucket=self.bucket)
