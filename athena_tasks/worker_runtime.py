"""One `Runtime` per worker process, built on first use (after a prefork child is forked)."""
from __future__ import annotations

from celery.signals import worker_process_init

from athena_core.wiring.runtime import Runtime, build_runtime
from athena_core.wiring.settings import get_settings

_runtime: Runtime | None = None


def get_runtime() -> Runtime:
    global _runtime
    if _runtime is None:
        _runtime = build_runtime(get_settings())
    return _runtime


def set_runtime(runtime: Runtime | None) -> None:
    """Tests inject the runtime their worker should use."""
    global _runtime
    _runtime = runtime


@worker_process_init.connect
def _fresh_runtime_after_fork(**_: object) -> None:
    # Connections inherited across fork are not safe to share with the parent.
    set_runtime(None)
