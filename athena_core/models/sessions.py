"""Sessions are handles onto a scope (SPEC S1): memory is keyed by scope, not by session."""
from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from athena_core.models.scope import AgentScope, ScopeId
from athena_core.models.text import Metadata


class SessionCreate(BaseModel):
    """Body of CreateSession."""

    model_config = ConfigDict(extra="forbid")

    tenant_id: ScopeId | None = None  # may be left out when the credential carries it
    user_id: ScopeId | None = None
    agent_id: ScopeId | None = None  # default "default", or the credential's agent_id
    metadata: Metadata = {}  # strict UTF-8; sizes are checked by the route (413/422 naming the field)


class Session(BaseModel):
    session_id: str
    tenant_id: str
    user_id: str
    agent_id: str
    metadata: dict[str, str]
    created_at: datetime

    @property
    def scope(self) -> AgentScope:
        return AgentScope(tenant_id=self.tenant_id, user_id=self.user_id, agent_id=self.agent_id)
