"""Pipeline benchmark (SPEC S9): events/s from ingest to consolidated chains, 1 vs 2 worker processes.

    python bench/pipeline.py            # 24 conversations x 3 topics x 4 interactions (= 576 events)
    python bench/pipeline.py --quick    # 4 conversations x 2 topics x 3 interactions (= 48 events)

It starts the real stack as processes with `Stack` in a temporary ATHENA_DATA_DIR on a free 127.0.0.1
port: embedded Redis, the API under uvicorn and beat (idle flush every second: ATHENA_IDLE_FLUSH_EVERY_S=1,
ATHENA_SEGMENT_IDLE_S=1), with the offline LLM and the local embedder. Then, per worker concurrency
(1, then 2 prefork processes), a fresh Celery worker (`-c 1` / `-c 2`) and a fresh tenant:

  1. warm-up (untimed): small conversations in a separate tenant, repeated (at most 4 rounds) until the
     worker log shows every prefork child ran a segment/summarize task, so loading the embedding model
     in the children is not in the figure;
  2. timed: N conversations (one session = one user each, multi-topic synthetic text with timestamps
     2 minutes apart and 1 hour between topics) posted over HTTP with StoreInteraction, one client task
     per conversation, concurrently; the clock runs from the first post until GetSession reports
     `pending_events == 0` for every session (polled every 0.25 s);
  3. chains formed = the users' chains in the SQLite document store afterwards.

`--omp-threads 1` sets OMP_NUM_THREADS (torch intra-op threads) in the stack's processes; default unset,
as shipped. Every line records it.

One JSON line per configuration (events, seconds, events_per_s, chains, ...) and a summary line with
`ratio_2_over_1` = events/s with 2 workers / events/s with 1 worker, both measured in this run.
The synthetic text generators below are also used by bench/reads.py.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import emit, free_port, log, machine_info, save_results, utc_stamp  # noqa: E402

BENCH = "pipeline"


# ------------------------------------------------------------------------------------ synthetic text
# topic -> (subjects, user templates, agent templates, entities)
TOPICS: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {
    "postgres": (
        ["streaming replication", "the orders database", "a hot standby", "WAL archiving", "vacuum tuning",
         "connection pooling with pgbouncer", "the replication slot", "index bloat"],
        ["I'm working on {s} for our Postgres cluster; what should I check first?",
         "Our Postgres primary shows lag on {s}. How do I fix it?",
         "Should {s} in Postgres be configured differently for the orders database?",
         "Back to Postgres: {s} keeps failing after the upgrade to version 16."],
        ["For {s}, look at wal_level, max_wal_senders and the standby's apply lag first.",
         "Postgres {s} usually suffers from slow disks; check pg_stat_replication and iostat.",
         "Keep {s} simple: one replication slot per standby and monitor its retained WAL."],
        ["Postgres", "pgbouncer", "WAL"],
    ),
    "cooking": (
        ["fresh salmon", "a sourdough loaf", "a mushroom risotto", "roasted vegetables", "a lemon tart",
         "homemade pasta", "a Thai green curry", "grilled chicken thighs"],
        ["What should I cook for dinner tonight? I have {s}.",
         "How long should {s} stay in the oven at 200 C?",
         "What side dish goes well with {s} for six guests?",
         "My {s} came out dry last time; what went wrong in the kitchen?"],
        ["Roast {s} with garlic, lemon and fresh herbs, and season generously with salt.",
         "For {s}, preheat the oven well and rest it for ten minutes before serving.",
         "Serve {s} with a green salad or roasted potatoes and a glass of white wine."],
        ["oven", "garlic", "lemon"],
    ),
    "travel": (
        ["Tokyo and Kyoto", "the Amalfi coast", "a week in Lisbon", "hiking in Patagonia", "Iceland's ring road",
         "a rail trip through Switzerland", "Marrakech in spring", "the Scottish Highlands"],
        ["Help me plan my trip: {s} in April, about ten days.",
         "Where should I stay for {s}? I like quiet neighbourhoods.",
         "Which sights are worth it on {s}, and which are tourist traps?",
         "What is the best way to get around during {s} without a car?"],
        ["For {s}, book the trains early and keep one free day for bad weather.",
         "Stay near the old town on {s}; it is walkable and close to the stations.",
         "On {s} a regional rail pass usually pays off after three long journeys."],
        ["Japan Rail", "hotel", "itinerary"],
    ),
    "kubernetes": (
        ["the payments deployment", "a rolling update", "the ingress controller", "horizontal pod autoscaling",
         "a crash-looping pod", "resource limits", "the Helm chart", "node pool upgrades"],
        ["Our Kubernetes cluster has trouble with {s}; pods restart every few minutes.",
         "How do I configure {s} in Kubernetes so the rollout has no downtime?",
         "Is {s} the reason our Kubernetes nodes run out of memory?",
         "Let's talk Kubernetes again: {s} broke after the cluster upgrade."],
        ["Check the events and logs for {s}: kubectl describe shows OOMKilled or failing probes.",
         "For {s}, set readiness probes and maxUnavailable 0 so traffic never hits a cold pod.",
         "Give {s} explicit requests and limits and watch the metrics server for a day."],
        ["Kubernetes", "Helm", "kubectl"],
    ),
    "fitness": (
        ["a half marathon", "strength training", "my running cadence", "a knee injury", "interval sessions",
         "a cycling base phase", "morning mobility work", "a 5k personal best"],
        ["I'm training for {s}; how many days a week should I run?",
         "My coach suggested {s}; is it worth it for an amateur runner?",
         "How should I recover after {s} so my legs feel fresh?",
         "Can you build me a weekly plan around {s} for the next two months?"],
        ["For {s}, keep most runs easy and add one tempo session and one long run each week.",
         "Build {s} gradually: ten percent more volume per week at most, and sleep well.",
         "After {s}, stretch, eat protein within an hour and take an easy day."],
        ["marathon", "tempo run", "recovery"],
    ),
    "finance": (
        ["an index fund portfolio", "my emergency savings", "a mortgage refinance", "quarterly tax payments",
         "retirement contributions", "a budget spreadsheet", "currency hedging", "bond ladders"],
        ["I want to sort out {s}; where do I start with my personal finances?",
         "Does {s} make sense with interest rates where they are now?",
         "How much should go into {s} each month on a single income?",
         "Quick finance question again: {s} and the tax consequences."],
        ["For {s}, automate a fixed monthly transfer and review the allocation once a year.",
         "{s} depends on fees and taxes; compare the total cost over ten years, not the headline rate.",
         "Keep {s} simple: low-cost funds, broad diversification and no market timing."],
        ["ETF", "mortgage", "tax"],
    ),
    "music": (
        ["learning jazz guitar", "a home recording setup", "piano scales", "mixing vocals", "a synthesizer patch",
         "a choir arrangement", "drum grooves", "music theory for songwriting"],
        ["I've started {s}; what should I practise every day?",
         "Which gear do I need for {s} on a small budget?",
         "My progress with {s} stalled; how do I get past the plateau?",
         "Any tips on {s} before my first gig next month?"],
        ["For {s}, practise slowly with a metronome for twenty minutes and record yourself.",
         "Start {s} with a decent audio interface and one good microphone before anything else.",
         "With {s}, learn three songs end to end instead of many fragments."],
        ["guitar", "metronome", "microphone"],
    ),
    "gardening": (
        ["tomato seedlings", "a raised vegetable bed", "composting kitchen waste", "pruning apple trees",
         "a shady herb garden", "slugs on the lettuce", "watering in a heat wave", "planting spring bulbs"],
        ["How do I get started with {s} this season?",
         "Something is wrong with {s}; the leaves turn yellow.",
         "When is the right time of year for {s} in a cold climate?",
         "Garden question: is {s} worth the effort on a small balcony?"],
        ["For {s}, use well-drained soil, plenty of sun and water deeply twice a week.",
         "Yellow leaves on {s} often mean overwatering or a lack of nitrogen in the soil.",
         "Do {s} after the last frost and mulch to keep the moisture in."],
        ["compost", "soil", "seedlings"],
    ),
}
TOPIC_NAMES = sorted(TOPICS)


def conversation(rng: random.Random, start: datetime, topics: int, turns_per_topic: int) -> list[dict]:
    """One multi-topic conversation: StoreInteraction bodies with timestamps (2 min apart, 1 h per topic)."""
    chosen = rng.sample(TOPIC_NAMES, k=min(topics, len(TOPIC_NAMES)))
    bodies = []
    at = start
    for name in chosen:
        subjects, users, agents, _ = TOPICS[name]
        subject = rng.choice(subjects)
        for _ in range(turns_per_topic):
            bodies.append({
                "user_message": rng.choice(users).format(s=subject),
                "agent_response": rng.choice(agents).format(s=subject),
                "timestamp": at.isoformat(),
                "metadata": {"bench_topic": name},
            })
            at += timedelta(minutes=2)
        at += timedelta(hours=1)
    return bodies


def summary(rng: random.Random) -> tuple[str, str, list[str]]:
    """A varied chain (topic, summary, entities) drawn from the topic vocabularies."""
    name = rng.choice(TOPIC_NAMES)
    subjects, users, agents, entities = TOPICS[name]
    first, second = rng.sample(subjects, 2)
    text = (
        f"The user discussed {first} and {second}. "
        + rng.choice(agents).format(s=first) + " "
        + rng.choice(users).format(s=second)
    )
    return f"{name}: {first}", text, rng.sample(entities, k=rng.randint(1, len(entities)))


def query(rng: random.Random) -> str:
    """A question of the kind an agent asks SearchMemory."""
    name = rng.choice(TOPIC_NAMES)
    subjects, users, _, _ = TOPICS[name]
    return rng.choice(users).format(s=rng.choice(subjects))


BASE_TIME = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


# ----------------------------------------------------------------------------------------- helpers
def load_avg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


WARM_TASK = re.compile(r"ForkPoolWorker-(\d+)\] Task athena\.pipeline\.(?:segment|summarize)\[")


def worker_log(stack, name: str) -> str:
    path = (stack.log_dir or stack.settings.data_dir / "logs") / f"{name}.log"
    return path.read_text(errors="replace") if path.exists() else ""


def worker_ready(stack, name: str, timeout_s: float) -> bool:
    """True once the Celery worker logged `ready.` (bounded); False if it died or never got there."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        proc = stack.processes.get(name)
        if proc is None or proc.poll() is not None:
            return False
        if re.search(r"\bready\.", worker_log(stack, name)):
            return True
        time.sleep(0.2)
    return False


