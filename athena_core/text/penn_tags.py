"""Penn part-of-speech tags of sentences, read by spaCy's tagger alone and kept by sentence.

The offline provider asks the tagger two things of a chat: whether a topic phrase names a thing where it is
said (`providers/offline/topic_nouns.py`), and whether a capitalised word that opens a sentence is a name
(`providers/offline/entities.py`). Both read only a few sentences of a segment, batched (about 0.6 ms a
sentence here: tok2vec and tagger, Penn tags, no attribute ruler). Merges form a chain again from the
same sentences, so their tags are kept. Without spaCy installed there are no tags, and both readers do as
they did before it.
"""
from __future__ import annotations

from typing import Any

from athena_core.text.spacy_english import english_pipeline

TAGGER_ONLY = ("ner", "parser", "lemmatizer", "attribute_ruler")  # tok2vec and tagger give `tag_`
PROPER_NOUNS = frozenset({"NNP", "NNPS"})
BATCH = 8
TAGS_KEPT = 4096

TokenTag = tuple[int, int, str]  # a token's (start, end) offsets in its sentence and its Penn tag
_tags: dict[str, tuple[TokenTag, ...]] = {}


def _tagger() -> Any | None:
    return english_pipeline(TAGGER_ONLY)


def available() -> bool:
    """Whether spaCy's English pipeline is installed (loading it the first time, about 2 s)."""
    return _tagger() is not None


def sentence_tags(sentences: list[str]) -> list[tuple[TokenTag, ...]]:
    """Each sentence's tokens with their tags; sentences not read yet are tagged in one batch (about half the
    time of one at a time). Empty tuples without the tagger."""
    nlp = _tagger()
    if nlp is None:
        return [() for _ in sentences]
    new = list(dict.fromkeys(text for text in sentences if text not in _tags))
    if new:
        if len(_tags) + len(new) > TAGS_KEPT:
            _tags.clear()
        for text, doc in zip(new, nlp.pipe(new, batch_size=BATCH)):
            _tags[text] = tuple((tok.idx, tok.idx + len(tok.text), tok.tag_) for tok in doc)
    return [_tags.get(text, ()) for text in sentences]
