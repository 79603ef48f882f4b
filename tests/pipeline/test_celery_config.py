"""Celery the Celery way (issue 13 items 5, 6): `celeryconfig.py` at the repository root, loaded with
`config_from_object("celeryconfig")`; importing the app, its configuration and every task module starts no
redis-server and opens no connection; a Celery program starting on the embedded default brings the broker up;
the pipeline's modules import without a cycle."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from athena_core.wiring.embedded_redis import answers, socket_path, stop_embedded_redis

REPO = Path(__file__).resolve().parents[2]

# Runs in a fresh interpreter: every socket connect (TCP or Unix) and every subprocess raises, then the app,
# its configuration (read, not just named) and the task modules are imported.
IMPORT_PROBE = r"""
import json, socket, subprocess, sys
attempts = []
def refuse(self, address, *args):
    attempts.append(repr(address))
    raise OSError(f"connection at import time: {address!r}")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
def no_process(*args, **kwargs):
    attempts.append(f"subprocess {args[:1]!r}")
    raise OSError("a process started at import time")
subprocess.Popen.__init__ = no_process

import celeryconfig
from athena_tasks.app import app
import importlib
for name in celeryconfig.include:
    importlib.import_module(name)
import athena_tasks.chains.run_requests
print(json.dumps({
    "source": app._config_source, "configured_before_read": app.configured,
    "broker_url": app.conf.broker_url, "result_backend": app.conf.result_backend,
    "default_queue": app.conf.task_default_queue, "acks_late": app.conf.task_acks_late,
    "tasks": sorted(t for t in app.tasks if t.startswith("athena.")), "attempts": attempts,
}))
"""


def _clean_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ATHENA_REDIS_URL", "PROMETHEUS_MULTIPROC_DIR")}
    env["ATHENA_DATA_DIR"] = str(data_dir)  # the embedded default, on a directory nobody has used
    return env


def test_importing_the_app_its_config_and_tasks_starts_nothing_and_connects_nowhere(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    proc = subprocess.run([sys.executable, "-c", IMPORT_PROBE], env=_clean_env(data_dir), cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    probe = json.loads(proc.stdout.strip().splitlines()[-1])
    assert probe["attempts"] == []  # no connection, no redis-server, not even when the configuration is read
    assert not data_dir.exists() and not answers(socket_path(data_dir))  # nothing started, nothing created
    assert probe["source"] == "celeryconfig" and probe["configured_before_read"] is False  # read lazily
    sock = socket_path(data_dir)
    assert probe["broker_url"] == probe["result_backend"] == f"redis+socket://{sock}"  # the embedded server's
    assert probe["default_queue"] == "athena.pipeline" and probe["acks_late"] is True
    assert {"athena.beat.promote", "athena.beat.promote_user", "athena.pipeline.coalesce",
            "athena.pipeline.embed"} <= set(probe["tasks"])


def test_a_celery_program_starting_on_the_embedded_default_brings_its_broker_up(tmp_path: Path) -> None:
    """What `celery -A athena_tasks.app worker|beat|flower` do first (`loader.import_default_modules()`,
    which sends `import_modules`) starts the data directory's redis-server when none answers."""
    data_dir = tmp_path / "data"
    code = ("from athena_tasks.app import app\n"
            "app.loader.import_default_modules()\n"
            "print(app.conf.broker_url)\n")
    try:
        proc = subprocess.run([sys.executable, "-c", code], env=_clean_env(data_dir), cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert answers(socket_path(data_dir))
        assert proc.stdout.strip().splitlines()[-1] == f"redis+socket://{socket_path(data_dir)}"
    finally:
        stop_embedded_redis(data_dir)  # the server this test started (its own socket)


def test_with_a_redis_url_no_program_start_starts_a_server(tmp_path: Path, redis_url: str) -> None:
    data_dir = tmp_path / "data"
    code = ("from athena_tasks.app import app\n"
            "app.loader.import_default_modules()\n"
            "print(app.conf.broker_url)\n")
    env = {**_clean_env(data_dir), "ATHENA_REDIS_URL": redis_url}
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not answers(socket_path(data_dir)) and not (data_dir / "redis.pid").exists()


def test_the_config_is_the_repository_roots_celeryconfig() -> None:
    import celeryconfig

    assert Path(celeryconfig.__file__).resolve() == REPO / "celeryconfig.py"
    assert not (REPO / "athena_tasks" / "celeryconfig.py").exists()


def test_run_requests_does_not_import_the_pipeline_module() -> None:
    """The pipeline ↔ run_requests cycle is gone: run_requests publishes by task name, imports no task module."""
    source = (REPO / "athena_tasks" / "chains" / "run_requests.py").read_text()
    assert "athena_tasks.chains.pipeline" not in source
    from athena_core.models.scope import AgentScope
    from athena_tasks.chains import pipeline, run_requests

    scope = AgentScope(tenant_id="t", user_id="u", agent_id="a")
    assert pipeline.pipeline_for is run_requests.pipeline_for
    steps = run_requests.pipeline_for(scope, flush=True).tasks
    assert [s.name for s in steps] == list(run_requests.PIPELINE_STEPS)
    assert steps[0].args == (scope.key, True)
    assert all(pipeline.app.tasks[name].ignore_result for name in run_requests.PIPELINE_STEPS)
    assert all(s.options.get("ignore_result") is True for s in steps)
