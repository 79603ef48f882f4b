"""Time cues in a query (issue 7): a time window to look in, and whether the earliest or latest evidence wins.

"last May", "two weeks ago", "yesterday", "in 2023" → a window of evidence times, resolved against `now`
(the time of the request). "first", "initially", "used to" → the earliest evidence; "currently", "now",
"latest", "these days" → the newest. The same cues pick which value of a fact that changed over time a
query asks for (`value_order`), and so do "previously", "formerly" and a closing "before" ("what did I
use before?", "before switching"): those ask for an earlier value, but are too common in questions about
events ("what did she do before the trip?") to re-rank all evidence by time. "when …" asks for a time, so the evidence must show its date (every result does).
Pure and language-level only: it knows calendar words, nothing about any dataset.
"""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

Order = Literal["earliest", "latest"]

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "few": 3, "several": 3}
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name and name.lower() != "may"})
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_WHEN = re.compile(r"\b(when|what (day|date|month|year|time)|how long ago|since when)\b")
_EARLIEST = re.compile(r"\b(first|initial|initially|originally|original|earliest|used to|at the start)\b")
_LATEST = re.compile(r"\b(currently|current|now|nowadays|latest|most recent|most recently|these days|lately|"
                     r"last time|anymore|still)\b")
_EARLIER_VALUE = re.compile(r"\b(previously|formerly|before\s*[?.!]*$|before (that|this|then|now|switching|"
                            r"moving|migrating|changing|the switch|the change))")
_AGO = re.compile(r"\b(\d+|" + "|".join(_NUMBERS) + r")\s+(day|week|month|year)s?\s+ago\b")
_LAST_UNIT = re.compile(r"\b(last|past|previous|this)\s+(week|month|year)\b")
_WEEKDAY = re.compile(r"\b(last|this|on)?\s*(" + "|".join(_WEEKDAYS) + r")\b")
_MONTH = re.compile(r"\b(last|this|in|of|during)?\s*(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) +
                    r")\b(?:\s*,?\s*(\d{4}))?")
_YEAR = re.compile(r"\b(?:in|during|of|since)?\s*((?:19|20)\d{2})\b")


@dataclass(frozen=True)
class TimeCues:
    window: tuple[datetime, datetime] | None = None  # [start, end) in the timezone of `now`
    order: Order | None = None
    asks_when: bool = False
    value_order: Order | None = None  # which value of a fact that changed: the current or the initial one

    @property
    def any(self) -> bool:
        return self.window is not None or self.order is not None or self.asks_when

    def in_window(self, at: datetime) -> bool:
        return self.window is not None and self.window[0] <= at < self.window[1]


def _day(at: datetime) -> datetime:
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_window(year: int, month: int, like: datetime) -> tuple[datetime, datetime]:
    start = like.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=year + 1, month=1) if month == 12 else start.replace(month=month + 1)
    return start, end


def _window(text: str, now: datetime) -> tuple[datetime, datetime] | None:
    today = _day(now)
    if re.search(r"\byesterday\b", text):
        return today - timedelta(days=1), today
    if re.search(r"\btoday\b", text):
        return today, today + timedelta(days=1)
    if match := _AGO.search(text):
        count = int(match.group(1)) if match.group(1).isdigit() else _NUMBERS[match.group(1)]
        unit = _UNIT_DAYS[match.group(2)]
        anchor = today - timedelta(days=count * unit)
        half = timedelta(days=max(1.0, unit / 2))  # "two weeks ago" is roughly, not exactly, 14 days
        return anchor - half, anchor + half + timedelta(days=1)
    if match := _LAST_UNIT.search(text):
        which, unit = match.groups()
        if unit == "week":
            monday = today - timedelta(days=today.weekday())
            return (monday, monday + timedelta(days=7)) if which == "this" else (monday - timedelta(days=7), monday)
        if unit == "month":
            year, month = (now.year, now.month) if which == "this" else \
                ((now.year - 1, 12) if now.month == 1 else (now.year, now.month - 1))
            return _month_window(year, month, now)
        year = now.year if which == "this" else now.year - 1
        return _month_window(year, 1, now)[0], _month_window(year, 12, now)[1]
    if match := _MONTH.search(text):
        which, name, year = match.groups()
        month = _MONTHS[name]
        if year:
            return _month_window(int(year), month, now)
        # "last May" / "in May": the most recent May that has begun (this year's if it is not in the future)
        y = now.year if month < now.month or (month == now.month and which != "last") else now.year - 1
        return _month_window(y, month, now)
    if match := _YEAR.search(text):
        year = int(match.group(1))
        return _month_window(year, 1, now)[0], _month_window(year, 12, now)[1]
    if match := _WEEKDAY.search(text):
        which, name = match.groups()
        back = (today.weekday() - _WEEKDAYS[name]) % 7 or (7 if which == "last" else 0)
        start = today - timedelta(days=back)
        return start, start + timedelta(days=1)
    return None


def parse_time_cues(query: str, now: datetime) -> TimeCues:
    # "may" the verb is not "May" the month: only the capitalised word names the month
    text = " ".join(re.sub(r"\bmay\b", "might", query).lower().split())
    order: Order | None = None
    if _EARLIEST.search(text):
        order = "earliest"
    elif _LATEST.search(text):
        order = "latest"
    window = _window(text, now)
    value_order = order or ("earliest" if _EARLIER_VALUE.search(text) else None)
    return TimeCues(window=window, order=order, asks_when=bool(_WHEN.search(text)), value_order=value_order)


_MONTH_NAMES = tuple(calendar.month_name)


def render_date(at: datetime) -> str:
    """"8 May 2023": the date as evidence text shows it (numbers and month names survive any tokenizer)."""
    return f"{at.day} {_MONTH_NAMES[at.month]} {at.year}"


def render_span(start: datetime, end: datetime) -> str:
    first, last = render_date(start), render_date(end)
    return first if first == last else f"{first} – {last}"
