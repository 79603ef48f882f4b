"""The offline LLM provider (SPEC S8): deterministic, network-free chain formation and topic arbitration.

It stands in for a chat model in the embedded default and in tests, so its answers must be *useful*,
not placeholders: an extractive TextRank summary, RAKE-style keyphrase topics with honest relative
confidences, gazetteer-and-pattern entity spotting, and an importance score from content signals.
Same transcript in, same `ChainFormation` out, on every machine.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from athena_core.providers.llm import M, ChainFormation, TranscriptLine
from athena_core.providers.offline import topic_nouns
from athena_core.providers.offline.entities import dedupe_entities, entity_mentions
from athena_core.providers.offline.importance import importance_signals, intrinsic_importance
from athena_core.providers.offline.keyphrases import keyphrases, topic_and_subtopics
from athena_core.providers.offline.media_annotations import is_caption
from athena_core.providers.offline.summary import informative, select_summary, textrank, tfidf_matrix
from athena_core.providers.offline.transcript import sentence_terms, spoken_terms, transcript_sentences
from athena_core.text.sentences import split_sentences
from athena_core.text.tokens import tokens


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
        topic_nouns: bool = True,
    ) -> None:
        """`topic_nouns`: prefer topics that hold a noun, read by spaCy's tagger when it is installed
        (`offline/topic_nouns.py`), and let the tagger say whether a capitalised word that only opens
        sentences is a name (`offline/entities.py`)."""
        if summary_max_sentences < 1 or summary_max_chars < 20:
            raise ValueError("summary budget must allow at least one sentence of 20 characters")
        self.summary_max_sentences = summary_max_sentences
        self.summary_max_chars = summary_max_chars
        self.max_entities = max_entities
        self.max_phrase_words = max_phrase_words
        self.same_topic_threshold = same_topic_threshold
        self.read_tags = topic_nouns  # the tagger loads at the first formation, not in every process

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
        # centrality by what is said: names in every line (labels, addressees) made "Hey Mel!" central
        bags = [list(spoken_terms(t, tokens(t)).values()) for t in texts]
        vectors = tfidf_matrix(bags)
        centrality = informative(textrank(vectors @ vectors.T), np.array([len(set(b)) for b in bags]))
        summary = select_summary(texts, centrality, vectors, self.summary_max_sentences, self.summary_max_chars,
                                 weights=np.array([s.weight for s in sentences]),  # conversation before logs
                                 captions=[is_caption(t) for t in texts])
        nouns = topic_nouns.naming_parts if self.read_tags and topic_nouns.available() else None
        topic, subtopics = topic_and_subtopics(keyphrases(sentences, self.max_phrase_words), naming_parts=nouns)
        entities = dedupe_entities(entity_mentions(texts, read_openings=self.read_tags), self.max_entities)
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

    def structured(
        self, purpose: str, messages: list[dict[str, str]], model_cls: type[M], *, schema_name: str,
        tenant_id: str = "", schema: dict[str, Any] | None = None,
    ) -> M:
        """No model, so no free-form structured output: stages that need one have an offline
        implementation of their own (`OfflineTripleExtractor`)."""
        raise NotImplementedError(f"the offline provider has no structured output ({purpose}: {model_cls.__name__})")
