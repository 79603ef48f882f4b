"""MongoDB adapter of the lexical index: a text index in the production document store.

Why this engine: the events already live in MongoDB, so the index is maintained by the database on the
same writes, needs no second system and no sync job, and supports English stemming and stop words.
The compound index puts (tenant_id, user_id, kind) before the text key; MongoDB then *requires* equality
on those fields in every `$text` query, so the scope is part of the index lookup, not a post-filter.
Its `textScore` is not BM25, but fusion uses ranks only (RRF), so the scale does not matter.
(Milvus 2.5's BM25 function would also work, but Milvus Lite, our embedded vector engine, lacks it, and
it would put the verbatim event text in the vector store as a second copy.)

Runs against a real MongoDB only (`ATHENA_TEST_MONGO_URL`): mongomock does not implement `$text`, and
SecantusDB (the MongoDB-wire server the suites run on here) has no text indexes. On such a server the
adapter refuses at start with `TextIndexUnsupported`, naming the setting that picks SQLite FTS5 instead.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pymongo import ASCENDING, TEXT, ReplaceOne
from pymongo.errors import OperationFailure

from athena_core.models.scope import UserScope
from athena_core.stores.lexical.port import LexicalDoc, plain_terms


class TextIndexUnsupported(RuntimeError):
    """The MongoDB-wire server cannot build text indexes (SecantusDB, for one)."""


class MongoLexical:
    engine = "mongo-text"

    def __init__(self, database: Any) -> None:
        self.docs = database["lexical_docs"]
        try:
            self.docs.create_index(
                [("tenant_id", ASCENDING), ("user_id", ASCENDING), ("kind", ASCENDING), ("body", TEXT)],
                name="lexical_by_scope", default_language="english",
            )
        except OperationFailure as exc:
            if "text" not in str(exc).lower():
                raise
            database.client.close()
            raise TextIndexUnsupported(
                f"this MongoDB-wire server has no text indexes ({exc}); set ATHENA_LEXICAL_STORE=sqlite "
                "to keep the lexical index in SQLite FTS5 beside the data dir") from exc

    @classmethod
    def connect(cls, url: str, database: str) -> "MongoLexical":
        from pymongo import MongoClient

        return cls(MongoClient(url, serverSelectionTimeoutMS=3000, tz_aware=True)[database])

    def ping(self) -> None:
        self.docs.database.command("ping")

    def close(self) -> None:
        self.docs.database.client.close()

    @staticmethod
    def _id(scope: UserScope, kind: str, doc_id: str) -> str:
        return f"{scope.tenant_id}:{scope.user_id}:{kind}:{doc_id}"

    def upsert(self, scope: UserScope, docs: list[LexicalDoc]) -> None:
        if not docs:
            return
        self.docs.bulk_write([
            ReplaceOne({"_id": self._id(scope, d.kind, d.doc_id)},
                       {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "kind": d.kind,
                        "doc_id": d.doc_id, "body": d.body}, upsert=True)
            for d in docs
        ], ordered=False)

    def delete(self, scope: UserScope, kind: str, doc_ids: list[str]) -> int:
        if not doc_ids:
            return 0
        result = self.docs.delete_many({"_id": {"$in": [self._id(scope, kind, d) for d in doc_ids]}})
        return result.deleted_count

    def delete_user(self, scope: UserScope) -> int:
        return self.docs.delete_many({"tenant_id": scope.tenant_id, "user_id": scope.user_id}).deleted_count

    def search(self, scope: UserScope, terms: Sequence[str], kind: str, limit: int) -> list[str]:
        # `$search` syntax: a quote opens a phrase and a leading "-" negates; terms are plain words here
        words = [w for w in (t.replace('"', " ").strip().lstrip("-") for t in plain_terms(terms)) if w]
        if not words or limit <= 0:
            return []
        cursor = self.docs.find(
            {"tenant_id": scope.tenant_id, "user_id": scope.user_id, "kind": kind, "$text": {"$search": " ".join(words)}},
            {"doc_id": 1, "score": {"$meta": "textScore"}},
        ).sort([("score", {"$meta": "textScore"})]).limit(limit)
        return [d["doc_id"] for d in cursor]

    def count(self, scope: UserScope) -> int:
        return self.docs.count_documents({"tenant_id": scope.tenant_id, "user_id": scope.user_id})
