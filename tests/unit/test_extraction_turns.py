"""Which turns promotion hands the extractor (SPEC S6.1): the chain's user and agent messages, newest first,
within `ATHENA_EXTRACTION_TURN_TOKENS`, speakers marked."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from athena_core.ltm.promotion import TURN_TOKEN_BUDGET, extraction_turns
from athena_core.models.events import Event, EventRole, EventType
from athena_core.wiring.settings import Settings

T0 = datetime(2023, 4, 1, tzinfo=timezone.utc)


def event(n: int, role: EventRole, content: str, type_: EventType = EventType.message) -> Event:
    return Event(event_id=f"ev-{n}", tenant_id="t", user_id="sam", agent_id="helper", session_id="s", role=role,
                 type=type_, content=content, timestamp=T0 + timedelta(minutes=n), received_at=T0)


def test_turns_are_newest_first_within_the_budget_with_speakers() -> None:
    events = [event(i, EventRole.user if i % 2 == 0 else EventRole.agent, "word " * 30) for i in range(10)]
    events.append(event(10, EventRole.system, "ok ledger/batch", EventType.observation))
    turns = extraction_turns(events, budget=100)  # 30 words ≈ 41 tokens: two turns fit
    assert [t.event_id for t in turns] == ["ev-9", "ev-8"]
    assert [(t.role, t.speaker) for t in turns] == [("agent", "helper"), ("user", "sam")]
    assert [t.event_id for t in extraction_turns(events, budget=1)] == ["ev-9"]  # the newest always


def test_the_window_is_a_setting_with_the_modules_default() -> None:
    assert Settings().extraction_turn_tokens == TURN_TOKEN_BUDGET == 2000
