"""Ingest benchmark (SPEC S9): StoreEvent over HTTP on loopback vs the same write done directly.

    python bench/ingest.py            # 20k events at 1, 8 and 32 concurrent clients
    python bench/ingest.py --quick    # 2k events at 1 and 8 clients
    ATHENA_REDIS_URL=redis://127.0.0.1:6379/14 python bench/ingest.py   # also against that Redis

For each Redis (the embedded default, and ATHENA_REDIS_URL when set) it starts the real stack as
separate processes with `Stack` (embedded Redis or the given URL, the API under uvicorn, one Celery
worker so the debounced pipeline publish and its consumer are real) in a temporary ATHENA_DATA_DIR on a
free 127.0.0.1 port. Then, per concurrency N:

  1. baseline: in this process, in one thread, the same durable write (`SqliteDocuments.append_events`
     of one Event, a fresh SQLite file in the temp dir) + STM push (`StmWindow.push`, the Lua script)
     against the same Redis, `--events` times -> baseline events/s;
  2. HTTP: N asyncio tasks sharing one `httpx.AsyncClient`, one session (one agent scope) per task,
     POST /api/v1/sessions/{id}/events until `--events` requests were sent in total; every answer must
     be 201 -> events/s, p50/p99 latency, errors, and ratio_to_direct = http / baseline events/s.
  3. wait (bounded) for the worker to drain the pipeline queue, so the next configuration starts quiet.

One JSON line per configuration goes to stdout (progress to stderr), and the run's records are written
to bench/results/ingest-<UTC timestamp>.json. Every loop ends by count; all traffic is on 127.0.0.1
(a non-loopback ATHENA_REDIS_URL is refused unless --allow-remote-redis). The stack is stopped and the
temp dir removed in `finally`; keys written to an external Redis under this run's tenant are deleted.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
import redis  # noqa: E402

from common import REPO_ROOT, emit, free_port, log, machine_info, percentile, save_results, utc_stamp  # noqa: E402

from athena_core.wiring.embedded_redis import location_from_url  # noqa: E402
from athena_core.ids import new_id  # noqa: E402
from athena_core.models.events import Event, EventRole, EventType, utc_now  # noqa: E402
from athena_core.models.scope import AgentScope  # noqa: E402
from athena_core.wiring.redis_connection import redis_client  # noqa: E402
from athena_core.wiring.settings import Settings  # noqa: E402
from athena_devtools.stack import Stack  # noqa: E402
from athena_core.stm.stm_window import StmWindow  # noqa: E402
from athena_core.stores.documents.sqlite_documents import SqliteDocuments  # noqa: E402

BENCH = "ingest"
PIPELINE_QUEUE = "athena.pipeline"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# ~200 characters of plausible chat text; the event number is appended so rows differ.
CONTENT = (
    "The deploy of the billing service failed again on the staging cluster; the migration step timed "
    "out after 300 s while holding the lock on invoices. Retry with a smaller batch size and page the "
    "on-call if it fails twice. "
)[:200]


# ------------------------------------------------------------------------------------------ helpers
def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def scrape_metrics(client: httpx.Client) -> dict[str, float]:
    """The API's own counters (Prometheus text): publishes, debounces and in-handler ingest time."""
    wanted = {
        'athena_pipeline_publish_total{outcome="published"}': "published",
        'athena_pipeline_publish_total{outcome="debounced"}': "debounced",
        'athena_pipeline_publish_total{outcome="failed"}': "publish_failed",
        "athena_stm_push_failures_total": "stm_push_failures",
        "athena_ingest_seconds_sum": "ingest_seconds_sum",
        "athena_ingest_seconds_count": "ingest_seconds_count",
    }
    out = {v: 0.0 for v in wanted.values()}
    try:
        text = client.get("/metrics", timeout=5.0).text
    except httpx.HTTPError:
        return out
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        if name in wanted:
            out[wanted[name]] = float(value)
    return out


def wait_for_worker(stack: Stack, name: str, timeout_s: float) -> bool:
    """True once the Celery worker logged `ready.` (bounded); False if it died or never got there."""
    log_path = (stack.log_dir or stack.settings.data_dir / "logs") / f"{name}.log"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        proc = stack.processes.get(name)
        if proc is None or proc.poll() is not None:
            return False
        if log_path.exists() and re.search(r"\bready\.", log_path.read_text(errors="replace")):
            return True
        time.sleep(0.2)
    return False


def worker_alive(stack: Stack, name: str = "worker") -> bool:
    proc = stack.processes.get(name)
    return proc is not None and proc.poll() is None


