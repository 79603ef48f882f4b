"""Identity and scope (SPEC S1): tenant → user → agent, carried by every key, document and query."""
from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

# No ':' so that Redis keys like stm:{tenant}:{user}:{agent} can never collide across scopes.
ScopeId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.@\-]{1,128}$")]


class UserScope(BaseModel):
    """Chains, vectors and the knowledge graph are user-scoped: all of a user's agents share them."""

    model_config = ConfigDict(frozen=True)

    tenant_id: ScopeId
    user_id: ScopeId


class AgentScope(UserScope):
    """The STM window and topic segmentation are agent-scoped."""

    agent_id: ScopeId = "default"

    @property
    def user_scope(self) -> UserScope:
        return UserScope(tenant_id=self.tenant_id, user_id=self.user_id)

    @property
    def key(self) -> str:
        """`tenant:user:agent`, safe because ids cannot contain ':'."""
        return f"{self.tenant_id}:{self.user_id}:{self.agent_id}"

    @classmethod
    def from_key(cls, key: str) -> "AgentScope":
        tenant_id, user_id, agent_id = key.split(":")
        return cls(tenant_id=tenant_id, user_id=user_id, agent_id=agent_id)
