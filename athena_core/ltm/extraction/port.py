"""The extractor port: a chain's summary and its verbatim turns in, raw triples out (SPEC S6.1)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from athena_core.models.ontology import TripleExtraction


@dataclass(frozen=True)
class ExtractionTurn:
    """One verbatim turn of the chain, as the extractor sees it: who said it (`speaker`: the user id or the
    agent id), in which `role` ("user" or "agent"), when, and the event-log id a fact from it cites."""

    event_id: str
    speaker: str
    role: str
    timestamp: datetime
    text: str


@runtime_checkable
class TripleExtractor(Protocol):
    """Summary + turns (newest first, bounded) + the chain's entities in, raw triples out; each triple's
    `turn` is the index in `turns` it came from (-1: the summary only). A reply off the schema raises
    LLMSchemaError."""

    def extract(
        self, summary: str, *, entities: list[str], tenant_id: str = "", turns: Sequence[ExtractionTurn] = (),
    ) -> TripleExtraction: ...
