"""The data directory's embedded Redis on its Unix socket (as `make run` and the fault runs have it), with a
SIGKILL: for the tests of kombu's Redis transport during an outage (athena_tasks/kombu_redis_outage.py)."""
from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from athena_core.wiring.embedded_redis import answers, ensure_embedded_redis, socket_path, stop_embedded_redis
from tests.pipeline.waiting import wait_until


@pytest.fixture
def embedded_redis(tmp_path: Path) -> Iterator[tuple[str, Callable[[], None]]]:
    """The broker URL kombu uses, and a SIGKILL of the server that returns once it no longer answers."""
    location = ensure_embedded_redis(tmp_path)
    pid = int((tmp_path / "redis.pid").read_text().strip())

    def kill() -> None:
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not answers(socket_path(tmp_path)), timeout_s=10)

    yield location.celery_url, kill
    stop_embedded_redis(tmp_path)
