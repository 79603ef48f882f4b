"""The offline LLM provider (SPEC S8): deterministic, network-free chain formation and topic arbitration.

It stands in for a chat model in the embedded default and in tests, so its answers must be *useful*,
not placeholders: an extractive TextRank summary, RAKE-style keyphrase topics with honest relative
confidences, gazetteer-and-pattern entity spotting, and an importance score from content signals.
Same transcript in, same `ChainFormation` out, on every machine.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from athena_core.providers.llm import ChainFormation, Subtopic, TranscriptLine
from athena_core.providers.offline_text import (
    STOPWORDS,
    Token,
    content_stems,
    gazetteer_hits,
    is_content_word,
    split_sentences,
    stem,
    tokens,
)

SMALL_TALK_TOPIC = "small talk"


@dataclass(frozen=True)
class Sentence:
    """One sentence of the transcript, remembering which event it came from and that event's role."""

    text: str
    line_index: int
    role: str
    weight: float  # how much this sentence counts for topic words (noisy logs count less)


@dataclass(frozen=True)
class Mention:
    """An entity occurrence; `rank` orders kinds by how much we trust them when the list is capped."""

    name: str
    sentence_index: int
    offset: int
    rank: int


# ---------------------------------------------------------------------------------------------------
# Transcript -> sentences


def line_weight(line: TranscriptLine) -> float:
    """Observations and system notes are often logs: let them count half for topic words."""
    return 0.5 if line.type == "observation" or line.role == "system" else 1.0


def transcript_sentences(transcript: list[TranscriptLine]) -> list[Sentence]:
    """Every event's content split into sentences, in transcript order.

    `split_sentences` keeps only parts with a Latin letter or digit; a segment written wholly in another
    script (Hebrew, Arabic, CJK) or in emoji would have none and could never be summarised, so it stays
    pending for good (issue 12: whatever is accepted must be processable). Then every non-blank line counts.
    """
    sentences = [
        Sentence(text, i, line.role, line_weight(line))
        for i, line in enumerate(transcript)
        for text in split_sentences(line.content)
    ]
    if sentences:
        return sentences
    return [
        Sentence(text.strip(), i, line.role, line_weight(line))
        for i, line in enumerate(transcript)
        for text in line.content.splitlines()
        if text.strip()
    ]


def token_terms(sentence_tokens: list[Token]) -> dict[int, str]:
    """Map token offset -> stemmed term for the tokens that carry content.

    Gazetteer hits count even when the word doubles as a stopword ("Go"), under their canonical name.
    """
    gazetteer = {tok.start: name.lower() for tok, name in gazetteer_hits(sentence_tokens)}
    return {
        tok.start: gazetteer.get(tok.start) or stem(tok.lower)
        for tok in sentence_tokens
        if tok.start in gazetteer or is_content_word(tok.lower)
    }


def sentence_terms(sentence_tokens: list[Token]) -> list[str]:
    """Stemmed content terms of a sentence, in order: the bag of words for TF-IDF and overlap."""
    return list(token_terms(sentence_tokens).values())


# ---------------------------------------------------------------------------------------------------
# Summary: TF-IDF sentence graph + TextRank


