"""Prometheus metrics for every stage (SPEC S10). One module so names stay consistent."""
from __future__ import annotations

from prometheus_client import Counter, Histogram

EVENTS_INGESTED = Counter("athena_events_ingested_total", "Events made durable", ["role", "type"])
INGEST_SECONDS = Histogram(
    "athena_ingest_seconds", "Durable write + STM push per request",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
)
STM_COALESCED = Counter("athena_stm_coalesced_total", "Observations coalesced into the head window slot")
STM_PUSH_FAILURES = Counter("athena_stm_push_failures_total", "STM pushes that failed (event stays durable)")
STM_REBUILDS = Counter("athena_stm_rebuilds_total", "STM windows rebuilt from the event log", ["source"])
PIPELINE_PUBLISH = Counter(
    "athena_pipeline_publish_total", "Pipeline run requests", ["outcome"]  # published|debounced|failed|swept
)
HTTP_REQUESTS = Counter("athena_http_requests_total", "HTTP requests", ["method", "route", "status"])
HTTP_SECONDS = Histogram("athena_http_request_seconds", "HTTP request latency", ["method", "route"])
TASK_RETRIES = Counter("athena_task_retries_total", "Celery task retries", ["task"])
DEAD_LETTERS = Counter("athena_dead_letters_total", "Tasks that exhausted their retries", ["task"])
LLM_CALLS = Counter(
    "athena_llm_calls_total", "LLM calls by outcome", ["provider", "purpose", "outcome"]
)  # outcome: ok|schema_error|unparseable|unavailable
LLM_TOKENS = Counter(
    "athena_llm_tokens_total", "LLM tokens used, per tenant (SPEC S8)", ["provider", "purpose", "kind", "tenant"]
)  # kind: prompt|completion
LLM_LATENCY = Histogram(
    "athena_llm_latency_seconds", "LLM call latency including retries", ["provider", "purpose"],
    buckets=(0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0),
)
LLM_SCHEMA_FAILURES = Counter(
    "athena_llm_schema_failures_total", "LLM replies that did not match the requested shape", ["purpose"]
)
LLM_RETRIES = Counter(
    "athena_llm_retries_total", "LLM HTTP attempts retried", ["provider", "purpose", "reason"]
)  # reason: rate_limited|server_error|timeout|connection
BREAK_DECISIONS = Counter("athena_segment_decisions_total", "Topic-break checks by path", ["path"])
FORMATION_OUTCOMES = Counter("athena_chain_formation_total", "Segments by outcome", ["outcome"])
EMBEDDING_CACHE = Counter("athena_embedding_cache_total", "Embedding cache lookups", ["result"])  # hit|miss
SEARCH_STAGE_SECONDS = Histogram(
    "athena_search_stage_seconds", "Time per stage of a hybrid search (SearchMemory, GetContext with a query)",
    ["stage"], buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
CHAINS_ACCESSED = Counter("athena_chains_accessed_total", "Chains returned to callers (S5.2 accesses)")
PROMOTIONS = Counter("athena_promotions_total", "Chains promoted into the knowledge graph")
GRAPH_WRITES = Counter("athena_graph_observations_total", "New edge observations written to the graph")
CHAINS_ARCHIVED = Counter("athena_chains_archived_total", "Chains archived")
EVENTS_INDEXED = Counter("athena_events_indexed_total", "Consolidated events indexed for search", ["path"])  # run|sweep
PURGE_FENCED_WRITES = Counter(
    "athena_purge_fenced_writes_total", "Task writes skipped because the user was purged after the task began",
    ["step"],
)
SWEEP_BAD_ROWS = Counter("athena_sweep_bad_rows_total", "Event-log rows a sweep skipped (ids form no scope)", ["sweep"])
SWEEP_SKIPPED_FAILED = Counter(
    "athena_sweep_skipped_failed_scopes_total", "Scopes a sweep left alone inside their failure backoff", ["sweep"]
)
ANALYTICS_RUNS = Counter("athena_analytics_runs_total", "Community analytics runs by outcome", ["outcome"])
EXTRACTION_RELATION_CORRECTIONS = Counter(
    "athena_extraction_relation_corrections_total",
    "Extracted relations outside the vocabulary, rewritten to RELATES_TO (original kept in the nuance)",
)
# The embedded default's per-user vector cache (stores/vectors/sqlite_vectors.py): how often a user's rows
# are copied (a replaced or removed row, or new rows that could not be appended in place: no spare room
# left, or the rows already extended by a newer version) and indexes built over them.
VECTOR_ROWS_COPIED = Counter(
    "athena_vector_cache_copies_total", "A user's cached vector rows copied into new rows", ["reason"],
)  # reason: replaced|removed|grown
VECTOR_INDEX_BUILDS = Counter(
    "athena_vector_index_builds_total", "Indexes built over a user's cached vectors", ["kind"],
)  # kind: exact|approximate
VECTOR_INDEX_BUILD_SECONDS = Counter(
    "athena_vector_index_build_seconds_total", "Thread time spent building those indexes", ["kind"],
)
