"""`athena eval facts`: generated users through the real pipeline in this process, then their graphs scored.

The stores, the embedded Redis and the providers are the composition root's (`build_runtime`), in a
temporary data dir; the pipeline is the Celery tasks' own code called in order (coalesce → segment →
summarize → embed, with the idle flush's `flush=True`), and promotion is the beat's per-user task
(`promote_user`), so nothing here re-implements a step. Live users are promoted after every session (the
beat runs between live sessions); historical users are imported whole, then promoted once (the first
pass after an import). The graph is then read through the graph port and scored (`scoring`).
"""
from __future__ import annotations

import importlib

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from athena_eval.facts import scoring
from athena_eval.facts.generator import GeneratedUser, generate
from athena_eval.facts.scoring import GraphFact, Tally

TENANT = "factsbench"
Echo = Callable[[str], None]
SPLITS = {"all": None, "tuning": ("tuning",), "held_out": ("held_out",), "fresh": ("fresh",)}
FRESH_SHARE = 0.25  # of the planted facts stated in the fresh phrasings (`phrasings_fresh`); 40 % held out


def _graph_facts(graph, scope, floor: float) -> list[GraphFact]:
    """The user's edges, each with the current/initial marks retrieval gives it (`floor`: the traversal's
    confidence floor, `graph_min_confidence`)."""
    from athena_core.ltm.fact_timeline import mark_timeline

    edges = graph.edges(scope)
    marks = mark_timeline(edges, floor)
    out = []
    for e in edges:
        mark = marks.get(e.edge_id)
        out.append(GraphFact(e.subject.id, e.relation, e.object.id, e.weight, e.confidence, e.valid_at,
                             e.first_valid_at, getattr(mark, "is_current", None), getattr(mark, "is_initial", None)))
    return out


def _run_pipeline(scope) -> None:
    """One scope's pending events to chains and indexes, as an idle flush would (no broker)."""
    from athena_tasks.chains.pipeline import coalesce, embed, segment, summarize

    for _ in range(100):
        batch = coalesce(scope.key, True)
        if not batch["event_ids"]:
            return
        embed(summarize(segment(batch)))
        if not batch["more"]:
            return


def ingest_user(runtime, user: GeneratedUser, agent_id: str = "assistant") -> None:
    from athena_core.ids import new_id
    from athena_core.models.events import EventRole, EventType, utc_now
    from athena_core.models.sessions import Session
    from athena_core.usecases.ingest import EventDraft, Ingest
    from athena_tasks.promote.promoter import promote_user

    ingest = Ingest(runtime.documents, runtime.stm, lambda scope: None)  # the pipeline is run below
    for number, turns in enumerate(user.sessions):
        session = Session(session_id=new_id("ses"), tenant_id=TENANT, user_id=user.user_id, agent_id=agent_id,
                          metadata={"source": "factsbench", "session": str(number)}, created_at=utc_now())
        runtime.documents.create_session(session)
        drafts = [EventDraft(role=EventRole(t.role), type=EventType.message, content=t.text, metadata={},
                             timestamp=t.timestamp) for t in turns]
        ingest.store(session, drafts)
        _run_pipeline(session.scope)
        if user.stamps == "live":
            promote_user(TENANT, user.user_id)
    if user.stamps != "live":
        promote_user(TENANT, user.user_id)


