"""`athena import FILE.jsonl` (issue 16): history posted through the batch route, in order, into a new
session of the scope; a refused request stops it with the count stored so far."""
from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

import athena_client.client as sdk
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import Runtime
from athena_devtools.cli import app


def _through(api: TestClient, monkeypatch) -> None:  # noqa: ANN001
    """The CLI's client, sent through the test app instead of a socket."""
    real = sdk.AthenaClient
    monkeypatch.setattr(sdk, "AthenaClient", lambda url, **kw: real(url, http_client=api))


def test_import_posts_every_line_in_order_through_the_batch_route(
    api: TestClient, runtime: Runtime, tenant: str, tmp_path: Path, monkeypatch
) -> None:
    _through(api, monkeypatch)
    lines = [{"role": "user", "type": "message", "content": f"line {i}", "timestamp": f"2025-03-0{1 + i % 9}T10:00:00Z"}
             for i in range(12)]
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = CliRunner().invoke(app, ["import", str(path), "--tenant", tenant, "--user", "u1", "--batch-size", "5"])
    assert result.exit_code == 0, result.output
    assert "stored 12 events" in result.output
    assert runtime.documents.count_events(AgentScope(tenant_id=tenant, user_id="u1")) == 12


def test_import_stops_at_a_refused_request_and_says_what_was_stored(
    api: TestClient, runtime: Runtime, tenant: str, tmp_path: Path, monkeypatch
) -> None:
    _through(api, monkeypatch)
    lines = [{"type": "message", "content": f"line {i}"} for i in range(6)]
    lines[4]["type"] = "gossip"
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    result = CliRunner().invoke(app, ["import", str(path), "--tenant", tenant, "--user", "u1", "--batch-size", "3"])
    assert result.exit_code == 1 and "stored 3 of 6 events" in result.output
    assert runtime.documents.count_events(AgentScope(tenant_id=tenant, user_id="u1")) == 3


def test_a_refusal_of_many_items_prints_a_short_report(
    api: TestClient, runtime: Runtime, tenant: str, tmp_path: Path, monkeypatch
) -> None:
    """Every line missing `type`: the refusal names the first fields with their reasons and counts the rest,
    instead of printing the whole answer (419 field entries for a LoCoMo conversation)."""
    _through(api, monkeypatch)
    path = tmp_path / "untyped.jsonl"
    path.write_text("\n".join(json.dumps({"role": "user", "content": f"line {i}"}) for i in range(40)))
    result = CliRunner().invoke(app, ["import", str(path), "--tenant", tenant, "--user", "u1"])
    assert result.exit_code == 1 and "stored 0 of 40 events" in result.output
    assert "Athena answered 422 validation_error" in result.output
    assert "events[0].type: Field required" in result.output and "... and 35 more" in result.output
    assert "events[39].type" not in result.output and len(result.output) < 1000, result.output
    assert runtime.documents.count_events(AgentScope(tenant_id=tenant, user_id="u1")) == 0
