"""Whether a topic phrase names a thing: a noun or a proper noun where it is first said.

RAKE's candidates are runs of content words, so in a chat where people say how they feel in every line
"excited", "stay safe", "feel" or "can't wait" outscored what they talked about: the ten LoCoMo
conversations, cut as the pipeline cuts them, had "working", "feel", "wait", "excited", "hear", "tough",
"stay positive", "stay safe" and "stay motivated" among their 40 most frequent topics. A word's part of
speech depends on its sentence ("can't wait" is a verb, "the wait was long" a noun), so spaCy's tagger
reads it there.

RAKE's runs break at stopwords and punctuation, not at verbs, so a phrase can also say more than its name:
"calm studio helps", "friend ines teaches", "support means", "playing chess". The part that names is read
the same way: from its first word that is no verb, adverb or interjection to its last noun ("calm studio",
"friend ines", "support", "chess"); a past participle opens it where it is an adjective ("a stained glass
window", not "I've played chess"), and a finite verb after a noun ends it ("business" of "business takes
courage").

Only the best few phrases are read, their sentences tagged in one batch (`text/penn_tags.py`). Without
spaCy installed every phrase names a thing, whole, as before.
"""
from __future__ import annotations

from athena_core.text import penn_tags

NAMING = frozenset({"NN", "NNS", "NNP", "NNPS"})  # Penn tags of nouns and proper nouns
# Tags a name does not open with: verbs, modals, adverbs, interjections ...
NOT_OPENING = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD", "RB", "RBR", "RBS", "UH"})
# ... but a past participle after one of these is an adjective: "a stained glass window", "her stuffed animal" (and
# after "have" or "are" a verb: "I've played chess", "they're called lilies").
ADJECTIVE_AFTER = frozenset({"DT", "PDT", "PRP$", "POS", "IN", "CD", "JJ", "JJR", "JJS"})
FINITE = frozenset({"VBD", "VBP", "VBZ", "MD"})  # a finite verb after a noun ends the name: a clause follows


def available() -> bool:
    return penn_tags.available()


def naming_parts(phrases: list[tuple[str, int, int]]) -> list[tuple[int, int] | None]:
    """For each (sentence, start, end): the part of the phrase at [start, end) of the sentence that names a
    thing, as (start, end): from its first word that is no verb (but an adjective's past participle), modal,
    adverb or interjection to its last noun or proper noun before any finite verb that follows a noun; None
    when it holds no noun. Sentences not read yet are tagged in one batch (about half the time of one at a
    time)."""
    if not penn_tags.available():
        return [(start, end) for _, start, end in phrases]
    tags = penn_tags.sentence_tags([text for text, _, _ in phrases])
    return [_naming_part(tagged, start, end) for tagged, (_, start, end) in zip(tags, phrases)]


def _naming_part(tags: tuple[penn_tags.TokenTag, ...], start: int, end: int) -> tuple[int, int] | None:
    """The naming part of the phrase at [start, end) of a tagged sentence (see `naming_parts`)."""
    inside = [i for i, (s, e, _) in enumerate(tags) if start <= s and e <= end]
    opening = next((k for k, i in enumerate(inside) if _opens(tags, i)), None)
    if opening is None:
        return None
    last_noun = None
    for i in inside[opening:]:
        if tags[i][2] in FINITE and last_noun is not None:
            break  # "business takes courage": the subject is the name
        if tags[i][2] in NAMING:
            last_noun = tags[i][1]
    return None if last_noun is None else (tags[inside[opening]][0], last_noun)


def _opens(tags: tuple[penn_tags.TokenTag, ...], i: int) -> bool:
    """Whether a name may open at token `i`: see NOT_OPENING and ADJECTIVE_AFTER."""
    tag = tags[i][2]
    return tag not in NOT_OPENING or (tag == "VBN" and i > 0 and tags[i - 1][2] in ADJECTIVE_AFTER)
