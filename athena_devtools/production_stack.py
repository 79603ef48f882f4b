"""The production topology without Docker (issue 17): server engines as private processes, many Athena processes.

    python -m athena_devtools.production_stack            # start it, print the URLs, Ctrl-C stops it all
    python -m athena_devtools.production_stack --broker rabbitmq --apis 2 --pipeline-workers 2

What it starts, in a work directory (fresh unless `--work-dir` names one you keep):

- engines: SecantusDB 0.7.0b3 (MongoDB-wire event log, sessions, chains; not MongoDB), Milvus 2.3.5
  standalone (chain and event vectors), a private Redis 7 `redis-server` (STM, locks, results and,
  by default, the broker); or the servers `--mongo-url` / `--milvus-uri` / `--redis-url` name;
- with `--broker rabbitmq`, Celery's broker is RabbitMQ (`--rabbitmq-url`, default the machine's
  amqp://guest:guest@127.0.0.1:5672) on a private vhost made with `rabbitmqctl` and removed on stop;
- Athena: N API processes (uvicorn, each on its own port), M pipeline workers (queue athena.pipeline,
  distinct node names), the beat-queue worker, beat, and Flower (its API open on loopback only).

Lexical search (SQLite FTS5) and the knowledge graph (SQLite) live in the shared work directory: there is
no ArangoDB server here, and SecantusDB has no text indexes (`ATHENA_LEXICAL_STORE=sqlite`). The settings
are the ones compose sets (`ATHENA_DOCUMENT_STORE`, `ATHENA_MONGO_URL`, `ATHENA_VECTOR_STORE`,
`ATHENA_MILVUS_URI`, `ATHENA_REDIS_URL`, `ATHENA_BROKER_URL`, …), see docs/deploy.md.
"""
from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx

from athena_core.wiring.settings import Settings
from athena_devtools.engine_servers import (
    EngineStartError, MilvusServerProcess, RedisServerProcess, SecantusServerProcess, free_port,
)
from athena_devtools.stack import Stack
from celeryconfig import BEAT_QUEUE, PIPELINE_QUEUE

log = logging.getLogger("athena.production_stack")

RABBITMQ_URL = "amqp://guest:guest@127.0.0.1:5672"


def _rabbitmqctl(*args: str) -> None:
    binary = shutil.which("rabbitmqctl")
    if binary is None:
        raise EngineStartError("rabbitmqctl not found: it makes the private vhost of this run")
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise EngineStartError(f"rabbitmqctl {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()}")


@dataclass
class RabbitVhost:
    """A vhost of its own on a shared RabbitMQ, so a run's queues never meet another run's workers."""

    base_url: str = RABBITMQ_URL
    name: str = field(default_factory=lambda: f"athena-{uuid.uuid4().hex[:8]}")
    created: bool = False

    @property
    def url(self) -> str:
        return f"{self.base_url.rstrip('/')}/{self.name}"

    def create(self) -> str:
        user = self.base_url.split("://", 1)[1].split(":", 1)[0]
        _rabbitmqctl("add_vhost", self.name)
        self.created = True
        _rabbitmqctl("set_permissions", "-p", self.name, user, ".*", ".*", ".*")
        return self.url

    def delete(self) -> None:
        if self.created:
            _rabbitmqctl("delete_vhost", self.name)
            self.created = False


