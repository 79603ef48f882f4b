"""Events: what agents post (SPEC S2 StoreEvent / StoreInteraction) and what the event log keeps (S3)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from athena_core.models.text import Metadata, Text


class EventRole(StrEnum):
    user = "user"
    agent = "agent"
    system = "system"


class EventType(StrEnum):
    message = "message"
    thought = "thought"
    action = "action"
    observation = "observation"


class EventStatus(StrEnum):
    pending = "pending"  # durable, not yet part of a chain
    consolidated = "consolidated"  # summarised into chain `chain_id`
    rejected = "rejected"  # its segment failed the quality gate


# Metadata keys that change pipeline behaviour (SPEC S2/S3).
PIPELINE_METADATA_KEYS = ("workflow_id", "execution_id", "step_id", "origin_service")


def as_utc(value: datetime) -> datetime:
    """Naive timestamps are taken as UTC; aware ones are converted, so stored times compare."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


# SPEC S2: a client timestamp lies between 1970 and 100 years ahead; anything else is a 422 naming it, since
# the pipeline computes with these times (windows, gaps, heat) and must never meet one it cannot handle.
EARLIEST_TIMESTAMP = datetime(1970, 1, 1, tzinfo=timezone.utc)
MAX_FUTURE = timedelta(days=36525)  # 100 years


def check_timestamp(value: datetime | None) -> datetime | None:
    """The one timestamp rule of every write body: converted to UTC, and within the sane range."""
    if value is None:
        return None
    try:
        utc = as_utc(value)
    except (OverflowError, ValueError) as exc:  # e.g. 9999-12-31T23:59:59-05:00 is past datetime.max in UTC
        raise ValueError("cannot be converted to UTC: out of range") from exc
    latest = utc_now() + MAX_FUTURE
    if not EARLIEST_TIMESTAMP <= utc <= latest:
        raise ValueError(f"must lie between 1970-01-01T00:00:00Z and 100 years from now ({latest:%Y-%m-%d})")
    return utc


class EventIn(BaseModel):
    """Body of StoreEvent. Sizes are checked by the route so they can answer 413, not 422."""

    model_config = ConfigDict(extra="forbid")

    role: EventRole = EventRole.system
    type: EventType
    content: Text
    metadata: Metadata = {}
    timestamp: datetime | None = None
    payload: Text | None = Field(default=None, description="base64-encoded blob, at most 10 MiB decoded")
    mime_type: Text | None = Field(default=None, max_length=255)

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return check_timestamp(value)

    @property
    def is_empty_user_message(self) -> bool:
        """SPEC S2 rejects empty user messages; the route answers 422 naming `content`."""
        return self.role == EventRole.user and self.type == EventType.message and not self.content.strip()


class InteractionIn(BaseModel):
    """Body of StoreInteraction: one user turn and, optionally, the agent's reply."""

    model_config = ConfigDict(extra="forbid")

    user_message: Text
    agent_response: Text | None = None
    metadata: Metadata = {}
    timestamp: datetime | None = None

    @field_validator("user_message")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return check_timestamp(value)


class Event(BaseModel):
    """One raw event as the event log keeps it: the system of record (SPEC S3)."""

    event_id: str
    tenant_id: str
    user_id: str
    agent_id: str
    session_id: str
    role: EventRole
    type: EventType
    content: str
    metadata: dict[str, str] = {}
    timestamp: datetime
    received_at: datetime
    status: EventStatus = EventStatus.pending
    chain_id: str | None = None
    # When the pipeline took the event into its scope's open segment; the pending sweep skips seen events.
    seen_at: datetime | None = None
    blob_uri: str | None = None
    mime_type: str | None = None


class WindowEvent(BaseModel):
    """An STM window slot: an event, or a run of coalesced observations of one execution step."""

    event_id: str
    role: EventRole
    type: EventType
    content: str
    metadata: dict[str, str] = {}
    timestamp: datetime
    blob_uri: str | None = None
    mime_type: str | None = None
    coalesced_count: int = 1
    last_event_id: str | None = None

    @classmethod
    def from_event(cls, event: Event) -> "WindowEvent":
        return cls(
            event_id=event.event_id,
            role=event.role,
            type=event.type,
            content=event.content,
            metadata=dict(event.metadata),
            timestamp=event.timestamp,
            blob_uri=event.blob_uri,
            mime_type=event.mime_type,
            last_event_id=event.event_id,
        )
