"""MongoDB adapter of the document store (production). Indexes are created at start.

BSON dates keep milliseconds only, so times are also stored as integer microseconds (`*_us`) and read
back from those: the contract suite requires exact round trips and stable ordering.

A batch of events is all-or-nothing (SPEC S2 StoreEvents batch, the port's `append_events`): on a server
that runs transactions (a replica set or a sharded cluster: MongoDB, or SecantusDB, which reports a
single-node replica set) the batch is inserted in one transaction. A standalone server (and mongomock)
has none: there the batch is one unordered `insert_many`, which a failure can leave half written, and
`atomic_batches` is False (logged once at start) so the operator can see it.
"""
from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

from pymongo import ASCENDING, DESCENDING, ReturnDocument
from pymongo.errors import BulkWriteError, DuplicateKeyError, OperationFailure, PyMongoError

from athena_core.models.chains import Chain, ChainStatus
from athena_core.models.events import Event, EventStatus
from athena_core.models.scope import AgentScope, UserScope
from athena_core.models.sessions import Session
from athena_core.stores.documents.port import IdempotencyRecord, InvalidRow, scopes_from_rows


log = logging.getLogger("athena.stores.mongo")

APPEND_ATTEMPTS = 3  # a transaction that met a concurrent append of the same event id starts again


def _us(value: datetime | None) -> int | None:
    return None if value is None else int(round(value.timestamp() * 1_000_000))


def _from_us(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value / 1_000_000, tz=timezone.utc)


def _event_doc(e: Event) -> dict[str, Any]:
    return {
        "_id": e.event_id,
        "tenant_id": e.tenant_id,
        "user_id": e.user_id,
        "agent_id": e.agent_id,
        "session_id": e.session_id,
        "role": e.role.value,
        "type": e.type.value,
        "content": e.content,
        "metadata": e.metadata,
        "timestamp": e.timestamp,
        "timestamp_us": _us(e.timestamp),
        "received_at_us": _us(e.received_at),
        "status": e.status.value,
        "chain_id": e.chain_id,
        "seen_at_us": _us(e.seen_at),
        "blob_uri": e.blob_uri,
        "mime_type": e.mime_type,
    }


def _event_from_doc(d: dict[str, Any]) -> Event:
    return Event(
        event_id=d["_id"],
        tenant_id=d["tenant_id"],
        user_id=d["user_id"],
        agent_id=d["agent_id"],
        session_id=d["session_id"],
        role=d["role"],
        type=d["type"],
        content=d["content"],
        metadata=d.get("metadata") or {},
        timestamp=_from_us(d["timestamp_us"]),
        received_at=_from_us(d["received_at_us"]),
        status=d["status"],
        chain_id=d.get("chain_id"),
        seen_at=_from_us(d.get("seen_at_us")),
        blob_uri=d.get("blob_uri"),
        mime_type=d.get("mime_type"),
    )


CHRONOLOGICAL = [("timestamp_us", ASCENDING), ("_id", ASCENDING)]


def _is_id_duplicate(error: dict | None) -> bool:
    """A duplicate-key error on the event id (an idempotent re-append), not on another unique index."""
    if not error or error.get("code") != 11000:
        return False
    key = error.get("keyPattern") or error.get("keyValue")
    if key:
        return list(key) == ["_id"]
    message = str(error.get("errmsg", ""))
    if "index:" in message:
        return "index: _id_ " in message
    return True  # an answer naming no index (mongomock's): taken as the re-append, as before


def _runs_transactions(database: Any) -> bool:
    """Does the server run multi-document transactions? (a replica set member or mongos; `hello` says)"""
    try:
        hello = database.command("hello")
    except (PyMongoError, NotImplementedError, AttributeError, TypeError):
        return False
    return bool(hello.get("setName")) or hello.get("msg") == "isdbgrid"


