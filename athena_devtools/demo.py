"""`make demo`: replay the bundled multi-session conversation through the HTTP API and show each tier:
the STM window, the chains, the facts, the user persona, and a fact that changed over time (its initial
and its current value, SPEC S6 / seed 003)."""
from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from importlib import resources

from athena_client.client import AthenaClient
from athena_core.ltm.persona import PAST_VALUE  # how a nuance marks a value no longer held

SAMPLE = "demo_conversation.json"


def load_sample() -> dict:
    return json.loads(resources.files("athena_devtools.samples").joinpath(SAMPLE).read_text())


def forget_earlier_replay(client: AthenaClient, sample: dict) -> int:
    """Erase what an earlier `make demo` left of the sample user (a purge, SPEC S7.4), so a second run shows
    the sample once, not twice; returns how many of the user's documents it removed."""
    session_id = client.create_session(sample["tenant_id"], sample["user_id"], sample["agent_id"], {"source": "demo"})
    report = client.delete_session(session_id, purge_user=True).get("purge") or {}
    return sum(report.get("documents", {}).values())


def replay(client: AthenaClient, sample: dict) -> list[str]:
    """Post every session's turns with their timeline, shifted so the last session started an hour ago
    (memory stays warm enough to be promoted); returns the session ids in order."""
    starts = [datetime.fromisoformat(s["started_at"]) for s in sample["sessions"]]
    shift = datetime.now(timezone.utc) - timedelta(hours=1) - max(starts)
    session_ids = []
    for session in sample["sessions"]:
        session_id = client.create_session(
            sample["tenant_id"], sample["user_id"], sample["agent_id"], {"source": "demo"}
        )
        session_ids.append(session_id)
        clock = datetime.fromisoformat(session["started_at"]) + shift
        for turn in session["turns"]:
            if "events" in turn:  # a turn's tool events in one StoreEvents request (the batch route)
                batch = []
                for event in turn["events"]:
                    clock += timedelta(seconds=5)
                    batch.append({**event, "timestamp": clock})
                client.store_events(session_id, batch)
                continue
            clock += timedelta(minutes=1)
            client.store_interaction(session_id, turn["user"], turn.get("agent"), timestamp=clock)
    return session_ids


def wait_for_pipeline(client: AthenaClient, session_ids: list[str], timeout_s: float) -> int:
    """Wait until the workers have consolidated every event (idle flush closes the last segments)."""
    deadline = time.monotonic() + timeout_s
    pending = -1
    while time.monotonic() < deadline:
        pending = sum(client.get_session(s)["pending_events"] for s in session_ids)
        if pending == 0:
            break
        time.sleep(0.5)
    return pending


def wait_for_facts(client: AthenaClient, session_id: str, timeout_s: float, settle_s: float = 8.0) -> dict:
    """GetContext once the promoter (every few seconds in the demo) has written facts and a further
    `settle_s` brought no new one, or at the timeout. The first facts are no sign that every hot chain is
    promoted: a pass skips a chain whose user is busy and leaves it to the next."""
    deadline = time.monotonic() + timeout_s
    seen: tuple[int, float] = (0, time.monotonic())  # facts count, and since when
    while True:
        context = client.get_context(session_id, query="payments service latency in Go")
        count = len(context["facts"]) + len(context.get("user_persona") or [])
        if count != seen[0]:
            seen = (count, time.monotonic())
        if (count and time.monotonic() - seen[1] >= settle_s) or time.monotonic() > deadline:
            return context
        time.sleep(1.0)


