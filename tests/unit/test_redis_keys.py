"""Every Redis key of the product is spelled in `athena_core/wiring/redis_keys.py` (issue 13). The names
are part of the data on disk (an upgrade must find the old keys), so they are pinned here."""
from __future__ import annotations

import fnmatch

from athena_core.models.scope import AgentScope
from athena_core.wiring import redis_keys as keys

SCOPE = AgentScope(tenant_id="acme", user_id="sam", agent_id="coder")
USER = SCOPE.user_scope


def test_key_names_are_stable() -> None:
    assert keys.stm_key(SCOPE) == "stm:acme:sam:coder"
    assert keys.run_request_key(SCOPE) == "pipeline:requested:acme:sam:coder"
    assert keys.failed_key(SCOPE.key) == "pipeline:failed:acme:sam:coder"
    assert keys.index_scope_key(USER) == "index:acme:sam"
    assert keys.bad_row_key("ab12") == "sweep:bad-row:ab12"
    assert keys.lock_key(keys.segment_lock_name(SCOPE)) == "lock:segment:acme:sam:coder"
    assert keys.lock_key(keys.user_write_lock_name(USER)) == "lock:chains:acme:sam"
    assert keys.fence_key(USER) == "fence:purged:acme:sam"
    assert keys.rate_key("acme", 1700000000) == "rate:acme:1700000000"
    assert keys.TASK_RESULT_PREFIX == "celery-task-meta-"


def test_purge_patterns_match_every_per_user_key_and_no_other_users() -> None:
    mine = [keys.stm_key(SCOPE), keys.run_request_key(SCOPE), keys.failed_key(SCOPE.key),
            keys.failed_key(keys.index_scope_key(USER))]
    other = AgentScope(tenant_id="acme", user_id="samantha", agent_id="coder")
    theirs = [keys.stm_key(other), keys.run_request_key(other), keys.failed_key(other.key)]
    patterns = keys.user_key_patterns(USER)
    assert all(any(fnmatch.fnmatchcase(k, p) for p in patterns) for k in mine)
    assert not any(fnmatch.fnmatchcase(k, p) for k in theirs for p in patterns)


def test_patterns_escape_glob_characters() -> None:
    assert keys.glob_escape("a*b?[c]\\") == "a\\*b\\?\\[c\\]\\\\"
