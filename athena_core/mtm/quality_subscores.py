"""The quality gate's five sub-scores (SPEC S4), each in [0, 1], on lexical signals of the transcript and
the formation output: coherence, completeness, relevance, engagement, cognitive depth.

Text model: lowercase word tokens, English stop words and phatic words ("hi", "thanks", "bye" …)
removed (`text.stopwords.SMALL_TALK_STOPWORDS`), a light plural strip ("tasks" ~ "task"). Small talk
therefore has no content words at all, which is exactly why it scores low.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from athena_core.providers.llm import TranscriptLine
from athena_core.text.stemming import strip_plural
from athena_core.text.stopwords import SMALL_TALK_STOPWORDS
from athena_core.text.tokens import word_tokens

AGENT_ROLES = frozenset({"agent", "assistant"})

# Saturation points: the amount of a signal at which a sub-score component reaches 1.
_SUBSTANTIVE_REPLY_TOKENS = 3  # an agent line with fewer content words does not answer anything
_INFORMING_STATEMENT_TOKENS = 3  # a user statement with this many content words tells, it does not ask
_SEGMENT_SIZE_TOKENS = 40  # content words for a segment to count as fully developed
_USER_TURNS_FULL = 3
_USER_TOKENS_FULL = 8  # mean content words per user message
_EXCHANGES_FULL = 3  # user <-> agent role switches
_KEY_TERMS = 10

_QUESTION_START_RE = re.compile(
    r"^\s*(how|what|why|which|when|where|who|should|can|could|would|is|are|do|does|did|will)\b"
)

# Cognitive-depth markers: (pattern, weight, hits for full credit). Weights sum to 0.75; the other
# 0.25 come from inquiry, numbers, entities and thought/action events (see cognitive_depth_score).
_DEPTH_MARKERS: tuple[tuple[re.Pattern[str], float, int], ...] = (
    (  # reasoning: the segment explains why
        re.compile(
            r"\b(because|since|therefore|thus|hence|so that|due to|as a result|which means|the reason|"
            r"in order to|otherwise|consequently)\b"
        ),
        0.30,
        2,
    ),
    (  # decision or plan: the segment concludes something
        re.compile(
            r"\b(decided?|decision|chose|choose|choosing|going with|go with|will use|i'll use|plan|planning|"
            r"settle on|settled on|prefer|opted?|pick(ed)?|conclude[ds]?)\b"
        ),
        0.25,
        1,
    ),
    (  # comparison: alternatives were weighed
        re.compile(
            r"\b(vs\.?|versus|compare[ds]?|comparison|trade-?offs?|instead of|rather than|whereas|better|"
            r"worse|safer|faster|slower|cheaper|pros|cons|difference|alternatives?)\b"
        ),
        0.20,
        1,
    ),
)


# --------------------------------------------------------------------------------------------- text


def content_tokens(text: str) -> list[str]:
    """Content words of a text: lowercase, stop/phatic words removed, plural-stripped, in order."""
    return [
        strip_plural(t)
        for t in word_tokens(text)
        if t not in SMALL_TALK_STOPWORDS and (len(t) > 1 or t.isdigit())
    ]


def _overlap(a: set[str], b: set[str]) -> float:
    """Overlap coefficient |A∩B| / min(|A|,|B|): fair to short replies to long turns; 0 if one is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _is_user_message(line: TranscriptLine) -> bool:
    return line.role == "user" and line.type == "message"


def _is_question(text: str) -> bool:
    return "?" in text or bool(_QUESTION_START_RE.match(text.lower()))


def _informs(text: str) -> bool:
    """Whether a message tells something, outside what it asks: its sentences that are not questions, and
    of a question the clauses before its last comma ("I keep tripping over X, is there a sane model for
    it?"), carry ≥ 3 content words, or 2 with a name among them ("I work at Globex.", "I use Rust.";
    "I'll give it a shot" names nothing)."""
    told: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        if _is_question(sentence):
            head, sep, _ = re.sub(r"[?\s]+$", "", sentence).rpartition(",")
            sentence = head if sep and not _QUESTION_START_RE.match(sentence.lower()) else ""
        told.append(sentence)
    words = content_tokens(" ".join(told))
    if len(words) >= _INFORMING_STATEMENT_TOKENS:
        return True
    names = {strip_plural(w.lower()) for s in told for w in re.findall(r"(?<=\s)[A-Z]\w*", s)}
    return len(words) >= 2 and bool(names & set(words))