def warm_children(stack, name: str) -> set[str]:
    """Prefork children that already ran a segment/summarize task (and so loaded the embedder)."""
    return set(WARM_TASK.findall(worker_log(stack, name)))


async def post_conversations(client, tenant: str, conversations: list[list[dict]],
                             first_user: int = 0) -> tuple[list[str], int]:
    """One session (one user) per conversation, posted concurrently; returns (session ids, errors)."""
    errors = 0

    async def one(index: int, bodies: list[dict]) -> str:
        nonlocal errors
        r = await client.post("/api/v1/sessions", json={
            "tenant_id": tenant, "user_id": f"u{index}", "agent_id": "default", "metadata": {"bench": BENCH}})
        r.raise_for_status()
        session_id = r.json()["session_id"]
        for body in bodies:
            response = await client.post(f"/api/v1/sessions/{session_id}/interactions", json=body)
            if response.status_code != 201:
                errors += 1
        return session_id

    ids = await asyncio.gather(*(one(first_user + i, c) for i, c in enumerate(conversations)))
    return list(ids), errors


async def wait_consolidated(client, session_ids: list[str], timeout_s: float, stack) -> tuple[bool, int]:
    """Poll GetSession until every session has pending_events == 0; (done, pending left)."""
    deadline = time.monotonic() + timeout_s
    left = set(session_ids)
    pending = 0
    while left and time.monotonic() < deadline:
        stack.assert_running()
        pending = 0
        for session_id in list(left):
            r = await client.get(f"/api/v1/sessions/{session_id}")
            r.raise_for_status()
            n = r.json()["pending_events"]
            if n == 0:
                left.discard(session_id)
            pending += n
        if left:
            await asyncio.sleep(0.25)
    return not left, pending


