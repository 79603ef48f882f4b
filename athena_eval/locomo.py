"""`athena eval locomo` (SPEC S9 "Quality", issue 5): LoCoMo through the real API and pipeline.

Steps: start a `Stack` (embedded Redis, API, Celery worker + beat) in a temporary data dir with fast
idle-flush schedules; ingest each conversation as one user (tenant ``locomo``, user = sample_id), one
Athena session per LoCoMo session, every turn a StoreEvent (speaker_a → role user, speaker_b → role agent,
content "Speaker: text [shares a photo: caption]", timestamp from the session's date_time + 30 s per turn,
metadata {"turn_id": "D3:14", "session": "3"}); wait until no event is pending; run one promotion pass, as
beat would (`athena.beat.promote`), and wait until every hot chain is in the graph; ask every question
through SearchMemory at each budget, once as is and once with `include_facts: false` (what the facts add),
and map each returned event, and each fact's evidence events, to their turn ids via the event log (opened
beside the running stack); score with `scoring`, beside BM25 and dense baselines over the same turns,
dated the way Athena's event texts are (SPEC S9: a date prefix alone earns temporal answer words, so both
sides get it), computed in the same run; write JSON + markdown under `bench/results/`.

The dataset is CC BY-NC 4.0: it is read in place and nothing of its text goes into the written results
(questions are identified by "<sample_id>#<qa index>", results by turn ids and chain ids).
"""
from __future__ import annotations

import json
from collections import Counter
import re
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from athena_core.retrieval.rendering import render_event
from athena_eval import baselines, scoring
from athena_eval.dataset import Conversation, load_conversations
from athena_eval.scoring import CATEGORY_NAMES, Question, Result
from athena_eval.settings import EvalSettings
from athena_eval.store_reads import (EventLogReader, agent_scopes, chains_awaiting_promotion, graph_sizes,
                                     open_documents, pipeline_stats, user_scopes, wait_for_vectors)

DEFAULT_DATASET = EvalSettings().locomo_dataset  # ATHENA_EVAL_LOCOMO_DATASET, else beside the checkout
DEFAULT_OUT = EvalSettings().out_dir  # ATHENA_EVAL_OUT_DIR
TENANT = "locomo"
BASELINE_POOL = 200  # turns each baseline ranks per question
FAST_ENV = {"ATHENA_IDLE_FLUSH_EVERY_S": "2", "ATHENA_SEGMENT_IDLE_S": "2"}

Echo = Callable[[str], None]


# ---------------------------------------------------------------------------------------------- ingest


def ingest_conversation(client, conv: Conversation, progress: Callable[[int], None] | None = None) -> list[str]:
    """One Athena session per LoCoMo session, its turns as StoreEvents batches; returns the session ids in order."""
    session_ids = []
    for session in conv.sessions:
        session_id = client.create_session(TENANT, conv.sample_id, None,
                                           {"source": "locomo", "session": str(session.number)})
        session_ids.append(session_id)
        events = [{"type": "message", "role": turn.role, "content": turn.content, "timestamp": turn.timestamp,
                   "metadata": {"turn_id": turn.turn_id, "session": turn.session}} for turn in session.turns]
        for attempt in range(5):  # the session's turns in StoreEvents requests (the batch route, all or none)
            try:
                client.store_events(session_id, events)
                break
            except Exception as exc:  # 429/503 backpressure (nothing of that request stored): back off, retry
                status = getattr(exc, "status", None)
                if status not in (429, 503) or attempt == 4:
                    raise
                events = events[len(getattr(exc, "stored_ids", [])):]  # requests stored before it stay stored
                time.sleep(0.5 * (attempt + 1))
        if progress:
            progress(len(session.turns))
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
               budgets: tuple[int, ...], include_facts: bool = True) -> dict[str, dict[int, list[Result]]]:
    """Each question once per budget: SearchMemory with `max_tokens` = the budget (Athena packs itself).

    An event result stands for its turn, a fact for the turns of the evidence events it cites; chain
    summaries credit no turn (see `scoring`). `include_facts` False asks for events and chains only.
    """
    out: dict[str, dict[int, list[Result]]] = {}
    options = {} if include_facts else {"include_facts": False}
    for q in conv.questions:
        by_budget: dict[int, list[Result]] = {}
        for budget in budgets:
            hits = client.search_memory(session_id, q.question, limit=200, max_tokens=budget, **options)
            cited = [e for h in hits if h.get("source_type") == "fact" for e in h.get("evidence_event_ids") or []]
            turns = log.turn_ids(conv.sample_id, list(dict.fromkeys(
                [*(h["source_id"] for h in hits if h.get("source_type") == "event"), *cited])))
            by_budget[budget] = [
                Result(text=h.get("content") or "", score=h.get("score"), source_id=h.get("source_id"),
                       turn_ids=result_turns(h, turns), kind=h.get("source_type"),
                       retrievers=tuple(h.get("retrievers") or ()))
                for h in hits
            ]
        out[q.key] = by_budget
    return out


