"""A fixed multi-session conversation, the drive over HTTP and the answers compared (issue 17 topology test).

Two users of one tenant. u1 talks through two agents (two sessions, one per API process, written at the
same time); u2 writes beside them. Each session is one `events:batch` request (all-or-nothing, explicit
timestamps), so both deployments see every scope's events in the same order whatever the timing, and the
topics of different sessions share no vocabulary, so no chain merges across scopes in a timing-dependent
order: the chains formed must be the same on both deployments.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import httpx

from athena_core.models.events import EventStatus
from athena_core.models.scope import AgentScope

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)

TOPICS: dict[str, list[tuple[str, str]]] = {
    "postgres": [
        ("We are upgrading the orders Postgres cluster from version 13 to 16 this weekend.",
         "Plan pg_upgrade in link mode and rehearse it on a restored snapshot first."),
        ("The standby replica lags by forty seconds during the nightly vacuum on the orders database.",
         "Check replication slots and raise max_wal_size so the standby keeps up with vacuum."),
        ("Which Postgres extensions must be rebuilt after the major version upgrade?",
         "PostGIS and pg_partman need matching packages for version 16 before pg_upgrade runs."),
    ],
    "garden": [
        ("My tomato seedlings on the balcony have yellow leaves since the cold week.",
         "Yellow lower leaves on tomato seedlings often mean nitrogen hunger or cold roots."),
        ("Should I repot the basil and the chili plants before the frost arrives?",
         "Move the chili pots indoors and repot the basil into a larger clay pot with compost."),
        ("The compost bin smells sour after I added grass clippings from the lawn.",
         "Mix in dry leaves or shredded cardboard so the compost gets air and carbon again."),
    ],
    "marathon": [
        ("I signed up for the Berlin marathon and my long runs are stuck at twenty kilometres.",
         "Add two kilometres to the Sunday long run each week and keep the pace conversational."),
        ("My left knee hurts after interval sessions on the running track.",
         "Swap one interval session for hill repeats and strengthen the hips to protect the knee."),
        ("What should I eat the evening before the marathon race?",
         "A familiar pasta dinner with little fibre, and a bottle of water with electrolytes."),
    ],
    "violin": [
        ("I started violin lessons and my bow keeps squeaking on the E string.",
         "Keep the bow closer to the bridge with steady weight and rosin it lightly."),
        ("My violin teacher wants me to practise scales in third position.",
         "Play slow G major scales in third position with a drone to train the intonation."),
        ("Is a carbon fibre bow worth it for a beginner violinist?",
         "A decent carbon fibre bow is durable and consistent, a good choice for a beginner."),
    ],
    "kitchen": [
        ("We are renovating the kitchen and the oak countertop quote was twice the budget.",
         "Consider laminate with an oak look or a butcher block only on the island."),
        ("The electrician says the induction hob needs a dedicated thirty two amp circuit.",
         "That is normal for induction: budget for the new circuit and a check of the fuse box."),
        ("Which tiles are easiest to clean behind the kitchen sink?",
         "Large glazed ceramic tiles with narrow epoxy grout lines are easiest to keep clean."),
    ],
}


@dataclass(frozen=True)
class SessionPlan:
    scope: AgentScope
    api: int  # which API process writes it (0 or 1)
    topics: tuple[str, ...]
    day: int  # days after T0: sessions happen on different days

    def events(self) -> list[dict]:
        out, at = [], T0 + timedelta(days=self.day)
        for topic in self.topics:
            for user_text, agent_text in TOPICS[topic]:
                out.append({"role": "user", "type": "message", "content": user_text, "timestamp": at.isoformat()})
                at += timedelta(minutes=1)
                out.append({"role": "agent", "type": "message", "content": agent_text, "timestamp": at.isoformat()})
                at += timedelta(minutes=2)
        return out


def plans(tenant: str) -> list[SessionPlan]:
    return [
        SessionPlan(AgentScope(tenant_id=tenant, user_id="u1", agent_id="a1"), 0, ("postgres", "garden"), 0),
        SessionPlan(AgentScope(tenant_id=tenant, user_id="u1", agent_id="a2"), 1, ("marathon", "violin"), 1),
        SessionPlan(AgentScope(tenant_id=tenant, user_id="u2", agent_id="a1"), 1, ("kitchen",), 2),
    ]


QUERIES = [
    "What version is the Postgres cluster upgraded to?",
    "Why do the tomato seedlings have yellow leaves?",
    "How can I protect my knee when running?",
    "What did the teacher say about scales on the violin?",
    "What to eat before the marathon?",
]


def http(base_url: str) -> httpx.Client:
    return httpx.Client(base_url=base_url, timeout=60.0)  # a first query loads the embedding model


def ingest(api_urls: list[str], tenant: str) -> dict[str, str]:
    """Create every session and write each as one batch, the sessions in parallel threads on their APIs.
    Returns session ids by "user/agent"."""
    sessions: dict[str, str] = {}
    errors: list[str] = []

    def write(plan: SessionPlan) -> None:
        with http(api_urls[plan.api % len(api_urls)]) as client:
            created = client.post("/api/v1/sessions", json=plan.scope.model_dump())
            if created.status_code != 201:
                errors.append(created.text)
                return
            sid = created.json()["session_id"]
            sessions[f"{plan.scope.user_id}/{plan.scope.agent_id}"] = sid
            stored = client.post(f"/api/v1/sessions/{sid}/events:batch", json={"events": plan.events()})
            if stored.status_code != 201:
                errors.append(stored.text)

    threads = [threading.Thread(target=write, args=(p,)) for p in plans(tenant)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    return sessions


def drain(documents, tenant: str, timeout_s: float = 240.0, assert_running: Callable[[], None] | None = None) -> float:
    """Wait until no event of the conversation is pending and every one is indexed; returns seconds taken."""
    started = time.monotonic()
    scopes = [p.scope for p in plans(tenant)]
    while time.monotonic() - started < timeout_s:
        if assert_running is not None:
            assert_running()
        pending = sum(documents.count_events(s, EventStatus.pending) for s in scopes)
        unindexed = sum(len(documents.unindexed_events(s.user_scope, 10)) for s in scopes)
        stored = sum(documents.count_events(s) for s in scopes)
        if pending == 0 and unindexed == 0 and stored == sum(len(p.events()) for p in plans(tenant)):
            return time.monotonic() - started
        time.sleep(0.5)
    raise AssertionError(f"the pipeline did not drain in {timeout_s} s: pending={pending} unindexed={unindexed}")


@dataclass
class Answers:
    top_events: dict[str, list[str]]  # query → the contents of the top-5 event results
    chain_counts: dict[str, int]  # user → chains (GetSegments)
    chain_topics: dict[str, list[str]]
    stm: dict[str, list[str]]  # "user/agent" → window contents
    pages: dict[str, list[str]]  # query → topics of GetContext's relevant pages


def answers(api_url: str, sessions: dict[str, str]) -> Answers:
    with http(api_url) as client:
        top: dict[str, list[str]] = {}
        pages: dict[str, list[str]] = {}
        for query in QUERIES:
            hits = client.post(f"/api/v1/sessions/{sessions['u1/a1']}/context/search",
                               json={"query": query, "limit": 10})
            assert hits.status_code == 200, hits.text
            top[query] = [h["content"] for h in hits.json() if h["source_type"] == "event"][:5]
            context = client.get(f"/api/v1/sessions/{sessions['u1/a2']}/context", params={"query": query, "pages": 3})
            assert context.status_code == 200, context.text
            pages[query] = [p["topic"] for p in context.json()["relevant_pages"]]
        counts, topics, stm = {}, {}, {}
        for key, sid in sessions.items():
            segments = client.get(f"/api/v1/sessions/{sid}/segments", params={"limit": 100})
            assert segments.status_code == 200, segments.text
            counts[key.split("/")[0]] = len(segments.json())
            topics[key.split("/")[0]] = sorted(s["topic"] for s in segments.json())
            window = client.get(f"/api/v1/sessions/{sid}/context", params={"limit": 10})
            stm[key] = [e["content"] for e in window.json()["stm_events"]]
        return Answers(top, counts, topics, stm, pages)


def overlap(a: list[str], b: list[str]) -> float:
    """Share of the top-5 both answers hold (1.0 when both are the same set)."""
    size = max(len(a), len(b), 1)
    return len(set(a) & set(b)) / size
