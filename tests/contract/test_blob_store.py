"""One contract suite for both blob stores: the local directory, and S3 over HTTP.

The S3 run talks to moto's S3 server on loopback (`moto_s3_double`: MinIO/S3 cannot run here);
it uses the same boto3 client code that talks to MinIO in production.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from athena_core.models.scope import UserScope
from athena_core.stores.blobs.contained_path import PathEscape
from athena_core.stores.blobs.local_blobs import LocalBlobs
from athena_core.stores.blobs.port import BlobStore
from athena_devtools.engine_servers import free_port

A = UserScope(tenant_id="ta", user_id="u1")
B = UserScope(tenant_id="tb", user_id="u1")


@pytest.fixture(scope="module")
def moto_s3_double() -> Iterator[str]:
    moto_server = pytest.importorskip("moto.server")
    port = free_port()
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

    from athena_core.stores.blobs.s3_blobs import S3Blobs

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


# -- containment (SPEC S1, issue 12 item 1): ids never act as paths or key prefixes ---------------------
# Scopes are built with model_construct, bypassing the id rules, as a row from before them (or a bug) would.
ESCAPES = [("..", ".."), ("ta", ".."), ("..", "u1"), (".", "u1"), ("ta", "."), ("", "u1"), ("ta", ""),
           ("ta/u1", "x"), ("ta", "u1/../../tb"), ("/etc", "u1"), ("ta", "/tmp"), ("ta\\..", "u1"), ("ta", "u\x001")]


def _raw(tenant_id: str, user_id: str) -> UserScope:
    return UserScope.model_construct(tenant_id=tenant_id, user_id=user_id)


def _all_blobs(blobs) -> set[str]:
    """Every file under the local root's parent, or every key of the bucket."""
    if isinstance(blobs, LocalBlobs):
        return {str(p.relative_to(blobs.root.parent)) for p in blobs.root.parent.rglob("*")}
    return {o["Key"] for page in blobs.client.get_paginator("list_objects_v2").paginate(Bucket=blobs.bucket)
            for o in page.get("Contents", [])}


@pytest.mark.parametrize("tenant_id,user_id", ESCAPES)
def test_scopes_that_are_not_plain_names_touch_nothing(blobs: BlobStore, tenant_id: str, user_id: str) -> None:
    kept = [blobs.put(A, "blob_1", b"a"), blobs.put(B, "blob_1", b"b")]
    if isinstance(blobs, LocalBlobs):
        (blobs.root.parent / "beside.txt").write_bytes(b"beside the blob root")
        (blobs.root.parent / "sibling").mkdir()
        (blobs.root.parent / "sibling" / "f").write_bytes(b"f")
    before = _all_blobs(blobs)
    bad = _raw(tenant_id, user_id)
    with pytest.raises(PathEscape):
        blobs.delete_user(bad)
    with pytest.raises(PathEscape):
        blobs.put(bad, "blob_2", b"x")
    assert _all_blobs(blobs) == before
    assert [blobs.get(s, uri) for s, uri in zip((A, B), kept)] == [b"a", b"b"]


@pytest.mark.parametrize("name", ["..", ".", "", "a/b", "../../x", "/abs"])
def test_blob_names_that_are_not_plain_names_are_refused(blobs: BlobStore, name: str) -> None:
    with pytest.raises(PathEscape):
        blobs.put(A, name, b"x")


def test_uris_that_leave_their_scope_are_refused(blobs: BlobStore) -> None:
    theirs = blobs.put(B, "blob_1", b"b")
    prefix = theirs[: -len("tb/u1/blob_1")]
    for uri in (prefix + "ta/u1/../../tb/u1/blob_1", prefix + "ta/../tb/u1/blob_1", prefix + "ta/u1/../blob_1",
                prefix + "../ta/u1/blob_1", prefix + "ta/u1/x/../../../tb/u1/blob_1", prefix + "tb/u1"):
        with pytest.raises((PathEscape, PermissionError)):
            blobs.get(A, uri)
        with pytest.raises(PathEscape):
            blobs.delete(uri)
    assert blobs.get(B, theirs) == b"b"


def test_delete_user_removes_only_that_user(blobs: BlobStore) -> None:
    """Prefixes are whole segments: purging `u1` leaves `u10`, and tenant `ta` leaves tenant `ta2`."""
    neighbours = [(UserScope(tenant_id="ta", user_id="u10"), b"1"), (UserScope(tenant_id="ta2", user_id="u1"), b"2"),
                  (UserScope(tenant_id="tb", user_id="u1"), b"3")]
    uris = [blobs.put(scope, "blob_1", data) for scope, data in neighbours]
    blobs.put(A, "blob_1", b"gone")
    blobs.put(A, "blob_2", b"gone")
    assert blobs.count_user(A) == 2
    blobs.delete_user(A)
    assert blobs.count_user(A) == 0
    blobs.delete_user(A)  # idempotent
    assert [blobs.get(scope, uri) for (scope, _), uri in zip(neighbours, uris)] == [b"1", b"2", b"3"]


def test_local_delete_user_refuses_a_user_directory_redirected_by_a_symlink(tmp_path) -> None:
    """`root/ta/u1` → `root/tb/u1`: inside the root, but not strictly below `root/ta`: refused, B kept."""
    blobs = LocalBlobs(tmp_path / "blobs")
    theirs = blobs.put(B, "blob_1", b"b")
    (blobs.root / "ta").mkdir()
    (blobs.root / "ta" / "u1").symlink_to(blobs.root / "tb" / "u1", target_is_directory=True)
    (blobs.root / "tx").symlink_to(tmp_path, target_is_directory=True)  # a tenant dir pointing outside
    for scope in (A, UserScope(tenant_id="tx", user_id="blobs")):
        with pytest.raises(PathEscape):
            blobs.delete_user(scope)
        with pytest.raises(PathEscape):
            blobs.put(scope, "blob_2", b"x")
    assert blobs.get(B, theirs) == b"b"