class _Processes(Stack):
    """The embedded stack's process handling (spawn, logs, stop by process group), reused for many APIs
    and workers. Never starts an embedded Redis: the production settings name a server."""

    def start_api_on(self, name: str, port: int) -> None:
        self._spawn(name, [
            sys.executable, "-m", "uvicorn", "athena_api.app:create_app", "--factory",
            "--host", self.settings.api_host, "--port", str(port), "--log-level", "warning",
        ])

    def start_pipeline_worker(self, name: str, concurrency: int) -> None:
        self._spawn_worker(name, PIPELINE_QUEUE, concurrency, name)

    def start_beat_queue_worker(self, name: str = "beatjobs") -> None:
        self._spawn_worker(name, BEAT_QUEUE, self.beat_worker_concurrency, name)

    def stop(self, timeout_s: float = 15.0) -> None:
        """SIGTERM to every process group at once, then wait (SIGKILL what is left at the deadline): with
        seven processes, stopping them one after another took a minute."""
        for proc in self.processes.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + timeout_s
        for proc in self.processes.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        self.processes.clear()

    def start_flower(self, port: int) -> None:
        self.extra_env["FLOWER_UNAUTHENTICATED_API"] = "true"  # loopback only, for the harness's checks
        self._spawn("flower", [
            sys.executable, "-m", "celery", "-A", "athena_tasks.app", "flower",
            "--address=127.0.0.1", f"--port={port}",
        ])


