"""Pipeline benchmark (SPEC S9, issue 15): events/s to consolidated and to searchable, freshness under a
sustained load, time per step, the embedding floor and the ratio to it, 1 vs 2 worker processes.

    python bench/pipeline.py            # burst: 24 conversations x 3 topics x 4 interactions (= 576 events);
                                        # sustained: 200 events/s for 10 s (= 2,000 events);
                                        # saturation: 300 events/s for 10 s (= 3,000 events)
    python bench/pipeline.py --quick    # burst 4 x 2 x 3 (= 48 events); sustained 100 events/s for 3 s

It starts the real stack as processes with `Stack` in a temporary ATHENA_DATA_DIR on a free 127.0.0.1
port: embedded Redis, the API under uvicorn and beat (idle flush every second: ATHENA_IDLE_FLUSH_EVERY_S=1,
ATHENA_SEGMENT_IDLE_S=1), with the offline LLM and the local embedder. Then, per worker concurrency
(1, then 2 prefork processes), a fresh Celery worker (`-c 1` / `-c 2`) and fresh tenants:

  1. warm-up (untimed): small conversations in a separate tenant, repeated (at most 4 rounds) until the
     worker log shows every prefork child ran a index_events or summarize task (both embed), so loading the embedding model
     in the children is not in the figure;
  2. burst: N conversations (one session = one user each, multi-topic synthetic text with timestamps
     2 minutes apart and 1 hour between topics) posted over HTTP with StoreInteraction, one client task
     per conversation, concurrently. Two clocks run from the first post: `searchable_s` until every event
     of the tenant is indexed (`indexed_at`, lexical and dense), `seconds` until nothing is pending and
     every event and chain is indexed (read from the SQLite store, polled every 0.1 s);
  3. sustained: interactions posted at a fixed rate (`--rate` events/s, two events per interaction) for
     `--duration` s over the same number of users; the same two clocks, and freshness: per event, the time
     from its acceptance (`received_at`, stamped before the 201) to `indexed_at` (the commit after which
     SearchMemory finds it), p50/p99/max;
  4. saturation: the same at `--saturation-rate` (1.5 x `--rate`, 300 events/s) over other conversations.
     At 200 events/s offered for 10 s, the consolidated clock cannot beat 2,000 events / (10 s of posting
     + the 1 s idle wait + the beat tick) = ~165 events/s whatever the pipeline does; offered more than the
     target, the clock measures the pipeline (the issue's "≥ 200 events/s end to end");
  5. per step: the worker log's "Task <name> succeeded in <s>" lines of the timed phases, summed per task.

After each configuration, the embedding floor of its texts (in this process, on the torch threads of one
worker process of the configuration, in the same load window): the time to embed, in batches of 256, just the texts the pipeline must
embed for its burst and sustained tenants (each distinct event text and sentence, each final chain's
`search_text`), as events/s; each record carries `ratio_to_floor` = its events/s over that floor's. The
floor is also timed per phase (`phase_floor_events_per_s`, `ratio_to_phase_floor`): the burst's distinct
texts, then the sustained phase's texts the burst did not have (the worker's cache holds those). The
burst needs many more distinct texts per event than the sustained phase (which repeats the templates),
so against the combined floor the burst's ratio looks worse, the sustained phase's better.

The consolidated clock includes the idle wait of each conversation's last topic (ATHENA_SEGMENT_IDLE_S
after its last event, 1 s here, 1800 s as shipped; then the next beat tick, every 1 s here): no pipeline
can be faster than that. `events_per_s_net_of_idle` takes ATHENA_SEGMENT_IDLE_S off the clock (the tick
stays in).

`--worker-threads` sets ATHENA_EMBEDDING_THREADS for the pipeline worker only: `shipped` (default) leaves
the setting at its default (1 thread per process); `auto` gives each prefork process its share of the cores
(2 cores: `-c 1` -> 2 threads, `-c 2` -> 1 each); the floor then runs on as many threads.

`--omp-threads 1` sets OMP_NUM_THREADS (torch intra-op threads) in the stack's processes; default unset,
as shipped. Every line records it.

One JSON line per configuration and phase, then a summary line with `ratio_2_over_1` (events/s with 2
workers over 1, both measured in this run) and the floor. The synthetic text generators below are also
used by bench/reads.py.
"""
from __future__ import annotations

