"""The topic: RAKE-style keyphrases, the best one the topic and the next distinct ones its subtopics."""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from athena_core.models.chains import Subtopic
from athena_core.providers.offline.transcript import PHRASE_BREAK, Sentence, topic_terms
from athena_core.text.stemming import stem
from athena_core.text.stopwords import SMALL_TALK_STOPWORDS
from athena_core.text.tokens import Token, tokens

SMALL_TALK_TOPIC = "small talk"

# General nouns (Halliday and Hasan's "general nouns": thing, people, place, time, idea ...) stand for almost
# any noun, so a phrase headed by one names no topic: such phrases ("time", "life", "people", "long time")
# named 179 of the 1,602 segments of ten LoCoMo conversations; the human ones ("man", "woman") come from
# pictures' captions ("a man holding a guitar"). A phrase's head is its last word ("pottery class", "time
# management").
GENERAL_NOUNS = frozenset("""thing things stuff people person place places time times day days week weeks
    year years moment way ways lot bit kind sort part parts idea ideas fact point case matter question
    problem problems difference life world name words thoughts details step end side reason sense
    man men woman women guy guys folks""".split())

# Nouns of a chat's courtesies: "take care", "have fun", "thanks for the support", "no worries", "had a blast",
# "they bring so much joy". Said in chat after chat whatever it is about, so a phrase that is only one of them
# names no topic unless nothing else does: "support", "care", "fun" and "joy" were the topics of 81 of the 1,602
# LoCoMo segments, whose next phrases said what they were about ("doggy playdate", "toby", "vancouver").
# "family support" or "health care" still name one.
COURTESY_NOUNS = frozenset("support care fun joy worries blast cheers encouragement luck thanks".split())

# How many of the best phrases are read for a noun (`topic_and_subtopics`): their sentences are tagged.
NOUN_CHECKED = 8

# Words that open a reply or greet and name no topic ("Wow, that's great", "Totally agree", "Morning!");
# they are not in STOPWORDS because the extractor and the lexical search read that list too.
# (the quality gate's small-talk words hold the greetings: "hi", "thanks", "morning" ...)
PHATIC = frozenset("wow congrats congratulations totally agree agreed absolutely definitely aww haha lol omg".split()) \
    | SMALL_TALK_STOPWORDS


@dataclass(frozen=True)
class Keyphrase:
    """A scored phrase and where it was first said: `sentence`, and each word's characters [start, end)
    there (`words`, one per word of `phrase`)."""

    phrase: str
    score: float
    sentence: Sentence
    words: tuple[tuple[int, int], ...]

    @property
    def start(self) -> int:
        return self.words[0][0]

    @property
    def end(self) -> int:
        return self.words[-1][1]

    def cut_to(self, start: int, end: int) -> "Keyphrase":
        """The phrase's words said within [start, end) of its sentence ("calm studio" of "calm studio helps")."""
        kept = [(w, span) for w, span in zip(self.phrase.split(), self.words) if span[0] < end and span[1] > start]
        if not kept:  # [start, end) falls between its words: nothing to cut to
            return self
        return replace(self, phrase=" ".join(w for w, _ in kept), words=tuple(span for _, span in kept))


def is_unit(previous: Token | None, tok: Token, gap: str) -> bool:
    """A short word right after a number is its unit ("38 ms", "16 GB"): part of a quantity, no topic."""
    return previous is not None and previous.lower.isdigit() and gap == " " and len(tok.lower) <= 3


def candidate_phrases(
    sentence_tokens: list[Token], terms: dict[int, str], text: str, max_words: int,
) -> list[list[Token]]:
    """Maximal runs of content words, broken at stopwords and punctuation (RAKE's candidate rule).

    Runs longer than `max_words` yield every window of that length, so long noun piles still
    contribute readable phrases. @handles are entities, not topics; nor are phatic words (`PHATIC`) or
    units after a number.
    """
    runs: list[list[Token]] = []
    run: list[Token] = []
    previous: Token | None = None
    for tok in sentence_tokens:
        gap = text[previous.end: tok.start] if previous else ""
        phrase_word = (tok.start in terms and not tok.lower.startswith("@") and tok.lower not in PHATIC
                       and not is_unit(previous, tok, gap))
        if run and (PHRASE_BREAK.search(gap) or not phrase_word):
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