def result_turns(hit: dict, turns: dict[str, str | None]) -> tuple[str, ...]:
    """The turn ids a SearchMemory result stands for: an event's own turn; a fact's evidence turns."""
    if hit.get("source_type") == "event":
        return (turns[hit["source_id"]],) if turns.get(hit["source_id"]) else ()
    if hit.get("source_type") == "fact":
        return tuple(dict.fromkeys(t for e in hit.get("evidence_event_ids") or [] if (t := turns.get(e))))
    return ()


def fact_use(questions: list[Question], answers: dict[str, dict[int, list[Result]]], budget: int) -> dict:
    """How facts took part at one budget: the share of answers holding a fact, facts per answer, and the
    share of answers where only a fact's text says one of the gold answer's words."""
    with_fact = facts = only = 0
    for q in questions:
        results = answers.get(q.key, {}).get(budget, [])
        n_facts = sum(1 for r in results if r.kind == "fact")
        with_fact += n_facts > 0
        facts += n_facts
        only += bool(scoring.words_only_facts_say(q.answer, results))
    n = max(len(questions), 1)
    return {"budget": budget, "answers_with_a_fact": round(with_fact / n, 4), "facts_per_answer": round(facts / n, 2),
            "answers_with_a_word_only_a_fact_says": round(only / n, 4)}


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


def baseline_text(turn) -> str:
    """A raw turn as the baselines see it: dated exactly as Athena's event results are (SPEC S9)."""
    return render_event(turn.timestamp, turn.content)