import argparse
import asyncio
import math
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


WARM_TASK = re.compile(r"ForkPoolWorker-(\d+)\] Task athena\.pipeline\.(?:index_events|summarize)\[")  # both embed


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


def warm_children(stack, name: str, since: int = 0) -> set[str]:
    """Prefork children that ran a index_events or summarize task since log offset `since` (the worker's start: a
    log of the same name may remain from an earlier run), and so loaded the embedder."""
    return set(WARM_TASK.findall(worker_log(stack, name)[since:]))


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


def store_counts(data_dir: Path, tenant: str) -> tuple[int, int, int]:
    """(pending events, events not indexed, active chains not indexed) of the tenant, read from SQLite."""
    import sqlite3

    conn = sqlite3.connect(f"file:{data_dir / 'athena.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        pending, unindexed = conn.execute(
            "SELECT COALESCE(SUM(status = 'pending'), 0), COALESCE(SUM(indexed_at IS NULL), 0) FROM events "
            "WHERE tenant_id = ?", (tenant,)).fetchone()
        chains = conn.execute("SELECT COUNT(*) FROM chains WHERE tenant_id = ? AND status = 'active' "
                              "AND indexed_at IS NULL", (tenant,)).fetchone()[0]
        return int(pending), int(unindexed), int(chains)
    finally:
        conn.close()


async def wait_done(data_dir: Path, tenant: str, expected_events: int, started: float, timeout_s: float,
                    stack) -> dict:
    """Poll the store until every event of the tenant is indexed (searchable) and nothing is pending and
    every chain indexed (done); seconds since `started` for both, or None when the timeout came first."""
    deadline = time.monotonic() + timeout_s
    searchable_at = done_at = None
    left = (expected_events, expected_events, 0)
    while time.monotonic() < deadline:
        stack.assert_running()
        left = store_counts(data_dir, tenant)
        total = count_events(data_dir, tenant)
        now = time.perf_counter()
        if total >= expected_events and left[1] == 0 and searchable_at is None:
            searchable_at = now - started
        if total >= expected_events and left == (0, 0, 0):
            done_at = now - started
            break
        await asyncio.sleep(0.1)
    return {"searchable_s": searchable_at, "seconds": done_at, "pending_left": left[0], "unindexed_left": left[1],
            "chains_unindexed_left": left[2]}


def count_chains(data_dir: Path, tenant: str, users: int) -> int:
    """The tenant's chains (any status) in the SQLite document store afterwards."""
    import sqlite3

    conn = sqlite3.connect(f"file:{data_dir / 'athena.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM chains WHERE tenant_id = ?", (tenant,)).fetchone()[0])
    finally:
        conn.close()


def count_events(data_dir: Path, tenant: str) -> int:
    import sqlite3

    conn = sqlite3.connect(f"file:{data_dir / 'athena.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM events WHERE tenant_id = ?", (tenant,)).fetchone()[0])
    finally:
        conn.close()


def freshness(data_dir: Path, tenant: str) -> dict:
    """Seconds from acceptance (`received_at`, before the 201) to `indexed_at`, over the tenant's events."""
    import sqlite3

    conn = sqlite3.connect(f"file:{data_dir / 'athena.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        lags = sorted(r[0] for r in conn.execute(
            "SELECT indexed_at - received_at FROM events WHERE tenant_id = ? AND indexed_at IS NOT NULL",
            (tenant,)))
    finally:
        conn.close()
    if not lags:
        return {"freshness_p50_s": None, "freshness_p99_s": None, "freshness_max_s": None}

    def pct(q: float) -> float:
        return round(lags[min(len(lags) - 1, int(q * len(lags)))], 3)
    return {"freshness_p50_s": pct(0.50), "freshness_p99_s": pct(0.99), "freshness_max_s": round(lags[-1], 3),
            "freshness_events": len(lags)}