def keyphrases(sentences: list[Sentence], max_words: int = 4) -> list[Keyphrase]:
    """Score candidate phrases; best first.

    score(p) = (1 + ln count(p)) · Σ_{w ∈ p} tf(w) / √len(p), with tf the weighted count of the stem
    across the transcript and count(p) the phrase's weighted count (a log line counts half). Words that
    recur lift every phrase containing them; a phrase that recurs lifts itself; √len keeps long one-off
    runs from winning on length alone. Phrases are keyed by their stems and shown in their most frequent
    surface form (ties: first seen), lowercased. A speaker label ("Jon: ...") or a name addressing someone
    ("Thanks, Mel!") is no word of any phrase, nor the frame of a shared picture (`transcript.topic_terms`).
    """
    term_weight: Counter[str] = Counter()
    phrase_count: Counter[tuple[str, ...]] = Counter()  # weighted, like the terms
    surfaces: dict[tuple[str, ...], Counter[str]] = {}
    first_seen: dict[tuple[str, ...], int] = {}
    where: dict[tuple[str, ...], tuple[Sentence, tuple[tuple[int, int], ...]]] = {}  # first said: each word's span
    for sentence in sentences:
        sentence_tokens = tokens(sentence.text)
        terms = topic_terms(sentence.text, sentence_tokens)  # "Jon: ...", "Hey Mel!", "[shares a photo: ...]"
        for term in terms.values():
            term_weight[term] += sentence.weight
        for phrase in candidate_phrases(sentence_tokens, terms, sentence.text, max_words):
            key = tuple(terms[t.start] for t in phrase)
            phrase_count[key] += sentence.weight  # a phrase repeated in log lines counts half each time
            surfaces.setdefault(key, Counter())[" ".join(t.lower for t in phrase)] += 1
            first_seen.setdefault(key, len(first_seen))
            where.setdefault(key, (sentence, tuple((t.start, t.end) for t in phrase)))
    scored = []
    for key, count in phrase_count.items():
        score = (1.0 + math.log(count)) * sum(term_weight[t] for t in key) / math.sqrt(len(key))
        surface = max(surfaces[key].items(), key=lambda item: item[1])[0]  # first max wins ties
        scored.append((round(score, 9), first_seen[key], surface, key))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [Keyphrase(surface, score, *where[key]) for score, _, surface, key in scored]


def topic_and_subtopics(
    phrases: list[Keyphrase], max_subtopics: int = 3,
    naming_parts: Callable[[list[tuple[str, int, int]]], list[tuple[int, int] | None]] | None = None,
) -> tuple[str, list[Subtopic]]:
    """Best phrase is the topic; the next phrases sharing no word with anything already chosen are
    subtopics, confidence = score / best score (so 1.0 means "as strong as the topic itself").

    With `naming_parts([(sentence, start, end), ...])` (`topic_nouns`), only a phrase holding a noun where it
    is first said is chosen, among the best `NOUN_CHECKED` phrases (the best phrase when none is), cut to
    the part that names ("calm studio" of "calm studio helps"), and not when that part is headed by a
    general noun (`GENERAL_NOUNS`) or is only a courtesy's noun (`COURTESY_NOUNS`, unless nothing else is
    left). A phrase first said in a log line (tool output, system notes: `line_weight` < 1) is not read and
    is chosen whole: a log is no English to a tagger.
    """
    if not phrases:
        return SMALL_TALK_TOPIC, []
    candidates = phrases
    if naming_parts is not None:
        window = phrases[:NOUN_CHECKED]
        spoken = [k for k in window if k.sentence.weight >= 1.0]
        parts = dict(zip(spoken, naming_parts([(k.sentence.text, k.start, k.end) for k in spoken])))
        named = [k if k not in parts else k.cut_to(*parts[k])  # a log line's phrase stays whole
                 for k in window if k not in parts or parts[k] is not None]
        specific = [k for k in named if k.phrase.split()[-1] not in GENERAL_NOUNS]
        candidates = [k for k in specific if k.phrase not in COURTESY_NOUNS] or specific or phrases[:1]
    topic = candidates[0].phrase
    taken = {stem(w) for w in topic.split()}
    subtopics: list[Subtopic] = []
    for k in candidates[1:]:
        if len(subtopics) >= max_subtopics:
            break
        stems = {stem(w) for w in k.phrase.split()}
        if stems & taken:
            continue
        taken |= stems
        subtopics.append(Subtopic(theme=k.phrase, confidence=round(min(1.0, k.score / phrases[0].score), 3)))
    return topic, subtopics
