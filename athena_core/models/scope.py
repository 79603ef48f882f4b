"""Identity and scope (SPEC S1): tenant → user → agent, carried by every key, document and query."""
from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints

# The one id rule (SPEC S1), shared by request bodies (422) and JWT claims / API-key tenants (401, start-up
# error). Ids are opaque names with no path meaning: ASCII letters, digits and `_ . @ -`, starting with a
# letter or digit (so `.`, `..`, `.x`, `-x` are refused), at most 128 characters. No ':' either, so Redis keys
# like stm:{tenant}:{user}:{agent} can never collide across scopes, and no separator of any kind.
SCOPE_ID_REGEX = r"^[A-Za-z0-9][A-Za-z0-9_.@\-]{0,127}$"
SCOPE_ID_PATTERN = re.compile(SCOPE_ID_REGEX)
SCOPE_ID_RULE = "must be 1-128 characters of A-Z a-z 0-9 _ . @ -, starting with a letter or digit"


def is_scope_id(value: object) -> bool:
    return isinstance(value, str) and SCOPE_ID_PATTERN.fullmatch(value) is not None


def check_scope_id(value: object) -> str:
    """Return `value` when it is a valid scope id, else raise ValueError (pydantic turns it into a 422)."""
    if not is_scope_id(value):
        raise ValueError(SCOPE_ID_RULE)
    return value  # type: ignore[return-value]


# The pattern is kept in the schema (OpenAPI) and enforced again by `check_scope_id` (fullmatch: no `$` slack).
ScopeId = Annotated[str, StringConstraints(pattern=SCOPE_ID_REGEX), AfterValidator(check_scope_id)]


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
