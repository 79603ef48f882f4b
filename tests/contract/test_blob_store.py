"""One contract suite for both blob stores: the local directory, and S3 over HTTP.

The S3 run talks to moto's S3 server on loopback (`moto_s3_double`: MinIO/S3 cannot run here);
it uses the same boto3 client code that talks to MinIO in production.
"""
from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from athena_core.models.scope import UserScope
from athena_core.stores.local_blobs import LocalBlobs
from athena_core.stores.ports import BlobStore

A = UserScope(tenant_id="ta", user_id="u1")
B = UserScope(tenant_id="tb", user_id="u1")


@pytest.fixture(scope="module")
def moto_s3_double() -> Iterator[str]:
    moto_server = pytest.importorskip("moto.server")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture(params=["local", "s3-over-moto-double"])
def blobs(request, tmp_path) -> BlobStore:
    if request.param == "local":
        return LocalBlobs(tmp_path / "blobs")
    import uuid

    import boto3

    from athena_core.stores.s3_blobs import S3Blobs

    endpoint = request.getfixturevalue("moto_s3_double")
    bucket = f"b-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="k", aws_secret_access_key="s",
                 region_name="us-east-1").create_bucket(Bucket=bucket)
    return S3Blobs(endpoint, bucket, "k", "s")


def test_put_get_and_scope_check(blobs: BlobStore) -> None:
    assert isinstance(blobs, BlobStore)
    blobs.ping()
    uri = blobs.put(A, "blob_1", b"\x00payload")
    assert blobs.get(A, uri) == b"\x00payload"
    with pytest.raises(PermissionError):
        blobs.get(B, uri)


def test_delete_and_delete_user(blobs: BlobStore) -> None:
    first = blobs.put(A, "blob_1", b"1")
    second = blobs.put(A, "blob_2", b"2")
    theirs = blobs.put(B, "blob_1", b"b")
    blobs.delete(first)
    with pytest.raises(Exception):
        blobs.get(A, first)
    blobs.delete_user(A)
    with pytest.raises(Exception):
        blobs.get(A, second)
    assert blobs.get(B, theirs) == b"b"
