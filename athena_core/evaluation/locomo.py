"""`athena eval locomo` (SPEC S9 "Quality", issue 5): LoCoMo through the real API and pipeline.

Steps: start a `Stack` (embedded Redis, API, Celery worker + beat) in a temporary data dir with fast
idle-flush schedules; ingest each conversation as one user (tenant ``locomo``, user = sample_id), one
Athena session per LoCoMo session, every turn a StoreEvent (speaker_a → role user, speaker_b → role agent,
content "Speaker: text [shares a photo: caption]", timestamp from the session's date_time + 30 s per turn,
metadata {"turn_id": "D3:14", "session": "3"}); wait until no event is pending; ask every question through
SearchMemory (k results) and map each returned chain → its events → their turn ids via the event log
(opened beside the running stack); score with `scoring`, beside BM25 and dense baselines over the same
turns computed in the same run; write JSON + markdown under `bench/results/`.

The dataset is CC BY-NC 4.0: it is read in place and nothing of its text goes into the written results
(questions are identified by "<sample_id>#<qa index>", results by turn ids and chain ids).
"""
from __future__ import annotations

import json
from collections import Counter
import re
import shutil
import socket
import statistics
import sqlite3
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

from athena_core.evaluation import baselines, scoring
from athena_core.evaluation.scoring import CATEGORY_NAMES, Question, Result

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATASET = REPO_ROOT.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
DEFAULT_OUT = REPO_ROOT / "bench" / "results"
TENANT = "locomo"
TURN_SPACING_S = 30
BASELINE_POOL = 200  # turns each baseline ranks per question
FAST_ENV = {"ATHENA_IDLE_FLUSH_EVERY_S": "2", "ATHENA_SEGMENT_IDLE_S": "2"}

Echo = Callable[[str], None]


# ---------------------------------------------------------------------------------------------- loading


@dataclass
class Turn:
    turn_id: str  # "D3:14"
    session: str  # "3"
    speaker: str
    role: str  # user | agent
    content: str
    timestamp: datetime


@dataclass
class LocomoSession:
    number: int
    date_time: str
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[LocomoSession]
    questions: list[Question]
    dropped_no_evidence: int = 0
    dropped_out_of_slice: int = 0

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M%p on %d %B, %Y", "%I:%M %p on %B %d, %Y")