def _clamp(x: float) -> float:
    return min(1.0, max(0.0, x))


def _weighted_mean(parts: Sequence[tuple[float, float]]) -> float:
    """Mean of (value, weight) pairs with weights renormalised over the parts that apply."""
    total = sum(w for _, w in parts)
    return sum(v * w for v, w in parts) / total if total > 0 else 0.0


# ---------------------------------------------------------------------------------------- sub-scores


def coherence_score(lines: Sequence[TranscriptLine], topic: str = "", entities: Sequence[str] = ()) -> float:
    """Do the turns hang together around one subject?

    0.6 · flow: mean overlap coefficient of content words between consecutive non-empty turns (a turn
    with no content words breaks the flow: 0 for its pairs);
    0.4 · anchoring: share of turns that mention a word of the topic or of an entity.
    Whichever part is undefined (single turn; no topic and no entities) is left out.
    """
    turns = [set(content_tokens(line.content)) for line in lines if line.content.strip()]
    if not turns:
        return 0.0
    parts: list[tuple[float, float]] = []
    if len(turns) > 1:
        pairs = [_overlap(a, b) for a, b in zip(turns, turns[1:])]
        parts.append((sum(pairs) / len(pairs), 0.6))
    anchor = set(content_tokens(" ".join([topic, *entities])))
    if anchor:
        parts.append((sum(1.0 for t in turns if t & anchor) / len(turns), 0.4))
    return _clamp(_weighted_mean(parts))


def completeness_score(lines: Sequence[TranscriptLine]) -> float:
    """Is the exchange finished: both parties present, questions answered, enough said?

    0.30 · roles: 1 with a user and a non-user party, 0.5 with only one party;
    0.45 · answered: share of user messages that get a substantive (≥ 3 content words) non-user line
    before the next user message. What a message tells needs no answer, only what it asks: a statement
    that informs (`_informs`: "I switched from VS Code to Neovim last month", "I work at Globex") is
    answered by any reply, an acknowledgement ("Great choice.") included; a message that tells
    and asks ("I've been nerding out on category theory, any book you would suggest?") gets half of its
    credit from an acknowledgement. A final user message that is not a question and got no reply is a
    closing remark ("I'll go with AOF", "thanks bye") and needs no answer. "thanks, that works" informs
    nobody, so it still needs a substantive reply. With no user message, 1 if anything substantive was
    recorded (automation output answers no one);
    0.25 · size: content words of the segment, full at 40.
    """
    if not lines:
        return 0.0
    has_user = any(line.role == "user" for line in lines)
    has_other = any(line.role != "user" for line in lines)
    roles = 1.0 if has_user and has_other else 0.5

    user_idx = [i for i, line in enumerate(lines) if _is_user_message(line)]
    needing, answered = 0, 0.0
    for n, i in enumerate(user_idx):
        end = user_idx[n + 1] if n + 1 < len(user_idx) else len(lines)
        replies = [line for line in lines[i + 1 : end] if line.role != "user"]
        text = lines[i].content
        asks = _is_question(text)
        if n + 1 == len(user_idx) and not replies and not asks:
            continue  # closing remark
        needing += 1
        if any(len(content_tokens(r.content)) >= _SUBSTANTIVE_REPLY_TOKENS for r in replies):
            answered += 1.0
        elif replies and _informs(text):
            answered += 0.5 if asks else 1.0  # acknowledged: what it told is taken, what it asked is not
    total_tokens = sum(len(content_tokens(line.content)) for line in lines)
    if needing:
        answered_share = answered / needing
    else:
        answered_share = 1.0 if total_tokens >= _SUBSTANTIVE_REPLY_TOKENS else 0.0
    size = min(1.0, total_tokens / _SEGMENT_SIZE_TOKENS)
    return _clamp(0.30 * roles + 0.45 * answered_share + 0.25 * size)


