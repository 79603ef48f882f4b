"""Time cues in queries (issue 7): windows resolved against now, earliest/latest, "when"."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from athena_core.retrieval.time_cues import parse_time_cues, render_date, render_span

NOW = datetime(2026, 11, 29, 15, 30, tzinfo=timezone.utc)  # a Sunday


def d(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=timezone.utc)


@pytest.mark.parametrize(("query", "window"), [
    ("what did I cook yesterday?", (d(2026, 11, 28), d(2026, 11, 29))),
    ("what did I say today", (d(2026, 11, 29), d(2026, 11, 30))),
    ("where did I go two weeks ago", (d(2026, 11, 11, ), d(2026, 11, 19))),
    ("the bug from 3 days ago", (d(2026, 11, 25), d(2026, 11, 28))),
    ("what did we decide last week", (d(2026, 11, 16), d(2026, 11, 23))),
    ("what happened last month", (d(2026, 10, 1), d(2026, 11, 1))),
    ("plans from last year", (d(2025, 1, 1), d(2026, 1, 1))),
    ("the trip last May", (d(2026, 5, 1), d(2026, 6, 1))),
    ("the trip in December", (d(2025, 12, 1), d(2026, 1, 1))),
    ("what did I do in May 2023?", (d(2023, 5, 1), d(2023, 6, 1))),
    ("anything in 2024", (d(2024, 1, 1), d(2025, 1, 1))),
    ("what did I do last Friday", (d(2026, 11, 27), d(2026, 11, 28))),
])
def test_windows(query: str, window: tuple[datetime, datetime]) -> None:
    start, end = window
    if query.startswith("where did I go two weeks ago"):  # 14 days back, ± half a week, whole days
        start, end = datetime(2026, 11, 11, 12, tzinfo=timezone.utc), datetime(2026, 11, 19, 12, tzinfo=timezone.utc)
    assert parse_time_cues(query, NOW).window == (start, end)


def test_may_the_verb_is_not_a_month_and_plain_questions_have_no_cue() -> None:
    assert parse_time_cues("what may I bring to the party?", NOW).window is None
    assert not parse_time_cues("what is my favourite colour?", NOW).any


@pytest.mark.parametrize(("query", "order"), [
    ("what was my first car", "earliest"), ("which editor did I use initially", "earliest"),
    ("where did I originally live", "earliest"), ("where do I live currently", "latest"),
    ("what am I reading now", "latest"), ("my most recent trip", "latest"), ("what is my dog called", None),
])
def test_orders(query: str, order: str | None) -> None:
    assert parse_time_cues(query, NOW).order == order


def test_when_questions_ask_for_a_time() -> None:
    assert parse_time_cues("When did Anna move to Lisbon?", NOW).asks_when
    assert parse_time_cues("what year did I start", NOW).asks_when
    assert not parse_time_cues("where did Anna move?", NOW).asks_when


def test_dates_render_with_month_names() -> None:
    assert render_date(d(2023, 5, 8)) == "8 May 2023"
    assert render_span(d(2023, 5, 8), datetime(2023, 5, 8, 23, tzinfo=timezone.utc)) == "8 May 2023"
    assert render_span(d(2023, 5, 8), d(2023, 6, 1)) == "8 May 2023 – 1 June 2023"