@dataclass
class ProductionStack:
    work_dir: Path
    apis: int = 2
    pipeline_workers: int = 2
    pipeline_concurrency: int = 1
    broker: Literal["redis", "rabbitmq"] = "redis"
    rabbitmq_url: str = RABBITMQ_URL
    mongo_url: str | None = None  # external servers; unset → private ones in work_dir
    milvus_uri: str | None = None
    redis_url: str | None = None
    with_flower: bool = True
    with_beat: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)
    mongo_database: str = "athena"
    # filled by start()
    milvus: MilvusServerProcess | None = None
    secantus: SecantusServerProcess | None = None
    redis: RedisServerProcess | None = None
    vhost: RabbitVhost | None = None
    api_ports: list[int] = field(default_factory=list)
    flower_port: int = 0
    processes: _Processes | None = None

    # -- engines -------------------------------------------------------------------------------------
    def start_engines(self) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        if self.mongo_url is None:
            self.secantus = SecantusServerProcess(self.work_dir / "secantusdb").start()
        if self.milvus_uri is None:
            self.milvus = MilvusServerProcess(self.work_dir / "milvus").start()
        if self.redis_url is None:
            self.redis = RedisServerProcess(self.work_dir / "redis").start()
        if self.broker == "rabbitmq" and self.vhost is None:
            self.vhost = RabbitVhost(self.rabbitmq_url)
            self.vhost.create()

    @property
    def mongo(self) -> str:
        return self.mongo_url or self.secantus.url  # type: ignore[union-attr]

    @property
    def milvus_url(self) -> str:
        return self.milvus_uri or self.milvus.uri  # type: ignore[union-attr]

    @property
    def redis_location(self) -> str:
        return self.redis_url or self.redis.url  # type: ignore[union-attr]

    def env(self) -> dict[str, str]:
        """The settings every Athena process of the topology gets (the names compose uses)."""
        env = {
            "ATHENA_DATA_DIR": str((self.work_dir / "data").resolve()),
            "ATHENA_DOCUMENT_STORE": "mongo",
            "ATHENA_MONGO_URL": self.mongo,
            "ATHENA_MONGO_DATABASE": self.mongo_database,
            "ATHENA_LEXICAL_STORE": "sqlite",  # SecantusDB has no text indexes
            "ATHENA_VECTOR_STORE": "milvus",
            "ATHENA_MILVUS_URI": self.milvus_url,
            "ATHENA_GRAPH_STORE": "sqlite",  # no ArangoDB server here
            "ATHENA_REDIS_URL": self.redis_location,
        }
        if self.vhost is not None:
            env["ATHENA_BROKER_URL"] = self.vhost.url
        env.update(self.extra_env)
        return env

    def settings(self) -> Settings:
        """The same settings, as an object (the test process opens the stores with them)."""
        env = self.env()
        return Settings(**{k[len("ATHENA_"):].lower(): v for k, v in env.items() if k.startswith("ATHENA_")})

    # -- Athena processes ------------------------------------------------------------------------------
    def start(self, timeout_s: float = 120.0) -> "ProductionStack":
        try:
            self.start_engines()
            settings = self.settings()
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            procs = _Processes(settings=settings, extra_env=self.env(), log_dir=self.work_dir / "logs",
                               with_beat=self.with_beat)
            self.processes = procs
            procs.reset_metrics()
            self.api_ports = [free_port() for _ in range(self.apis)]
            for i, port in enumerate(self.api_ports, 1):
                procs.start_api_on(f"api{i}", port)
            for i in range(1, self.pipeline_workers + 1):
                procs.start_pipeline_worker(f"pipeline{i}", self.pipeline_concurrency)
            procs.start_beat_queue_worker()
            if self.with_beat:
                procs.start_beat()
            if self.with_flower:
                self.flower_port = free_port()
                procs.start_flower(self.flower_port)
            self.wait_ready(timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def api_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.api_ports]

    @property
    def flower_url(self) -> str:
        return f"http://127.0.0.1:{self.flower_port}"

    def wait_ready(self, timeout_s: float) -> None:
        """Every API answers its health check with every store up."""
        assert self.processes is not None
        deadline = time.monotonic() + timeout_s
        pending = set(self.api_urls)
        last = ""
        while pending and time.monotonic() < deadline:
            self.processes.assert_running()
            for url in list(pending):
                try:
                    response = httpx.get(url + "/api/v1/health", timeout=5.0)
                    last = response.text
                    if response.status_code == 200 and response.json().get("status") == "ok":
                        pending.discard(url)
                except httpx.HTTPError as exc:
                    last = str(exc)
            time.sleep(0.3)
        if pending:
            raise TimeoutError(f"APIs {sorted(pending)} not healthy within {timeout_s} s (last answer: {last})")

    def stop(self) -> None:
        """Athena's processes first, then the servers this stack started; each part even if one fails."""
        try:
            if self.processes is not None:
                self.processes.stop()
                self.processes = None
        finally:
            for server in (self.milvus, self.secantus, self.redis):
                if server is not None:
                    server.stop()
        if self.vhost is not None:
            try:
                self.vhost.delete()
            except EngineStartError as exc:
                log.warning("could not delete RabbitMQ vhost %s: %s", self.vhost.name, exc)

    def __enter__(self) -> "ProductionStack":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work-dir", type=Path, help="kept after stop (default: a fresh temporary directory, removed)")
    parser.add_argument("--apis", type=int, default=2)
    parser.add_argument("--pipeline-workers", type=int, default=2)
    parser.add_argument("--broker", choices=["redis", "rabbitmq"], default="redis")
    parser.add_argument("--rabbitmq-url", default=RABBITMQ_URL)
    parser.add_argument("--mongo-url", help="use this MongoDB-wire server instead of a private SecantusDB")
    parser.add_argument("--milvus-uri", help="use this Milvus server instead of a private one")
    parser.add_argument("--redis-url", help="use this Redis instead of a private redis-server")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    work_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="athena-production-"))
    stack = ProductionStack(work_dir, apis=args.apis, pipeline_workers=args.pipeline_workers, broker=args.broker,
                            rabbitmq_url=args.rabbitmq_url, mongo_url=args.mongo_url, milvus_uri=args.milvus_uri,
                            redis_url=args.redis_url)
    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)  # `kill PID` stops everything too, as Ctrl-C does
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background by a shell
        signal.signal(signal.SIGINT, interrupted)
    try:
        stack.start()
        print(f"APIs:    {' '.join(stack.api_urls)}")
        print(f"Flower:  {stack.flower_url}")
        for key, value in stack.env().items():
            print(f"{key}={value}")
        print(f"logs:    {work_dir / 'logs'}   (Ctrl-C stops everything)", flush=True)
        while True:
            stack.processes.assert_running()  # type: ignore[union-attr]
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not leave servers running
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stack.stop()
        if args.work_dir is None:
            shutil.rmtree(work_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