def wait_for_pipeline_drain(r: redis.Redis, tenant: str, timeout_s: float) -> tuple[bool, float]:
    """Wait until the pipeline queue is empty and no run request of this tenant is outstanding."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        queued = r.llen(PIPELINE_QUEUE)
        flags = next(iter(r.scan_iter(match=f"pipeline:requested:{tenant}:*", count=1000)), None)
        if queued == 0 and flags is None:
            return True, round(time.monotonic() - started, 2)
        time.sleep(0.25)
    return False, round(time.monotonic() - started, 2)


def delete_tenant_keys(r: redis.Redis, tenant_prefix: str) -> int:
    deleted = 0
    for pattern in (f"*{tenant_prefix}*",):  # stm:, pipeline:requested:, scope locks … of this run's tenant
        batch = list(r.scan_iter(match=pattern, count=1000))
        for i in range(0, len(batch), 500):
            deleted += r.delete(*batch[i:i + 500])
    return deleted


def _queued_scope_key(raw: bytes) -> str:
    """The scope key a queued kombu message runs the pipeline for ('' if it is not a pipeline run)."""
    try:
        message = json.loads(raw)
        args = json.loads(base64.b64decode(message["body"]))[0]
    except (ValueError, KeyError, IndexError, TypeError):
        return ""
    if not args:
        return ""
    first = args[0]  # coalesce takes the scope key; later steps take a batch dict carrying it
    return str(first.get("scope", "")) if isinstance(first, dict) else str(first)


def purge_queued_runs(r: redis.Redis, tenant_prefix: str) -> int:
    """Remove this run's pipeline messages still queued (no worker consumed them); others' stay."""
    removed = 0
    for raw in r.lrange(PIPELINE_QUEUE, 0, -1):
        if _queued_scope_key(raw).startswith(tenant_prefix):
            removed += r.lrem(PIPELINE_QUEUE, 1, raw)
    return removed


def delete_task_results(r: redis.Redis, tenant_prefix: str) -> int:
    """Celery result-backend entries of this run's pipeline steps (they would expire after an hour)."""
    needle = tenant_prefix.encode()  # "bench-<run id>": unique to this run
    mine = [k for k in r.scan_iter(match="celery-task-meta-*", count=1000) if needle in (r.get(k) or b"")]
    return r.delete(*mine) if mine else 0


def kombu_keys(r: redis.Redis) -> set[bytes]:
    keys = set(r.scan_iter(match="_kombu.binding*", count=1000))
    return keys | ({PIPELINE_QUEUE.encode()} if r.exists(PIPELINE_QUEUE) else set())


def worker_log_tail(stack: Stack, name: str, lines: int = 5) -> str:
    path = (stack.log_dir or stack.settings.data_dir / "logs") / f"{name}.log"
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


# ----------------------------------------------------------------------------------------- baseline
def run_direct(sqlite_path: Path, redis_url: str, tenant: str, events: int, scopes: int, warmup: int) -> dict:
    """The floor the API adds to: one durable append + one Lua push per event, one thread, no HTTP.

    Builds the `Event` the way `Ingest.store` does (new id, received_at now) so model construction is
    on both sides; the pipeline run request (one SET NX per request, plus a publish per scope run) is
    only on the HTTP side, as the issue asks.
    """
    documents = SqliteDocuments(sqlite_path)
    client = redis_client(location_from_url(redis_url))
    stm = StmWindow(client, documents)
    agent_scopes = [AgentScope(tenant_id=tenant, user_id=f"direct-{i}") for i in range(scopes)]
    metadata = {"bench": "ingest", "client": "direct"}

    def one(n: int) -> None:
        scope = agent_scopes[n % scopes]
        now = utc_now()
        event = Event(
            event_id=new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id,
            agent_id=scope.agent_id, session_id=f"direct-{n % scopes}", role=EventRole.user,
            type=EventType.message, content=f"{CONTENT} #{n}", metadata=metadata,
            timestamp=now, received_at=now,
        )
        documents.append_events([event])
        stm.push(scope, event)

    try:
        for n in range(warmup):
            one(n)
        latencies: list[float] = []
        started = time.perf_counter()
        for n in range(events):
            t0 = time.perf_counter()
            one(warmup + n)
            latencies.append(time.perf_counter() - t0)
        seconds = time.perf_counter() - started
    finally:
        documents.close()
        client.close()
    latencies.sort()
    return {
        "seconds": seconds,
        "events_per_s": events / seconds,
        "p50_ms": ms(percentile(latencies, 50)),
        "p99_ms": ms(percentile(latencies, 99)),
    }


