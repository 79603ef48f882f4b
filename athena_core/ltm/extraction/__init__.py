"""Triple extraction onto the LTM ontology (SPEC S6.1, S8; seeds 000 and 003).

Three parts:

* `normalise_triples` turns whatever an extractor returned into graph-ready `FactObservation`s: snake_case
  ids, the seven-relation vocabulary (anything else becomes RELATES_TO with the original kept in the
  nuance, counted), first-person mentions collapsed onto the user node (but never "assistant", "you" or a
  third party), self-loops dropped, duplicates merged, confidences clamped.
* `OfflineTripleExtractor`: deterministic pattern-and-gazetteer extraction over the chain's verbatim turns
  (each fact cites its turn; an agent's first person is never the user) and then its summary, with honest
  confidences (see `CONFIDENCE`): ordinary-chat clauses first (`chat_clauses`: object-first statements,
  work and interest idioms, a switch from A to B as two edges, clients of a project, personal facts as
  RELATES_TO, "it" resolved within the turn or dropped), then the trigger patterns, then the generalised
  clause reader (`clause_frames`: clauses cut at ; : and new subjects, a verb-class cue lexicon, the object
  chunked after the cue or fronted, negation / hypothetical / other-speaker filters, changes read from a
  tool left beside a tool used), then low mentions.
* `OpenAITripleExtractor`: one strict structured-output call per chain (summary + numbered turns, speakers
  marked; each triple returns its `turn`) through the LLM port (`LLMProvider.structured`).

The input is an `ExtractionTurn` list (port): event id, speaker, role, timestamp, text, newest first.

One module each: `normalisation`, `port` (`TripleExtractor`), `offline_vocabulary` (bands, words,
triggers), `summary_sentence` (subjects and objects in one sentence), `chat_clauses`, `clause_frames`,
`offline_extractor`,
`openai_extractor`. The names below are the package's public face.
"""
from __future__ import annotations

from athena_core.ltm.extraction.normalisation import (
    FALLBACK_RELATION,
    USER_LABEL,
    ExtractionReport,
    is_first_person,
    normalise_relation,
    normalise_triples,
)
from athena_core.ltm.extraction.offline_extractor import OfflineTripleExtractor
from athena_core.ltm.extraction.offline_vocabulary import CONFIDENCE, HEDGED_CAP, THIRD_PARTY_PENALTY
from athena_core.ltm.extraction.openai_extractor import OpenAITripleExtractor
from athena_core.ltm.extraction.port import ExtractionTurn, TripleExtractor
from athena_core.providers.llm import LLMSchemaError  # extractors raise it

__all__ = [
    "CONFIDENCE", "ExtractionTurn", "FALLBACK_RELATION", "HEDGED_CAP", "THIRD_PARTY_PENALTY", "USER_LABEL", "ExtractionReport",
    "LLMSchemaError", "OfflineTripleExtractor", "OpenAITripleExtractor", "TripleExtractor", "is_first_person",
    "normalise_relation", "normalise_triples",
]
