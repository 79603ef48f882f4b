"""Issue 12 item 8: `athena run` restarts what crashes (SPEC S7), as a user runs it.

`python -m athena_devtools.cli run` as a subprocess on a fresh data dir; its Celery worker and its embedded
redis-server are SIGKILLed; both must come back (logged, with backoff), and an event posted afterwards
must consolidate. Also the supervisor's backoff on a Stack directly, and the fail-fast health check.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

from athena_client.client import AthenaClient
from athena_core.wiring.embedded_redis import answers, socket_path
from athena_core.models.events import EventStatus
from athena_core.models.scope import AgentScope
from athena_core.wiring.settings import Settings
from athena_devtools.stack import Stack
from athena_core.stores.documents.sqlite_documents import SqliteDocuments
from tests.pipeline.test_durability import free_port


def _wait(predicate, timeout_s: float, what: str, proc: subprocess.Popen | None = None, log: Path | None = None):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"`athena run` exited with {proc.returncode} waiting for {what}:\n"
                                 + (log.read_text(errors="replace")[-3000:] if log else ""))
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}:\n"
                                 + (log.read_text(errors="replace")[-3000:] if log else ""))
        time.sleep(0.1)


def _worker_pid(cli: subprocess.Popen, node: str = "worker@%h") -> int | None:
    """The pipeline worker (`-n worker@%h`); the beat-jobs worker (`beatjobs@%h`) is another process."""
    for child in psutil.Process(cli.pid).children():
        try:
            if node in child.cmdline() and child.status() != psutil.STATUS_ZOMBIE:
                return child.pid
        except psutil.NoSuchProcess:
            continue
    return None


def _api_pid(cli: subprocess.Popen) -> int:
    return next(c.pid for c in psutil.Process(cli.pid).children() if "uvicorn" in c.cmdline())


def _priority(pid: int) -> tuple[int, int | None]:
    """(niceness, niceness of its scheduling group); the group's is None on kernels without autogroup."""
    group = Path(f"/proc/{pid}/autogroup")
    words = group.read_text().split() if group.exists() else []  # empty in the root group
    group_nice = int(words[-1]) if words else None
    return psutil.Process(pid).nice(), group_nice


