"""Intrinsic importance: content signals of a segment (decisions, personal facts, preferences, dates,
entities, substance, an answered question) weighed into one score, damped by small talk, and floored by
the strongest memorable statement of the user (a first-person fact, decision, preference, problem or
commitment, or a stated fact about a named thing): a chain that carries one is worth keeping (SPEC S5)."""
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

_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i am|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'll|we'd|our|ours|us|let's)\b",
    re.IGNORECASE,
)
# What makes a statement durable beyond "a first person said something": a cue of each kind.
_MEMORABLE_CUES: dict[str, re.Pattern[str]] = {
    "decision": re.compile(
        r"\b(?:decided?|decision|agreed?|chose|choose|picked|settled on|going forward|from now on|always|never"
        r"|switch(?:ed|ing)?(?: from| to)|moved? (?:from|to)|migrat\w*|replac\w*|instead of|let's)\b", re.IGNORECASE),
    "commitment": re.compile(
        r"\b(?:will|i'll|we'll|going to|gonna|promised?|commit(?:ted)?|deadline|due|ship\w*|launch\w*|plan\w*"
        r"|remind me|by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next|the end"
        r"|end of|eod))\b", re.IGNORECASE),
    "preference": re.compile(
        r"\b(?:prefers?|preferred|favou?rite|love[sd]?|hate[sd]?|dislike[sd]?|enjoy\w*|can't stand|like|want"
        r"|wish|interested|curious|keen|(?:learn|understand|try)(?:ing)?|rather|fan of)\b", re.IGNORECASE),
    "problem": re.compile(
        r"\b(?:struggl\w*|fight(?:ing)?|fought|stuck|problem\w*|issues?|bugs?|broken|break(?:s|ing)?|fail\w*"
        r"|errors?|crash\w*|slow|pain(?:ful)?|annoy\w*|frustrat\w*|hard|difficult|can't|cannot|won't|keeps?"
        r"|allergic|worried|trouble)\b", re.IGNORECASE),
    "fact": re.compile(
        r"\b(?:i'm|i am|i've|i have|i had|i work|i live|i use|i used|i run|i own|i study|i studied|i was"
        r"|my \w+|our \w+|we use|we run|we have|is for|are for|built for|for client|belongs to|works? (?:at|for|on)"
        r"|written in|based in|since \d{4})\b", re.IGNORECASE),
}
# Words in "-ing" that do not open a fragment worth keeping: nouns that look like a verb ("Struggling with
# X" is one; "Something is off" is not), and leave-taking ("Going to bed now", "Heading out").
_ING_NOUNS = frozenset("thing something anything everything nothing morning evening string spring king ring "
                       "during ceiling building wedding meeting going heading getting leaving signing logging "
                       "sing bring".split())
# Words of small talk that carry no fact even when the content-word list keeps them.
_PLEASANTRIES = frozenset(
    "thanks thank thx ty ok okay cool nice great awesome lol haha hah hehe hi hello hey bye goodbye morning "
    "evening night afternoon good fine well sure yes yeah yep no nope please appreciate appreciated welcome "
    "sounds glad happy perfect wow oh ah hmm right alright np problem doing today guess suppose think mean know see "
    "too also lot".split()
)


def _speaker_fragment(words: list[str]) -> bool:
    """A chat fragment whose speaker is left out: it opens with a verb in -ing, after at most "been", "still",
    "just" or "really" ("Struggling hard with X, any tips?", "Been fighting X all morning")."""
    rest = list(words)
    while rest and rest[0] in ("been", "still", "just", "really"):
        rest = rest[1:]
    return bool(rest) and rest[0].endswith("ing") and len(rest[0]) > 4 and rest[0] not in _ING_NOUNS


def _memorable(text: str) -> float:
    """How clearly one user sentence states something worth remembering, in [0, 1].

    0 without two substantive words (pleasantries excluded; one suffices beside a cue, "I will ship it
    Friday"): "thanks!", "ok sounds good", "good morning, how are you?", "I guess that works for me" never
    count. A first-person statement with substance scores 0.6 (a fragment whose speaker is left out,
    "Struggling hard with X", counts as one when it carries a cue); each kind of cue it
    carries (decision, commitment, preference, problem, personal fact) adds 0.15. A statement without a
    first person scores only with a fact cue about a named thing ("the checkout service is for Northwind
    Traders"): 0.6.
    """
    words = [t.lower for t in tokens(text)]
    substantive = [w for w in sentence_terms(tokens(text)) if w not in _PLEASANTRIES]
    raw_substantive = [w for w in words if w not in _PLEASANTRIES and len(w) > 2]
    kinds = sum(1 for cue in _MEMORABLE_CUES.values() if cue.search(text))
    if len(raw_substantive) < 2 or len(substantive) < (1 if kinds else 2):
        return 0.0
    if _FIRST_PERSON.search(text) or (kinds and _speaker_fragment(words)):
        return min(1.0, 0.6 + 0.15 * kinds)
    named = re.search(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*", text.strip())
    if named and _MEMORABLE_CUES["fact"].search(text):
        return 0.6
    return 0.0


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
        "memorable": max((_memorable(s.text) for s in sentences if s.role == "user"), default=0.0),
    }


def intrinsic_importance(signals: dict[str, float]) -> float:
    """importance = (0.05 + Σ weight_k · signal_k) · (1 − 0.5 · small_talk), clamped to [0, 1].

    Weights: decision/commitment 0.25 ("decided", "will", "must", "deadline", "plan", "by Friday"),
    personal facts 0.15 (user's "I am / I have / my ..."), preferences 0.15 ("prefer", "love", "hate"),
    dates and numbers 0.10, named entities 0.10 (5 saturate), substance 0.10 (content words, 60
    saturate, and user turns, 4 saturate), an answered user question 0.10. They sum with the base to
    1.0. `small_talk` is the share of sentences with no content word ("hi", "thanks, bye"): a segment
    of pure pleasantries keeps at most half of whatever it scored.

    Floor: a segment whose user states something memorable (`memorable`, see `_memorable`: 0.6 to 1 for
    a first-person fact, decision, preference, problem or commitment) scores at least
    `0.45 + 0.35 · memorable` (0.66 to 0.8), plus a quarter of the weighted signals above, so the chain
    is hot enough to promote when memory first holds it (S5, S6.1); small talk never reaches the floor.
    """
    weighted = sum(w * signals.get(k, 0.0) for k, w in IMPORTANCE_WEIGHTS.items())
    raw = IMPORTANCE_BASE + weighted
    damped = raw * (1.0 - 0.5 * signals.get("small_talk", 0.0))
    memorable = signals.get("memorable", 0.0)
    if memorable > 0.0:
        damped = max(damped, 0.45 + 0.35 * memorable + 0.25 * weighted)
    return round(min(1.0, max(0.0, damped)), 4)
