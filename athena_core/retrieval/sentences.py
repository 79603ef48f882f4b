"""An event's text cut into sentences: for sentence vectors (write side) and for excerpts (read side).

Why sentences: one vector for a long turn averages everything it says, so a question about one of its
sentences finds it late; a vector per sentence finds it by its best part (the event ranks by the best of
its own and its sentences' cosines). And within a token budget, a lower-ranked event shown as its
best-matching sentences costs a third of the whole turn, so more of the evidence fits (the top results
stay whole). Both are measured in `docs/retrieval.md`.

A leading speaker label ("Name: …", the usual transcript form) belongs to every sentence, so it is kept
on each sentence vector's text and on each excerpt.
"""
from __future__ import annotations

import re
from collections.abc import Collection

from athena_core.text.sentences import split_sentences
from athena_core.text.stemming import stem
from athena_core.text.tokens import word_tokens

_LABEL = re.compile(r"^([^\s:][^:\n]{0,39}):\s+")
MAX_SENTENCE_VECTORS = 8  # per event: longer texts fold their tail into the last one (ids stay bounded)


def split_label(text: str) -> tuple[str, str]:
    """"Anna: Hi there." → ("Anna", "Hi there."); a label is at most three words before a colon."""
    match = _LABEL.match(text)
    if match and len(match.group(1).split()) <= 3:
        return match.group(1), text[match.end():]
    return "", text


def sentence_texts(text: str, min_words: int) -> list[str]:
    """What gets a sentence vector: nothing for a text under `min_words` words or of one sentence (its own
    vector is enough), else each sentence with the speaker label, at most `MAX_SENTENCE_VECTORS`."""
    label, body = split_label(text)
    if min_words <= 0 or len(body.split()) < min_words:
        return []
    sentences = split_sentences(body, verbatim=True)  # a vector of the user's own words
    if len(sentences) < 2:
        return []
    if len(sentences) > MAX_SENTENCE_VECTORS:
        sentences = [*sentences[: MAX_SENTENCE_VECTORS - 1], " ".join(sentences[MAX_SENTENCE_VECTORS - 1:])]
    prefix = f"{label}: " if label else ""
    return [prefix + s for s in sentences]


def sentence_vector_id(event_id: str, index: int) -> str:
    return f"{event_id}.s{index}"


def sentence_vector_ids(event_id: str) -> list[str]:
    """Every id a sentence vector of this event can have (to delete them without reading the text)."""
    return [sentence_vector_id(event_id, i) for i in range(MAX_SENTENCE_VECTORS)]


def event_of(vector_id: str) -> tuple[str, bool]:
    """"evt_1.s3" → ("evt_1", True); "evt_1" → ("evt_1", False)."""
    event_id, sep, index = vector_id.rpartition(".s")
    if sep and index.isdigit():
        return event_id, True
    return vector_id, False


def excerpt(text: str, query_terms: Collection[str], max_words: int) -> str | None:
    """The sentences of `text` that best match the query, within `max_words`, marked with "…" where text
    was left out; None when the text is already that short. Starts at the sentence sharing the most query
    stems (the first on a tie) and grows forward, then backward (an answer tends to follow its cue)."""
    label, body = split_label(text)
    if max_words <= 0 or len(body.split()) <= max_words:
        return None
    sentences = split_sentences(body, verbatim=True)  # an excerpt shows the text as written
    stems = {stem(t) for t in query_terms}

    def overlap(i: int) -> int:
        return len({stem(w) for w in word_tokens(sentences[i])} & stems)

    best = max(range(len(sentences)), key=lambda i: (overlap(i), -i))
    lo = hi = best
    words = len(sentences[best].split())
    while True:
        if hi + 1 < len(sentences) and words + len(sentences[hi + 1].split()) <= max_words:
            hi += 1
            words += len(sentences[hi].split())
        elif lo > 0 and words + len(sentences[lo - 1].split()) <= max_words:
            lo -= 1
            words += len(sentences[lo].split())
        else:
            break
    piece = " ".join(sentences[lo: hi + 1]).split()
    cut = len(piece) > max_words
    piece = " ".join(piece[:max_words])
    before = "… " if lo > 0 else ""
    after = " …" if cut or hi < len(sentences) - 1 else ""
    return f"{label + ': ' if label else ''}{before}{piece}{after}"