def _redis_pid(data_dir: Path) -> int | None:
    try:
        pid = int((data_dir / "redis.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if psutil.pid_exists(pid) and answers(socket_path(data_dir)) else None


def test_athena_run_restarts_a_killed_worker_and_redis(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "ATHENA_REDIS_URL"}  # the stack must own its Redis
    env.update({
        "ATHENA_DATA_DIR": str(data_dir), "ATHENA_API_PORT": str(port),
        "ATHENA_SUPERVISE_BACKOFF_S": "0.5", "ATHENA_IDLE_FLUSH_EVERY_S": "1", "ATHENA_SEGMENT_IDLE_S": "1",
        "ATHENA_PENDING_SWEEP_EVERY_S": "2", "ATHENA_PENDING_SWEEP_AGE_S": "1",
    })
    log = tmp_path / "athena-run.log"
    with open(log, "wb") as out:
        cli = subprocess.Popen([sys.executable, "-m", "athena_devtools.cli", "run"], env=env, stdout=out,
                               stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    children: set[int] = set()
    try:
        _wait(lambda: _health(base), 90, "the API", cli, log)
        worker = _wait(lambda: _worker_pid(cli), 30, "the worker", cli, log)
        children.add(worker)
        # background work runs below the API's CPU priority (ATHENA_WORKER_NICE, 10 by default), in its
        # scheduling group too, and its prefork children inherit it; the API keeps the default
        grouped = Path("/proc/self/autogroup").exists()  # a kernel with autogroup scheduling
        lowered, default = (10, 10 if grouped else None), (0, 0 if grouped else None)
        _wait(lambda: _priority(worker) == lowered, 30, "the worker's lower CPU priority", cli, log)
        pool = _wait(lambda: psutil.Process(worker).children(), 60, "the worker's prefork children", cli, log)
        assert {_priority(c.pid) for c in pool} == {lowered}
        assert _priority(_api_pid(cli)) == default

        os.kill(worker, signal.SIGKILL)
        new_worker = _wait(lambda: (p := _worker_pid(cli)) not in (None, worker) and p, 30, "a new worker", cli, log)
        children.add(new_worker)
        assert "worker exited with -9; restarting in 0.5 s (restart 1)" in log.read_text()

        # The beat queue has its own worker (issue 13): killed, it comes back the same way (the idle flush
        # that consolidates the events below runs on it).
        beat_jobs = _wait(lambda: _worker_pid(cli, "beatjobs@%h"), 30, "the beat-jobs worker", cli, log)
        children.add(beat_jobs)
        assert beat_jobs != new_worker
        os.kill(beat_jobs, signal.SIGKILL)
        children.add(_wait(lambda: (p := _worker_pid(cli, "beatjobs@%h")) not in (None, beat_jobs) and p, 30,
                           "a new beat-jobs worker", cli, log))
        assert "beat-jobs exited with -9; restarting in 0.5 s (restart 1)" in log.read_text()

        old_redis = _wait(lambda: _redis_pid(data_dir), 5, "the embedded redis pid")
        os.kill(old_redis, signal.SIGKILL)
        killed_at = time.monotonic()
        new_redis = _wait(lambda: (p := _redis_pid(data_dir)) not in (None, old_redis) and p, 30,
                          "the embedded redis to come back", cli, log)
        redis_back_s = time.monotonic() - killed_at
        children.add(new_redis)
        assert "redis does not answer; restarting in 0.5 s (restart 1)" in log.read_text()
        assert redis_back_s < 10, redis_back_s
        print(f"embedded redis back {redis_back_s:.2f} s after SIGKILL")

        scope = AgentScope(tenant_id="t-supervised", user_id="u1", agent_id="a1")
        documents = SqliteDocuments(data_dir / "athena.sqlite3")
        with AthenaClient(base) as client:
            session_id = client.create_session(scope.tenant_id, scope.user_id, scope.agent_id)
            ids = client.store_interaction(session_id, "After the crashes I moved the blog to Hugo.",
                                           "Hugo builds fast; noted.")
            _wait(lambda: all(e.status == EventStatus.consolidated for e in documents.get_events(scope.user_scope, ids)),
                  180, "the post-crash events to consolidate", cli, log)
        documents.close()
        assert cli.poll() is None, "`athena run` must keep running through the crashes"
    finally:
        if cli.poll() is None:
            children |= {c.pid for c in psutil.Process(cli.pid).children()}
            cli.send_signal(signal.SIGTERM)
            try:
                cli.wait(60)
            except subprocess.TimeoutExpired:
                cli.kill()
                cli.wait()
        for pid in children:  # only what this test started, by pid
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        redis_pid = _redis_pid(data_dir)
        if redis_pid:
            os.kill(redis_pid, signal.SIGKILL)


def _health(base: str) -> bool:
    try:
        return httpx.get(base + "/health", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


class _Exited:
    """A stand-in for a Popen that has exited with -9 (the supervisor only polls it)."""

    pid = 2 ** 22 + 12345  # no such process group: the old group's cleanup is a no-op
    returncode = -9

    def poll(self) -> int:
        return -9


def test_supervise_backs_off_exponentially_and_resets_after_a_stable_run(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", redis_url="redis://unused", supervise_backoff_s=0.05,
                        supervise_backoff_max_s=0.2, supervise_stable_s=0.3)
    stack = Stack(settings)
    started: list[float] = []

    def start() -> None:
        started.append(time.monotonic())
        stack.processes["worker"] = _Exited()
        stack.restarts["worker"].started_at = time.monotonic()

    stack.processes["worker"] = _Exited()
    stack.starters["worker"] = start
    stack.supervise()  # notices the exit, schedules restart 1
    messages: list[str] = []
    deadline = time.monotonic() + 5
    while len(started) < 5 and time.monotonic() < deadline:
        messages += stack.supervise()
        time.sleep(0.005)
    delays = [f"restarting in {d:g} s" for d in (0.1, 0.2, 0.2, 0.2)]
    assert [m for m in messages if "restarting in" in m][:4] == [f"worker exited with -9; {d} (restart {n})"
                                                                 for n, d in zip(range(2, 6), delays)]
    gaps = [b - a for a, b in zip(started, started[1:])]
    assert gaps[0] >= 0.09 and all(g >= 0.19 for g in gaps[1:]) and all(g < 1 for g in gaps), gaps

    class _Running:
        pid = _Exited.pid

        def poll(self) -> None:
            return None

    stack.processes["worker"] = _Running()
    stack.restarts["worker"].started_at = time.monotonic()
    time.sleep(0.35)
    stack.supervise()
    assert stack.restarts["worker"].count == 0  # up for supervise_stable_s: the next crash waits 0.05 s again


def test_health_check_on_a_stale_socket_fails_fast(tmp_path: Path) -> None:
    path = tmp_path / "redis.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))  # a socket file nobody listens on, as a killed redis-server leaves it
    started = time.perf_counter()
    assert not answers(path)
    assert time.perf_counter() - started < 0.5  # was 2.2–4.1 s: redis-py's 10 retries with backoff