def count_chains(data_dir: Path, tenant: str, users: int) -> int:
    from athena_core.models.scope import UserScope
    from athena_core.stores.documents.sqlite_documents import SqliteDocuments

    documents = SqliteDocuments(data_dir / "athena.sqlite3")
    try:
        return sum(len(documents.recent_chains(UserScope(tenant_id=tenant, user_id=f"u{i}"), limit=100_000,
                                               status=None)) for i in range(users))
    finally:
        documents.close()


async def measure(stack, worker: str, workers: int, args: argparse.Namespace, run_id: str,
                  conversations: list[list[dict]], rng: random.Random) -> dict:
    import httpx

    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=stack.base_url, limits=limits, timeout=60.0, trust_env=False) as client:
        # Warm-up (untimed): until every prefork child has run a segment/summarize task (model loaded).
        t0 = time.perf_counter()
        rounds = 0
        while rounds < 4 and len(warm_children(stack, worker)) < workers:
            warm = [conversation(rng, BASE_TIME, 2, 2) for _ in range(workers)]
            ids, _ = await post_conversations(client, f"bench-{run_id}-warm-w{workers}", warm, first_user=100 * rounds)
            await wait_consolidated(client, ids, args.timeout, stack)
            rounds += 1
        warm_s = time.perf_counter() - t0
        warmed = len(warm_children(stack, worker))
        log(f"[pipeline w={workers}] warm-up: {warmed}/{workers} children warm after {rounds} round(s), {warm_s:.1f} s")
        load_before = load_avg()
        started = time.perf_counter()
        session_ids, errors = await post_conversations(client, f"bench-{run_id}-w{workers}", conversations)
        ingest_s = time.perf_counter() - started
        done, pending = await wait_consolidated(client, session_ids, args.timeout, stack)
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "ingest_s": ingest_s, "errors": errors, "done": done, "pending_left": pending,
            "warmup_s": warm_s, "warm_children": warmed, "load_avg_before": load_before, "load_avg_after": load_avg()}


