"""`athena eval …`: the evaluation commands (the `athena` CLI in athena_devtools mounts them)."""
from __future__ import annotations

import logging
from pathlib import Path

import typer

eval_app = typer.Typer(help="Retrieval-quality evaluations (SPEC S9).", no_args_is_help=True)


@eval_app.command("locomo")
def eval_locomo(
    dataset: Path = typer.Option(None, help="locomo10.json (default: ATHENA_EVAL_LOCOMO_DATASET, else ../shared/datasets/locomo/locomo10.json)."),
    conversations: int = typer.Option(None, help="Only the first N conversations."),
    sessions_per_conversation: int = typer.Option(None, help="Only the first M sessions of each conversation."),
    out: Path = typer.Option(None, help="Directory for the JSON + markdown results (default: ATHENA_EVAL_OUT_DIR, else bench/results)."),
    limit: int = typer.Option(10, min=1, max=100, help="Results per question (k)."),
    wait_timeout: float = typer.Option(1500.0, help="Seconds to wait for the pipeline, from the first ingest."),
    no_dense: bool = typer.Option(False, "--no-dense", help="Skip the dense-retrieval baseline."),
    no_promote: bool = typer.Option(False, "--no-promote", help="Skip the promotion pass (no graph facts)."),
    keep_data: bool = typer.Option(False, help="Keep the stack's temporary data dir."),
    details: bool = typer.Option(False, help="Also write every question's metrics and returned ids to the JSON."),
    answer_model: str = typer.Option(None, help="OpenAI-compatible URL for answer generation + LLM judge."),
) -> None:
    """Ingest LoCoMo through the real API and pipeline; score SearchMemory beside BM25 and dense baselines."""
    from athena_eval import locomo

    logging.basicConfig(level=logging.WARNING)
    if answer_model:
        typer.echo("--answer-model is not implemented yet (answer generation + LLM judge, issue 5 item 4); "
                   "run without it for the retrieval metrics.", err=True)
        raise typer.Exit(2)
    locomo.run_eval(
        dataset or locomo.DEFAULT_DATASET, conversations=conversations,
        sessions_per_conversation=sessions_per_conversation, out_dir=out or locomo.DEFAULT_OUT, limit=limit,
        wait_timeout_s=wait_timeout, dense=not no_dense, promote=not no_promote, keep_data=keep_data, details=details,
        echo=lambda m: typer.echo(m),
    )


@eval_app.command("facts")
def eval_facts(
    users: int = typer.Option(24, min=2, help="Generated users (half live, half historical), 4 sessions each."),
    seed: int = typer.Option(14, help="Generator seed: the same seed, the same corpus."),
    sessions: int = typer.Option(4, min=2, help="Sessions per user."),
    provider: list[str] = typer.Option(None, help="offline / openai (default: offline, plus openai when ATHENA_OPENAI_API_KEY is set)."),
    out: Path = typer.Option(None, help="Directory for the JSON + markdown results (default: ATHENA_EVAL_OUT_DIR, else bench/results)."),
    keep_data: bool = typer.Option(False, help="Keep each provider's temporary data dir."),
    fresh_share: float = typer.Option(0.25, min=0.0, max=0.6, help="Share of facts (and fresh decoys when > 0) in the fresh phrasings; 0 gives the corpus without them."),
) -> None:
    """Planted user facts through the real pipeline and promotion (in this process); score the graph."""
    from athena_eval.facts import runner
    from athena_eval.settings import EvalSettings

    logging.basicConfig(level=logging.WARNING)
    runner.run_eval(users, seed=seed, sessions=sessions, providers=tuple(provider) if provider else None,
                    fresh_share=fresh_share,
                    out_dir=out or EvalSettings().out_dir, keep_data=keep_data, echo=lambda m: typer.echo(m))