STEP_LINE = re.compile(r"Task (athena\.pipeline\.\w+)\[[^\]]+\] succeeded in ([0-9.eE+-]+)s")


def step_times(log_text: str) -> dict:
    """Per pipeline task: runs and summed seconds, from the worker log's "succeeded in" lines."""
    out: dict[str, dict] = {}
    for name, seconds in STEP_LINE.findall(log_text):
        step = out.setdefault(name.rsplit(".", 1)[-1], {"runs": 0, "seconds": 0.0})
        step["runs"] += 1
        step["seconds"] += float(seconds)
    return {k: {"runs": v["runs"], "seconds": round(v["seconds"], 3)} for k, v in sorted(out.items())}


async def post_paced(client, tenant: str, conversations: list[list[dict]], rate_events_s: float,
                     duration_s: float) -> tuple[int, int]:
    """Interactions (2 events each) at a fixed rate, round-robin over one session per conversation, for
    `duration_s`; returns (events posted, errors). A post that cannot keep to the schedule is sent late
    (`ingest_s` beyond the duration shows it)."""
    sessions = []
    for i in range(len(conversations)):
        r = await client.post("/api/v1/sessions", json={"tenant_id": tenant, "user_id": f"u{i}",
                                                         "agent_id": "default", "metadata": {"bench": BENCH}})
        r.raise_for_status()
        sessions.append(r.json()["session_id"])
    total = int(rate_events_s * duration_s / 2)
    interval = 2.0 / rate_events_s
    cursors = [0] * len(conversations)
    errors = 0
    started = time.perf_counter()
    in_flight: set[asyncio.Task] = set()

    async def one(session_id: str, body: dict) -> None:
        nonlocal errors
        response = await client.post(f"/api/v1/sessions/{session_id}/interactions", json=body)
        if response.status_code != 201:
            errors += 1

    for k in range(total):
        delay = started + k * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        c = k % len(conversations)
        body = conversations[c][cursors[c] % len(conversations[c])]
        cursors[c] += 1
        task = asyncio.create_task(one(sessions[c], body))
        in_flight.add(task)
        task.add_done_callback(in_flight.discard)
    await asyncio.gather(*in_flight)
    return 2 * total, errors


MISS_LINE = re.compile(r'^athena_embedding_cache_total\{result="miss"\}\s+([0-9.eE+]+)', re.M)


async def texts_embedded(client) -> float | None:
    """Embedding cache misses of every process of the stack so far (the API's /metrics sums them): the texts
    the model embedded. None when /metrics does not answer."""
    try:
        response = await client.get("/metrics")
    except Exception:  # noqa: BLE001 - a figure, not a failure
        return None
    match = MISS_LINE.search(response.text) if response.status_code == 200 else None
    return float(match.group(1)) if match else None


def delta(after: float | None, before: float | None) -> int | None:
    return None if after is None or before is None else int(after - before)