class MongoDocuments:
    """Implements `DocumentStore` on a pymongo `Database` (or a mongomock one in CI)."""

    engine = "mongo"

    def __init__(self, database: Any) -> None:
        self.db = database
        self.sessions = database["sessions"]
        self.events = database["cognitive_events"]
        self.dead = database["dead_letters"]
        self.chains = database["cognitive_chains"]
        self._create_indexes()
        self.atomic_batches = _runs_transactions(database)
        if not self.atomic_batches:
            log.warning("MongoDB server without transactions (standalone or a double): a failed event batch "
                        "may be stored in part")

    @classmethod
    def connect(cls, url: str, database: str) -> "MongoDocuments":
        from pymongo import MongoClient

        client = MongoClient(url, serverSelectionTimeoutMS=3000, tz_aware=True)
        return cls(client[database])

    def _create_indexes(self) -> None:
        self.events.create_index(
            [("tenant_id", ASCENDING), ("user_id", ASCENDING), ("agent_id", ASCENDING),
             ("timestamp_us", ASCENDING), ("_id", ASCENDING)],
            name="events_by_scope_time",
        )
        self.events.create_index(
            [("tenant_id", ASCENDING), ("user_id", ASCENDING), ("agent_id", ASCENDING),
             ("status", ASCENDING), ("timestamp_us", ASCENDING)],
            name="events_by_scope_status",
        )
        self.events.create_index(
            [("status", ASCENDING), ("seen_at_us", ASCENDING), ("received_at_us", ASCENDING)],
            name="events_unseen_pending",
        )
        self.chains.create_index(
            [("tenant_id", ASCENDING), ("user_id", ASCENDING), ("status", ASCENDING), ("last_event_at_us", DESCENDING)],
            name="chains_by_user_recency",
        )
        self.sessions.create_index([("tenant_id", ASCENDING), ("user_id", ASCENDING)], name="sessions_by_user")
        self.events.create_index([("tenant_id", ASCENDING), ("status", ASCENDING)], name="events_pending_by_tenant")
        # Indexing is state (SPEC S7): consolidated events without `indexed_at_us` (missing counts as null,
        # so events stored before the field are indexed once by the sweep), per user and globally by age.
        self.events.create_index(
            [("tenant_id", ASCENDING), ("user_id", ASCENDING), ("status", ASCENDING), ("indexed_at_us", ASCENDING),
             ("timestamp_us", ASCENDING)],
            name="events_unindexed_by_user",
        )
        self.events.create_index(
            [("status", ASCENDING), ("indexed_at_us", ASCENDING), ("received_at_us", ASCENDING)],
            name="events_unindexed",
        )

    def ping(self) -> None:
        self.db.command("ping")

    def close(self) -> None:
        client = getattr(self.db, "client", None)
        if client is not None and hasattr(client, "close"):
            client.close()

    # -- sessions ----------------------------------------------------------------------------------
    def create_session(self, session: Session) -> None:
        self.sessions.insert_one(
            {
                "_id": session.session_id,
                "tenant_id": session.tenant_id,
                "user_id": session.user_id,
                "agent_id": session.agent_id,
                "metadata": session.metadata,
                "created_at_us": _us(session.created_at),
            }
        )

    def get_session(self, session_id: str) -> Session | None:
        d = self.sessions.find_one({"_id": session_id})
        if d is None:
            return None
        return Session(
            session_id=d["_id"],
            tenant_id=d["tenant_id"],
            user_id=d["user_id"],
            agent_id=d["agent_id"],
            metadata=d.get("metadata") or {},
            created_at=_from_us(d["created_at_us"]),
        )

    def delete_session(self, session_id: str) -> bool:
        return self.sessions.delete_one({"_id": session_id}).deleted_count > 0

    # -- event log ---------------------------------------------------------------------------------
    def append_events(self, events: list[Event]) -> None:
        """All or none of the batch (in a transaction where the server has them); ids already stored are
        skipped, so a retried batch is a no-op."""
        if not events:
            return
        if not self.atomic_batches or len({e.event_id for e in events}) == 1:
            self._append_unordered(events)  # one document is atomic by itself: no transaction needed
            return
        client = self.db.client
        for attempt in range(1, APPEND_ATTEMPTS + 1):
            try:
                with client.start_session() as session:
                    session.with_transaction(lambda s: self._append_new(events, s))
                return
            except BulkWriteError as exc:
                # another request appended one of these ids between our read and our insert: read again
                if not all(_is_id_duplicate(e) for e in exc.details.get("writeErrors", [])) \
                        or attempt == APPEND_ATTEMPTS:
                    raise

    def _append_new(self, events: list[Event], session: Any) -> None:
        ids = [e.event_id for e in events]
        stored = {d["_id"] for d in self.events.find({"_id": {"$in": ids}}, {"_id": 1}, session=session)}
        new = [_event_doc(e) for e in dict((e.event_id, e) for e in events).values() if e.event_id not in stored]
        if new:
            self.events.insert_many(new, ordered=True, session=session)

    def _append_unordered(self, events: list[Event]) -> None:
        """No transactions: one unordered insert; duplicates of stored ids are the idempotent re-append."""
        try:
            self.events.insert_many([_event_doc(e) for e in events], ordered=False)
        except BulkWriteError as exc:
            if not all(_is_id_duplicate(err) for err in exc.details.get("writeErrors", [])):
                raise
        except DuplicateKeyError as exc:
            if not _is_id_duplicate(exc.details):
                raise

    def _scope_filter(self, scope: UserScope) -> dict[str, Any]:
        f: dict[str, Any] = {"tenant_id": scope.tenant_id, "user_id": scope.user_id}
        if isinstance(scope, AgentScope):
            f["agent_id"] = scope.agent_id
        return f

    def get_events(self, scope: UserScope, event_ids: list[str]) -> list[Event]:
        if not event_ids:
            return []
        f = {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "_id": {"$in": list(event_ids)}}
        return [_event_from_doc(d) for d in self.events.find(f).sort(CHRONOLOGICAL)]

    def recent_events(self, scope: AgentScope, limit: int) -> list[Event]:
        cursor = self.events.find(self._scope_filter(scope)).sort(
            [("timestamp_us", DESCENDING), ("_id", DESCENDING)]
        ).limit(limit)
        return [_event_from_doc(d) for d in cursor]

    def pending_events(self, scope: AgentScope, limit: int | None = None) -> list[Event]:
        cursor = self.events.find({**self._scope_filter(scope), "status": "pending"}).sort(CHRONOLOGICAL)
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_event_from_doc(d) for d in cursor]

    def mark_seen(self, scope: AgentScope, event_ids: list[str], at: datetime) -> int:
        if not event_ids:
            return 0
        f = {**self._scope_filter(scope), "_id": {"$in": list(event_ids)}, "seen_at_us": None}
        return self.events.update_many(f, {"$set": {"seen_at_us": _us(at)}}).modified_count

    def mark_events(
        self, scope: AgentScope, event_ids: list[str], status: EventStatus, chain_id: str | None = None
    ) -> int:
        if not event_ids:
            return 0
        f = {**self._scope_filter(scope), "_id": {"$in": list(event_ids)}}
        return self.events.update_many(f, {"$set": {"status": status.value, "chain_id": chain_id}}).modified_count

    def count_events(self, scope: AgentScope, status: EventStatus | None = None) -> int:
        f = self._scope_filter(scope)
        if status is not None:
            f["status"] = status.value
        return self.events.count_documents(f)

    def unindexed_events(self, scope: UserScope, limit: int) -> list[Event]:
        f = {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "indexed_at_us": None}  # any status (issue 15)
        return [_event_from_doc(d) for d in self.events.find(f).sort(CHRONOLOGICAL).limit(limit)]

    def mark_indexed(self, scope: UserScope, event_ids: list[str], at: datetime) -> int:
        if not event_ids:
            return 0
        f = {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "_id": {"$in": list(event_ids)}}
        return self.events.update_many(f, {"$set": {"indexed_at_us": _us(at)}}).matched_count

    def count_pending_for_tenant(self, tenant_id: str, cap: int) -> int:
        return self.events.count_documents({"tenant_id": tenant_id, "status": "pending"}, limit=cap)

    def previous_user_message(self, scope: AgentScope, before: Event) -> Event | None:
        ts = _us(before.timestamp)
        f = {
            **self._scope_filter(scope), "role": "user", "type": "message",
            "$or": [{"timestamp_us": {"$lt": ts}}, {"timestamp_us": ts, "_id": {"$lt": before.event_id}}],
        }
        d = self.events.find_one(f, sort=[("timestamp_us", DESCENDING), ("_id", DESCENDING)])
        return None if d is None else _event_from_doc(d)

    # -- chains ------------------------------------------------------------------------------------
    def upsert_chain(self, chain: Chain) -> None:
        doc = {"_id": chain.chain_id, "tenant_id": chain.tenant_id, "user_id": chain.user_id,
               "status": chain.status.value, "last_event_at_us": _us(chain.last_event_at),
               "updated_at_us": _us(datetime.now(timezone.utc)),  # no indexed_at_us: unindexed again
               "doc": chain.model_dump(mode="json")}
        self.chains.replace_one(
            {"_id": chain.chain_id, "tenant_id": chain.tenant_id, "user_id": chain.user_id}, doc, upsert=True
        )

    def unindexed_chains(self, scope: UserScope, limit: int) -> list[Chain]:
        f = {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "status": "active", "indexed_at_us": None}
        return [Chain.model_validate(d["doc"]) for d in
                self.chains.find(f).sort([("updated_at_us", ASCENDING), ("_id", ASCENDING)]).limit(limit)]

    def mark_chains_indexed(self, scope: UserScope, chain_ids: list[str], at: datetime) -> int:
        if not chain_ids:
            return 0
        f = {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "_id": {"$in": list(chain_ids)}}
        return self.chains.update_many(f, {"$set": {"indexed_at_us": _us(at)}}).matched_count

    def get_chains(self, scope: UserScope, chain_ids: list[str]) -> list[Chain]:
        if not chain_ids:
            return []
        f = {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "_id": {"$in": list(chain_ids)}}
        found = {d["_id"]: Chain.model_validate(d["doc"]) for d in self.chains.find(f)}
        return [found[c] for c in chain_ids if c in found]

    def may_fall_in(self, scope: UserScope, kind: str, ids: list[str], start: datetime, end: datetime) -> list[str]:
        if not ids:
            return []
        f: dict[str, Any] = {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "_id": {"$in": list(ids)}}
        if kind == "event":
            f["timestamp_us"] = {"$gte": _us(start), "$lt": _us(end)}
            collection = self.events
        elif kind == "chain":
            f["last_event_at_us"] = {"$gte": _us(start)}
            collection = self.chains
        else:
            raise ValueError(f"kind must be 'event' or 'chain', not {kind!r}")
        found = {d["_id"] for d in collection.find(f, {"_id": 1})}
        return [i for i in ids if i in found]

    def recent_chains(
        self, scope: UserScope, *, since: datetime | None = None, limit: int = 100,
        status: ChainStatus | None = ChainStatus.active,
    ) -> list[Chain]:
        f: dict[str, Any] = {"tenant_id": scope.tenant_id, "user_id": scope.user_id}
        if status is not None:
            f["status"] = status.value
        if since is not None:
            f["last_event_at_us"] = {"$gte": _us(since)}
        cursor = self.chains.find(f).sort([("last_event_at_us", DESCENDING), ("_id", DESCENDING)]).limit(limit)
        return [Chain.model_validate(d["doc"]) for d in cursor]

    def touch_chains(self, scope: UserScope, accesses: list[tuple[str, datetime, float]]) -> None:
        for chain_id, at, strength in accesses:
            self.chains.update_one(
                {"_id": chain_id, "tenant_id": scope.tenant_id, "user_id": scope.user_id},
                {"$set": {"doc.last_accessed_at": at.isoformat().replace("+00:00", "Z"),
                          "doc.recall_strength": strength}},
            )

    def set_chain_heat(self, scope: UserScope, updates: list[tuple[str, float, dict]]) -> None:
        for chain_id, heat, factors in updates:
            self.chains.update_one(
                {"_id": chain_id, "tenant_id": scope.tenant_id, "user_id": scope.user_id},
                {"$set": {"doc.heat_score": heat, "doc.heat_factors": factors}},
            )

    def mark_promoted(self, scope: UserScope, chain_id: str, evidence: str) -> None:
        self.chains.update_one(
            {"_id": chain_id, "tenant_id": scope.tenant_id, "user_id": scope.user_id},
            {"$set": {"doc.promoted_evidence": evidence}},
        )

    def archive_chain(self, scope: UserScope, chain_id: str, at: datetime) -> bool:
        result = self.chains.update_one(
            {"_id": chain_id, "tenant_id": scope.tenant_id, "user_id": scope.user_id, "status": "active"},
            {"$set": {"status": "archived", "doc.status": "archived",
                      "doc.archived_at": at.isoformat().replace("+00:00", "Z")}},
        )
        return result.modified_count > 0

    def delete_user(self, scope: UserScope) -> dict[str, int]:
        f = {"tenant_id": scope.tenant_id, "user_id": scope.user_id}
        return {
            "sessions": self.sessions.delete_many(f).deleted_count,
            "events": self.events.delete_many(f).deleted_count,
            "chains": self.chains.delete_many(f).deleted_count,
            "idempotency_keys": self.db["idempotency_keys"].delete_many(f).deleted_count,
            "dead_letters": self.dead.delete_many(f).deleted_count,
        }

    # -- operator sweeps ---------------------------------------------------------------------------
    def active_chains_page(self, after: tuple[str, str, str] | None, limit: int) -> list[Chain]:
        f: dict[str, Any] = {"status": "active"}
        if after is not None:
            t, u, c = after
            f["$or"] = [
                {"tenant_id": {"$gt": t}},
                {"tenant_id": t, "user_id": {"$gt": u}},
                {"tenant_id": t, "user_id": u, "_id": {"$gt": c}},
            ]
        cursor = self.chains.find(f).sort([("tenant_id", ASCENDING), ("user_id", ASCENDING), ("_id", ASCENDING)])
        return [Chain.model_validate(d["doc"]) for d in cursor.limit(limit)]

    def active_chain_users(self, after: tuple[str, str] | None, limit: int) -> list[UserScope]:
        f: dict[str, Any] = {"status": "active"}
        if after is not None:
            t, u = after
            f["$or"] = [{"tenant_id": {"$gt": t}}, {"tenant_id": t, "user_id": {"$gt": u}}]
        pipeline = [
            {"$match": f},
            {"$group": {"_id": {"t": "$tenant_id", "u": "$user_id"}}},
            {"$sort": {"_id.t": 1, "_id.u": 1}},
            {"$limit": limit},
        ]
        rows = [(d["_id"].get("t"), d["_id"].get("u")) for d in self.chains.aggregate(pipeline)]
        return scopes_from_rows(rows, lambda t, u: UserScope(tenant_id=t, user_id=u), None)

    def idle_pending_scopes(self, received_before: datetime, limit: int = 1000,
                            on_invalid: InvalidRow | None = None) -> list[AgentScope]:
        pipeline = [
            {"$match": {"status": "pending"}},
            {"$group": {"_id": {"t": "$tenant_id", "u": "$user_id", "a": "$agent_id"},
                        "newest": {"$max": "$received_at_us"}}},
            {"$match": {"newest": {"$lt": _us(received_before)}}},
            {"$limit": limit},
        ]
        return self._scopes(pipeline, on_invalid)

    def unseen_pending_scopes(self, received_before: datetime, limit: int = 1000,
                              on_invalid: InvalidRow | None = None) -> list[AgentScope]:
        pipeline = [
            {"$match": {"status": "pending", "seen_at_us": None, "received_at_us": {"$lt": _us(received_before)}}},
            {"$group": {"_id": {"t": "$tenant_id", "u": "$user_id", "a": "$agent_id"}}},
            {"$limit": limit},
        ]
        return self._scopes(pipeline, on_invalid)

    def unindexed_scopes(self, received_before: datetime, limit: int = 1000,
                         on_invalid: InvalidRow | None = None) -> list[UserScope]:
        pipeline = [
            {"$match": {"indexed_at_us": None, "received_at_us": {"$lt": _us(received_before)}}},
            {"$group": {"_id": {"t": "$tenant_id", "u": "$user_id"}}},
            {"$limit": limit},
        ]
        rows = [(d["_id"].get("t"), d["_id"].get("u")) for d in self.events.aggregate(pipeline)]
        chains = {"status": "active", "indexed_at_us": None, "updated_at_us": {"$not": {"$gte": _us(received_before)}}}
        rows += [r for r in {(d["tenant_id"], d["user_id"]) for d in
                             self.chains.find(chains, {"tenant_id": 1, "user_id": 1}).limit(limit)} if r not in rows]
        return scopes_from_rows(rows, lambda t, u: UserScope(tenant_id=t, user_id=u), on_invalid)

    def _scopes(self, pipeline: list[dict], on_invalid: InvalidRow | None) -> list[AgentScope]:
        rows = [(d["_id"].get("t"), d["_id"].get("u"), d["_id"].get("a")) for d in self.events.aggregate(pipeline)]
        return scopes_from_rows(rows, lambda t, u, a: AgentScope(tenant_id=t, user_id=u, agent_id=a), on_invalid)

    def record_dead_letter(self, task_name: str, task_id: str, args: object, error: str,
                           scope: UserScope | None = None) -> None:
        self.dead.insert_one(
            {"task_name": task_name, "task_id": task_id, "args": args, "error": error,
             "failed_at_us": _us(datetime.now(timezone.utc)),
             "tenant_id": scope.tenant_id if scope else None, "user_id": scope.user_id if scope else None}
        )

    def dead_letters(self, limit: int = 100) -> list[dict]:
        cursor = self.dead.find().sort([("failed_at_us", DESCENDING)]).limit(limit)
        return [
            {"task_name": d["task_name"], "task_id": d["task_id"], "args": d["args"], "error": d["error"],
             "failed_at": _from_us(d["failed_at_us"])}
            for d in cursor
        ]

    # -- idempotency keys (SPEC S2) ----------------------------------------------------------------
    def _idempotency(self, ttl_s: float) -> Any:
        """The `idempotency_keys` collection: unique on (tenant_id, key); a TTL index removes expired
        records (within a minute or so; a claim also treats an expired record as absent)."""
        if getattr(self, "_idempotency_ready", False):
            return self.db["idempotency_keys"]
        keys = self.db["idempotency_keys"]
        keys.create_index([("tenant_id", ASCENDING), ("key", ASCENDING)], unique=True, name="idempotency_key")
        keys.create_index([("tenant_id", ASCENDING), ("user_id", ASCENDING)], name="idempotency_by_user")
        try:
            keys.create_index([("created_at", ASCENDING)], expireAfterSeconds=int(ttl_s), name="idempotency_ttl")
        except OperationFailure:  # an index made with another TTL: the claim's own expiry check still holds
            pass
        self._idempotency_ready = True
        return keys

    def claim_idempotency_key(
        self, tenant_id: str, user_id: str, key: str, request_hash: str, planned_event_ids: list[str],
        now: datetime, ttl_s: float = 86400,
    ) -> IdempotencyRecord:
        keys = self._idempotency(ttl_s)
        fresh = {"tenant_id": tenant_id, "key": key, "user_id": user_id, "request_hash": request_hash,
                 "event_ids": list(planned_event_ids), "created_at": now, "created_at_us": _us(now)}
        cutoff_us = _us(now) - int(ttl_s * 1_000_000)
        for _ in range(5):  # each turn either returns or saw the record change under it
            try:
                keys.insert_one(dict(fresh))
                return _idempotency_record(fresh)
            except DuplicateKeyError:
                pass
            existing = keys.find_one({"tenant_id": tenant_id, "key": key})
            if existing is None:
                continue  # expired and removed between the insert and the read
            if existing["created_at_us"] >= cutoff_us:
                return _idempotency_record(existing)
            taken = keys.find_one_and_update(  # expired: take the key over, unless another claim just did
                {"_id": existing["_id"], "created_at_us": existing["created_at_us"]}, {"$set": fresh},
                return_document=ReturnDocument.AFTER,
            )
            if taken is not None:
                return _idempotency_record(taken)
        raise RuntimeError(f"could not claim idempotency key {key!r}: it kept changing")


def _idempotency_record(d: dict[str, Any]) -> IdempotencyRecord:
    return IdempotencyRecord(tenant_id=d["tenant_id"], user_id=d["user_id"], key=d["key"],
                             request_hash=d["request_hash"], event_ids=list(d["event_ids"]),
                             created_at=_from_us(d["created_at_us"]))