# --------------------------------------------------------------------------------------------- HTTP
async def run_http(base_url: str, tenant: str, concurrency: int, events: int, warmup: int) -> dict:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30.0, trust_env=False) as client:
        session_ids = []
        for i in range(concurrency):  # one session (one agent scope) per client
            r = await client.post("/api/v1/sessions", json={
                "tenant_id": tenant, "user_id": f"c{concurrency}-{i}", "agent_id": "default",
                "metadata": {"bench": "ingest"},
            })
            r.raise_for_status()
            session_ids.append(r.json()["session_id"])

        latencies: list[float] = []
        errors = 0
        error_samples: list[str] = []
        issued = 0  # single-threaded event loop: no lock needed between check and increment

        async def worker(index: int, budget: int, record: bool) -> None:
            nonlocal issued, errors
            path = f"/api/v1/sessions/{session_ids[index]}/events"
            metadata = {"bench": "ingest", "client": str(index)}
            while issued < budget:
                issued += 1
                body = {"role": "user", "type": "message", "content": f"{CONTENT} #{issued}", "metadata": metadata}
                t0 = time.perf_counter()
                try:
                    response = await client.post(path, json=body)
                    ok = response.status_code == 201
                    detail = f"{response.status_code} {response.text[:200]}"
                except httpx.HTTPError as exc:
                    ok, detail = False, f"{type(exc).__name__}: {exc}"
                elapsed = time.perf_counter() - t0
                if record:
                    latencies.append(elapsed)
                    if not ok:
                        errors += 1
                        if len(error_samples) < 5:
                            error_samples.append(detail)

        # Warm-up (not timed): opens the N keep-alive connections and the API's thread pool.
        await asyncio.gather(*(worker(i, warmup, False) for i in range(concurrency)))
        issued = 0
        cpu0 = time.process_time()
        started = time.perf_counter()
        await asyncio.gather(*(worker(i, events, True) for i in range(concurrency)))
        seconds = time.perf_counter() - started
        client_cpu_s = time.process_time() - cpu0

    latencies.sort()
    return {
        "seconds": seconds,
        "events_per_s": events / seconds,
        "p50_ms": ms(percentile(latencies, 50)),
        "p99_ms": ms(percentile(latencies, 99)),
        "max_ms": ms(latencies[-1]) if latencies else None,
        "errors": errors,
        "error_samples": error_samples,
        "client_cpu_s": round(client_cpu_s, 2),
        "requests": len(latencies),
    }


# ---------------------------------------------------------------------------------------- one Redis
def bench_one_redis(
    label: str, redis_url: str | None, root: Path, args: argparse.Namespace, run_id: str,
    concurrencies: list[int], records: list[dict], stamp: str,
) -> None:
    data_dir = root / label
    settings = Settings(
        data_dir=data_dir, redis_url=redis_url, api_host="127.0.0.1", api_port=free_port(),
        document_store="sqlite", auth_mode="off",
    )
    extra_env = {"ATHENA_AUTH_MODE": "off", "ATHENA_DOCUMENT_STORE": "sqlite", "ATHENA_PRODUCTION": "0"}
    stack = Stack(settings=settings, worker_concurrency=args.worker_concurrency, with_beat=False, extra_env=extra_env)
    tenant_prefix = f"bench-{run_id}"
    r: redis.Redis | None = None
    preexisting: set[bytes] = set()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        stack.start_redis()
        r = redis_client(location_from_url(stack.settings.redis_url))
        if label == "url":
            preexisting = kombu_keys(r)  # before the API and worker declare the queue
        stack.start_api()
        worker_ready = False
        if not args.no_worker:
            stack.start_worker()
        stack.wait_for_api(60.0)
        if not args.no_worker:
            worker_ready = wait_for_worker(stack, "worker", 90.0)
            log(f"[{label}] worker ready: {worker_ready}")
            if not worker_ready:
                log(f"[{label}] worker log tail:\n{worker_log_tail(stack, 'worker')}")
        metrics_client = httpx.Client(base_url=stack.base_url, trust_env=False)
        log(f"[{label}] API on {stack.base_url}, redis {stack.settings.redis_url}, data {data_dir}")

        for n in concurrencies:
            tenant = f"{tenant_prefix}-{label}-c{n}"
            baseline = run_direct(
                data_dir / f"direct-c{n}.sqlite3", stack.settings.redis_url, f"{tenant}-direct",
                args.events, scopes=max(n, 1), warmup=args.warmup,
            )
            log(f"[{label}] c={n} direct: {baseline['events_per_s']:.0f} events/s")
            before = scrape_metrics(metrics_client)
            http = asyncio.run(run_http(stack.base_url, tenant, n, args.events, max(args.warmup, 2 * n)))
            after = scrape_metrics(metrics_client)
            drained, drain_s = (
                wait_for_pipeline_drain(r, tenant, args.drain_timeout) if worker_ready else (False, 0.0)
            )
            delta = {k: after[k] - before[k] for k in after}
            handler_mean = (
                delta["ingest_seconds_sum"] / delta["ingest_seconds_count"] if delta["ingest_seconds_count"] else None
            )
            record = {
                "bench": BENCH,
                "redis": label,
                "concurrency": n,
                "events": args.events,
                "seconds": round(http["seconds"], 3),
                "events_per_s": round(http["events_per_s"], 1),
                "p50_ms": http["p50_ms"],
                "p99_ms": http["p99_ms"],
                "max_ms": http["max_ms"],
                "errors": http["errors"],
                "baseline_events_per_s": round(baseline["events_per_s"], 1),
                "baseline_p50_ms": baseline["p50_ms"],
                "baseline_p99_ms": baseline["p99_ms"],
                "ratio_to_direct": round(http["events_per_s"] / baseline["events_per_s"], 3),
                "server_ingest_mean_ms": ms(handler_mean) if handler_mean is not None else None,
                "pipeline_published": int(delta["published"]),
                "pipeline_debounced": int(delta["debounced"]),
                "pipeline_publish_failed": int(delta["publish_failed"]),
                "stm_push_failures": int(delta["stm_push_failures"]),
                "worker": worker_ready and worker_alive(stack),
                "pipeline_drained": drained,
                "pipeline_drain_s": drain_s,
                "client_cpu_s": http["client_cpu_s"],
                "sessions": n,
                **machine_info(),
            }
            if http["error_samples"]:
                record["error_samples"] = http["error_samples"]
            emit(record)
            records.append(record)
            save_results(BENCH, records, stamp)
        metrics_client.close()
    finally:
        if r is not None and label == "url":
            try:
                if worker_alive(stack):
                    wait_for_pipeline_drain(r, tenant_prefix, 30.0)  # let the worker consume what we queued
                stack.stop_process("worker")
                purged = purge_queued_runs(r, tenant_prefix)
                deleted = delete_tenant_keys(r, tenant_prefix) + delete_task_results(r, tenant_prefix)
                if r.llen(PIPELINE_QUEUE) == 0:  # kombu bookkeeping this run created, if nobody else uses it
                    created = kombu_keys(r) - preexisting
                    if created:
                        deleted += r.delete(*created)
                log(f"[{label}] external Redis cleanup: {purged} queued runs purged, {deleted} keys deleted")
            except redis.RedisError as exc:
                log(f"[{label}] cleanup of {tenant_prefix} keys failed: {exc}")
        if r is not None:
            r.close()
        stack.stop()