def relevance_score(
    lines: Sequence[TranscriptLine], summary: str, topic: str, entities: Sequence[str] = ()
) -> float:
    """Does the formation output (summary, topic, entities) describe this segment?

    0.5 · grounding: share of the summary+topic content words that occur in the segment (a summary
    about something else, or an empty one, scores 0);
    0.3 · coverage: share of the segment's key terms (its most frequent content words, up to 10) that
    the summary, topic or entities mention;
    0.2 · entity grounding: share of entities with a word occurring in the segment (left out when
    there are no entities).
    """
    counts = Counter(t for line in lines for t in content_tokens(line.content))
    if not counts:
        return 0.0
    vocab = set(counts)
    described = set(content_tokens(f"{summary} {topic}"))
    entity_tokens = [set(content_tokens(e)) for e in entities]
    entity_tokens = [e for e in entity_tokens if e]
    if not described and not entity_tokens:
        return 0.0

    parts: list[tuple[float, float]] = []
    parts.append((len(described & vocab) / len(described) if described else 0.0, 0.5))
    repeated = [t for t, c in counts.most_common() if c >= 2][:_KEY_TERMS]
    key_terms = repeated or [t for t, _ in counts.most_common(_KEY_TERMS)]
    mentioned = described.union(*entity_tokens)
    parts.append((sum(1 for t in key_terms if t in mentioned) / len(key_terms), 0.3))
    if entity_tokens:
        parts.append((sum(1 for e in entity_tokens if e & vocab) / len(entity_tokens), 0.2))
    return _clamp(_weighted_mean(parts))


def engagement_score(lines: Sequence[TranscriptLine]) -> float:
    """How much did the user actually take part?

    0.4 · turns: user messages carrying content words, full at 3;
    0.4 · length: mean content words per user message, full at 8;
    0.2 · exchange: switches between user and agent lines, full at 3.
    A segment with no user message scores 0 (nobody was engaged).
    """
    user_msgs = [line for line in lines if _is_user_message(line)]
    if not user_msgs:
        return 0.0
    sizes = [len(content_tokens(line.content)) for line in user_msgs]
    turns = min(1.0, sum(1 for s in sizes if s > 0) / _USER_TURNS_FULL)
    length = min(1.0, (sum(sizes) / len(sizes)) / _USER_TOKENS_FULL)
    speakers = [line.role for line in lines if line.role == "user" or line.role in AGENT_ROLES]
    switches = sum(1 for a, b in zip(speakers, speakers[1:]) if (a == "user") != (b == "user"))
    exchange = min(1.0, switches / _EXCHANGES_FULL)
    return _clamp(0.4 * turns + 0.4 * length + 0.2 * exchange)


def cognitive_depth_score(lines: Sequence[TranscriptLine], entities: Sequence[str] = ()) -> float:
    """Did the segment reason, or only chat?

    0.30 reasoning markers (because, therefore, due to …; full at 2 hits), 0.25 a decision or plan
    (decided, going with, plan …), 0.20 a comparison (vs, rather than, trade-off, safer …),
    0.10 a user why/how-style question, 0.05 numbers, 0.05 named entities,
    0.05 agent thought/action events (visible reasoning and tool use).
    """
    text = "\n".join(line.content for line in lines).lower()
    if not text.strip():
        return 0.0
    score = 0.0
    for pattern, weight, full in _DEPTH_MARKERS:
        score += weight * min(1.0, len(pattern.findall(text)) / full)
    if any(_is_user_message(line) and _is_question(line.content) for line in lines):
        score += 0.10
    if re.search(r"\d", text):
        score += 0.05
    if any(e.strip() for e in entities):
        score += 0.05
    if any(line.type in ("thought", "action") for line in lines):
        score += 0.05
    return _clamp(score)
