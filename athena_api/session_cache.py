"""The sessions' identities the write routes have read, so a write does not read its session each time.

A session's tenant, user and agent never change; only its existence does (DeleteSession, a purge). The
cache therefore holds identities only: whoever takes a session from it must have its existence checked
before the write is made (the group-commit writer rechecks every cached session once per group, just
before the commit). Bounded: past `max_sessions` the oldest entry goes.
"""
from __future__ import annotations

from collections import OrderedDict

from athena_core.models.sessions import Session


class SessionCache:
    def __init__(self, max_sessions: int = 10_000) -> None:
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def put(self, session: Session) -> None:
        self._sessions[session.session_id] = session
        if len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        return len(self._sessions)