def tfidf_matrix(documents: list[list[str]]) -> np.ndarray:
    """L2-normalised TF-IDF rows (one per document) over a sorted vocabulary, so output is stable."""
    vocabulary = sorted({term for doc in documents for term in doc})
    if not vocabulary:
        return np.zeros((len(documents), 0))
    column = {term: j for j, term in enumerate(vocabulary)}
    counts = np.zeros((len(documents), len(vocabulary)))
    for i, doc in enumerate(documents):
        for term in doc:
            counts[i, column[term]] += 1.0
    document_frequency = (counts > 0).sum(axis=0)
    idf = np.log((1.0 + len(documents)) / (1.0 + document_frequency)) + 1.0
    weighted = counts * idf
    norms = np.linalg.norm(weighted, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return weighted / norms


def textrank(similarity: np.ndarray, damping: float = 0.85, iterations: int = 60) -> np.ndarray:
    """PageRank over the weighted sentence graph: a sentence is central if central sentences echo it.

    Self-loops are ignored; a sentence with no similar neighbour spreads its rank uniformly, so the
    iteration is a proper Markov chain and converges from any start.
    """
    n = similarity.shape[0]
    if n == 0:
        return np.zeros(0)
    graph = similarity.copy()
    np.fill_diagonal(graph, 0.0)
    out_weight = graph.sum(axis=1, keepdims=True)
    transition = np.where(out_weight > 0, graph / np.where(out_weight > 0, out_weight, 1.0), 1.0 / n)
    rank = np.full(n, 1.0 / n)
    for _ in range(iterations):
        updated = (1.0 - damping) / n + damping * transition.T @ rank
        if np.abs(updated - rank).sum() < 1e-10:
            return updated
        rank = updated
    return rank


def with_full_stop(text: str) -> str:
    """Chat turns often lack final punctuation; add it so joined sentences stay readable."""
    return text if text[-1] in ".!?" else text + "."


def truncate_words(text: str, max_chars: int) -> str:
    """Cut at a word boundary within max_chars, marking the cut with an ellipsis."""
    if len(text) <= max_chars:
        return text
    cut = text[: max(1, max_chars - 1)].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"


def select_summary(
    sentences: list[str], scores: np.ndarray, vectors: np.ndarray, max_sentences: int, max_chars: int,
    redundancy: float = 0.8,
) -> str:
    """Greedy pick by centrality within the budget, skipping near-duplicates; output in original order."""
    order = sorted(range(len(sentences)), key=lambda i: (-round(float(scores[i]), 12), i))
    chosen: list[int] = []
    used = 0
    for i in order:
        if len(chosen) >= max_sentences:
            break
        text = with_full_stop(sentences[i])
        extra = len(text) + (1 if chosen else 0)
        if used + extra > max_chars:
            continue
        if vectors.shape[1] and any(float(vectors[i] @ vectors[j]) >= redundancy for j in chosen):
            continue
        chosen.append(i)
        used += extra
    if not chosen:  # even the most central sentence is over budget: keep its opening
        return truncate_words(with_full_stop(sentences[order[0]]), max_chars)
    return " ".join(with_full_stop(sentences[i]) for i in sorted(chosen))


# ---------------------------------------------------------------------------------------------------
# Topic: RAKE-style keyphrases

_PHRASE_BREAK = re.compile(r"[^\sA-Za-z0-9]")


def candidate_phrases(
    sentence_tokens: list[Token], terms: dict[int, str], text: str, max_words: int,
) -> list[list[Token]]:
    """Maximal runs of content words, broken at stopwords and punctuation (RAKE's candidate rule).

    Runs longer than `max_words` yield every window of that length, so long noun piles still
    contribute readable phrases. @handles are entities, not topics.
    """
    runs: list[list[Token]] = []
    run: list[Token] = []
    previous: Token | None = None
    for tok in sentence_tokens:
        gap = text[previous.end: tok.start] if previous else ""
        phrase_word = tok.start in terms and not tok.lower.startswith("@")
        if run and (_PHRASE_BREAK.search(gap) or not phrase_word):
            runs.append(run)
            run = []
        if phrase_word:
            run.append(tok)
        previous = tok
    if run:
        runs.append(run)
    out: list[list[Token]] = []
    for run in runs:
        if len(run) <= max_words:
            out.append(run)
        else:
            out.extend(run[i: i + max_words] for i in range(len(run) - max_words + 1))
    return out


def keyphrases(sentences: list[Sentence], max_words: int = 4) -> list[tuple[str, float]]:
    """Score candidate phrases; best first as (phrase, score).

    score(p) = (1 + ln count(p)) · Σ_{w ∈ p} tf(w) / √len(p), with tf the weighted count of the stem
    across the transcript. Words that recur lift every phrase containing them; a phrase that recurs
    lifts itself; √len keeps long one-off runs from winning on length alone. Phrases are keyed by
    their stems and shown in their most frequent surface form (ties: first seen), lowercased.
    """
    term_weight: Counter[str] = Counter()
    phrase_count: Counter[tuple[str, ...]] = Counter()
    surfaces: dict[tuple[str, ...], Counter[str]] = {}
    first_seen: dict[tuple[str, ...], int] = {}
    for sentence in sentences:
        sentence_tokens = tokens(sentence.text)
        terms = token_terms(sentence_tokens)
        for term in terms.values():
            term_weight[term] += sentence.weight
        for phrase in candidate_phrases(sentence_tokens, terms, sentence.text, max_words):
            key = tuple(terms[t.start] for t in phrase)
            phrase_count[key] += 1
            surfaces.setdefault(key, Counter())[" ".join(t.lower for t in phrase)] += 1
            first_seen.setdefault(key, len(first_seen))
    scored = []
    for key, count in phrase_count.items():
        score = (1.0 + math.log(count)) * sum(term_weight[t] for t in key) / math.sqrt(len(key))
        surface = max(surfaces[key].items(), key=lambda item: item[1])[0]  # first max wins ties
        scored.append((surface, round(score, 9), first_seen[key], key))
    scored.sort(key=lambda item: (-item[1], item[2]))
    return [(surface, score) for surface, score, _, _ in scored]


def topic_and_subtopics(
    phrases: list[tuple[str, float]], max_subtopics: int = 3,
) -> tuple[str, list[Subtopic]]:
    """Best phrase is the topic; the next phrases sharing no word with anything already chosen are
    subtopics, confidence = score / best score (so 1.0 means "as strong as the topic itself")."""
    if not phrases:
        return SMALL_TALK_TOPIC, []
    topic, best = phrases[0]
    taken = {stem(w) for w in topic.split()}
    subtopics: list[Subtopic] = []
    for phrase, score in phrases[1:]:
        if len(subtopics) >= max_subtopics:
            break
        stems = {stem(w) for w in phrase.split()}
        if stems & taken:
            continue
        taken |= stems
        subtopics.append(Subtopic(theme=phrase, confidence=round(min(1.0, score / best), 3)))
    return topic, subtopics


# ---------------------------------------------------------------------------------------------------
# Entities

RANK_GAZETTEER, RANK_NAME, RANK_HANDLE, RANK_IDENTIFIER, RANK_DATE, RANK_QUANTITY = range(6)

_HANDLE = re.compile(r"^@[A-Za-z0-9_]{2,}$")
_IDENTIFIER = re.compile(
    r"^(?:[a-z]+(?:[A-Z][a-z0-9]*)+"  # camelCase
    r"|(?:[A-Z][a-z0-9]+){2,}"  # PascalCase
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"  # snake_case
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # UPPER_SNAKE (env vars)
    r"|[\w-]+\.(?:py|go|rs|js|ts|java|yaml|yml|json|toml|sql|md|sh|tf))$"  # file names
)
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
          r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_DATE = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b"
    rf"|\b{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTH}(?: \d{{4}})?\b"
)
_QUANTITY = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|secs?|seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?"
    r"|years?|[kmgt]b|[kmgt]i|gib|mib|%|k|x|cores?|cpus?|replicas?|pods?|nodes?|users?|rps|qps|usd|eur"
    r"|dollars?|euros?)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_CAPITALISED = re.compile(r"^(?:[A-Z][a-z]+(?:['-][A-Za-z]+)*|[A-Z]{2,5}[0-9]?)$")
_NAME_CONNECTORS = frozenset({"of", "de", "van", "von", "da", "del", "la", "le"})
_NOT_NAMES = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june
    july august september october november december ok okay lol fyi asap tbd todo btw imo pm am eta
    faq""".split()
)
_CLAUSE_BREAK = re.compile(r"[:\"(\[]|\s-\s")  # after these a capital may be mere style


def _rule_mentions(sentence_tokens: list[Token], index: int, claimed: set[int]) -> list[Mention]:
    """Gazetteer terms, @handles and code identifiers: token-level rules, trusted most."""
    found: list[Mention] = []
    for tok, canonical in gazetteer_hits(sentence_tokens):
        found.append(Mention(canonical, index, tok.start, RANK_GAZETTEER))
        claimed.add(tok.start)
    for tok in sentence_tokens:
        if tok.start in claimed:
            continue
        if _HANDLE.match(tok.text):
            found.append(Mention(tok.text, index, tok.start, RANK_HANDLE))
            claimed.add(tok.start)
        elif _IDENTIFIER.match(tok.text):
            found.append(Mention(tok.text, index, tok.start, RANK_IDENTIFIER))
            claimed.add(tok.start)
    return found


def _pattern_mentions(text: str, sentence_tokens: list[Token], index: int, claimed: set[int]) -> list[Mention]:
    """Dates and numbers with units: regexes over the sentence text; they claim the tokens they cover."""
    found: list[Mention] = []
    for pattern, rank in ((_DATE, RANK_DATE), (_QUANTITY, RANK_QUANTITY)):
        for match in pattern.finditer(text):
            covered = [t.start for t in sentence_tokens if match.start() <= t.start < match.end()]
            if any(start in claimed for start in covered):
                continue
            found.append(Mention(match.group(0), index, match.start(), rank))
            claimed.update(covered)
    return found


def _capitalised_runs(
    text: str, sentence_tokens: list[Token], claimed: set[int],
) -> list[tuple[str, int, bool]]:
    """Runs of capitalised words as (name, offset, opens_clause); punctuation and claimed tokens break."""
    runs: list[list[tuple[Token, bool]]] = []
    run: list[tuple[Token, bool]] = []
    previous: Token | None = None
    for tok in sentence_tokens:
        gap = text[previous.end: tok.start] if previous else ""
        opens_clause = tok.sentence_initial or bool(_CLAUSE_BREAK.search(gap))
        is_name_word = (
            tok.start not in claimed and bool(_CAPITALISED.match(tok.text))
            and tok.lower not in STOPWORDS and tok.lower not in _NOT_NAMES
        )
        connector = bool(run) and tok.lower in _NAME_CONNECTORS and not _PHRASE_BREAK.search(gap)
        if run and (not (is_name_word or connector) or _PHRASE_BREAK.search(gap)):
            runs.append(run)
            run = []
        if is_name_word or (run and connector):
            run.append((tok, opens_clause))
        previous = tok
    if run:
        runs.append(run)
    out = []
    for run in runs:
        while run and run[-1][0].lower in _NAME_CONNECTORS:
            run = run[:-1]
        if run:
            first, opens_clause = run[0]
            name = text[first.start: run[-1][0].end]
            out.append((name, first.start, opens_clause))
    return out


def entity_mentions(sentences: list[str]) -> list[Mention]:
    """All entity mentions in text order.

    A capitalised name that opens a sentence or clause may just be a capitalised ordinary word, so it
    counts only if the same name recurs somewhere in the given sentences.
    """
    mentions: list[Mention] = []
    names: list[tuple[str, int, int, bool]] = []
    for index, text in enumerate(sentences):
        sentence_tokens = tokens(text)
        claimed: set[int] = set()
        mentions += _rule_mentions(sentence_tokens, index, claimed)
        mentions += _pattern_mentions(text, sentence_tokens, index, claimed)
        names += [(name, index, offset, initial) for name, offset, initial in
                  _capitalised_runs(text, sentence_tokens, claimed)]
    name_count = Counter(name.lower() for name, _, _, _ in names)
    mentions += [
        Mention(name, index, offset, RANK_NAME)
        for name, index, offset, initial in names
        if not initial or name_count[name.lower()] >= 2
    ]
    return sorted(mentions, key=lambda m: (m.sentence_index, m.offset, m.rank))


def dedupe_entities(mentions: list[Mention], cap: int) -> list[str]:
    """Case-insensitive dedupe keeping first-seen casing; over the cap, the least trusted kinds go first."""
    firsts: dict[str, Mention] = {}
    for mention in mentions:
        firsts.setdefault(mention.name.lower(), mention)
    unique = list(firsts.values())
    if len(unique) > cap:
        keep = sorted(unique, key=lambda m: (m.rank, m.sentence_index, m.offset))[:cap]
        unique = [m for m in unique if m in keep]
    return [m.name for m in unique]


# ---------------------------------------------------------------------------------------------------
# Importance

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
    rf"\b(?:\d+(?:[.:/-]\d+)*|{_MONTH}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow"
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


# ---------------------------------------------------------------------------------------------------
# The provider


class OfflineLLM:
    """`LLMProvider` without a model: classic extractive NLP, deterministic and network-free.

    Settings: `summary_max_sentences` / `summary_max_chars` bound the extractive summary;
    `max_entities` caps the entity list; `same_topic_threshold` is the overlap coefficient
    |A∩B| / min(|A|, |B|) of stemmed content words above which two messages share a topic (0.25: with
    four or fewer content words in the shorter message one shared word suffices, with five to eight it
    takes two, so one incidental common word between long messages is not enough). The pipeline passes
    the open segment's recent text as `previous`, so the shorter side is usually the new message.
    """

    name = "offline"

    def __init__(
        self,
        *,
        summary_max_sentences: int = 3,
        summary_max_chars: int = 400,
        max_entities: int = 15,
        max_phrase_words: int = 4,
        same_topic_threshold: float = 0.25,
    ) -> None:
        if summary_max_sentences < 1 or summary_max_chars < 20:
            raise ValueError("summary budget must allow at least one sentence of 20 characters")
        self.summary_max_sentences = summary_max_sentences
        self.summary_max_chars = summary_max_chars
        self.max_entities = max_entities
        self.max_phrase_words = max_phrase_words
        self.same_topic_threshold = same_topic_threshold

    def form_chain(self, transcript: list[TranscriptLine], *, tenant_id: str = "") -> ChainFormation:
        """Summary, topic, subtopics, entities and importance of one finished segment (SPEC S4).

        `tenant_id` is accepted for interface parity (the openai provider counts tokens per tenant).
        """
        if not transcript:
            raise ValueError("cannot form a chain from an empty transcript (no events)")
        sentences = transcript_sentences(transcript)
        if not sentences:
            # Only blank contents (accepted: only an empty *user message* is refused at the door): an empty
            # formation, which the quality gate rejects, so the segment's events leave `pending`.
            return ChainFormation(topic="", subtopics=[], summary="", entities=[], intrinsic_importance=0.0)
        texts = [s.text for s in sentences]
        vectors = tfidf_matrix([sentence_terms(tokens(t)) for t in texts])
        centrality = textrank(vectors @ vectors.T)
        summary = select_summary(texts, centrality, vectors, self.summary_max_sentences, self.summary_max_chars)
        topic, subtopics = topic_and_subtopics(keyphrases(sentences, self.max_phrase_words))
        entities = dedupe_entities(entity_mentions(texts), self.max_entities)
        importance = intrinsic_importance(importance_signals(transcript, sentences, entities))
        return ChainFormation(
            topic=topic, subtopics=subtopics, summary=summary, entities=entities,
            intrinsic_importance=importance,
        )

    def same_topic(self, previous: str, current: str, *, tenant_id: str = "") -> bool:
        """Gray-zone arbitration of the break gate by lexical overlap.

        True when the messages share a named entity or gazetteer term, or when the overlap coefficient
        of their stemmed content words reaches `same_topic_threshold`. A message with no content word
        at all ("ok, do it") continues the current topic rather than breaking it.
        """
        before, after = split_sentences(previous), split_sentences(current)
        mentions = entity_mentions(before + after)
        entities_before = {m.name.lower() for m in mentions if m.sentence_index < len(before)}
        entities_after = {m.name.lower() for m in mentions if m.sentence_index >= len(before)}
        if entities_before & entities_after:
            return True
        words_before = {t for s in before for t in sentence_terms(tokens(s))}
        words_after = {t for s in after for t in sentence_terms(tokens(s))}
        if not words_before or not words_after:
            return True
        overlap = len(words_before & words_after) / min(len(words_before), len(words_after))
        return overlap >= self.same_topic_threshold
