"""The topic: RAKE-style keyphrases, the best one the topic and the next distinct ones its subtopics."""
from __future__ import annotations

import math
from collections import Counter

from athena_core.models.chains import Subtopic
from athena_core.providers.offline.transcript import PHRASE_BREAK, Sentence, spoken_terms
from athena_core.text.stemming import stem
from athena_core.text.stopwords import SMALL_TALK_STOPWORDS
from athena_core.text.tokens import Token, tokens

SMALL_TALK_TOPIC = "small talk"

# Words that open a reply or greet and name no topic ("Wow, that's great", "Totally agree", "Morning!");
# they are not in STOPWORDS because the extractor and the lexical search read that list too.
# (the quality gate's small-talk words hold the greetings: "hi", "thanks", "morning" ...)
PHATIC = frozenset("wow congrats congratulations totally agree agreed absolutely definitely aww haha lol omg".split()) \
    | SMALL_TALK_STOPWORDS


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


def keyphrases(sentences: list[Sentence], max_words: int = 4) -> list[tuple[str, float]]:
    """Score candidate phrases; best first as (phrase, score).

    score(p) = (1 + ln count(p)) · Σ_{w ∈ p} tf(w) / √len(p), with tf the weighted count of the stem
    across the transcript and count(p) the phrase's weighted count (a log line counts half). Words that
    recur lift every phrase containing them; a phrase that recurs lifts itself; √len keeps long one-off
    runs from winning on length alone. Phrases are keyed by their stems and shown in their most frequent
    surface form (ties: first seen), lowercased. A speaker label ("Jon: ...") or a name addressing someone
    ("Thanks, Mel!") is no word of any phrase (`transcript.spoken_terms`).
    """
    term_weight: Counter[str] = Counter()
    phrase_count: Counter[tuple[str, ...]] = Counter()  # weighted, like the terms
    surfaces: dict[tuple[str, ...], Counter[str]] = {}
    first_seen: dict[tuple[str, ...], int] = {}
    for sentence in sentences:
        sentence_tokens = tokens(sentence.text)
        terms = spoken_terms(sentence.text, sentence_tokens)  # "Jon: ..." and "Hey Mel!": who, not what about
        for term in terms.values():
            term_weight[term] += sentence.weight
        for phrase in candidate_phrases(sentence_tokens, terms, sentence.text, max_words):
            key = tuple(terms[t.start] for t in phrase)
            phrase_count[key] += sentence.weight  # a phrase repeated in log lines counts half each time
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
