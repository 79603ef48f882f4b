"""Transcript -> sentences and their content terms: what every other part of the offline provider reads."""
from __future__ import annotations

import re
from dataclasses import dataclass

from athena_core.providers.llm import TranscriptLine
from athena_core.providers.offline.addressees import addressee_offsets
from athena_core.providers.offline.media_annotations import annotation_offsets
from athena_core.providers.offline.speaker_labels import label_offsets
from athena_core.text.content_words import is_content_word
from athena_core.text.gazetteer import gazetteer_hits
from athena_core.text.names import INTERJECTIONS
from athena_core.text.sentences import split_sentences
from athena_core.text.stemming import stem
from athena_core.text.tokens import Token

PHRASE_BREAK = re.compile(r"[^\sA-Za-z0-9]")  # punctuation between two words ends a phrase or a name


@dataclass(frozen=True)
class Sentence:
    """One sentence of the transcript, remembering which event it came from and that event's role."""

    text: str
    line_index: int
    role: str
    weight: float  # how much this sentence counts for topic words and the summary (noisy logs count less)


def line_weight(line: TranscriptLine) -> float:
    """Tool calls, their observations and system notes are often logs: let them count half for topic
    words and for the summary, so a chain's conversation names it rather than the test run inside it."""
    return 0.5 if line.type in ("action", "observation") or line.role == "system" else 1.0


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


def spoken_terms(text: str, sentence_tokens: list[Token]) -> dict[int, str]:
    """`token_terms` without the words that say who speaks, to whom and how: a speaker label ("Jon: ..."),
    a name addressing someone ("Thanks, Mel!") and an interjection ("Wow", "Haha"). They are in line after
    line whatever is said, so they would name the topic and make "Wow, Caroline!" the most central
    sentence of a chat."""
    addressed = label_offsets(text, sentence_tokens) | addressee_offsets(text, sentence_tokens)
    addressed |= {tok.start for tok in sentence_tokens if tok.lower in INTERJECTIONS}
    return {start: term for start, term in token_terms(sentence_tokens).items() if start not in addressed}


def topic_terms(text: str, sentence_tokens: list[Token]) -> dict[int, str]:
    """`spoken_terms` without the frame of a shared picture ("[shares a photo: a photo of ...]"): it says
    that a picture was shared, not what the chat is about. The summary's centrality keeps the frame: with
    it out there too, LoCoMo through the API gave answer-word recall 0.708 / 0.756 at 0.5k / 1k tokens,
    against 0.713 / 0.761 with it out of the topics only (README, "Evaluation")."""
    framing = annotation_offsets(text, sentence_tokens)
    return {start: term for start, term in spoken_terms(text, sentence_tokens).items() if start not in framing}
