"""Whether a topic phrase names a thing: a noun or a proper noun where it is first said.

RAKE's candidates are runs of content words, so in a chat where people say how they feel in every line
"excited", "stay safe", "feel" or "can't wait" outscored what they talked about: the ten LoCoMo
conversations, cut as the pipeline cuts them, had "working", "feel", "wait", "excited", "hear", "tough",
"stay positive", "stay safe" and "stay motivated" among their 40 most frequent topics. A word's part of
speech depends on its sentence ("can't wait" is a verb, "the wait was long" a noun), so spaCy's tagger
reads it there.

Only the best few phrases are read, their sentences tagged in one batch (about 0.6 ms a sentence here:
the tagger alone, Penn tags, no attribute ruler). Without spaCy installed every phrase counts as a name, as
before.
"""
from __future__ import annotations

from typing import Any

from athena_core.text.spacy_english import english_pipeline

NAMING = frozenset({"NN", "NNS", "NNP", "NNPS"})  # Penn tags of nouns and proper nouns
TAGGER_ONLY = ("ner", "parser", "lemmatizer", "attribute_ruler")  # tok2vec and tagger give `tag_`
BATCH = 8

_spans: dict[str, tuple[tuple[int, int], ...]] = {}  # sentence → its nouns' offsets; merges re-form chains
SPANS_KEPT = 4096


def _tagger() -> Any | None:
    return english_pipeline(TAGGER_ONLY)


def available() -> bool:
    return _tagger() is not None


def name_things(phrases: list[tuple[str, int, int]]) -> list[bool]:
    """For each (sentence, start, end): whether the phrase at [start, end) of the sentence holds a noun or a
    proper noun. Sentences not read yet are tagged in one batch (about half the time of one at a time)."""
    nlp = _tagger()
    if nlp is None:
        return [True] * len(phrases)
    new = list(dict.fromkeys(text for text, _, _ in phrases if text not in _spans))
    if new:
        if len(_spans) + len(new) > SPANS_KEPT:
            _spans.clear()
        for text, doc in zip(new, nlp.pipe(new, batch_size=BATCH)):
            _spans[text] = tuple((tok.idx, tok.idx + len(tok.text)) for tok in doc if tok.tag_ in NAMING)
    return [any(start <= s and e <= end for s, e in _spans.get(text, ())) for text, start, end in phrases]