# --------------------------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=None, help="events per configuration (default 20000)")
    p.add_argument("--concurrency", type=str, default=None, help="comma-separated client counts (default 1,8,32)")
    p.add_argument("--quick", action="store_true", help="2000 events, concurrency 1 and 8")
    p.add_argument("--warmup", type=int, default=50, help="untimed events before each measurement")
    p.add_argument("--no-worker", action="store_true", help="do not start a Celery worker")
    p.add_argument("--worker-concurrency", type=int, default=2)
    p.add_argument("--embedded-only", action="store_true", help="ignore ATHENA_REDIS_URL")
    p.add_argument("--allow-remote-redis", action="store_true", help="allow a non-loopback ATHENA_REDIS_URL")
    p.add_argument("--drain-timeout", type=float, default=60.0, help="max seconds to wait for the worker")
    args = p.parse_args(argv)
    if args.events is None:
        args.events = 2000 if args.quick else 20000
    if args.concurrency is None:
        args.concurrency = "1,8" if args.quick else "1,8,32"
    if args.events < 1:
        p.error("--events must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    concurrencies = [int(c) for c in args.concurrency.split(",") if c.strip()]
    if not concurrencies or min(concurrencies) < 1:
        raise SystemExit("--concurrency needs positive integers")
    url = None if args.embedded_only else (os.environ.get("ATHENA_REDIS_URL") or None)
    if url:
        host = urlparse(url).hostname
        if url.startswith(("redis://", "rediss://")) and host not in LOOPBACK and not args.allow_remote_redis:
            raise SystemExit(f"ATHENA_REDIS_URL host {host!r} is not loopback; pass --allow-remote-redis")
    runs: list[tuple[str, str | None]] = [("embedded", None)] + ([("url", url)] if url else [])
    run_id = uuid.uuid4().hex[:8]
    stamp = utc_stamp()
    records: list[dict] = []
    root = Path(tempfile.mkdtemp(prefix="athena-bench-ingest-"))
    try:
        for label, redis_url in runs:
            bench_one_redis(label, redis_url, root, args, run_id, concurrencies, records, stamp)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if records:
        path = REPO_ROOT / "bench" / "results" / f"{BENCH}-{stamp}.json"
        log(f"results: {path.relative_to(REPO_ROOT)}")
    return 1 if any(rec["errors"] for rec in records) else 0


if __name__ == "__main__":
    sys.exit(main())
