"""The LLM port (SPEC S8) and the structured shapes it must return.

The pydantic models here are the contract: the `openai` provider turns them into strict JSON schemas
for structured outputs, and the `offline` provider builds them directly.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from athena_core.models.chains import Subtopic

M = TypeVar("M", bound=BaseModel)


class TranscriptLine(BaseModel):
    """One event as the LLM sees it: who, what kind, what was said, when."""

    model_config = ConfigDict(extra="forbid")

    role: str  # user | agent | system
    type: str  # message | thought | action | observation
    content: str
    timestamp: datetime | None = None


class ChainFormation(BaseModel):
    """SPEC S4 formation output: one structured call per finished segment."""

    model_config = ConfigDict(extra="forbid")

    topic: str
    subtopics: list[Subtopic] = Field(max_length=3)
    summary: str
    entities: list[str]
    intrinsic_importance: float = Field(ge=0.0, le=1.0)


class LLMSchemaError(RuntimeError):
    """The model's reply did not validate against the requested schema (counted, then retried later)."""


@runtime_checkable
class LLMProvider(Protocol):
    """What the pipeline asks of a language model."""

    name: str

    def form_chain(self, transcript: list[TranscriptLine], *, tenant_id: str = "") -> ChainFormation:
        """Summarise one finished topic segment (SPEC S4 formation)."""
        ...

    def same_topic(self, previous: str, current: str, *, tenant_id: str = "") -> bool:
        """Gray-zone arbitration of the break gate: do these two user messages share a topic?"""
        ...

    def structured(
        self, purpose: str, messages: list[dict[str, str]], model_cls: type[M], *, schema_name: str,
        tenant_id: str = "", schema: dict[str, Any] | None = None,
    ) -> M:
        """One structured call for any pydantic model (other stages use it: triple extraction): chat
        `messages` in, a validated `model_cls` out, metered under `purpose`. A reply off the schema raises
        LLMSchemaError; a provider without a model raises NotImplementedError (stages pick an offline
        implementation of their own instead, e.g. `OfflineTripleExtractor`)."""
        ...


class LLMUnavailable(RuntimeError):
    """The model could not be reached or refused the request (after any retries); the caller retries later."""
