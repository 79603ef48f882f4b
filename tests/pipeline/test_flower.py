"""Flower (issue 6 item 4): started like `make flower` against the embedded stack's broker, with basic
auth, it lists the workers (issue 13: the pipeline worker and the beat-jobs worker, one queue each) and a
finished task on its HTTP API."""
from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from celery import Celery

from athena_core.wiring.embedded_redis import location_from_url
from athena_core.wiring.settings import Settings
from athena_devtools.stack import Stack
from athena_devtools.engine_servers import free_port

FLOWER_USER, FLOWER_PASSWORD = "ops", "flower-test-password"


def _wait(what: str, check, timeout_s: float, alive) -> object:  # noqa: ANN001
    deadline = time.monotonic() + timeout_s
    last_error: object = None
    while time.monotonic() < deadline:
        alive()
        try:
            value = check()
            if value:
                return value
        except (httpx.HTTPError, ValueError) as exc:
            last_error = exc
        time.sleep(0.5)
    raise AssertionError(f"{what} within {timeout_s} s (last error: {last_error!r})")


def test_flower_lists_the_worker_and_a_finished_task(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", redis_url=None)
    stack = Stack(settings, worker_concurrency=1, with_beat=False)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    token = base64.b64encode(f"{FLOWER_USER}:{FLOWER_PASSWORD}".encode()).decode()
    auth = {"Authorization": f"Basic {token}"}
    flower: subprocess.Popen | None = None
    sender: Celery | None = None
    flower_log = tmp_path / "flower.log"
    try:
        stack.start_redis()
        stack.start_worker("worker")
        stack.start_beat_worker()
        env = {k: v for k, v in stack.env().items() if not k.startswith("FLOWER_")}
        env["FLOWER_BASIC_AUTH"] = f"{FLOWER_USER}:{FLOWER_PASSWORD}"  # as in compose; not on the command line
        with open(flower_log, "wb") as log:
            flower = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "athena_tasks.app", "flower",
                 "--address=127.0.0.1", f"--port={port}"],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )

        def alive() -> None:
            stack.assert_running()
            if flower.poll() is not None:
                raise AssertionError(f"flower exited with {flower.returncode}:\n{flower_log.read_text()[-3000:]}")

        _wait("flower did not answer /healthcheck",
              lambda: httpx.get(base + "/healthcheck", timeout=2).status_code == 200, 90, alive)
        assert httpx.get(base + "/api/workers", timeout=10).status_code == 401  # basic auth is on

        def worker_listed() -> dict | None:
            response = httpx.get(base + "/api/workers", params={"refresh": "1"}, headers=auth, timeout=15)
            response.raise_for_status()
            workers = response.json()
            listed = {name.split("@")[0] for name in workers}
            return workers if {"worker", "beatjobs"} <= listed else None

        workers = _wait("the workers never appeared in /api/workers", worker_listed, 120, alive)

        def queues_of(prefix: str) -> tuple[str, set[str]]:
            [(node, info)] = [(n, i) for n, i in workers.items() if n.startswith(prefix)]
            return node, {q["name"] for q in info.get("active_queues") or []}

        assert queues_of("worker@")[1] == {"athena.pipeline"}  # the pipeline worker consumes only its queue
        name, beat_queues = queues_of("beatjobs@")
        assert beat_queues == {"athena.beat"}  # ... and the beat jobs have their own worker

        # A fresh Celery app on the stack's broker (this process's own app points at the test session's Redis).
        sender = Celery("flower-probe", broker=location_from_url(stack.settings.redis_url).celery_url)
        task_id = sender.send_task("athena.beat.pending_sweep", queue="athena.beat").id

        def task_succeeded() -> dict | None:
            response = httpx.get(base + "/api/tasks", headers=auth, timeout=10)
            response.raise_for_status()
            task = response.json().get(task_id)
            return task if task and task.get("state") == "SUCCESS" else None

        task = _wait("the task never showed as SUCCESS in /api/tasks", task_succeeded, 120, alive)
        assert task["name"] == "athena.beat.pending_sweep"
        assert task["worker"] == name
        assert "scopes_enqueued" in (task.get("result") or "")
    finally:
        if sender is not None:
            sender.close()
        if flower is not None and flower.poll() is None:
            os.killpg(flower.pid, signal.SIGTERM)
            try:
                flower.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(flower.pid, signal.SIGKILL)
                flower.wait()
        stack.stop()
