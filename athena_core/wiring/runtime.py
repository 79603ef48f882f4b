"""Builds the set of adapters one process uses, from settings. The API and the workers both call it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from functools import cached_property

import redis

from athena_core.wiring.embedded_redis import RedisLocation
from athena_core.wiring.redis_connection import redis_client, resolve_redis
from athena_core.wiring.settings import Settings
from athena_core.stm.stm_window import StmWindow
from athena_core.stores.blobs.local_blobs import LocalBlobs
from athena_core.providers.embeddings import CachedEmbedder
from athena_core.providers.factory import build_embedder, build_llm
from athena_core.providers.llm import LLMProvider
from athena_core.stores.documents.port import DocumentStore
from athena_core.stores.lexical.port import LexicalIndex
from athena_core.stores.vectors.port import VectorIndex

if TYPE_CHECKING:
    from athena_core.retrieval.evidence_index import EvidenceIndex
    from athena_core.stores.blobs.s3_blobs import S3Blobs
    from athena_core.ltm.extraction import TripleExtractor
    from athena_core.stores.graph.port import GraphStore


def build_documents(settings: Settings) -> DocumentStore:
    if settings.document_store == "mongo":
        from athena_core.stores.documents.mongo_documents import MongoDocuments

        return MongoDocuments.connect(settings.mongo_url, settings.mongo_database)
    from athena_core.stores.documents.sqlite_documents import SqliteDocuments

    return SqliteDocuments(settings.sqlite_path)


def build_vectors(settings: Settings, dimension: int, of: str = "chains") -> VectorIndex:
    """SQLite search by default (exact; approximate for a user past `vector_ann_min_rows`): every process
    (API, each worker) can open it (S9 numbers in docs).

    `of` = "chains" (one vector per chain) or "events" (one per consolidated event, for hybrid search):
    the same adapter, a second file or collection.
    """
    if settings.vector_store == "milvus":
        from athena_core.stores.vectors.milvus_vectors import MilvusVectors

        collection = settings.milvus_collection if of == "chains" else f"{settings.milvus_collection}_events"
        return MilvusVectors(settings.milvus_uri, dimension, collection=collection,
                             token=settings.milvus_token or None)
    from athena_core.stores.vectors.sqlite_vectors import SqliteVectors

    name = "vectors.sqlite3" if of == "chains" else "event_vectors.sqlite3"
    return SqliteVectors(settings.data_dir / name, dimension, ann_min_rows=settings.vector_ann_min_rows,
                         ann_nprobe=settings.vector_ann_nprobe)


def lexical_on_mongo(settings: Settings) -> bool:
    """A text index in MongoDB when MongoDB holds the events, unless `lexical_store` says otherwise (a
    MongoDB-wire server without text indexes: SQLite FTS5)."""
    return settings.lexical_store == "mongo" or (
        settings.lexical_store == "auto" and settings.document_store == "mongo")


def build_lexical(settings: Settings) -> LexicalIndex:
    """FTS5 beside the SQLite event log, or MongoDB's text index (`lexical_on_mongo`)."""
    if lexical_on_mongo(settings):
        from athena_core.stores.lexical.mongo_lexical import MongoLexical

        return MongoLexical.connect(settings.mongo_url, settings.mongo_database)
    from athena_core.stores.lexical.sqlite_lexical import SqliteLexical

    return SqliteLexical(settings.data_dir / "lexical.sqlite3", max_df=settings.search_lexical_max_df)


def build_graph(settings: Settings) -> "GraphStore":
    if settings.graph_store == "arango":
        from athena_core.stores.graph.arango_graph import ArangoGraph

        return ArangoGraph(settings.arango_url, settings.arango_username, settings.arango_password)
    from athena_core.stores.graph.sqlite_graph import SqliteGraph

    return SqliteGraph(settings.data_dir / "graph.sqlite3")


def build_extractor(settings: Settings, llm: LLMProvider) -> "TripleExtractor":
    if settings.llm_provider == "openai":
        from athena_core.ltm.extraction import OpenAITripleExtractor

        return OpenAITripleExtractor(llm)
    from athena_core.ltm.extraction import OfflineTripleExtractor

    return OfflineTripleExtractor(parser=settings.extraction_parser == "spacy")


def build_blobs(settings: Settings) -> "LocalBlobs | S3Blobs | None":
    if settings.blob_store == "s3":
        from athena_core.stores.blobs.s3_blobs import S3Blobs

        return S3Blobs(settings.s3_endpoint_url, settings.s3_bucket, settings.s3_access_key_id,
                       settings.s3_secret_access_key)
    if settings.blob_store == "local":
        return LocalBlobs(settings.data_dir / "blobs")
    return None


@dataclass
class Runtime:
    settings: Settings
    redis_location: RedisLocation
    redis: redis.Redis
    documents: DocumentStore
    stm: StmWindow
    blobs: "LocalBlobs | S3Blobs | None"

    @cached_property
    def embedder(self) -> CachedEmbedder:
        return build_embedder(self.settings)

    @cached_property
    def llm(self) -> LLMProvider:
        return build_llm(self.settings)

    @cached_property
    def vectors(self) -> VectorIndex:
        """Opened with the embedder's dimension; a mismatch with stored vectors fails here (S8)."""
        return build_vectors(self.settings, self.embedder.dimension)

    @cached_property
    def event_vectors(self) -> VectorIndex:
        return build_vectors(self.settings, self.embedder.dimension, of="events")

    @cached_property
    def lexical(self) -> LexicalIndex:
        return build_lexical(self.settings)

    @cached_property
    def evidence(self) -> "EvidenceIndex":
        from athena_core.retrieval.evidence_index import EvidenceIndex

        return EvidenceIndex(self.vectors, self.event_vectors, self.lexical, self.embedder,
                             sentence_min_words=self.settings.search_sentence_min_words)

    @cached_property
    def graph(self) -> "GraphStore":
        return build_graph(self.settings)

    @cached_property
    def extractor(self) -> "TripleExtractor":
        return build_extractor(self.settings, self.llm)  # the port carries structured(): nothing to unwrap

    def close(self) -> None:
        self.documents.close()
        self.redis.close()
        for lazy in ("vectors", "event_vectors", "lexical", "graph"):
            if lazy in self.__dict__:
                self.__dict__[lazy].close()


def build_runtime(settings: Settings) -> Runtime:
    location = resolve_redis(settings)
    client = redis_client(location)
    documents = build_documents(settings)
    blobs = build_blobs(settings)
    return Runtime(
        settings=settings,
        redis_location=location,
        redis=client,
        documents=documents,
        stm=StmWindow(client, documents, window=settings.stm_window, ttl_s=settings.stm_ttl_s),
        blobs=blobs,
    )