def run_provider(users: list[GeneratedUser], provider: str, echo: Echo, keep_data: bool = False) -> dict:
    """Ingest, run and promote every user with one LLM provider; the tallies per stamps and split."""
    from athena_core.models.scope import UserScope
    from athena_core.wiring.embedded_redis import stop_embedded_redis
    from athena_core.wiring.runtime import build_runtime
    from athena_core.wiring.settings import Settings
    from athena_tasks import worker_runtime
    from athena_tasks.app import app
    from athena_tasks.worker_runtime import set_runtime

    for module in app.conf.include:  # the task modules; not `import_default_modules()`, whose signal starts
        importlib.import_module(module)  # the default data dir's embedded Redis (a broker this run never uses)
    data_dir = Path(tempfile.mkdtemp(prefix=f"athena-facts-{provider}-"))
    settings = Settings(data_dir=data_dir, redis_url=None, llm_provider=provider, pipeline_batch_events=1000)
    runtime = build_runtime(settings)
    previous = worker_runtime._runtime  # a worker of this process (tests) gets its own runtime back
    set_runtime(runtime)
    tallies: dict[str, dict[str, Tally]] = {}
    t0 = time.monotonic()
    try:
        for n, user in enumerate(users, 1):
            ingest_user(runtime, user)
            graph = _graph_facts(runtime.graph, UserScope(tenant_id=TENANT, user_id=user.user_id),
                                 settings.graph_min_confidence)
            for stamps in (user.stamps, "all"):
                for split, kept in SPLITS.items():
                    tally = tallies.setdefault(stamps, {}).setdefault(split, Tally())
                    tally.add(scoring.score_user(user.facts, user.changes, user.decoys, graph, splits=kept))
            if n % 4 == 0 or n == len(users):
                echo(f"  {provider}: {n}/{len(users)} users ({time.monotonic() - t0:.0f} s)")
    finally:
        set_runtime(previous)
        runtime.close()
        stop_embedded_redis(data_dir)  # the run's own embedded Redis: a finished eval leaves no server behind
        if keep_data:
            echo(f"data kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
    return {stamps: {split: t.rates() for split, t in by_split.items()} for stamps, by_split in tallies.items()}


COLUMNS = ("precision", "recall", "weight_accuracy", "initial_current_accuracy", "change_order_accuracy",
           "decoy_leakage", "claims", "planted")
TARGETS = {"precision": (">=", 0.9), "recall": (">=", 0.7), "decoy_leakage": ("<=", 0.05),
           "weight_accuracy": (">=", 0.9), "initial_current_accuracy": (">=", 0.9)}


def markdown_table(results: dict[str, dict]) -> str:
    heads = ["provider", "stamps", "phrasings", *COLUMNS]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * 3 + "---:|" * len(COLUMNS)]
    for provider, by_stamps in results.items():
        for stamps in ("live", "historical", "all"):
            for split in SPLITS:
                row = by_stamps.get(stamps, {}).get(split)
                if row is None:
                    continue
                cells = ["–" if row[c] is None else (f"{row[c]:.3f}" if isinstance(row[c], float) else str(row[c]))
                         for c in COLUMNS]
                lines.append(f"| {provider} | {stamps} | {split} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def openai_configured() -> bool:
    return bool(os.environ.get("ATHENA_OPENAI_API_KEY"))


def run_eval(users: int = 24, *, seed: int = 14, sessions: int = 4, providers: tuple[str, ...] | None = None,
             out_dir: Path | None = None, keep_data: bool = False, echo: Echo = print,
             fresh_share: float = FRESH_SHARE) -> dict:
    """The whole benchmark: one corpus, each provider in its own data dir; the report (also written as
    JSON + markdown to `out_dir` when given)."""
    started = time.monotonic()
    corpus = generate(users, seed=seed, sessions=sessions, fresh_share=fresh_share)
    if providers is None:
        providers = ("offline", "openai") if openai_configured() else ("offline",)
    if "openai" in providers and not openai_configured():
        raise SystemExit("the openai provider needs ATHENA_OPENAI_API_KEY (and ATHENA_OPENAI_BASE_URL for a "
                         "compatible server); it is not set")
    unknown = set(providers) - {"offline", "openai"}
    if unknown:
        raise SystemExit(f"unknown provider(s) {sorted(unknown)}: use offline or openai")
    echo(f"facts: {len(corpus)} users x {sessions} sessions, {sum(len(u.facts) for u in corpus)} planted facts, "
         f"{sum(len(u.decoys) for u in corpus)} decoys, seed {seed}; providers {', '.join(providers)}")
    results = {p: run_provider(corpus, p, echo, keep_data) for p in providers}
    table = markdown_table(results)
    report = {"benchmark": "facts", "users": users, "sessions": sessions, "seed": seed, "fresh_share": fresh_share,
              "turns": sum(len(s) for u in corpus for s in u.sessions), "results": results,
              "total_s": round(time.monotonic() - started, 1), "table_markdown": table}
    if out_dir is not None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"facts-{stamp}.json").write_text(json.dumps(report, indent=1) + "\n")
        (out_dir / f"facts-{stamp}.md").write_text(f"# Facts benchmark ({stamp})\n\n{table}\n")
    echo(table)
    return report
