"""Idempotency-Key on the write routes (SPEC S2): a retry with the same key, per tenant, within
`ATHENA_IDEMPOTENCY_TTL_S` (24 h), answers what the first request answered and stores nothing twice.

Crash-safe without a multi-document transaction:
1. the route hashes the request (method, path, canonical body) and plans the event ids;
2. `claim_idempotency_key` atomically records (tenant, key) → {hash, ids} unless the key is held, and
   returns whichever record holds it (a different hash → 422 naming `Idempotency-Key`);
3. the route then ALWAYS writes the events under the claimed ids: the log ignores ids it already has
   (a retry after the first request's append writes nothing), and writes those it lacks (a retry after a
   crash between the claim and the append); the STM push skips events already in the window;
4. it answers 201 with the claimed ids.
A crash between any two steps leaves either no record (the retry starts afresh) or a record whose ids
the retry completes.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated

from fastapi import Header, Request
from pydantic import BaseModel

from athena_api.errors import ApiError
from athena_core.ids import new_id
from athena_core.models.events import utc_now
from athena_core.models.sessions import Session
from athena_core.wiring.runtime import Runtime

HEADER = "Idempotency-Key"
KEY_PATTERN = re.compile(r"^[\x21-\x7e]{1,255}$")  # visible ASCII, as HTTP header values travel safely

IdempotencyKey = Annotated[str | None, Header(
    alias=HEADER, description="Retry-safe writes: the same key (per tenant, 24 h) returns the first answer "
                              "and stores nothing twice; reusing it for another request is a 422.")]


def request_hash(request: Request, body: BaseModel) -> str:
    return hash_of(request.method, request.url.path, body)


def hash_of(method: str, path: str, body: BaseModel) -> str:
    """Method, path (it names the session) and the validated body in canonical JSON (sorted keys, defaults
    filled in: the same request spelled with or without a default value is the same request)."""
    canonical = json.dumps(body.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{method}\n{path}\n{canonical}".encode()).hexdigest()


def blob_name(session: Session, key: str, digest: str) -> str:
    """A payload's blob name under a key: a retry rewrites the same blob instead of leaving a copy."""
    return "blob_" + hashlib.sha256(f"{session.tenant_id}\n{key}\n{digest}".encode()).hexdigest()[:32]


def check_key(key: str) -> None:
    if not KEY_PATTERN.match(key):
        raise ApiError(422, "validation_error", f"{HEADER} must be 1–255 visible ASCII characters", field=HEADER)


def claim_event_ids(runtime: Runtime, session: Session, key: str | None, digest: str, count: int) -> list[str] | None:
    """The event ids this request must be written under (None without a key): freshly planned ones on
    first use of the key, the first request's on a retry. 422 when the key served another request."""
    if key is None:
        return None
    return claim_ids(runtime, session.tenant_id, session.user_id, key, digest, [new_id("evt") for _ in range(count)])


def claim_ids(runtime: Runtime, tenant_id: str, user_id: str, key: str, digest: str, planned: list[str]) -> list[str]:
    """Claim `key` for this request with the `planned` ids; the ids the key stands for (the first
    request's on a retry). 422 naming the header when the key served another request; 503 if the record
    cannot be written (without it the write would not be retry-safe)."""
    check_key(key)
    try:
        record = runtime.documents.claim_idempotency_key(
            tenant_id, user_id, key, digest, planned, utc_now(), ttl_s=runtime.settings.idempotency_ttl_s)
    except Exception as exc:  # noqa: BLE001
        raise ApiError(503, "not_durable", "the idempotency key could not be recorded; retry",
                       headers={"Retry-After": "1"}) from exc
    if record.request_hash != digest or len(record.event_ids) != len(planned):
        raise ApiError(422, "idempotency_key_reused",
                       f"this {HEADER} was used for a different request in the last "
                       f"{runtime.settings.idempotency_ttl_s} s; use a new key for a new request", field=HEADER)
    return record.event_ids