def parse_locomo_datetime(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" → 2023-05-08T13:56:00+00:00 (the dataset has no zone; UTC is assumed)."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    match = re.search(r"(\d{1,2}):(\d{2})\s*([ap]m).*?(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", cleaned, re.I)
    if not match:
        raise ValueError(f"unparseable LoCoMo date_time {text!r}")
    hour, minute, ampm, day, month, year = match.groups()
    parsed = datetime.strptime(f"{hour}:{minute} {ampm} {day} {month[:3]} {year}", "%I:%M %p %d %b %Y")
    return parsed.replace(tzinfo=timezone.utc)


_DIA = re.compile(r"D:?(\d+):0*(\d+)")


def normalise_evidence(raw: list[str], known: set[str]) -> list[str]:
    """LoCoMo evidence ids have typos ("D:11:26", "D30:05", several ids in one string)."""
    out: list[str] = []
    for item in raw:
        for match in _DIA.finditer(str(item)):
            dia = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia in known and dia not in out:
                out.append(dia)
    return out


def turn_content(turn: dict) -> str:
    content = f"{turn['speaker']}: {turn.get('text', '')}".rstrip()
    caption = turn.get("blip_caption")
    if caption:
        content += f" [shares a photo: {caption}]"
    return content


def load_conversations(
    path: Path, conversations: int | None = None, sessions_per_conversation: int | None = None
) -> list[Conversation]:
    """The first `conversations` samples, each cut to its first `sessions_per_conversation` sessions.

    Questions whose evidence is not a known turn are dropped; with a session cut, so are questions with
    evidence outside the kept sessions (counted in `dropped_*`).
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out: list[Conversation] = []
    for sample in data[:conversations] if conversations else data:
        conv = sample["conversation"]
        keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list) and conv[k]),
                      key=lambda k: int(k.split("_")[1]))
        all_ids = {t["dia_id"] for k in keys for t in conv[k]}
        if sessions_per_conversation:
            keys = keys[:sessions_per_conversation]
        sessions: list[LocomoSession] = []
        previous_start: datetime | None = None
        for key in keys:
            number = int(key.split("_")[1])
            date_time = conv.get(f"{key}_date_time", "")
            try:
                start = parse_locomo_datetime(date_time)
            except ValueError:
                start = (previous_start or datetime(2023, 1, 1, tzinfo=timezone.utc)) + timedelta(days=1)
            previous_start = start
            session = LocomoSession(number=number, date_time=date_time)
            for i, turn in enumerate(conv[key]):
                session.turns.append(Turn(
                    turn_id=turn["dia_id"], session=str(number), speaker=turn["speaker"],
                    role="user" if turn["speaker"] == conv["speaker_a"] else "agent",
                    content=turn_content(turn), timestamp=start + timedelta(seconds=TURN_SPACING_S * i),
                ))
            sessions.append(session)
        kept = {t.turn_id for s in sessions for t in s.turns}
        questions: list[Question] = []
        no_evidence = out_of_slice = 0
        for index, qa in enumerate(sample["qa"]):
            evidence = normalise_evidence(qa.get("evidence", []), all_ids)
            if not evidence:
                no_evidence += 1
                continue
            if not set(evidence) <= kept:
                out_of_slice += 1
                continue
            answer = qa.get("answer", qa.get("adversarial_answer", ""))
            questions.append(Question(
                key=f"{sample['sample_id']}#{index}", category=int(qa["category"]), evidence=tuple(evidence),
                answer=str(answer), question=qa["question"], conversation=sample["sample_id"],
            ))
        out.append(Conversation(sample_id=sample["sample_id"], speaker_a=conv["speaker_a"], speaker_b=conv["speaker_b"],
                                sessions=sessions, questions=questions, dropped_no_evidence=no_evidence,
                                dropped_out_of_slice=out_of_slice))
    return out


# ---------------------------------------------------------------------------------------------- ingest


def ingest_conversation(client, conv: Conversation, progress: Callable[[int], None] | None = None) -> list[str]:
    """One Athena session per LoCoMo session, every turn a StoreEvent; returns the session ids in order."""
    session_ids = []
    for session in conv.sessions:
        session_id = client.create_session(TENANT, conv.sample_id, None,
                                           {"source": "locomo", "session": str(session.number)})
        session_ids.append(session_id)
        for turn in session.turns:
            for attempt in range(5):
                try:
                    client.store_event(session_id, type="message", role=turn.role, content=turn.content,
                                       metadata={"turn_id": turn.turn_id, "session": turn.session},
                                       timestamp=turn.timestamp)
                    break
                except Exception as exc:  # 429/503 backpressure: back off and retry
                    status = getattr(exc, "status", None)
                    if status not in (429, 503) or attempt == 4:
                        raise
                    time.sleep(0.5 * (attempt + 1))
            if progress:
                progress(1)
    return session_ids


def wait_for_pipeline(client, probe_sessions: list[str], total_events: int, timeout_s: float, echo: Echo,
                      alive: Callable[[], str | None] | None = None, every_s: float = 10.0) -> dict:
    """Poll GetSession.pending_events (per user scope) until 0 everywhere or the timeout."""
    start = time.monotonic()
    last_print = 0.0
    pending = -1
    stopped = None
    while True:
        pending = sum(client.get_session(s)["pending_events"] for s in probe_sessions)
        elapsed = time.monotonic() - start
        if pending == 0:
            break
        if alive and (dead := alive()):
            echo(f"  pipeline: {dead}; stop waiting")
            stopped = dead
            break
        if elapsed >= timeout_s:
            echo(f"  pipeline: timeout after {elapsed:.0f} s with {pending} events pending")
            stopped = f"timeout after {elapsed:.0f} s"
            break
        if elapsed - last_print >= every_s:
            done = total_events - pending
            echo(f"  pipeline: {done}/{total_events} events consolidated, {pending} pending ({elapsed:.0f} s)")
            last_print = elapsed
        time.sleep(1.0)
    return {"pending_at_end": pending, "wait_s": round(time.monotonic() - start, 1), "stopped": stopped}


def wait_for_vectors(data_dir: Path, timeout_s: float, echo: Echo) -> dict:
    """pending_events == 0 once chains are formed; their vectors come one task later (embed). Wait for them.

    Reads the embedded SQLite stores read-only; with another vector store it cannot tell and returns at once.
    """
    # the embed step writes chain vectors, event vectors, then lexical docs: the last are the signal
    documents, lexical = data_dir / "athena.sqlite3", data_dir / "lexical.sqlite3"
    if not lexical.exists():
        return {"chains_without_vector": None}
    start = time.monotonic()
    missing: set[str] = set()
    while True:
        try:
            d = sqlite3.connect(f"file:{documents}?mode=ro", uri=True)
            v = sqlite3.connect(f"file:{lexical}?mode=ro", uri=True)
            try:
                active = {r[0] for r in d.execute(
                    "SELECT chain_id FROM chains WHERE tenant_id = ? AND status = 'active'", (TENANT,))}
                have = {r[0] for r in v.execute(
                    "SELECT doc_id FROM lexical_docs WHERE tenant_id = ? AND kind = 'chain'", (TENANT,))}
            finally:
                d.close()
                v.close()
            missing = active - have
        except sqlite3.Error:
            missing = {"?"}
        if not missing or time.monotonic() - start >= timeout_s:
            break
        time.sleep(1.0)
    if missing:
        echo(f"  {len(missing)} active chains still have no vector after {timeout_s:.0f} s")
    return {"chains_without_vector": len(missing), "vector_wait_s": round(time.monotonic() - start, 1)}


# ------------------------------------------------------------------------------------------- the log


class EventLogReader:
    """Event → turn id, read from the stack's SQLite event log while it runs."""

    def __init__(self, sqlite_path: Path) -> None:
        from athena_core.stores.sqlite_documents import SqliteDocuments

        self.documents = SqliteDocuments(sqlite_path)
        self._cache: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def turn_ids(self, user_id: str, event_ids: list[str]) -> dict[str, str | None]:
        from athena_core.models.scope import UserScope

        with self._lock:
            missing = [e for e in event_ids if e not in self._cache]
            if missing:
                scope = UserScope(tenant_id=TENANT, user_id=user_id)
                found = {e.event_id: e.metadata.get("turn_id") for e in self.documents.get_events(scope, missing)}
                for event_id in missing:
                    self._cache[event_id] = found.get(event_id)
            return {e: self._cache[e] for e in event_ids}

    def close(self) -> None:
        self.documents.close()


def pipeline_stats(sqlite_path: Path, conversations: list[Conversation]) -> dict:
    """What the pipeline made of the corpus: event outcomes, chains, their sizes and session spans."""
    conn = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    try:
        status = dict(conn.execute("SELECT status, COUNT(*) FROM events WHERE tenant_id = ? GROUP BY status",
                                   (TENANT,)).fetchall())
        docs = [json.loads(r[0]) for r in conn.execute("SELECT doc FROM chains WHERE tenant_id = ?", (TENANT,))]
        event_session = {
            r[0]: json.loads(r[1]).get("session")
            for r in conn.execute("SELECT event_id, metadata FROM events WHERE tenant_id = ?", (TENANT,))
        }
        dead = conn.execute("SELECT COUNT(*) FROM dead_letters").fetchone()[0]
    finally:
        conn.close()
    sizes = [d["event_count"] for d in docs]
    summary_tokens = [scoring.approx_tokens(d["summary"]) for d in docs]
    spans = [len({event_session.get(e) for e in d["event_ids"]} - {None}) for d in docs]
    quality = [d.get("quality", {}).get("overall") for d in docs if isinstance(d.get("quality"), dict)]
    n_sessions = sum(len(c.sessions) for c in conversations)

    def dist(values: list[float]) -> dict | None:
        if not values:
            return None
        ordered = sorted(values)
        return {"mean": round(statistics.fmean(ordered), 2), "median": ordered[len(ordered) // 2],
                "min": ordered[0], "max": ordered[-1]}

    return {
        "events_by_status": status,
        "chains": len(docs),
        "chains_active": sum(1 for d in docs if d.get("status") == "active"),
        "chains_per_locomo_session": round(len(docs) / n_sessions, 2) if n_sessions else None,
        "events_per_chain": dist(sizes),
        "summary_tokens": dist(summary_tokens),
        "summary_tokens_per_event": round(sum(summary_tokens) / max(sum(sizes), 1), 3),
        "sessions_spanned_per_chain": dist(spans),
        "chains_spanning_several_sessions": sum(1 for s in spans if s > 1),
        "quality_overall": dist([q for q in quality if q is not None]),
        "dead_letters": dead,
    }


_TASK_DONE = re.compile(r"Task (athena\.[\w.]+)\[[^\]]+\] (succeeded|retry|raised)(?: in ([0-9.]+)s)?")


def task_profile(worker_log: Path) -> dict:
    """Where the workers' time went: per Celery task name, runs, retries, failures, total/mean/max seconds."""
    profile: dict[str, dict] = {}
    try:
        text = Path(worker_log).read_text(errors="replace")
    except OSError:
        return {}
    for name, outcome, seconds in _TASK_DONE.findall(text):
        row = profile.setdefault(name, {"succeeded": 0, "retry": 0, "raised": 0, "total_s": 0.0, "max_s": 0.0})
        row[outcome] += 1
        if seconds:
            row["total_s"] += float(seconds)
            row["max_s"] = max(row["max_s"], float(seconds))
    for row in profile.values():
        row["mean_s"] = round(row["total_s"] / row["succeeded"], 3) if row["succeeded"] else None
        row["total_s"], row["max_s"] = round(row["total_s"], 1), round(row["max_s"], 1)
    return dict(sorted(profile.items(), key=lambda kv: -kv[1]["total_s"]))


# ----------------------------------------------------------------------------------------------- asking


def ask_athena(client, conv: Conversation, session_id: str, log: EventLogReader,
               budgets: tuple[int, ...]) -> dict[str, dict[int, list[Result]]]:
    """Each question once per budget: SearchMemory with `max_tokens` = the budget (Athena packs itself).

    An event result stands for its turn; chain summaries and facts credit no turn (see `scoring`).
    """
    out: dict[str, dict[int, list[Result]]] = {}
    for q in conv.questions:
        by_budget: dict[int, list[Result]] = {}
        for budget in budgets:
            hits = client.search_memory(session_id, q.question, limit=200, max_tokens=budget)
            turns = log.turn_ids(conv.sample_id, [h["source_id"] for h in hits if h.get("source_type") == "event"])
            by_budget[budget] = [
                Result(text=h.get("content") or "", score=h.get("score"), source_id=h.get("source_id"),
                       turn_ids=(turns[h["source_id"]],) if turns.get(h["source_id"]) else (),
                       kind=h.get("source_type"), retrievers=tuple(h.get("retrievers") or ()))
                for h in hits
            ]
        out[q.key] = by_budget
    return out


def result_mix(answers: dict[str, dict[int, list[Result]]], budget: int) -> dict:
    """What Athena returned at one budget: results per source type, and which retrievers found them."""
    kinds: Counter = Counter()
    found_by: Counter = Counter()
    for by_budget in answers.values():
        for r in by_budget.get(budget, []):
            kinds[r.kind or "?"] += 1
            found_by["+".join(sorted(r.retrievers)) or "?"] += 1
    n = max(len(answers), 1)
    return {"budget": budget, "per_question": {k: round(v / n, 2) for k, v in kinds.most_common()},
            "found_by": {k: round(v / max(sum(found_by.values()), 1), 3) for k, v in found_by.most_common()}}


def run_baselines(conversations: list[Conversation], k: int, embedder) -> dict[str, dict[str, list[Result]]]:
    systems: dict[str, dict[str, list[Result]]] = {"bm25": {}, "dense": {}}
    for conv in conversations:
        turns = conv.turns
        ids, texts = [t.turn_id for t in turns], [t.content for t in turns]
        queries = [q.question for q in conv.questions]
        for q, res in zip(conv.questions, baselines.bm25_search(ids, texts, queries, k)):
            systems["bm25"][q.key] = res
        if embedder is not None:
            for q, res in zip(conv.questions, baselines.dense_search(embedder, ids, texts, queries, k)):
                systems["dense"][q.key] = res
    if embedder is None:
        systems.pop("dense")
    return systems


# ----------------------------------------------------------------------------------------------- report


Answers = dict[str, "list[Result] | dict[int, list[Result]]"]  # question key → ranked results (or per budget)


def score_systems(questions: list[Question], systems: dict[str, Answers],
                  ks: tuple[int, ...], budgets: tuple[int, ...]) -> tuple[dict, list[dict]]:
    summary: dict[str, dict] = {}
    per_question: dict[str, dict] = {q.key: {"key": q.key, "category": q.category, "evidence": list(q.evidence),
                                             "systems": {}} for q in questions}
    for name, answers in systems.items():
        scored = []
        for q in questions:
            answer = answers.get(q.key, [])
            if isinstance(answer, dict):
                metrics = scoring.score_question_by_budget(q, answer, ks)
                results = answer[max(answer)]
            else:
                metrics, results = scoring.score_question(q, answer, ks, budgets), answer
            scored.append((q.category, metrics))
            evidence = set(q.evidence)
            per_question[q.key]["systems"][name] = {
                "metrics": metrics,
                # compact: what came back, its size, and which evidence turns it holds (no dataset text)
                "returned": [{"id": r.source_id, "turns": len(r.turn_ids), "tokens": scoring.approx_tokens(r.text),
                              "evidence": sorted(evidence & set(r.turn_ids))} for r in results],
            }
        summary[name] = scoring.aggregate(scored)
    return summary, list(per_question.values())


def markdown_table(summary: dict[str, dict], ks: tuple[int, ...], budgets: tuple[int, ...]) -> str:
    groups = ["overall"] + [str(c) for c in sorted(CATEGORY_NAMES)]
    heads = ["overall (1-4)"] + [f"{c} {CATEGORY_NAMES[int(c)]}" for c in groups[1:]]
    any_system = next(iter(summary.values()))
    counts = " / ".join(f"{g}: {any_system[g]['n']}" for g in groups)
    lines = [f"Questions — {counts}", "",
             "| metric | system | " + " | ".join(heads) + " |",
             "|---|---|" + "---:|" * len(heads)]
    for metric in scoring.metric_names(ks, budgets):
        for system, table in summary.items():
            cells = []
            for g in groups:
                value = table[g].get(metric)
                if value is None:
                    cells.append("–")
                elif metric.startswith("returned_tokens"):
                    cells.append(f"{value:.0f}")
                else:
                    cells.append(f"{value:.3f}")
            lines.append(f"| {metric} | {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def run_eval(
    dataset: Path = DEFAULT_DATASET,
    *,
    conversations: int | None = None,
    sessions_per_conversation: int | None = None,
    out_dir: Path = DEFAULT_OUT,
    limit: int = 10,
    budgets: tuple[int, ...] = scoring.BUDGETS,
    wait_timeout_s: float = 1500.0,
    ingest_threads: int = 4,
    dense: bool = True,
    keep_data: bool = False,
    details: bool = False,
    echo: Echo = print,
) -> dict:
    """The whole harness; returns the report (also written to `out_dir` as JSON + markdown).

    `details` adds every question's metrics and returned ids to the JSON (about 4 KB a question, so off
    by default for the full run); the report returned always carries them under "questions".
    """
    from athena_core.client import AthenaClient
    from athena_core.settings import Settings
    from athena_core.stack import Stack

    t_start = time.monotonic()
    dataset = Path(dataset)
    if not dataset.exists():
        raise FileNotFoundError(f"LoCoMo dataset not found at {dataset} (pass --dataset)")
    convs = load_conversations(dataset, conversations, sessions_per_conversation)
    questions = [q for c in convs for q in c.questions]
    total_events = sum(len(c.turns) for c in convs)
    ks = tuple(sorted({k for k in scoring.KS if k <= limit} | {limit}))
    echo(f"LoCoMo: {len(convs)} conversations, {sum(len(c.sessions) for c in convs)} sessions, "
         f"{total_events} turns, {len(questions)} questions")

    data_dir = Path(tempfile.mkdtemp(prefix="athena-locomo-"))
    settings = Settings(data_dir=data_dir, api_port=_free_port(), redis_url=None)
    timings: dict[str, float] = {}
    wait: dict = {}
    stack = Stack(settings, extra_env=dict(FAST_ENV))
    try:
        t0 = time.monotonic()
        stack.start(timeout_s=120)
        timings["stack_start_s"] = round(time.monotonic() - t0, 1)
        echo(f"stack up on {stack.base_url} (data in {data_dir}) in {timings['stack_start_s']} s")

        def alive() -> str | None:
            for name, proc in stack.processes.items():
                if proc.poll() is not None:
                    return f"{name} exited with {proc.returncode} (see {data_dir}/logs/{name}.log)"
            return None

        with AthenaClient(stack.base_url, timeout=60.0) as client:
            # -- ingest
            t0 = time.monotonic()
            sent = [0]
            lock = threading.Lock()

            def progress(n: int) -> None:
                with lock:
                    sent[0] += n
                    if sent[0] % 1000 == 0:
                        echo(f"  ingest: {sent[0]}/{total_events} events ({time.monotonic() - t0:.0f} s)")

            with ThreadPoolExecutor(max_workers=max(1, ingest_threads)) as pool:
                session_ids = list(pool.map(lambda c: ingest_conversation(client, c, progress), convs))
            timings["ingest_s"] = round(time.monotonic() - t0, 1)
            echo(f"ingested {total_events} events in {timings['ingest_s']} s "
                 f"({total_events / max(timings['ingest_s'], 1e-9):.0f} events/s)")

            # -- baselines while the pipeline drains (same turns, same questions)
            t1 = time.monotonic()
            embedder = None
            if dense:
                from athena_core.providers.local_embedder import LocalEmbedder

                embedder = LocalEmbedder(settings.embedding_model) if settings.embedding_provider == "local" else None
            # enough turns to fill the largest budget (≈ 35 tokens a turn), so budgets compare like with like
            systems_baseline = run_baselines(convs, max(limit, BASELINE_POOL), embedder)
            timings["baselines_s"] = round(time.monotonic() - t1, 1)
            dense_name = f", dense {embedder.model_name}" if embedder else ""
            echo(f"baselines (bm25{dense_name}) in {timings['baselines_s']} s")

            # -- wait for the pipeline
            wait = wait_for_pipeline(client, [ids[0] for ids in session_ids], total_events,
                                     max(wait_timeout_s - (time.monotonic() - t0), 10.0), echo, alive)
            if not wait.get("stopped"):
                wait.update(wait_for_vectors(data_dir, 120.0, echo))
            timings["pipeline_total_s"] = round(time.monotonic() - t0, 1)
            timings["pipeline_drain_after_ingest_s"] = round(time.monotonic() - t0 - timings["ingest_s"], 1)
            consolidated = total_events - max(wait["pending_at_end"], 0)
            throughput = round(consolidated / max(timings["pipeline_total_s"], 1e-9), 2)
            echo(f"pipeline: {consolidated}/{total_events} events out of pending in {timings['pipeline_total_s']} s "
                 f"from the first ingest ({throughput} events/s)")

            # -- ask
            t2 = time.monotonic()
            log = EventLogReader(settings.sqlite_path)
            try:
                athena: dict[str, dict[int, list[Result]]] = {}
                with ThreadPoolExecutor(max_workers=max(1, ingest_threads)) as pool:
                    for part in pool.map(lambda pair: ask_athena(client, pair[0], pair[1][-1], log, budgets),
                                         zip(convs, session_ids)):
                        athena.update(part)
            finally:
                log.close()
            timings["questions_s"] = round(time.monotonic() - t2, 1)
            echo(f"asked {len(questions)} questions through SearchMemory in {timings['questions_s']} s")
            stats = pipeline_stats(settings.sqlite_path, convs)
            stats["worker_task_profile"] = task_profile(data_dir / "logs" / "worker.log")
    except BaseException:
        keep_data = True  # a failed run keeps its logs for a look
        raise
    finally:
        stack.stop()
        if keep_data or wait.get("stopped"):
            echo(f"data and logs kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)

    systems = {"athena": athena, **systems_baseline}
    summary, per_question = score_systems(questions, systems, ks, budgets)
    timings["total_s"] = round(time.monotonic() - t_start, 1)
    table = markdown_table(summary, ks, budgets)
    stamp = _stamp()
    report = {
        "benchmark": "locomo",
        "created_at": stamp,
        "dataset": str(dataset),
        "config": {"conversations": len(convs), "sessions_per_conversation": sessions_per_conversation,
                   "limit": limit, "ks": list(ks), "budgets_tokens": list(budgets),
                   "token_approximation": "ceil(whitespace words * 4/3)", "fast_env": FAST_ENV,
                   "athena_returned_text": "SearchMemory `content` of each result, one call per budget with max_tokens",
                   "baseline_pool": BASELINE_POOL,
                   "embedding_model": settings.embedding_model, "llm_provider": settings.llm_provider},
        "corpus": {"turns": total_events, "sessions": sum(len(c.sessions) for c in convs),
                   "questions": len(questions),
                   "questions_dropped_no_evidence": sum(c.dropped_no_evidence for c in convs),
                   "questions_dropped_out_of_slice": sum(c.dropped_out_of_slice for c in convs)},
        "pipeline": {**wait, "events_per_s": throughput, "consolidated_or_rejected": consolidated, **stats},
        "athena_results": [result_mix(athena, b) for b in budgets],
        "timings": timings,
        "summary": summary,
        "table_markdown": table,
    }
    if details:  # per question: ids, category, evidence ids, metrics, what came back (ids and sizes only)
        report["questions"] = per_question
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"locomo-{stamp}.json"
    md_path = out_dir / f"locomo-{stamp}.md"
    json_path.write_text(json.dumps(report, indent=1 if not details else None) + "\n")
    md_path.write_text(
        f"# LoCoMo retrieval ({stamp})\n\n{len(convs)} conversations, {total_events} turns, "
        f"{len(questions)} questions; k = {limit}; tokens ≈ words × 4/3. "
        f"Pipeline: {throughput} events/s, {stats['chains']} chains; total {timings['total_s']} s.\n\n{table}\n"
    )
    report["paths"] = {"json": str(json_path), "markdown": str(md_path)}
    report["questions"] = per_question
    echo(table)
    echo(f"written {json_path} and {md_path} (total {timings['total_s']} s)")
    return report
