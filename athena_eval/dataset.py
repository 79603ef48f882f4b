"""The LoCoMo dataset (Maharana et al., ACL 2024): conversations, turns and questions as the harness uses them.

The file is found by `--dataset` or `ATHENA_EVAL_LOCOMO_DATASET` (athena_eval/settings.py), never from
where this package is installed.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from athena_eval.scoring import CATEGORY_NAMES, Question

TURN_SPACING_S = 30


@dataclass
class Turn:
    turn_id: str  # "D3:14"
    session: str  # "3"
    speaker: str
    role: str  # user | agent
    content: str
    timestamp: datetime


@dataclass
class LocomoSession:
    number: int
    date_time: str
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[LocomoSession]
    questions: list[Question]
    dropped_no_evidence: int = 0
    dropped_out_of_slice: int = 0

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M%p on %d %B, %Y", "%I:%M %p on %B %d, %Y")


def parse_locomo_datetime(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" → 2023-05-08T13:56:00+00:00 (the dataset has no zone; UTC is assumed)."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    match = re.search(r"(\d{1,2}):(\d{2})\s*([ap]m).*?(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", cleaned, re.I)
    if not match:
        raise ValueError(f"unparseable LoCoMo date_time {text!r}")
    hour, minute, ampm, day, month, year = match.groups()
    parsed = datetime.strptime(f"{hour}:{minute} {ampm} {day} {month[:3]} {year}", "%I:%M %p %d %b %Y")
    return parsed.replace(tzinfo=timezone.utc)


_DIA = re.compile(r"D:?(\d+):0*(\d+)")


def normalise_evidence(raw: list[str], known: set[str]) -> list[str]:
    """LoCoMo evidence ids have typos ("D:11:26", "D30:05", several ids in one string)."""
    out: list[str] = []
    for item in raw:
        for match in _DIA.finditer(str(item)):
            dia = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia in known and dia not in out:
                out.append(dia)
    return out


def turn_content(turn: dict) -> str:
    content = f"{turn['speaker']}: {turn.get('text', '')}".rstrip()
    caption = turn.get("blip_caption")
    if caption:
        content += f" [shares a photo: {caption}]"
    return content


def load_conversations(
    path: Path, conversations: int | None = None, sessions_per_conversation: int | None = None
) -> list[Conversation]:
    """The first `conversations` samples, each cut to its first `sessions_per_conversation` sessions.

    Questions whose evidence is not a known turn are dropped; with a session cut, so are questions with
    evidence outside the kept sessions (counted in `dropped_*`).
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out: list[Conversation] = []
    for sample in data[:conversations] if conversations else data:
        conv = sample["conversation"]
        keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list) and conv[k]),
                      key=lambda k: int(k.split("_")[1]))
        all_ids = {t["dia_id"] for k in keys for t in conv[k]}
        if sessions_per_conversation:
            keys = keys[:sessions_per_conversation]
        sessions: list[LocomoSession] = []
        previous_start: datetime | None = None
        for key in keys:
            number = int(key.split("_")[1])
            date_time = conv.get(f"{key}_date_time", "")
            try:
                start = parse_locomo_datetime(date_time)
            except ValueError:
                start = (previous_start or datetime(2023, 1, 1, tzinfo=timezone.utc)) + timedelta(days=1)
            previous_start = start
            session = LocomoSession(number=number, date_time=date_time)
            for i, turn in enumerate(conv[key]):
                session.turns.append(Turn(
                    turn_id=turn["dia_id"], session=str(number), speaker=turn["speaker"],
                    role="user" if turn["speaker"] == conv["speaker_a"] else "agent",
                    content=turn_content(turn), timestamp=start + timedelta(seconds=TURN_SPACING_S * i),
                ))
            sessions.append(session)
        kept = {t.turn_id for s in sessions for t in s.turns}
        questions: list[Question] = []
        no_evidence = out_of_slice = 0
        for index, qa in enumerate(sample["qa"]):
            evidence = normalise_evidence(qa.get("evidence", []), all_ids)
            if not evidence:
                no_evidence += 1
                continue
            if not set(evidence) <= kept:
                out_of_slice += 1
                continue
            answer = qa.get("answer", qa.get("adversarial_answer", ""))
            questions.append(Question(
                key=f"{sample['sample_id']}#{index}", category=int(qa["category"]), evidence=tuple(evidence),
                answer=str(answer), question=qa["question"], conversation=sample["sample_id"],
            ))
        out.append(Conversation(sample_id=sample["sample_id"], speaker_a=conv["speaker_a"], speaker_b=conv["speaker_b"],
                                sessions=sessions, questions=questions, dropped_no_evidence=no_evidence,
                                dropped_out_of_slice=out_of_slice))
    return out