async def measure(stack, worker: str, workers: int, args: argparse.Namespace, run_id: str,
                  conversations: list[list[dict]], rng: random.Random, data_dir: Path, log_start: int) -> list[dict]:
    import httpx

    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    results = []
    async with httpx.AsyncClient(base_url=stack.base_url, limits=limits, timeout=60.0, trust_env=False) as client:
        # Warm-up (untimed): until every prefork child has run a index_events or summarize task (model loaded).
        t0 = time.perf_counter()
        rounds = 0
        while rounds < 4 and len(warm_children(stack, worker, log_start)) < workers:
            warm = [conversation(rng, BASE_TIME, 2, 2) for _ in range(workers)]
            tenant = f"bench-{run_id}-warm-w{workers}-{rounds}"
            await post_conversations(client, tenant, warm, first_user=100 * rounds)
            await wait_done(data_dir, tenant, sum(2 * len(c) for c in warm), time.perf_counter(), args.timeout, stack)
            rounds += 1
        warm_s = time.perf_counter() - t0
        warmed = len(warm_children(stack, worker, log_start))
        log(f"[pipeline w={workers}] warm-up: {warmed}/{workers} children warm after {rounds} round(s), {warm_s:.1f} s")

        # Burst: every conversation at once, as fast as the clients go.
        tenant = f"bench-{run_id}-w{workers}"
        events = sum(2 * len(c) for c in conversations)
        log_offset = len(worker_log(stack, worker))
        load_before = load_avg()
        misses_before = await texts_embedded(client)
        started = time.perf_counter()
        _, errors = await post_conversations(client, tenant, conversations)
        ingest_s = time.perf_counter() - started
        done = await wait_done(data_dir, tenant, events, started, args.timeout, stack)
        results.append({"phase": "burst", "tenant": tenant, "events": events, "ingest_s": ingest_s, "errors": errors,
                        "texts_embedded": delta(await texts_embedded(client), misses_before),
                        **done, **freshness(data_dir, tenant),
                        "steps": step_times(worker_log(stack, worker)[log_offset:]),
                        "warmup_s": warm_s, "warm_children": warmed, "load_avg_before": load_before,
                        "load_avg_after": load_avg()})

        # Sustained: a fixed rate for a fixed time (freshness at the SPEC's 200 events/s), then saturation:
        # more than the target offered, so the consolidated clock is the pipeline's, not the offered rate's.
        for name, rate, seed, days in (("sustained", args.rate, args.seed + 1, 1000),
                                       ("saturation", args.saturation_rate, args.seed + 2, 2000)):
            if rate <= 0:
                continue
            results.append(await paced_phase(client, stack, worker, args, data_dir, conversations,
                                             name=name, tenant=f"bench-{run_id}-w{workers}-{name}", rate=rate,
                                             rng=random.Random(seed), first_day=days))
    return results


async def paced_phase(client, stack, worker: str, args: argparse.Namespace, data_dir: Path,
                      conversations: list[list[dict]], *, name: str, tenant: str, rate: float,
                      rng: random.Random, first_day: int) -> dict:
    """Interactions posted at `rate` events/s for `--duration` s over fresh conversations (one per burst
    conversation, long enough for it, every topic), then both clocks and freshness."""
    per_user = math.ceil(rate * args.duration / 2 / len(conversations))
    turns = math.ceil(per_user / len(TOPIC_NAMES))
    paced = [conversation(rng, BASE_TIME + timedelta(days=first_day + i), len(TOPIC_NAMES), turns)
             for i in range(len(conversations))]
    log_offset = len(worker_log(stack, worker))
    load_before = load_avg()
    misses_before = await texts_embedded(client)
    started = time.perf_counter()
    events, errors = await post_paced(client, tenant, paced, rate, args.duration)
    ingest_s = time.perf_counter() - started
    done = await wait_done(data_dir, tenant, events, started, args.timeout, stack)
    return {"phase": name, "tenant": tenant, "events": events, "ingest_s": ingest_s,
            "texts_embedded": delta(await texts_embedded(client), misses_before),
            "errors": errors, "offered_events_per_s": rate, **done, **freshness(data_dir, tenant),
            "steps": step_times(worker_log(stack, worker)[log_offset:]),
            "load_avg_before": load_before, "load_avg_after": load_avg()}


