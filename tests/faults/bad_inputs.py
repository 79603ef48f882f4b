"""The bad-input corpus (issue 12 "Show"; SPEC S1, S2, S10): requests an attacker or a broken client sends.

Each `Case` is data: a name, a method, a path template, credentials, a body (JSON or raw bytes), the status (or
statuses) expected, and the field the error must name. `tests/faults/test_bad_input_corpus.py` sends them all
to one real stack (processes, HTTP on loopback, auth `api_key_or_jwt`) and checks: no 5xx ever; a 4xx carries the
JSON error shape and names the field at fault; every accepted write consolidates and the scope stays readable.

Path placeholders: `{sid}` the corpus' own session, `{foreign}` a session of another tenant, `{peer}` a session
of another user of the same tenant. Credentials (`auth`): `key` the tenant's service API key (default), `admin`
an admin API key of the tenant, `none` no credential, `jwt` a HS256 token with `claims` (an `exp` an hour ahead
is added unless `claims` has one; `exp=None` in claims means send no exp).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

TENANT = "t-corpus"
USER = "u-corpus"
OTHER_TENANT = "t-other"
API_KEY = "corpus-key"
ADMIN_KEY = "corpus-admin-key"
OTHER_KEY = "other-key"
JWT_SECRET = "corpus-secret-that-is-long-enough-for-hs256-signing"
AUTH_ENV = {
    "ATHENA_AUTH_MODE": "api_key_or_jwt",
    "ATHENA_API_KEYS": f"{API_KEY}:{TENANT},{ADMIN_KEY}:{TENANT}:admin,{OTHER_KEY}:{OTHER_TENANT}",
    "ATHENA_JWT_SECRET": JWT_SECRET,
}

_NO_BODY = object()
SURROGATE = "\\ud83d"  # the JSON escape of a lone high surrogate, for raw bodies
KIB = 1024


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    expect: int | frozenset[int]
    json: Any = _NO_BODY
    body: bytes | None = None  # raw bytes, sent as application/json unless headers say otherwise
    params: dict[str, str] | None = None
    headers: dict[str, str | bytes] = field(default_factory=dict)
    auth: str = "key"  # key | admin | other | none | jwt
    claims: dict[str, Any] | None = None
    field: str | None = None  # the field a 4xx must name (prefix match: "metadata" matches "metadata.k")
    json_error: bool = True  # a 4xx must carry {"error": {"code", "message", "fields"}}
    chunked: int | None = None  # send `body` in chunks of this size, without Content-Length

    @property
    def statuses(self) -> frozenset[int]:
        return self.expect if isinstance(self.expect, frozenset) else frozenset({self.expect})

    @property
    def accepted(self) -> bool:
        return all(200 <= s < 300 for s in self.statuses)

    @property
    def has_json(self) -> bool:
        return self.json is not _NO_BODY


def _ts(delta_days: float) -> str:
    return (datetime.now(timezone.utc) + timedelta(days=delta_days)).isoformat()


def _raw(template: str, *args: str) -> bytes:
    return (template % args).encode("utf-8") if args else template.encode("utf-8")


S = "/api/v1/sessions"
E = "/api/v1/sessions/{sid}/events"
I = "/api/v1/sessions/{sid}/interactions"  # noqa: E741
C = "/api/v1/sessions/{sid}/context"
Q = "/api/v1/sessions/{sid}/context/search"
TRIGGER = "/api/v1/admin/analytics/trigger"

MSG = {"type": "message", "content": "ordinary text"}
K64 = {f"k{i:02d}": f"v{i}" for i in range(64)}
K65 = {f"k{i:02d}": f"v{i}" for i in range(65)}


def _session(name: str, expect: int, field: str | None = None, **body: Any) -> Case:
    return Case(name, "POST", S, expect, json={"user_id": USER, **body}, field=field)


def _event(name: str, expect: int, field: str | None = None, **body: Any) -> Case:
    return Case(name, "POST", E, expect, json={**MSG, **body}, field=field)


def _interaction(name: str, expect: int, field: str | None = None, **body: Any) -> Case:
    return Case(name, "POST", I, expect, json={"user_message": "hello there", **body}, field=field)


CASES: list[Case] = [
    # ---- CreateSession: ids (S1), metadata (S2), credentials (S10) ----------------------------------------------
    _session("session tenant '.'", 422, "tenant_id", tenant_id="."),
    _session("session user '..'", 422, "user_id", user_id=".."),
    _session("session user '...'", 422, "user_id", user_id="..."),
    _session("session agent '.x'", 422, "agent_id", agent_id=".x"),
    _session("session user '-x'", 422, "user_id", user_id="-x"),
    _session("session user with slash", 422, "user_id", user_id="a/../b"),
    _session("session user with backslash", 422, "user_id", user_id="a\\b"),
    _session("session user with colon", 422, "user_id", user_id="a:b"),
    _session("session user 129 chars", 422, "user_id", user_id="u" * 129),
    _session("session user empty", 422, "user_id", user_id=""),
    _session("session user int", 422, "user_id", user_id=123),
    _session("session user null (api key names no user)", 422, "user_id", user_id=None),
    _session("session user non-ascii", 422, "user_id", user_id="usér"),
    _session("session metadata list", 422, "metadata", metadata=["a"]),
    _session("session metadata int value", 422, "metadata.k", metadata={"k": 1}),
    _session("session metadata 65 keys", 422, "metadata", metadata=K65),
    _session("session metadata key 300 bytes", 422, "metadata.", metadata={"k" * 300: "v"}),
    _session("session metadata 5 MB value", 413, "metadata.big", metadata={"big": "x" * 5_000_000}),
    _session("session metadata 20 KB total", 413, "metadata", metadata={f"k{i}": "y" * 500 for i in range(40)}),
    _session("session unknown field", 422, "bogus", bogus=1),
    _session("session other tenant in body", 403, "tenant_id", tenant_id=OTHER_TENANT),
    Case("session surrogate in metadata", "POST", S, 422,
         body=_raw('{"user_id":"%s","metadata":{"k":"%s"}}', USER, SURROGATE), field="metadata.k"),
    Case("session surrogate in user_id", "POST", S, 422, body=_raw('{"user_id":"u%s"}', SURROGATE),
         field="user_id"),
    Case("session truncated JSON", "POST", S, 422, body=b'{"user_id":"u-co', field="body"),
    Case("session invalid UTF-8", "POST", S, 422, body=b'{"user_id":"\xff\xfe"}', field="body"),
    Case("session body is an array", "POST", S, 422, json=[], field="body"),
    Case("session no credential", "POST", S, 401, json={"user_id": USER}, auth="none"),
    Case("session unknown api key", "POST", S, 401, json={"user_id": USER}, headers={"X-API-Key": "nope"},
         auth="none"),
    Case("session jwt user 'auth0|…'", "POST", S, 401, json={}, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": "auth0|5f7c1e2d9a"}),
    Case("session jwt user '..'", "POST", S, 401, json={}, auth="jwt", claims={"tenant_id": TENANT, "user_id": ".."}),
    Case("session jwt tenant '..'", "POST", S, 401, json={}, auth="jwt", claims={"tenant_id": "..", "user_id": "u"}),
    Case("session jwt agent with slash", "POST", S, 401, json={}, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": USER, "agent_id": "a/b"}),
    Case("session jwt user int", "POST", S, 401, json={}, auth="jwt", claims={"tenant_id": TENANT, "user_id": 7}),
    Case("session jwt no tenant", "POST", S, 401, json={}, auth="jwt", claims={"user_id": USER}),
    Case("session jwt roles object", "POST", S, 401, json={}, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": USER, "roles": {"admin": False}}),
    Case("session jwt exp numeric string", "POST", S, 401, json={}, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": USER, "exp": "4102444800"}),
    Case("session jwt exp missing", "POST", S, 401, json={}, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": USER, "exp": None}),
    Case("session jwt nbf numeric string", "POST", S, 401, json={}, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": USER, "nbf": "1000000000"}),
    Case("session jwt expired", "POST", S, 401, json={}, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": USER, "exp": 1_000_000_000}),
    Case("session jwt other user than body", "POST", S, 403, json={"user_id": "someone-else"}, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": "u-jwt"}, field="user_id"),
    # accepted but odd
    _session("session emoji and RTL metadata", 201, metadata={"emoji": "\U0001F600\U0001F680", "rtl": "שלום עולם"}),
    _session("session metadata 64 keys exactly", 201, metadata=K64),
    _session("session id with dots inside", 201, user_id="first.last@example.com"),
    Case("session via jwt", "POST", S, 201, json={}, auth="jwt", claims={"tenant_id": TENANT, "user_id": "u-jwt"}),

    # ---- StoreEvent -----------------------------------------------------------------------------------------------
    Case("event type missing", "POST", E, 422, json={"content": "x"}, field="type"),
    _event("event type bogus", 422, "type", type="bogus"),
    _event("event role admin", 422, "role", role="admin"),
    Case("event content missing", "POST", E, 422, json={"type": "message"}, field="content"),
    _event("event content int", 422, "content", content=5),
    _event("event content null", 422, "content", content=None),
    _event("event empty user message", 422, "content", role="user", content="   "),
    _event("event content 64 KiB + 1", 413, "content", content="x" * (64 * KIB + 1)),
    _event("event metadata 65 keys", 422, "metadata", metadata=K65),
    _event("event metadata 17 KB", 413, "metadata", metadata={f"k{i}": "z" * 1000 for i in range(17)}),
    _event("event metadata value 17 KB", 413, "metadata.k", metadata={"k": "z" * (17 * KIB)}),
    _event("event metadata nested value", 422, "metadata.k", metadata={"k": {"nested": "x"}}),
    _event("event metadata key 257 bytes", 422, "metadata.", metadata={"m" * 257: "v"}),
    _event("event timestamp year 1", 422, "timestamp", timestamp="0001-01-01T00:00:00Z"),
    _event("event timestamp overflows UTC (late)", 422, "timestamp", timestamp="9999-12-31T23:59:59-05:00"),
    _event("event timestamp overflows UTC (early)", 422, "timestamp", timestamp="0001-01-01T00:00:00+01:00"),
    _event("event timestamp 1969", 422, "timestamp", timestamp="1969-12-31T23:59:59Z"),
    _event("event timestamp 150 years ahead", 422, "timestamp", timestamp=_ts(150 * 365.25)),
    _event("event timestamp words", 422, "timestamp", timestamp="yesterday"),
    _event("event timestamp negative epoch", 422, "timestamp", timestamp=-1),
    _event("event timestamp month 13", 422, "timestamp", timestamp="2024-13-01T00:00:00Z"),
    _event("event timestamp offset +24:00", 422, "timestamp", timestamp="2024-01-01T00:00:00+24:00"),
    _event("event timestamp epoch 1e20", 422, "timestamp", timestamp=1e20),
    Case("event timestamp NaN", "POST", E, 422, body=b'{"type":"message","content":"x","timestamp":NaN}',
         field="timestamp"),
    _event("event payload not base64", 422, "payload", payload="not base64!!"),
    _event("event mime_type 300 chars", 422, "mime_type", mime_type="t" * 300, payload="eA=="),
    _event("event unknown field", 422, "bogus", bogus="x"),
    Case("event surrogate in content", "POST", E, 422, body=_raw('{"type":"message","content":"a %s b"}', SURROGATE),
         field="content"),
    Case("event surrogate in metadata value", "POST", E, 422,
         body=_raw('{"type":"message","content":"x","metadata":{"k":"%s"}}', SURROGATE), field="metadata.k"),
    Case("event surrogate in metadata key", "POST", E, 422,
         body=_raw('{"type":"message","content":"x","metadata":{"%s":"v"}}', SURROGATE), field="metadata"),
    Case("event surrogate in mime_type", "POST", E, 422,
         body=_raw('{"type":"message","content":"x","payload":"eA==","mime_type":"a/%s"}', SURROGATE),
         field="mime_type"),
    Case("event surrogate in payload", "POST", E, 422,
         body=_raw('{"type":"message","content":"x","payload":"eA%s"}', SURROGATE), field="payload"),
    Case("event raw surrogate bytes", "POST", E, 422, body=b'{"type":"message","content":"\xed\xa0\xbd"}',
         field="content"),
    Case("event invalid UTF-8", "POST", E, 422, body=b'{"type":"message","content":"\xc3\x28"}', field="body"),
    Case("event truncated JSON", "POST", E, 422, body=b'{"type":"mess', field="body"),
    Case("event JSON nested 50k deep", "POST", E, 422, body=b"[" * 50_000 + b"]" * 50_000, field="body"),
    Case("event text/plain body", "POST", E, 422, body=b"hello", headers={"Content-Type": "text/plain"},
         field="body"),
    Case("event chunked 20 MB", "POST", E, 413, body=b'{"type":"message","content":"big"' + b" " * 20_000_000 + b"}",
         chunked=64 * KIB, field="body"),
    Case("event unknown session", "POST", E.replace("{sid}", "ses_nope"), 404, json=MSG, field="session_id"),
    Case("event foreign tenant session", "POST", "/api/v1/sessions/{foreign}/events", 404, json=MSG,
         field="session_id"),
    Case("event other user's session (jwt)", "POST", "/api/v1/sessions/{peer}/events", 404, json=MSG, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": USER}, field="session_id"),
    Case("event no credential", "POST", E, 401, json=MSG, auth="none"),
    Case("event jwt user 'auth0|…'", "POST", E, 401, json=MSG, auth="jwt",
         claims={"tenant_id": TENANT, "user_id": "auth0|abc"}),
    # accepted but odd
    _event("event emoji", 201, content="deploy went fine \U0001F680\U0001F389 at last"),
    _event("event RTL text", 201, content="המשתמש כתב: שלום, מה שלומך היום? مرحبا بالعالم"),
    _event("event zero-width chars", 201, content="zero\u200bwidth\u200cjoin\u200dand\ufeffbom"),
    _event("event content exactly 64 KiB", 201, content="abcd " * (64 * KIB // 5) + "x" * (64 * KIB % 5)),
    _event("event NUL character", 201, content="before\u0000after"),
    _event("event CRLFs", 201, content="line one\r\nline two\r\n\r\nline four"),
    _event("event timestamp 1970-01-02", 201, timestamp="1970-01-02T00:00:00Z"),
    _event("event timestamp exactly the epoch", 201, timestamp="1970-01-01T00:00:00Z", content="at time zero"),
    _event("event timestamp epoch seconds", 201, timestamp=86400 * 365, content="a year after the epoch"),
    _event("event timestamp 50 years ahead", 201, timestamp=_ts(50 * 365.25)),
    _event("event naive timestamp", 201, timestamp="2024-05-01T12:00:00"),
    _event("event metadata 64 keys exactly", 201, metadata=K64),
    _event("event pipeline metadata", 201, type="observation", role="agent",
           metadata={"workflow_id": "wf-1", "execution_id": "ex-1", "step_id": "s1", "origin_service": "svc"}),
    _event("event emoji only", 201, content="\U0001F680\U0001F389\U0001F44D"),
    _event("event system blank content", 201, role="system", type="observation", content="   "),
    _event("event CJK", 201, content="部署成功了，明天再检查日志。"),
    _event("event thought", 201, type="thought", role="agent", content="I should check the logs"),
    _event("event action with payload", 201, type="action", role="agent", content="uploaded a file",
           payload="aGVsbG8gd29ybGQ=", mime_type="text/plain"),
    Case("event escaped surrogate pair", "POST", E, 201, body=b'{"type":"message","content":"smile \\ud83d\\ude00"}'),
    Case("event chunked small", "POST", E, 201, body=b'{"type":"message","content":"sent in chunks"}', chunked=7),

    # ---- StoreInteraction -----------------------------------------------------------------------------------------
    Case("interaction user_message missing", "POST", I, 422, json={}, field="user_message"),
    _interaction("interaction user_message empty", 422, "user_message", user_message=""),
    _interaction("interaction user_message list", 422, "user_message", user_message=["x"]),
    _interaction("interaction agent_response int", 422, "agent_response", agent_response=3),
    _interaction("interaction user_message 64 KiB + 1", 413, "user_message", user_message="y" * (64 * KIB + 1)),
    _interaction("interaction timestamp year 1", 422, "timestamp", timestamp="0001-01-01T00:00:00Z"),
    _interaction("interaction timestamp overflows UTC", 422, "timestamp", timestamp="9999-12-31T23:59:59-05:00"),
    _interaction("interaction metadata 65 keys", 422, "metadata", metadata=K65),
    _interaction("interaction metadata 5 MB", 413, "metadata.big", metadata={"big": "q" * 5_000_000}),
    Case("interaction surrogate in user_message", "POST", I, 422, body=_raw('{"user_message":"hi %s"}', SURROGATE),
         field="user_message"),
    Case("interaction surrogate in agent_response", "POST", I, 422,
         body=_raw('{"user_message":"hi","agent_response":"%s"}', SURROGATE), field="agent_response"),
    Case("interaction surrogate in metadata", "POST", I, 422,
         body=_raw('{"user_message":"hi","metadata":{"k":"%s"}}', SURROGATE), field="metadata.k"),
    # accepted but odd
    _interaction("interaction RTL and emoji", 201, user_message="שלום \U0001F44B", agent_response="مرحبا \U0001F642"),
    _interaction("interaction blank agent response", 201, agent_response="   "),
    _interaction("interaction 1970", 201, timestamp="1970-01-01T00:00:01Z", agent_response="an old memory"),

    # ---- GetContext -----------------------------------------------------------------------------------------------
    Case("context limit -1", "GET", C, 422, params={"limit": "-1"}, field="limit"),
    Case("context limit abc", "GET", C, 422, params={"limit": "abc"}, field="limit"),
    Case("context limit 0", "GET", C, 422, params={"limit": "0"}, field="limit"),
    Case("context limit 1e3", "GET", C, 422, params={"limit": "1e3"}, field="limit"),
    Case("context pages 10**9", "GET", C, 422, params={"pages": str(10**9)}, field="pages"),
    Case("context pages -5", "GET", C, 422, params={"pages": "-5"}, field="pages"),
    Case("context query 5000 chars", "GET", C, 422, params={"query": "q" * 5000}, field="query"),
    # 60 KB does not fit the HTTP server's request line (h11 refuses it before the app), so any 4xx will do
    # (httpx itself refuses URL parts over 64 KiB, so the 100 KB of the campaign cannot be sent with it).
    Case("context query 60 KB", "GET", C, frozenset({400, 414, 422, 431}), params={"query": "w" * 60_000},
         json_error=False),
    Case("context unknown session", "GET", "/api/v1/sessions/ses_nope/context", 404, field="session_id"),
    Case("context no credential", "GET", C, 401, auth="none"),
    Case("context query with bad percent-escapes", "GET", C + "?query=%ED%A0%BD%FF", 200),
    Case("context query emoji", "GET", C, 200, params={"query": "rocket \U0001F680 deploy"}),

    # ---- SearchMemory ---------------------------------------------------------------------------------------------
    Case("search query missing", "POST", Q, 422, json={}, field="query"),
    Case("search query int", "POST", Q, 422, json={"query": 5}, field="query"),
    Case("search query blank", "POST", Q, 422, json={"query": "   "}, field="query"),
    Case("search query 5000 chars", "POST", Q, 422, json={"query": "q" * 5000}, field="query"),
    Case("search limit 0", "POST", Q, 422, json={"query": "deploy", "limit": 0}, field="limit"),
    Case("search limit huge", "POST", Q, 422, json={"query": "deploy", "limit": 10**9}, field="limit"),
    Case("search limit string", "POST", Q, 422, json={"query": "deploy", "limit": "five"}, field="limit"),
    Case("search max_tokens negative", "POST", Q, 422, json={"query": "deploy", "max_tokens": -1}, field="max_tokens"),
    Case("search max_tokens huge", "POST", Q, 422, json={"query": "deploy", "max_tokens": 10**9}, field="max_tokens"),
    Case("search threshold 2", "POST", Q, 422, json={"query": "deploy", "similarity_threshold": 2},
         field="similarity_threshold"),
    Case("search filter list", "POST", Q, 422, json={"query": "deploy", "filter": ["a"]}, field="filter"),
    Case("search filter int value", "POST", Q, 422, json={"query": "deploy", "filter": {"k": 1}}, field="filter.k"),
    Case("search filter string", "POST", Q, 422, json={"query": "deploy", "filter": "k=v"}, field="filter"),
    Case("search unknown field", "POST", Q, 422, json={"query": "deploy", "bogus": 1}, field="bogus"),
    Case("search truncated JSON", "POST", Q, 422, body=b'{"query": "dep', field="body"),
    Case("search surrogate in query", "POST", Q, 422, body=_raw('{"query":"deploy %s"}', SURROGATE), field="query"),
    Case("search accepted with filter", "POST", Q, 200, json={"query": "deploy", "filter": {"workflow_id": "wf-1"}}),
    Case("search accepted RTL", "POST", Q, 200, json={"query": "שלום", "max_tokens": 100}),

    # ---- analysis, segments, graph ----------------------------------------------------------------------------------
    Case("topics unknown session", "GET", "/api/v1/sessions/ses_nope/analysis/topics", 404, field="session_id"),
    Case("topics foreign session", "GET", "/api/v1/sessions/{foreign}/analysis/topics", 404, field="session_id"),
    Case("heat no credential", "GET", "/api/v1/sessions/{sid}/analysis/heat", 401, auth="none"),
    Case("heat other tenant's key", "GET", "/api/v1/sessions/{sid}/analysis/heat", 404, auth="other",
         field="session_id"),
    Case("segments limit 0", "GET", "/api/v1/sessions/{sid}/segments", 422, params={"limit": "0"}, field="limit"),
    Case("segments limit abc", "GET", "/api/v1/sessions/{sid}/segments", 422, params={"limit": "abc"},
         field="limit"),
    Case("segments limit 10**6", "GET", "/api/v1/sessions/{sid}/segments", 422, params={"limit": str(10**6)},
         field="limit"),
    Case("graph depth 0", "GET", "/api/v1/sessions/{sid}/graph", 422, params={"depth": "0"}, field="depth"),
    Case("graph depth 3", "GET", "/api/v1/sessions/{sid}/graph", 422, params={"depth": "3"}, field="depth"),
    Case("graph depth abc", "GET", "/api/v1/sessions/{sid}/graph", 422, params={"depth": "abc"}, field="depth"),
    Case("graph depth 2", "GET", "/api/v1/sessions/{sid}/graph", 200, params={"depth": "2"}),
    Case("topics accepted", "GET", "/api/v1/sessions/{sid}/analysis/topics", 200),

    # ---- sessions: read and delete ----------------------------------------------------------------------------------
    Case("get unknown session", "GET", "/api/v1/sessions/ses_nope", 404, field="session_id"),
    Case("get session id 300 chars", "GET", "/api/v1/sessions/" + "s" * 300, 404, field="session_id"),
    Case("get foreign session", "GET", "/api/v1/sessions/{foreign}", 404, field="session_id"),
    Case("delete purge=all", "DELETE", "/api/v1/sessions/{sid}", 422, params={"purge": "all"}, field="purge"),
    Case("delete foreign session", "DELETE", "/api/v1/sessions/{foreign}", 404, field="session_id"),
    Case("health no credential", "GET", "/api/v1/health", 401, auth="none"),
    Case("liveness with an invalid UTF-8 request id", "GET", "/health", 200, headers={"X-Request-ID": b"\xff\xfe"},
         auth="none"),
    Case("liveness with a 10 KB request id", "GET", "/health", 200, headers={"X-Request-ID": "r" * 10_000},
         auth="none"),

    # ---- admin -----------------------------------------------------------------------------------------------------
    Case("admin trigger with a service key", "POST", TRIGGER, 403),
    Case("admin trigger no credential", "POST", TRIGGER, 401, auth="none"),
    Case("admin trigger jwt roles {admin: false}", "POST", TRIGGER, 401, auth="jwt",
         claims={"tenant_id": TENANT, "roles": {"admin": False}}),
    Case("admin trigger jwt roles [[admin]]", "POST", TRIGGER, 401, auth="jwt",
         claims={"tenant_id": TENANT, "roles": [["admin"]]}),
    Case("admin trigger jwt role 1", "POST", TRIGGER, 401, auth="jwt", claims={"tenant_id": TENANT, "role": 1}),
    Case("admin trigger jwt roles [reader]", "POST", TRIGGER, 403, auth="jwt",
         claims={"tenant_id": TENANT, "roles": ["reader"]}),
]


def request_body(case: Case) -> bytes | None:
    if case.body is not None:
        return case.body
    if case.has_json:
        return json.dumps(case.json).encode("utf-8")
    return None
