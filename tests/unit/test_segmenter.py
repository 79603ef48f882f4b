"""plan_segments: cuts before breaking user messages, force flush at max_events, idle flush of the rest."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from athena_core.models.events import Event, EventRole, EventType
from athena_core.mtm.segmenter import plan_segments
from athena_core.mtm.topic_breaks import BreakDecision

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def ev(i: int, role: str = "user", type_: str = "message", content: str = "", **meta: str) -> Event:
    return Event(event_id=f"evt_{i:04d}", tenant_id="t", user_id="u", agent_id="a", session_id="s",
                 role=EventRole(role), type=EventType(type_), content=content or f"c{i}", metadata=meta,
                 timestamp=T0 + timedelta(seconds=i), received_at=T0)


def topic_of(event: Event) -> str:
    return event.content.split(":")[0]


def by_topic(previous: Event, current: Event, context: list[Event]) -> BreakDecision:
    return BreakDecision.COSINE_HIGH if topic_of(previous) == topic_of(current) else BreakDecision.COSINE_LOW


def ids(segment: list[Event]) -> list[str]:
    return [e.event_id for e in segment]


def test_cut_before_the_breaking_user_message() -> None:
    pending = [ev(0, content="go:a"), ev(1, "agent"), ev(2, content="go:b"), ev(3, "agent"),
               ev(4, content="cook:c"), ev(5, "agent")]
    plan = plan_segments(pending, None, by_topic)
    assert [ids(s) for s in plan.segments] == [["evt_0000", "evt_0001", "evt_0002", "evt_0003"]]
    assert ids(plan.open_events) == ["evt_0004", "evt_0005"]
    assert plan.decisions == [BreakDecision.COSINE_HIGH, BreakDecision.COSINE_LOW]


def test_only_user_messages_are_compared() -> None:
    pending = [ev(0, content="go:a"), ev(1, "agent", content="cook:x"), ev(2, "system", "observation", content="cook:y")]
    plan = plan_segments(pending, None, by_topic)
    assert plan.segments == [] and plan.decisions == []


def test_first_pending_message_is_compared_with_the_previous_consolidated_one() -> None:
    previous = ev(-1, content="go:earlier")
    plan = plan_segments([ev(0, "agent"), ev(1, content="cook:new")], previous, by_topic)
    assert [ids(s) for s in plan.segments] == [["evt_0000"]]
    plan = plan_segments([ev(1, content="go:same")], previous, by_topic)
    assert plan.segments == [] and plan.decisions == [BreakDecision.COSINE_HIGH]


def test_force_flush_at_max_events_leaves_nothing_behind_with_idle() -> None:
    pending = [ev(i, content="go:x") if i % 2 == 0 else ev(i, "agent") for i in range(50)]
    plan = plan_segments(pending, None, by_topic, max_events=20)
    assert [len(s) for s in plan.segments] == [20, 20] and len(plan.open_events) == 10
    plan = plan_segments(pending, None, by_topic, max_events=20, flush_all=True)
    assert [len(s) for s in plan.segments] == [20, 20, 10] and plan.open_events == []
    assert sum(len(s) for s in plan.segments) == 50
    assert plan.decisions.count(BreakDecision.FORCE) == 2 and plan.decisions[-1] == BreakDecision.IDLE


def test_no_empty_segment_when_the_first_event_breaks() -> None:
    plan = plan_segments([ev(0, content="cook:a")], ev(-1, content="go:x"), by_topic)
    assert plan.segments == [] and ids(plan.open_events) == ["evt_0000"]
