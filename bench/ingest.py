"""Ingest benchmark (SPEC S9): StoreEvent and StoreEvents (batch) over HTTP, driven by `wrk`, beside the
durable write done directly in the same run.

    python bench/ingest.py                       # 1, 8, 32, 128, 256 clients, single + batch route, 5 s each
    python bench/ingest.py --quick               # 1, 8, 32 clients, 1 s each
    python bench/ingest.py --api-workers 2       # two API processes on one data dir
    ATHENA_REDIS_URL=redis://127.0.0.1:6379/14 python bench/ingest.py   # also against that Redis

The load generator is `wrk` (C, Debian package `wrk`): a Python client shares the two cores with the API
and becomes the bottleneck. If `wrk` is missing the script runs `apt-get install -y wrk` when it may
(root), else it stops and says so. A generated Lua script gives every request a distinct body, counts
the answers by status (2xx, 429, 503, other) and whether refusals carry Retry-After, and writes each 2xx
body to a file, so every event id answered 2xx is looked up in the event log afterwards.

For each Redis (the embedded default, and ATHENA_REDIS_URL when set) it starts the real stack as
separate processes with `Stack` (embedded Redis or the URL, the API under uvicorn, one Celery worker so
the debounced pipeline publish and its consumer are real) in a temporary ATHENA_DATA_DIR on a free
127.0.0.1 port. Then:

  1. the direct floor, in this process, one thread, against the same Redis: one SQLite WAL commit + one
     Lua push per event (`per_event`), and the same for groups of 100 events in one commit and one Redis
     pipeline (`grouped`);
  2. per route (single: POST …/events, batch: POST …/events:batch with `--batch-size` events) and per
     concurrency N: N sessions, `wrk -c N` for `--duration` s -> events/s, p50/p99/max latency, transport
     errors (connect/read/write/timeout), status counts, 2xx event ids found in the log, client CPU (wrk's
     user+sys), server CPU (the API processes'), the server's own time per event (`athena_ingest_seconds`
     over events ingested), ratio to the direct floor;
  3. waits (bounded) for the worker to drain the pipeline queue, so the next configuration starts quiet.

One JSON line per configuration goes to stdout (progress to stderr), and the run's records are written
to bench/results/ingest-<UTC timestamp>.json. All traffic is on 127.0.0.1 (a non-loopback
ATHENA_REDIS_URL is refused unless --allow-remote-redis). The stack is stopped and the temp dir removed
in `finally`; keys written to an external Redis under this run's tenant are deleted.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
import redis  # noqa: E402

from http_load import ensure_wrk  # noqa: E402
from common import (  # noqa: E402
    REPO_ROOT, emit, free_port, log, machine_info, percentile, save_results, tree_cpu_s, utc_stamp,
)

from athena_core.wiring.embedded_redis import location_from_url  # noqa: E402
from athena_core.ids import new_id  # noqa: E402
from athena_core.models.events import Event, EventRole, EventType, utc_now  # noqa: E402
from athena_core.models.scope import AgentScope  # noqa: E402
from athena_core.wiring.redis_connection import redis_client  # noqa: E402
from athena_core.wiring.redis_keys import stm_key  # noqa: E402
from athena_core.wiring.settings import Settings  # noqa: E402
from athena_devtools.stack import Stack  # noqa: E402
from athena_core.stm.stm_window import PUSH_SCRIPT, StmWindow  # noqa: E402
from athena_core.models.events import WindowEvent  # noqa: E402
from athena_core.stores.documents.sqlite_documents import SqliteDocuments  # noqa: E402

BENCH = "ingest"
PIPELINE_QUEUE = "athena.pipeline"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
GROUP = 100  # events per commit in the grouped direct floor
# ~200 characters of plausible chat text; the request number is appended so rows differ.
CONTENT = (
    "The deploy of the billing service failed again on the staging cluster; the migration step timed "
    "out after 300 s while holding the lock on invoices. Retry with a smaller batch size and page the "
    "on-call if it fails twice. "
)[:200]
EVENT_ID = re.compile(r"evt_[A-Za-z0-9_-]+")

# One wrk script per configuration. Globals (not locals) so `done` can read each thread's counters.
LUA = r"""
local threads = {}
local paths = {%(paths)s}
local batch = %(batch)d
local content = "%(content)s"
local out_dir = "%(out_dir)s"

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  counter = 0
  s2xx = 0; s429 = 0; s503 = 0; sother = 0; retry_after = 0
  wrk.headers["Content-Type"] = "application/json"
  ids = io.open(out_dir .. "/2xx-" .. tid .. ".txt", "w")