def render(context: dict) -> str:
    lines = [f"STM window ({len(context['stm_events'])} slots, source: {context['stm_source']}):"]
    for event in context["stm_events"]:
        count = f" ×{event['coalesced_count']}" if event.get("coalesced_count", 1) > 1 else ""
        lines.append(f"  [{event['timestamp'][:16]}] {event['role']}/{event['type']}{count}: {event['content'][:100]}")
    lines.append(f"MTM relevant pages ({len(context['relevant_pages'])}):")
    for page in context["relevant_pages"]:
        lines.append(f"  - [{page['started_at'][:10]}] {page['topic']}: {page['summary'][:160]}")
    lines.append(f"LTM facts ({len(context['facts'])}):")
    for fact in context["facts"][:10]:
        # a value between the first and the newest is still held unless its evidence calls it a past one
        when = "" if fact.get("is_current", True) and fact.get("is_initial", True) else \
            " [current]" if fact["is_current"] else " [initial]" if fact["is_initial"] else \
            " [replaced]" if PAST_VALUE.search(fact.get("context_nuance") or "") else ""
        lines.append(f"  - {fact['statement']}{when} (weight {fact['weight']}, confidence {fact['confidence']:.2f})")
    lines.append("User persona:")
    for line in context["user_persona"]:
        lines.append(f"  - {line}")
    return "\n".join(lines)


CHANGE_QUERY = "Which tools and projects did I use initially, and which do I use now?"


def changed_fact(facts: list[dict]) -> dict | None:
    """The (subject, relation) that changed over time, from GetContext facts: {"initial", "current",
    "replaced"}. `initial` and `current` are what the API marks (the first and the newest value); `replaced`
    is a value its evidence calls a past one ("previously, switched to Zed"), when there is one: the one
    whose evidence names the current value first. A group
    with a replaced value wins (values held together, like Go and pgx, also differ in time), then the
    newest change."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for fact in facts:
        groups.setdefault((fact["subject"], fact["relation"]), []).append(fact)
    changes = []
    for group in groups.values():
        initial = next((f for f in group if f["is_initial"] and not f["is_current"]), None)
        current = next((f for f in group if f["is_current"] and not f["is_initial"]), None)
        if initial is None or current is None:
            continue
        past = [f for f in group if not f["is_current"] and PAST_VALUE.search(f.get("context_nuance") or "")]
        # the value the switch replaced names the current one ("previously, switched to Zed"), an older
        # dropped one ("instead of an ORM") does not
        names = {current["object"].replace("_", " ").lower(), current["statement"].rsplit(" ", 1)[-1].lower()}
        replaced = next((f for f in past if any(n in (f.get("context_nuance") or "").lower() for n in names)),
                        past[0] if past else None)
        changes.append(((replaced is not None, str(current["valid_at"])),
                        {"initial": initial, "current": current, "replaced": replaced}))
    return max(changes, key=lambda c: c[0])[1] if changes else None


def render_change(change: dict | None) -> str:
    if change is None:
        return "Change over time: no fact of the sample has changed value (yet)."
    initial, current, replaced = change["initial"], change["current"], change["replaced"]
    lines = [f"Change over time ({initial['subject']} {initial['relation']}, every value kept, ordered by valid_at):",
             f"  initially: {initial['statement']} (first seen {str(initial['first_valid_at'])[:10]})"]
    if replaced is not None and replaced["edge_id"] != initial["edge_id"]:
        lines.append(f"  replaced:  {replaced['statement']} (last seen {str(replaced['valid_at'])[:10]})")
    lines.append(f"  currently: {current['statement']} (since {str(current['first_valid_at'])[:10]})")
    return "\n".join(lines)


DEMO_QUESTIONS = ("Which client wants the payments service under 50 ms?", "When did I decide to use pgx?")


def render_search(question: str, hits: list[dict]) -> str:
    """SearchMemory's answer as the demo prints it: each result's kind, the retrievers that found it, text."""
    lines = [f"SearchMemory {question!r} (max_tokens 200, * = an excerpt): {len(hits)} results"]
    for hit in hits:
        kind = hit["source_type"] + ("*" if hit.get("excerpt") else "")
        lines.append(f"  - {kind:6} via {'+'.join(hit['retrievers']):24} {hit['content'][:150]}")
    return "\n".join(lines)
