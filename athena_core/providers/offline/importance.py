"""Intrinsic importance: content signals of a segment (decisions, personal facts, preferences, dates,
entities, substance, an answered question) weighed into one score, damped by small talk."""
from __future__ import annotations

import re

from athena_core.providers.llm import TranscriptLine
from athena_core.providers.offline.entities import MONTH
from athena_core.providers.offline.transcript import Sentence, sentence_terms
from athena_core.text.content_words import content_stems
from athena_core.text.tokens import tokens


_DECISION = re.compile(
    r"\b(?:decided?|decision|agreed?|will|we'll|i'll|won't|going to|must|have to|deadline|due|plans?"
    r"|planned|planning|commit(?:ted)?|promise[ds]?|ship(?:ping)?|launch(?:ing)?|schedule[ds]?|by (?:monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next|end of|eod|the end))\b",
    re.IGNORECASE,
)
_PERSONAL = re.compile(
    r"\b(?:i am|i'm|i have|i've|i work|i live|i use|i used to|i studied|i was born|my|mine)\b", re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:prefers?|preferred|preference|favou?rite|love[sd]?|hate[sd]?|dislike[sd]?|enjoy(?:s|ed)?"
    r"|can't stand|(?:i|we) (?:really )?(?:like|want)|rather)\b",
    re.IGNORECASE,
)
_TEMPORAL = re.compile(
    rf"\b(?:\d+(?:[.:/-]\d+)*|{MONTH}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow"
    rf"|tonight|yesterday|next (?:week|month|year|sprint|quarter)|q[1-4])\b",
    re.IGNORECASE,
)

IMPORTANCE_WEIGHTS: dict[str, float] = {
    "decision": 0.25, "personal": 0.15, "preference": 0.15, "temporal": 0.10,
    "entities": 0.10, "substance": 0.10, "answered_question": 0.10,
}
IMPORTANCE_BASE = 0.05


def _saturating(count: int, full_at: float) -> float:
    """Hit counts saturate: the first mentions matter, the tenth adds nothing."""
    return min(1.0, count / full_at)


def importance_signals(
    transcript: list[TranscriptLine], sentences: list[Sentence], entities: list[str],
) -> dict[str, float]:
    """Each content signal of the segment in [0, 1] (see `intrinsic_importance` for the formula)."""
    all_text = "\n".join(line.content for line in transcript)
    user_text = "\n".join(line.content for line in transcript if line.role == "user")
    user_turns = sum(1 for line in transcript if line.role == "user" and line.type == "message")
    content_words = sum(len(sentence_terms(tokens(s.text))) for s in sentences)
    small = sum(1 for s in sentences if not sentence_terms(tokens(s.text)))
    asked = [i for i, line in enumerate(transcript) if line.role == "user" and "?" in line.content]
    answered = any(
        line.role != "user" and len(content_stems(line.content)) >= 5
        for i, line in enumerate(transcript) if asked and i > asked[0]
    )
    return {
        "decision": _saturating(len(_DECISION.findall(all_text)), 2),
        "personal": _saturating(len(_PERSONAL.findall(user_text)), 2),
        "preference": _saturating(len(_PREFERENCE.findall(all_text)), 2),
        "temporal": _saturating(len(_TEMPORAL.findall(all_text)), 3),
        "entities": _saturating(len(entities), 5),
        "substance": 0.5 * _saturating(content_words, 60) + 0.5 * _saturating(user_turns, 4),
        "answered_question": 1.0 if answered else 0.0,
        "small_talk": small / len(sentences) if sentences else 1.0,
    }


def intrinsic_importance(signals: dict[str, float]) -> float:
    """importance = (0.05 + Σ weight_k · signal_k) · (1 − 0.5 · small_talk), clamped to [0, 1].

    Weights: decision/commitment 0.25 ("decided", "will", "must", "deadline", "plan", "by Friday"),
    personal facts 0.15 (user's "I am / I have / my ..."), preferences 0.15 ("prefer", "love", "hate"),
    dates and numbers 0.10, named entities 0.10 (5 saturate), substance 0.10 (content words, 60
    saturate, and user turns, 4 saturate), an answered user question 0.10. They sum with the base to
    1.0. `small_talk` is the share of sentences with no content word ("hi", "thanks, bye"): a segment
    of pure pleasantries keeps at most half of whatever it scored.
    """
    raw = IMPORTANCE_BASE + sum(w * signals.get(k, 0.0) for k, w in IMPORTANCE_WEIGHTS.items())
    damped = raw * (1.0 - 0.5 * signals.get("small_talk", 0.0))
    return round(min(1.0, max(0.0, damped)), 4)