end

local function event(n, i)
  return '{"role":"user","type":"message","content":"' .. content .. ' #' .. tid .. '-' .. n .. '-' .. i ..
         '","metadata":{"bench":"ingest"}}'
end

function request()
  counter = counter + 1
  local path = paths[(counter * #threads + tid) %% #paths + 1]
  local body
  if batch == 0 then
    body = event(counter, 0)
  else
    local items = {}
    for i = 1, batch do items[i] = event(counter, i) end
    body = '{"events":[' .. table.concat(items, ",") .. ']}'
  end
  return wrk.format("POST", path, nil, body)
end

function response(status, headers, body)
  if status >= 200 and status < 300 then
    s2xx = s2xx + 1
    ids:write(body, "\n")
  elseif status == 429 or status == 503 then
    if status == 429 then s429 = s429 + 1 else s503 = s503 + 1 end
    if headers["retry-after"] or headers["Retry-After"] then retry_after = retry_after + 1 end
  else
    sother = sother + 1
  end
end

function done(summary, latency, requests)
  local t = {s2xx = 0, s429 = 0, s503 = 0, sother = 0, retry_after = 0}
  for _, thread in ipairs(threads) do
    for k, _ in pairs(t) do t[k] = t[k] + (thread:get(k) or 0) end
  end
  local e = summary.errors
  io.write(string.format(
    'ATHENA_WRK {"requests":%%d,"duration_us":%%d,"connect":%%d,"read":%%d,"write":%%d,"timeout":%%d,' ..
    '"non2xx3xx":%%d,"p50_us":%%d,"p99_us":%%d,"max_us":%%d,"s2xx":%%d,"s429":%%d,"s503":%%d,"sother":%%d,' ..
    '"retry_after":%%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout, e.status,
    latency:percentile(50), latency:percentile(99), latency.max,
    t.s2xx, t.s429, t.s503, t.sother, t.retry_after))
end
"""


# ------------------------------------------------------------------------------------------ helpers
def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def scrape_metrics(client: httpx.Client) -> dict[str, float]:
    """The API's own counters (Prometheus text): publishes, debounces, in-handler time, events ingested."""
    wanted = {
        'athena_pipeline_publish_total{outcome="published"}': "published",
        'athena_pipeline_publish_total{outcome="debounced"}': "debounced",
        'athena_pipeline_publish_total{outcome="failed"}': "publish_failed",
        "athena_stm_push_failures_total": "stm_push_failures",
        "athena_ingest_seconds_sum": "ingest_seconds_sum",
        "athena_ingest_seconds_count": "ingest_seconds_count",
    }
    out = {v: 0.0 for v in wanted.values()} | {"events_ingested": 0.0}
    try:
        text = client.get("/metrics", timeout=10.0).text
    except httpx.HTTPError:
        return out
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        if name in wanted:
            out[wanted[name]] = float(value)
        elif name.startswith("athena_events_ingested_total{"):
            out["events_ingested"] += float(value)
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
def run_direct(sqlite_path: Path, redis_url: str, tenant: str, events: int, scopes: int, group: int) -> dict:
    """The floor the API adds to, one thread, no HTTP: `group` events per SQLite WAL commit and per Redis
    round trip (the Lua push of each event pipelined). group=1 is one commit + one Lua push per event.

    Builds the `Event` the way `Ingest` does (new id, received_at now), so model construction is on
    both sides; the pipeline run request is only on the HTTP side.
    """
    documents = SqliteDocuments(sqlite_path)
    client = redis_client(location_from_url(redis_url))
    stm = StmWindow(client, documents)
    script = client.register_script(PUSH_SCRIPT)
    agent_scopes = [AgentScope(tenant_id=tenant, user_id=f"direct-{i}") for i in range(scopes)]
    metadata = {"bench": "ingest", "client": "direct"}

    def make(n: int) -> tuple[AgentScope, Event]:
        scope = agent_scopes[n % scopes]
        now = utc_now()
        return scope, Event(
            event_id=new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id,
            agent_id=scope.agent_id, session_id=f"direct-{n % scopes}", role=EventRole.user,
            type=EventType.message, content=f"{CONTENT} #{n}", metadata=metadata,
            timestamp=now, received_at=now,
        )

    def one_group(first: int) -> None:
        made = [make(first + i) for i in range(group)]
        documents.append_events([e for _, e in made])
        if group == 1:
            stm.push(*made[0])
            return
        pipe = client.pipeline(transaction=False)
        for scope, event in made:
            script(keys=[stm_key(scope)], args=[WindowEvent.from_event(event).model_dump_json(), 10, 7200,
                                                event.event_id], client=pipe)
        pipe.execute()

    try:
        one_group(0)
        groups = max(1, events // group)
        latencies: list[float] = []
        started = time.perf_counter()
        for g in range(groups):
            t0 = time.perf_counter()
            one_group((g + 1) * group)
            latencies.append(time.perf_counter() - t0)
        seconds = time.perf_counter() - started
    finally:
        documents.close()
        client.close()
    latencies.sort()
    return {"group": group, "events_per_s": round(groups * group / seconds, 1),
            "p50_ms_per_commit": ms(percentile(latencies, 50)), "p99_ms_per_commit": ms(percentile(latencies, 99))}


# --------------------------------------------------------------------------------------------- HTTP
def create_sessions(base_url: str, tenant: str, count: int, label: str) -> list[str]:
    with httpx.Client(base_url=base_url, timeout=30.0, trust_env=False) as client:
        ids = []
        for i in range(count):
            r = client.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": f"{label}-{i}",
                                                      "metadata": {"bench": "ingest"}})
            r.raise_for_status()
            ids.append(r.json()["session_id"])
        return ids


def run_wrk(wrk: str, base_url: str, session_ids: list[str], route: str, batch: int, concurrency: int,
            duration_s: float, out_dir: Path) -> dict:
    """One wrk run; returns its counters plus client CPU (wrk's user+sys, from the child rusage)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = "/events:batch" if route == "batch" else "/events"
    paths = ",".join(f'"/api/v1/sessions/{s}{suffix}"' for s in session_ids)
    script = out_dir / "load.lua"
    script.write_text(LUA % {"paths": paths, "batch": batch if route == "batch" else 0,
                             "content": CONTENT, "out_dir": str(out_dir)})
    threads = max(1, min(2, concurrency))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [wrk, "-t", str(threads), "-c", str(concurrency), "-d", f"{max(1, round(duration_s))}s", "--timeout", "10s",
         "-s", str(script), base_url],
        capture_output=True, text=True, timeout=duration_s + 120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("ATHENA_WRK ")), None)
    if line is None:
        raise RuntimeError(f"wrk gave no summary (exit {done.returncode}): {done.stdout[-500:]} {done.stderr[-500:]}")
    stats = json.loads(line[len("ATHENA_WRK "):])
    stats["client_cpu_s"] = round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2)
    ids: list[str] = []
    for f in sorted(out_dir.glob("2xx-*.txt")):
        ids.extend(EVENT_ID.findall(f.read_text()))
    stats["ids_2xx"] = ids
    return stats


def ids_in_log(db_path: Path, tenant: str, ids: list[str]) -> tuple[int, int]:
    """(how many of `ids` the event log holds, how many events the tenant has in all)."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    try:
        held = {row[0] for row in conn.execute("SELECT event_id FROM events WHERE tenant_id = ?", (tenant,))}
    finally:
        conn.close()
    return sum(1 for i in ids if i in held), len(held)


# ---------------------------------------------------------------------------------------- one Redis
def bench_one_redis(
    label: str, redis_url: str | None, root: Path, args: argparse.Namespace, run_id: str,
    concurrencies: list[int], records: list[dict], stamp: str, wrk: str,
) -> None:
    data_dir = root / label
    settings = Settings(
        data_dir=data_dir, redis_url=redis_url, api_host="127.0.0.1", api_port=free_port(),
        document_store="sqlite", auth_mode="off", api_workers=args.api_workers,
    )
    extra_env = {"ATHENA_AUTH_MODE": "off", "ATHENA_DOCUMENT_STORE": "sqlite", "ATHENA_PRODUCTION": "0"}
    stack = Stack(settings=settings, worker_concurrency=args.worker_concurrency, with_beat=False, extra_env=extra_env)
    tenant_prefix = f"bench-{run_id}"
    r: redis.Redis | None = None
    preexisting: set[bytes] = set()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        stack.reset_metrics()
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
        api_pid = stack.processes["api"].pid
        log(f"[{label}] API on {stack.base_url} ({args.api_workers} process(es)), redis {stack.settings.redis_url}")

        floors = {}
        for group in (1, GROUP):
            floors[group] = run_direct(data_dir / f"direct-{group}.sqlite3", stack.settings.redis_url,
                                       f"{tenant_prefix}-{label}-direct", args.events, scopes=32, group=group)
            log(f"[{label}] direct floor, {group} per commit: {floors[group]['events_per_s']:.0f} events/s")
        for route in args.routes:
            for n in concurrencies:
                tenant = f"{tenant_prefix}-{label}-{route}-c{n}"
                sessions = create_sessions(stack.base_url, tenant, n, f"c{n}")
                # warm-up (not recorded): connections, caches, the first group commits
                run_wrk(wrk, stack.base_url, sessions, route, args.batch_size, n, 1, root / "wrk" / f"{tenant}-w")
                before = scrape_metrics(metrics_client)
                cpu0 = tree_cpu_s(api_pid)
                stats = run_wrk(wrk, stack.base_url, sessions, route, args.batch_size, n, args.duration,
                                root / "wrk" / tenant)
                cpu1 = tree_cpu_s(api_pid)
                after = scrape_metrics(metrics_client)
                delta = {k: after[k] - before[k] for k in after}
                per_request = args.batch_size if route == "batch" else 1
                seconds = stats["duration_us"] / 1e6
                ids = stats.pop("ids_2xx")
                found, held = ids_in_log(data_dir / "athena.sqlite3", tenant, ids)
                drained, drain_s = (
                    wait_for_pipeline_drain(r, tenant, args.drain_timeout) if worker_ready else (False, 0.0)
                )
                floor = floors[GROUP if route == "batch" else 1]["events_per_s"]
                events_per_s = stats["s2xx"] * per_request / seconds
                transport_errors = stats["connect"] + stats["read"] + stats["write"] + stats["timeout"]
                record = {
                    "bench": BENCH, "redis": label, "route": route, "api_workers": args.api_workers,
                    "concurrency": n, "events_per_request": per_request, "seconds": round(seconds, 2),
                    "requests": stats["requests"], "events_per_s": round(events_per_s, 1),
                    "p50_ms": stats["p50_us"] / 1000, "p99_ms": stats["p99_us"] / 1000,
                    "max_ms": stats["max_us"] / 1000,
                    "errors": transport_errors + stats["sother"],
                    "transport_errors": {k: stats[k] for k in ("connect", "read", "write", "timeout")},
                    "status_2xx": stats["s2xx"], "status_429": stats["s429"], "status_503": stats["s503"],
                    "status_other": stats["sother"], "refusals_with_retry_after": stats["retry_after"],
                    "events_2xx": len(ids), "events_2xx_in_log": found, "events_in_log": held,
                    "direct_floor_per_event": floors[1]["events_per_s"],
                    "direct_floor_grouped": floors[GROUP]["events_per_s"],
                    "baseline_events_per_s": floor, "ratio_to_direct": round(events_per_s / floor, 3),
                    "server_ms_per_event": (ms(delta["ingest_seconds_sum"] / delta["events_ingested"])
                                            if delta["events_ingested"] else None),
                    "server_cpu_s": round(cpu1 - cpu0, 2), "client_cpu_s": stats["client_cpu_s"],
                    "pipeline_published": int(delta["published"]), "pipeline_debounced": int(delta["debounced"]),
                    "pipeline_publish_failed": int(delta["publish_failed"]),
                    "stm_push_failures": int(delta["stm_push_failures"]),
                    "worker": worker_ready and worker_alive(stack), "pipeline_drained": drained,
                    "pipeline_drain_s": drain_s, "load_avg_1m": round(os.getloadavg()[0], 2), **machine_info(),
                }
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
    p.add_argument("--duration", type=float, default=None, help="seconds of load per configuration (default 5)")
    p.add_argument("--events", type=int, default=None, help="events of each direct floor (default 20000)")
    p.add_argument("--concurrency", type=str, default=None, help="client counts (default 1,8,32,128,256)")
    p.add_argument("--routes", type=str, default="single,batch", help="single, batch or both")
    p.add_argument("--batch-size", type=int, default=100, help="events per batch request")
    p.add_argument("--api-workers", type=int, default=1, help="API processes (ATHENA_API_WORKERS)")
    p.add_argument("--quick", action="store_true", help="1 s per configuration, 1/8/32 clients, 2000 floor events")
    p.add_argument("--no-worker", action="store_true", help="do not start a Celery worker")
    p.add_argument("--worker-concurrency", type=int, default=2)
    p.add_argument("--embedded-only", action="store_true", help="ignore ATHENA_REDIS_URL")
    p.add_argument("--allow-remote-redis", action="store_true", help="allow a non-loopback ATHENA_REDIS_URL")
    p.add_argument("--drain-timeout", type=float, default=60.0, help="max seconds to wait for the worker")
    args = p.parse_args(argv)
    if args.duration is None:
        args.duration = 1.0 if args.quick else 5.0
    if args.events is None:
        args.events = 2000 if args.quick else 20000
    if args.concurrency is None:
        args.concurrency = "1,8,32" if args.quick else "1,8,32,128,256"
    args.routes = [r.strip() for r in args.routes.split(",") if r.strip()]
    if not set(args.routes) <= {"single", "batch"} or not args.routes:
        p.error("--routes takes single, batch or both")
    if args.events < GROUP:
        p.error(f"--events must be at least {GROUP}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    concurrencies = [int(c) for c in args.concurrency.split(",") if c.strip()]
    if not concurrencies or min(concurrencies) < 1:
        raise SystemExit("--concurrency needs positive integers")
    wrk = ensure_wrk()
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
            bench_one_redis(label, redis_url, root, args, run_id, concurrencies, records, stamp, wrk)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if records:
        path = REPO_ROOT / "bench" / "results" / f"{BENCH}-{stamp}.json"
        log(f"results: {path.relative_to(REPO_ROOT)}")
    lost = any(rec["events_2xx_in_log"] != rec["events_2xx"] for rec in records)
    return 1 if lost or any(rec["errors"] for rec in records) else 0


if __name__ == "__main__":
    sys.exit(main())
