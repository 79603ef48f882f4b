"""Issue 12 item 13: the README's SearchMemory `filter` example, as written, finds the interaction it stored.

SPEC S2: the metadata filter (all pairs equal) applies to event and session metadata. The bodies are
read from README.md itself, so the test breaks if the README's example stops working.
"""
from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

from fastapi.testclient import TestClient

from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import Runtime
from tests.pipeline.test_mtm_pipeline import _flush_and_wait

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_body(route: str) -> dict:
    """The JSON of the README's `curl … <route> … -d '…'` example (may span lines)."""
    match = re.search(r"curl[^\n]*" + re.escape(route) + r"[^\n]*\s*-d '(\{.*?\})'", README.read_text(), re.DOTALL)
    assert match, f"no curl example for {route} in the README"
    return json.loads(match.group(1))


def test_the_readme_filter_example_finds_the_interaction(worker_api: TestClient, worker_runtime: Runtime) -> None:
    stored, search = readme_body("/interactions"), readme_body("/context/search")
    assert search["filter"] == {"project": "payments"} and stored["metadata"] == search["filter"]  # as written

    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="sam", agent_id="coder")
    session_id = worker_api.post("/api/v1/sessions", json=scope.model_dump()).json()["session_id"]  # no metadata
    r = worker_api.post(f"/api/v1/sessions/{session_id}/interactions", json=stored)
    assert r.status_code == 201, r.text
    readme_ids = r.json()["event_ids"]
    noise = worker_api.post(f"/api/v1/sessions/{session_id}/interactions", json={
        "user_message": "I also switched the payments dashboard service to Go last week",
        "agent_response": "Two Go services now.", "timestamp": "2026-11-02T09:03:00Z",
        "metadata": {"project": "dashboard"}}).json()["event_ids"]
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)

    hits = worker_api.post(f"/api/v1/sessions/{session_id}/context/search", json=search)
    assert hits.status_code == 200, hits.text
    events = [h["source_id"] for h in hits.json() if h["source_type"] == "event"]
    assert set(readme_ids) & set(events), hits.json()  # the README example finds what it stored
    assert not set(noise) & set(events), "an event of another project passed the filter"

    unfiltered = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                                 json={k: v for k, v in search.items() if k != "filter"}).json()
    assert set(noise) & {h["source_id"] for h in unfiltered}, "without the filter the other project is found"

    nothing = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                              json={**search, "filter": {"project": "elsewhere"}}).json()
    assert [h for h in nothing if h["source_type"] != "fact"] == []


def test_session_metadata_still_filters(worker_api: TestClient, worker_runtime: Runtime) -> None:
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    session_id = worker_api.post("/api/v1/sessions", json={**scope.model_dump(),
                                                           "metadata": {"team": "infra"}}).json()["session_id"]
    ids = worker_api.post(f"/api/v1/sessions/{session_id}/interactions", json={
        "user_message": "The Kubernetes upgrade to 1.31 is scheduled for Tuesday",
        "agent_response": "Drain the node pools one at a time."}).json()["event_ids"]
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    hits = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                           json={"query": "Kubernetes upgrade", "filter": {"team": "infra"}}).json()
    assert set(ids) & {h["source_id"] for h in hits}
