"""Athena's Celery workers: the per-event pipeline (`chains/`), promotion and archival (`promote/`),
community analytics (`analytics/`). Start with `celery -A athena_tasks.app worker`."""