def texts_to_embed(data_dir: Path, tenants: list[str], sentence_min_words: int) -> list[str]:
    """The distinct texts the pipeline must embed for these tenants: event texts (and the sentences of long
    ones, as the index step splits them) and each chain's final `search_text`. The texts of one phase are
    the phase's floor; `phase_texts` splits them per phase."""
    from athena_core.models.chains import Chain
    from athena_core.retrieval.sentences import sentence_texts
    import sqlite3

    conn = sqlite3.connect(f"file:{data_dir / 'athena.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        marks = ",".join("?" * len(tenants))
        texts: dict[str, None] = {}
        for (content,) in conn.execute(f"SELECT content FROM events WHERE tenant_id IN ({marks})", tenants):
            if content.strip():
                texts[content] = None
                for sentence in sentence_texts(content, sentence_min_words):
                    texts[sentence] = None
        for (doc,) in conn.execute(f"SELECT doc FROM chains WHERE tenant_id IN ({marks})", tenants):
            texts[Chain.model_validate_json(doc).search_text] = None
        return list(texts)
    finally:
        conn.close()


def phase_texts(data_dir: Path, tenants: list[str], sentence_min_words: int) -> list[list[str]]:
    """Per phase (in order), the distinct texts it needs that no earlier phase of the configuration needed:
    a worker's embedding cache keeps what it embedded, so a text the burst embedded costs the sustained
    phase nothing. Together they are `texts_to_embed` of all the tenants."""
    seen: set[str] = set()
    out = []
    for tenant in tenants:
        fresh = [t for t in texts_to_embed(data_dir, [tenant], sentence_min_words) if t not in seen]
        seen.update(fresh)
        out.append(fresh)
    return out


def embedding_floor(texts: list[str], threads: int,
                    per_phase: list[list[str]] | None = None) -> dict:
    """Seconds to embed `texts` in batches of 256 with the local model, on as many torch threads as each
    worker process of the configuration has (`threads`), in the precision the workers embed stored texts in
    (`ATHENA_EMBEDDING_TEXT_PRECISION`), so the ratio to the floor compares like with like;
    with `per_phase` (a split of `texts`), each part is timed on its own (`phase_seconds`) and `seconds`
    is their sum."""
    from athena_core.providers.local_embedder import LocalEmbedder
    from athena_core.wiring.settings import Settings

    embedder = LocalEmbedder(threads=threads, batch_size=64, text_precision=Settings().embedding_text_precision)
    embedder.embed(["warm up"])
    load_before = load_avg()
    phase_seconds = []
    for part in (per_phase if per_phase is not None else [texts]):
        started = time.perf_counter()
        for i in range(0, len(part), 256):
            embedder.embed(part[i:i + 256])
        phase_seconds.append(time.perf_counter() - started)
    return {"texts": len(texts), "threads": threads, "text_precision": embedder.text_precision,
            "seconds": round(sum(phase_seconds), 3),
            "phase_texts": [len(p) for p in (per_phase or [texts])],
            "phase_seconds": [round(x, 3) for x in phase_seconds],
            "load_avg_before": load_before, "load_avg_after": load_avg()}


IDLE_S = 1  # ATHENA_SEGMENT_IDLE_S of the stack


def worker_threads(option: str, workers: int) -> int | None:
    """ATHENA_EMBEDDING_THREADS for a worker with `workers` processes: `auto` gives each process its share of
    the cores (2 cores: -c 1 -> 2 threads, -c 2 -> 1 each), `shipped` leaves the setting alone (1), a number
    is taken as it is."""
    if option == "shipped":
        return None
    if option == "auto":
        return max(1, (os.cpu_count() or 1) // max(1, workers))
    return max(1, int(option))


def run_configs(worker_counts: list[int], args: argparse.Namespace, root: Path, run_id: str,
                records: list[dict], stamp: str) -> dict[int, dict]:
    """One stack (Redis, API, beat); per configuration a fresh worker with `-c workers` and fresh tenants,
    then the embedding floor of that configuration's texts. Returns the floors by worker count."""
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
        "ATHENA_IDLE_FLUSH_EVERY_S": "1", "ATHENA_SEGMENT_IDLE_S": str(IDLE_S),
    }
    if args.omp_threads:
        extra_env["OMP_NUM_THREADS"] = str(args.omp_threads)
    stack = Stack(settings=settings, with_beat=True, extra_env=extra_env)
    floors: dict[int, dict] = {}
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
            worker = f"worker{workers}"
            stack.worker_concurrency = workers
            threads = worker_threads(args.worker_threads, workers)
            if threads is None:
                stack.extra_env.pop("ATHENA_EMBEDDING_THREADS", None)
            else:  # the API and the beat worker are running already: only this worker gets it
                stack.extra_env["ATHENA_EMBEDDING_THREADS"] = str(threads)
            log_start = len(worker_log(stack, worker))
            stack.start_worker(worker)
            try:
                if not worker_ready(stack, worker, 120.0):
                    stack.assert_running()
                    raise RuntimeError(f"the Celery worker {worker} did not become ready")
                phases = asyncio.run(measure(stack, worker, workers, args, run_id, conversations, rng, data_dir,
                                             log_start))
            finally:
                stack.stop_process(worker)
            # The floor of this configuration's texts, measured now (the same load window as its phases).
            tenants = [p["tenant"] for p in phases]
            texts = texts_to_embed(data_dir, tenants, settings.search_sentence_min_words)
            floor = embedding_floor(texts, threads or args.omp_threads or 1,
                                    phase_texts(data_dir, tenants, settings.search_sentence_min_words))
            floor_events = sum(p["events"] for p in phases)
            floor.update({"bench": "pipeline_embedding_floor", "workers": workers, "events": floor_events,
                          "events_per_s": round(floor_events / floor["seconds"], 2) if floor["seconds"] else None,
                          **machine_info()})
            floors[workers] = floor
            for phase, phase_floor_s in zip(phases, floor["phase_seconds"]):
                chains = count_chains(data_dir, phase["tenant"], len(conversations))
                seconds, searchable = phase["seconds"], phase["searchable_s"]
                phase_floor = round(phase["events"] / phase_floor_s, 2) if phase_floor_s else None
                # The last topic of a conversation is consolidated only once the scope was idle for
                # ATHENA_SEGMENT_IDLE_S after its last event (SPEC S4; 1800 s as shipped, 1 s here): a wait
                # no pipeline can shorten. `net_of_idle` takes it off the clock (the beat tick, <= 1 s, stays).
                net = None if seconds is None else seconds - IDLE_S
                record = {
                    "bench": BENCH,
                    "phase": phase["phase"],
                    "workers": workers,
                    "conversations": len(conversations),
                    "events": phase["events"],
                    "seconds": None if seconds is None else round(seconds, 3),
                    "events_per_s": None if seconds is None else round(phase["events"] / seconds, 2),
                    "searchable_seconds": None if searchable is None else round(searchable, 3),
                    "events_per_s_searchable": None if searchable is None else round(phase["events"] / searchable, 2),
                    "segment_idle_s": IDLE_S,
                    "events_per_s_net_of_idle": round(phase["events"] / net, 2) if net and net > 0 else None,
                    "ingest_seconds": round(phase["ingest_s"], 3),
                    # texts the model embedded in the phase (all processes) against the floor's distinct texts
                    "texts_embedded": phase.get("texts_embedded"),
                    "floor_texts": floor["phase_texts"][phases.index(phase)],
                    "offered_events_per_s": phase.get("offered_events_per_s"),
                    "freshness_p50_s": phase["freshness_p50_s"],
                    "freshness_p99_s": phase["freshness_p99_s"],
                    "freshness_max_s": phase["freshness_max_s"],
                    "chains": chains,
                    "events_per_chain": round(phase["events"] / chains, 2) if chains else None,
                    "consolidated": seconds is not None,
                    "pending_left": phase["pending_left"],
                    "unindexed_left": phase["unindexed_left"],
                    "chains_unindexed_left": phase["chains_unindexed_left"],
                    "errors": phase["errors"],
                    "steps": phase["steps"],
                    "warmup_seconds": round(phase["warmup_s"], 2) if "warmup_s" in phase else None,
                    "warm_children": phase.get("warm_children"),
                    "omp_threads": args.omp_threads,
                    "worker_embedding_threads": threads,
                    "load_avg_before": phase["load_avg_before"],
                    "load_avg_after": phase["load_avg_after"],
                    "floor_events_per_s": floor["events_per_s"],
                    "ratio_to_floor": (round(phase["events"] / seconds / floor["events_per_s"], 3)
                                       if seconds and floor["events_per_s"] else None),
                    "phase_floor_events_per_s": phase_floor,
                    "ratio_to_phase_floor": (round(phase["events"] / seconds / phase_floor, 3)
                                             if seconds and phase_floor else None),
                    **machine_info(),
                }
                emit(record)
                records.append(record)
            emit(floor)
            records.append(floor)
            save_results(BENCH, records, stamp)
        return floors
    finally:
        stack.stop()
        if env_backup is not None:
            os.environ["ATHENA_REDIS_URL"] = env_backup


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="burst 4 x 2 x 3; sustained 100 events/s for 3 s")
    p.add_argument("--conversations", type=int, default=None)
    p.add_argument("--topics", type=int, default=None, help="topics per conversation (3; quick 2)")
    p.add_argument("--turns", type=int, default=None, help="interactions per topic")
    p.add_argument("--rate", type=float, default=None, help="sustained phase: offered events/s (200; quick 100)")
    p.add_argument("--duration", type=float, default=None, help="sustained phase: seconds of load (10; quick 3)")
    p.add_argument("--saturation-rate", type=float, default=None,
                   help="saturation phase: offered events/s, above the target so the pipeline, not the offered "
                        "rate, sets the consolidated clock (1.5 x --rate; 0 skips it)")
    p.add_argument("--workers", default="1,2", help="comma-separated worker concurrencies")
    p.add_argument("--timeout", type=float, default=None, help="max seconds to wait for consolidation")
    p.add_argument("--omp-threads", type=int, default=None,
                   help="set OMP_NUM_THREADS (torch intra-op threads) in every process; default: as shipped (unset)")
    p.add_argument("--worker-threads", default="shipped",
                   help="ATHENA_EMBEDDING_THREADS of the pipeline worker: auto (cores // processes), shipped "
                        "(unset: 1), or a number")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    if args.conversations is None:
        args.conversations = 4 if args.quick else 24
    if args.topics is None:
        args.topics = 2 if args.quick else 3
    if args.turns is None:
        args.turns = 3 if args.quick else 4
    if args.rate is None:
        args.rate = 100.0 if args.quick else 200.0
    if args.saturation_rate is None:
        args.saturation_rate = 1.5 * args.rate
    if args.duration is None:
        args.duration = 3.0 if args.quick else 10.0
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
        floors = run_configs(worker_counts, args, root, run_id, records, stamp)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    burst = {r["workers"]: r for r in records if r.get("phase") == "burst"}
    sustained = {r["workers"]: r for r in records if r.get("phase") == "sustained"}
    saturation = {r["workers"]: r for r in records if r.get("phase") == "saturation"}
    summary = {"bench": "pipeline_summary", "events": burst.get(worker_counts[0], {}).get("events")}
    for w in worker_counts:
        summary[f"floor_events_per_s_{w}"] = floors.get(w, {}).get("events_per_s")
        for name, phase in (("burst", burst), ("sustained", sustained), ("saturation", saturation)):
            r = phase.get(w, {})
            summary[f"{name}_events_per_s_{w}"] = r.get("events_per_s")
            summary[f"{name}_events_per_s_searchable_{w}"] = r.get("events_per_s_searchable")
            summary[f"{name}_ratio_to_floor_{w}"] = r.get("ratio_to_floor")
            summary[f"{name}_ratio_to_phase_floor_{w}"] = r.get("ratio_to_phase_floor")
            summary[f"{name}_events_per_s_net_of_idle_{w}"] = r.get("events_per_s_net_of_idle")
        summary[f"sustained_freshness_p50_s_{w}"] = sustained.get(w, {}).get("freshness_p50_s")
        summary[f"sustained_freshness_p99_s_{w}"] = sustained.get(w, {}).get("freshness_p99_s")
        summary[f"saturation_freshness_p99_s_{w}"] = saturation.get(w, {}).get("freshness_p99_s")
    if burst.get(1, {}).get("events_per_s") and burst.get(2, {}).get("events_per_s"):
        summary["ratio_2_over_1"] = round(burst[2]["events_per_s"] / burst[1]["events_per_s"], 3)
    if saturation.get(1, {}).get("events_per_s") and saturation.get(2, {}).get("events_per_s"):
        summary["saturation_ratio_2_over_1"] = round(
            saturation[2]["events_per_s"] / saturation[1]["events_per_s"], 3)
    summary.update({"load_avg": load_avg(), **machine_info()})
    emit(summary)
    records.append(summary)
    save_results(BENCH, records, stamp)
    # A request error is a failure; a slow consolidation is only a number (`consolidated: false`).
    return 1 if any(r.get("errors") for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
