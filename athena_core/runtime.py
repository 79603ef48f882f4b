"""Builds the set of adapters one process uses, from settings. The API and the workers both call it."""
from __future__ import annotations

from dataclasses import dataclass

import redis

from athena_core.embedded_redis import RedisLocation
from athena_core.redis_connection import redis_client, resolve_redis
from athena_core.settings import Settings
from athena_core.stm.stm_window import StmWindow
from athena_core.stores.local_blobs import LocalBlobs
from athena_core.stores.ports import DocumentStore


def build_documents(settings: Settings) -> DocumentStore:
    if settings.document_store == "mongo":
        from athena_core.stores.mongo_documents import MongoDocuments

        return MongoDocuments.connect(settings.mongo_url, settings.mongo_database)
    from athena_core.stores.sqlite_documents import SqliteDocuments

    return SqliteDocuments(settings.sqlite_path)


@dataclass
class Runtime:
    settings: Settings
    redis_location: RedisLocation
    redis: redis.Redis
    documents: DocumentStore
    stm: StmWindow
    blobs: LocalBlobs | None

    def close(self) -> None:
        self.documents.close()
        self.redis.close()


def build_runtime(settings: Settings) -> Runtime:
    location = resolve_redis(settings)
    client = redis_client(location)
    documents = build_documents(settings)
    blobs = LocalBlobs(settings.data_dir / "blobs") if settings.blob_store == "local" else None
    return Runtime(
        settings=settings,
        redis_location=location,
        redis=client,
        documents=documents,
        stm=StmWindow(client, documents, window=settings.stm_window, ttl_s=settings.stm_ttl_s),
        blobs=blobs,
    )
