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
