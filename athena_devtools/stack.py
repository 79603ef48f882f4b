"""Runs the embedded default as processes: embedded Redis, the API (uvicorn), two Celery workers (`worker`
on the pipeline queue, `beat-jobs` on the beat queue) and beat.

Used by `athena run`, `athena demo` and the end-to-end tests, so all three start the stack one way.
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from athena_core.wiring.embedded_redis import answers, ensure_embedded_redis, socket_path, stop_embedded_redis
from athena_core.wiring.settings import Settings
from celeryconfig import BEAT_QUEUE, PIPELINE_QUEUE, WORKER_OPTIONS

log = logging.getLogger("athena.stack")


@dataclass
class _Restarts:
    """Supervision state of one process: restarts in the current streak, when the next is due."""

    count: int = 0
    started_at: float = 0.0
    due_at: float | None = None


@dataclass
class Stack:
    settings: Settings
    worker_concurrency: int = 2
    beat_worker_concurrency: int = 2
    with_beat: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)
    log_dir: Path | None = None
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    owns_redis: bool = False
    starters: dict[str, Callable[[], object]] = field(default_factory=dict)  # how to (re)start each process
    restarts: dict[str, _Restarts] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return self.url()

    def url(self, port: int | None = None) -> str:
        """The API's address; `port`: another API process started beside it (`start_api(name, port)`)."""
        return f"http://{self.settings.api_host}:{port or self.settings.api_port}"

    def env(self) -> dict[str, str]:
        env = {**os.environ, **self.extra_env}
        env["ATHENA_DATA_DIR"] = str(self.settings.data_dir.resolve())
        env["ATHENA_API_HOST"] = self.settings.api_host
        env["ATHENA_API_PORT"] = str(self.settings.api_port)
        if self.settings.redis_url:
            env["ATHENA_REDIS_URL"] = self.settings.redis_url
        self.metrics_dir.mkdir(parents=True, exist_ok=True)
        env["PROMETHEUS_MULTIPROC_DIR"] = str(self.metrics_dir)
        return env

    @property
    def metrics_dir(self) -> Path:
        """Shared by every process of the stack so the API's /metrics shows the workers' counters too."""
        return self.settings.data_dir.resolve() / "metrics"

    def reset_metrics(self) -> None:
        """Multiprocess metric files of a previous run would be summed in: start from none."""
        shutil.rmtree(self.metrics_dir, ignore_errors=True)
        self.metrics_dir.mkdir(parents=True)

    def start_redis(self) -> None:
        if not self.settings.redis_url:
            location = ensure_embedded_redis(self.settings.data_dir)
            self.settings = self.settings.model_copy(update={"redis_url": location.redis_url})
            self.owns_redis = True

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log_dir = self.log_dir or self.settings.data_dir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        with open(log_dir / f"{name}.log", "ab") as out:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(args, env=self.env(), stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.processes[name] = proc
        self.starters[name] = lambda: self._spawn(name, args)
        self.restarts.setdefault(name, _Restarts()).started_at = time.monotonic()
        return proc

    # -- supervision (SPEC S7: the embedded stack restarts a crashed process) ------------------------
    def _backoff(self, restarts: int) -> float:
        s = self.settings
        return min(s.supervise_backoff_s * 2 ** restarts, s.supervise_backoff_max_s)

    def supervise(self) -> list[str]:
        """One supervision step (`athena run` calls it every half second); returns what it did.

        A process that exited is restarted after a backoff (`supervise_backoff_s` doubling per restart up
        to `supervise_backoff_max_s`; the streak resets once the process has stayed up
        `supervise_stable_s`), and each restart is logged. The embedded Redis, when this stack started
        it, is health-checked (one PING, no retries) and restarted the same way: workers, beat and the
        API reconnect to the same socket by themselves.
        """
        now = time.monotonic()
        done: list[str] = []
        if self.owns_redis:
            done += self._supervise_redis(now)
        for name, proc in list(self.processes.items()):
            state = self.restarts.setdefault(name, _Restarts(started_at=now))
            code = proc.poll()
            if code is None:
                if state.count and now - state.started_at >= self.settings.supervise_stable_s:
                    state.count = 0
                continue
            done += self._schedule_or_restart(name, f"exited with {code}", state, now,
                                              lambda n=name, p=proc: self._respawn(n, p))
        return done

    def _supervise_redis(self, now: float) -> list[str]:
        state = self.restarts.setdefault("redis", _Restarts(started_at=now))
        if state.due_at is None and answers(socket_path(self.settings.data_dir)):
            if state.count and now - state.started_at >= self.settings.supervise_stable_s:
                state.count = 0
            return []
        return self._schedule_or_restart("redis", "does not answer", state, now,
                                         lambda: ensure_embedded_redis(self.settings.data_dir))

    def _schedule_or_restart(self, name: str, why: str, state: _Restarts, now: float,
                             restart: Callable[[], object]) -> list[str]:
        if state.due_at is None:
            delay = self._backoff(state.count)
            state.count += 1
            state.due_at = now + delay
            message = f"{name} {why}; restarting in {delay:g} s (restart {state.count})"
            log.warning(message)
            return [message]
        if now < state.due_at:
            return []
        state.due_at = None
        try:
            restart()
        except Exception as exc:  # noqa: BLE001 - try again after the next backoff
            log.error("restarting %s failed: %s", name, exc)
            return [f"restarting {name} failed: {exc}"]
        state.started_at = time.monotonic()
        log.warning("%s restarted (restart %d)", name, state.count)
        return [f"{name} restarted"]

    def _respawn(self, name: str, old: subprocess.Popen) -> None:
        """Start the process again; first kill what is left of the old one's group (pool children)."""
        try:
            os.killpg(old.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.starters[name]()

    def start_api(self, name: str = "api", port: int | None = None) -> None:
        """uvicorn, with `ATHENA_API_WORKERS` processes on one socket. They share the data dir: SQLite in WAL
        with a busy timeout queues their commits (one group-commit writer per process), and the embedded
        Redis is this supervisor's (`start_redis` runs first and passes its socket as ATHENA_REDIS_URL),
        so no worker starts one of its own. `name` and `port`: another API process beside the first."""
        workers = max(1, self.settings.api_workers)
        self._spawn(name, [
            sys.executable, "-m", "uvicorn", "athena_api.app:create_app", "--factory",
            "--host", self.settings.api_host, "--port", str(port or self.settings.api_port), "--log-level", "warning",
            *(["--workers", str(workers)] if workers > 1 else []),
        ])

    def _spawn_worker(self, name: str, queue: str, concurrency: int, node: str) -> None:
        """A Celery worker of `queue`, node `node@host`, started with `celeryconfig.WORKER_OPTIONS` (as
        compose starts its workers)."""
        self._spawn(name, [
            sys.executable, "-m", "celery", "-A", "athena_tasks.app", "worker",
            "-Q", queue, "-c", str(concurrency), "-n", f"{node}@%h", *WORKER_OPTIONS,
        ])

    def start_worker(self, name: str = "worker") -> None:
        """The pipeline worker: consumes `athena.pipeline` only (the beat jobs have their own worker)."""
        self._spawn_worker(name, PIPELINE_QUEUE, self.worker_concurrency, name)

    def start_beat_worker(self, name: str = "beat-jobs") -> None:
        """The beat jobs' worker (issue 13): consumes `athena.beat` only (promotion per user, archive, sweeps,
        analytics), so a pipeline backlog never delays them and they never take a pipeline slot. Two
        processes: one slow tenant's promotion holds one of them, never the whole queue."""
        self._spawn_worker(name, BEAT_QUEUE, self.beat_worker_concurrency, name.replace("-", ""))

    def start_beat(self) -> None:
        self._spawn("beat", [
            sys.executable, "-m", "celery", "-A", "athena_tasks.app", "beat", "-l", "info",
            "-s", str(self.settings.data_dir.resolve() / "celerybeat-schedule"),
        ])

    def start(self, timeout_s: float = 60.0) -> None:
        from athena_core.providers.factory import prepare_embedder

        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.reset_metrics()
        prepare_embedder(self.settings)  # the model's one-time export here, not in the API and worker at once
        self.open_files_once()
        self.start_redis()
        self.start_api()
        self.start_worker()
        self.start_beat_worker()  # also without the scheduler: the API and operators send beat-queue tasks
        if self.with_beat:
            self.start_beat()
        self.wait_for_api(timeout_s)

    def open_files_once(self) -> None:
        """Open the embedded default's document and lexical files here first: a file of an older layout is
        moved on open (chains to a rowid table, the lexical index's layouts), and done here it is done once,
        before the API and the workers open the file together and wait on its lock meanwhile."""
        from athena_core.wiring.runtime import build_documents, build_lexical, lexical_on_mongo

        if self.settings.document_store == "sqlite":
            build_documents(self.settings).close()
        if not lexical_on_mongo(self.settings):
            build_lexical(self.settings).close()

    def wait_for_api(self, timeout_s: float = 60.0, name: str = "api", port: int | None = None) -> None:
        """Until the API process `name` (on `port`, default the settings' one) answers /health."""
        base_url = self.url(port)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            api = self.processes.get(name)
            if api is not None and api.poll() is not None:
                raise RuntimeError(f"{name} exited with {api.returncode}; see {self.settings.data_dir}/logs/{name}.log")
            try:
                if httpx.get(base_url + "/health", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"{name} did not answer on {base_url} within {timeout_s} s")

    def assert_running(self) -> None:
        """Raise with the log tail of any process that exited, instead of waiting for a timeout."""
        for name, proc in self.processes.items():
            if proc.poll() is not None:
                log = (self.log_dir or self.settings.data_dir / "logs") / f"{name}.log"
                tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail}")

    def stop_process(self, name: str, sig: int = signal.SIGTERM, timeout_s: float = 15.0) -> None:
        proc = self.processes.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def stop(self) -> None:
        for name in list(self.processes):
            self.stop_process(name)
        if self.owns_redis:
            stop_embedded_redis(self.settings.data_dir)
            self.owns_redis = False

    def __enter__(self) -> "Stack":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
