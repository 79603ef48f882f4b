"""The extractor port: a chain summary in, raw triples out."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from athena_core.models.ontology import TripleExtraction


@runtime_checkable
class TripleExtractor(Protocol):
    """Summary (+ the chain's entities) in, raw triples out; a reply off the schema raises LLMSchemaError."""

    def extract(self, summary: str, *, entities: list[str], tenant_id: str = "") -> TripleExtraction: ...