def run_baselines(conversations: list[Conversation], k: int, embedder) -> dict[str, dict[str, list[Result]]]:
    systems: dict[str, dict[str, list[Result]]] = {"bm25": {}, "dense": {}}
    for conv in conversations:
        turns = conv.turns
        ids, texts = [t.turn_id for t in turns], [baseline_text(t) for t in turns]
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
                "returned": [{"id": r.source_id, "kind": r.kind, "turns": len(r.turn_ids), "tokens": scoring.approx_tokens(r.text),
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


def facts_markdown(facts: dict) -> str:
    """The knowledge tier's part of the run: graph size per conversation, and how answers used facts."""
    graph = facts["graph_per_conversation"]
    lines = ["Graph per conversation (nodes / edges): " + ", ".join(
        f"{user} {g['nodes']}/{g['edges']}" for user, g in graph.items()), "",
        "| budget | answers with a fact | facts per answer | answers where only a fact says a gold word |",
        "|---:|---:|---:|---:|"]
    for use in facts["use"]:
        lines.append(f"| {use['budget']} | {use['answers_with_a_fact']:.3f} | {use['facts_per_answer']:.2f} | "
                     f"{use['answers_with_a_word_only_a_fact_says']:.3f} |")
    return "\n".join(lines)


def promote_and_wait(stack_settings, documents, users, timeout_s: float, echo: Echo, every_s: float = 1.0) -> dict:
    """Send one promotion pass to the stack's beat queue (the task beat sends every
    `ATHENA_PROMOTE_EVERY_S`), then wait until no hot chain is left unpromoted, or the timeout."""
    from celery import Celery

    from athena_core.models.events import utc_now
    from athena_core.wiring.redis_connection import configured_location

    start = time.monotonic()
    awaiting_before = chains_awaiting_promotion(documents, users, stack_settings, utc_now())
    sender = Celery("athena-eval", broker=configured_location(stack_settings).celery_url)
    try:
        sender.send_task("athena.beat.promote", queue="athena.beat")
    finally:
        sender.close()
    awaiting = awaiting_before
    last_print = 0.0
    while awaiting and time.monotonic() - start < timeout_s:
        time.sleep(every_s)
        awaiting = chains_awaiting_promotion(documents, users, stack_settings, utc_now())
        if time.monotonic() - start - last_print >= 10:
            echo(f"  promotion: {awaiting_before - awaiting}/{awaiting_before} hot chains promoted")
            last_print = time.monotonic() - start
    if awaiting:
        echo(f"  promotion: {awaiting} hot chains still unpromoted after {timeout_s:.0f} s")
    return {"hot_chains": awaiting_before, "unpromoted_at_end": awaiting, "wait_s": round(time.monotonic() - start, 1)}


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
    promote: bool = True,
    promote_timeout_s: float = 600.0,
    keep_data: bool = False,
    details: bool = False,
    echo: Echo = print,
) -> dict:
    """The whole harness; returns the report (also written to `out_dir` as JSON + markdown).

    `details` adds every question's metrics and returned ids to the JSON (about 4 KB a question, so off
    by default for the full run); the report returned always carries them under "questions".
    """
    from athena_client.client import AthenaClient
    from athena_core.wiring.settings import Settings
    from athena_devtools.engine_servers import free_port
    from athena_devtools.stack import Stack

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
    settings = Settings(data_dir=data_dir, api_port=free_port(), redis_url=None)
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
            documents = open_documents(settings)
            scopes = agent_scopes(documents, [sid for ids in session_ids for sid in ids])
            if not wait.get("stopped"):
                wait.update(wait_for_vectors(documents, user_scopes(scopes), 120.0, echo))
            timings["pipeline_total_s"] = round(time.monotonic() - t0, 1)
            timings["pipeline_drain_after_ingest_s"] = round(time.monotonic() - t0 - timings["ingest_s"], 1)
            consolidated = total_events - max(wait["pending_at_end"], 0)
            throughput = round(consolidated / max(timings["pipeline_total_s"], 1e-9), 2)
            echo(f"pipeline: {consolidated}/{total_events} events out of pending in {timings['pipeline_total_s']} s "
                 f"from the first ingest ({throughput} events/s)")

            # -- promote, as beat would: one pass once the pipeline is through
            t3 = time.monotonic()
            users = user_scopes(scopes)
            promotion = promote_and_wait(stack.settings, documents, users, promote_timeout_s, echo) \
                if promote else {"skipped": True}
            timings["promotion_s"] = round(time.monotonic() - t3, 1)
            graph = graph_sizes(stack.settings, users)
            echo(f"graph: {sum(g['nodes'] for g in graph.values())} nodes, "
                 f"{sum(g['edges'] for g in graph.values())} edges over {len(graph)} conversations "
                 f"(promotion {timings['promotion_s']} s)")

            # -- ask, with facts and without (what the facts add)
            log = EventLogReader(documents, TENANT)
            answers: dict[str, dict[str, dict[int, list[Result]]]] = {}
            for name, include_facts in (("athena", True), ("athena_no_facts", False)):
                t2 = time.monotonic()
                answers[name] = {}
                with ThreadPoolExecutor(max_workers=max(1, ingest_threads)) as pool:
                    for part in pool.map(
                            lambda pair: ask_athena(client, pair[0], pair[1][-1], log, budgets, include_facts),
                            zip(convs, session_ids)):
                        answers[name].update(part)
                timings[f"questions_{name}_s"] = round(time.monotonic() - t2, 1)
                echo(f"asked {len(questions)} questions through SearchMemory ({name}) in "
                     f"{timings[f'questions_{name}_s']} s")
            athena = answers["athena"]
            stats = pipeline_stats(documents, scopes, convs)
            documents.close()
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

    systems = {**answers, **systems_baseline}
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
                   "baseline_pool": BASELINE_POOL, "baseline_text": "render_event(turn timestamp, turn text)",
                   "systems": {"athena": "SearchMemory", "athena_no_facts": "SearchMemory, include_facts false",
                               "bm25": "Okapi BM25 over dated raw turns", "dense": "cosine over dated raw turns"},
                   "embedding_model": settings.embedding_model, "llm_provider": settings.llm_provider},
        "corpus": {"turns": total_events, "sessions": sum(len(c.sessions) for c in convs),
                   "questions": len(questions),
                   "questions_dropped_no_evidence": sum(c.dropped_no_evidence for c in convs),
                   "questions_dropped_out_of_slice": sum(c.dropped_out_of_slice for c in convs)},
        "pipeline": {**wait, "events_per_s": throughput, "consolidated_or_rejected": consolidated, **stats},
        "athena_results": [result_mix(athena, b) for b in budgets],
        "facts": {"promotion": promotion, "graph_per_conversation": graph,
                  "use": [fact_use(questions, athena, b) for b in budgets]},
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
    facts_md = facts_markdown(report["facts"])
    md_path.write_text(
        f"# LoCoMo retrieval ({stamp})\n\n{len(convs)} conversations, {total_events} turns, "
        f"{len(questions)} questions; k = {limit}; tokens ≈ words × 4/3. "
        f"Pipeline: {throughput} events/s, {stats['chains']} chains; total {timings['total_s']} s.\n\n"
        f"{facts_md}\n\n{table}\n"
    )
    report["paths"] = {"json": str(json_path), "markdown": str(md_path)}
    report["questions"] = per_question
    echo(facts_md)
    echo(table)
    echo(f"written {json_path} and {md_path} (total {timings['total_s']} s)")
    return report