def run_configs(worker_counts: list[int], args: argparse.Namespace, root: Path, run_id: str,
                records: list[dict], stamp: str) -> None:
    """One stack (Redis, API, beat); per configuration a fresh worker with `-c workers` and a fresh tenant."""
    from athena_core.wiring.settings import Settings
    from athena_devtools.stack import Stack

    data_dir = root / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    env_backup = os.environ.pop("ATHENA_REDIS_URL", None)  # always the embedded Redis: no shared state
    settings = Settings(data_dir=data_dir, api_host="127.0.0.1", api_port=free_port(),
                        document_store="sqlite", auth_mode="off")
    extra_env = {
        "ATHENA_AUTH_MODE": "off", "ATHENA_DOCUMENT_STORE": "sqlite", "ATHENA_PRODUCTION": "0",
        "ATHENA_LLM_PROVIDER": "offline", "ATHENA_EMBEDDING_PROVIDER": "local", "ATHENA_VECTOR_STORE": "sqlite",
        "ATHENA_IDLE_FLUSH_EVERY_S": "1", "ATHENA_SEGMENT_IDLE_S": "1",
    }
    if args.omp_threads:
        extra_env["OMP_NUM_THREADS"] = str(args.omp_threads)
    stack = Stack(settings=settings, with_beat=True, extra_env=extra_env)
    try:
        stack.start_redis()
        stack.start_api()
        stack.start_beat()
        stack.start_beat_worker()  # idle flush and the sweeps run on the beat queue's own worker (issue 13)
        stack.wait_for_api(90.0)
        for workers in worker_counts:
            rng = random.Random(args.seed)  # the same conversations for every configuration
            conversations = [conversation(rng, BASE_TIME + timedelta(days=i), args.topics, args.turns)
                             for i in range(args.conversations)]
            events = sum(2 * len(c) for c in conversations)  # StoreInteraction stores user + agent events
            worker = f"worker{workers}"
            stack.worker_concurrency = workers
            stack.start_worker(worker)
            try:
                if not worker_ready(stack, worker, 120.0):
                    stack.assert_running()
                    raise RuntimeError(f"the Celery worker {worker} did not become ready")
                result = asyncio.run(measure(stack, worker, workers, args, run_id, conversations, rng))
            finally:
                stack.stop_process(worker)
            chains = count_chains(data_dir, f"bench-{run_id}-w{workers}", len(conversations))
            record = {
                "bench": BENCH,
                "workers": workers,
                "conversations": len(conversations),
                "events": events,
                "seconds": round(result["seconds"], 3),
                "events_per_s": round(events / result["seconds"], 2),
                "ingest_seconds": round(result["ingest_s"], 3),
                "chains": chains,
                "events_per_chain": round(events / chains, 2) if chains else None,
                "consolidated": result["done"],
                "pending_left": result["pending_left"],
                "errors": result["errors"],
                "warmup_seconds": round(result["warmup_s"], 2),
                "warm_children": result["warm_children"],
                "omp_threads": args.omp_threads,
                "load_avg_before": result["load_avg_before"],
                "load_avg_after": result["load_avg_after"],
                **machine_info(),
            }
            emit(record)
            records.append(record)
            save_results(BENCH, records, stamp)
    finally:
        stack.stop()
        if env_backup is not None:
            os.environ["ATHENA_REDIS_URL"] = env_backup


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="4 conversations x 2 topics x 3 interactions")
    p.add_argument("--conversations", type=int, default=None)
    p.add_argument("--topics", type=int, default=None, help="topics per conversation (3; quick 2)")
    p.add_argument("--turns", type=int, default=None, help="interactions per topic")
    p.add_argument("--workers", default="1,2", help="comma-separated worker concurrencies")
    p.add_argument("--timeout", type=float, default=None, help="max seconds to wait for consolidation")
    p.add_argument("--omp-threads", type=int, default=None,
                   help="set OMP_NUM_THREADS (torch intra-op threads) in every process; default: as shipped (unset)")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    if args.conversations is None:
        args.conversations = 4 if args.quick else 24
    if args.topics is None:
        args.topics = 2 if args.quick else 3
    if args.turns is None:
        args.turns = 3 if args.quick else 4
    if args.timeout is None:
        args.timeout = 120.0 if args.quick else 900.0
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    worker_counts = [int(w) for w in args.workers.split(",") if w.strip()]
    run_id = uuid.uuid4().hex[:8]
    stamp = utc_stamp()
    records: list[dict] = []
    root = Path(tempfile.mkdtemp(prefix="athena-bench-pipeline-"))
    try:
        run_configs(worker_counts, args, root, run_id, records, stamp)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    by_workers = {r["workers"]: r for r in records}
    if 1 in by_workers and 2 in by_workers:
        summary = {
            "bench": "pipeline_summary",
            "events": by_workers[1]["events"],
            "events_per_s_1": by_workers[1]["events_per_s"],
            "events_per_s_2": by_workers[2]["events_per_s"],
            "ratio_2_over_1": round(by_workers[2]["events_per_s"] / by_workers[1]["events_per_s"], 3),
            "load_avg": load_avg(),
            **machine_info(),
        }
        emit(summary)
        records.append(summary)
        save_results(BENCH, records, stamp)
    # A request error is a failure; a slow consolidation is only a number (`consolidated: false`).
    return 1 if any(r.get("errors") for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
