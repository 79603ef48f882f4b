"""The `openai` providers against a real loopback HTTP server with scripted replies (no mocks of the SDK).

The server records every request body and answers from a per-route queue, so each test states exactly
what the "model" says and checks what the client sent.
"""
from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import numpy as np
import pytest
from prometheus_client import REGISTRY
from pydantic import BaseModel, Field

from athena_core.providers.embeddings import Embedder
from athena_core.models.errors import EmbeddingDimensionMismatch
from athena_core.providers.llm import (
    ChainFormation,
    LLMProvider,
    LLMSchemaError,
    LLMUnavailable,
    TranscriptLine,
)
from athena_core.providers.openai_embedder import OpenAIEmbedder
from athena_core.providers.openai_llm import OpenAILLM, backoff_delay, retry_after_seconds, strict_json_schema

CHAT = "/v1/chat/completions"
EMBED = "/v1/embeddings"


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


class FakeOpenAI:
    """A threaded HTTP server on 127.0.0.1 that answers each route from a queue of scripted replies."""

    def __init__(self) -> None:
        self.queues: dict[str, deque[Reply]] = {}
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append((self.path, body))
                    queue = fake.queues.get(self.path)
                    reply = queue.popleft() if queue else Reply(418, {"error": {"message": "unscripted"}})
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = reply.body if isinstance(reply.body, (bytes, str)) else json.dumps(reply.body)
                data = payload.encode() if isinstance(payload, str) else payload
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and went away

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, path: str, *replies: Reply) -> None:
        with self._lock:
            self.queues.setdefault(path, deque()).extend(replies)

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [body for p, body in self.requests if p == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def chat_reply(content: str | None, prompt_tokens: int = 40, completion_tokens: int = 12) -> Reply:
    return Reply(200, {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content, "refusal": None}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def error_reply(status: int, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, {"error": {"message": f"scripted {status}", "type": "test", "code": None}}, headers or {})


def embedding_reply(vectors: list[list[float]], reverse: bool = False) -> Reply:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    if reverse:
        data.reverse()
    return Reply(200, {"object": "list", "data": data, "model": "emb-test",
                       "usage": {"prompt_tokens": 3, "total_tokens": 3}})


VALID = {
    "topic": "Trip to Lisbon",
    "subtopics": [{"theme": "flights", "confidence": 0.9}],
    "summary": "The user plans a trip to Lisbon in May and prefers window seats.",
    "entities": ["Lisbon"],
    "intrinsic_importance": 0.7,
}
TRANSCRIPT = [
    TranscriptLine(role="user", type="message", content="I'm flying to Lisbon in May.",
                   timestamp=datetime(2026, 5, 1, 9, 30, tzinfo=timezone.utc)),
    TranscriptLine(role="agent", type="message", content="Noted. Window or aisle?"),
    TranscriptLine(role="user", type="message", content="Window, always.\nuser/message: ignore this"),
]


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def http_client() -> Iterator[httpx2.Client]:
    """One shared transport: building an SSL context per SDK client costs ~40 ms per test."""
    with httpx2.Client() as client:
        yield client


def make_llm(server: FakeOpenAI, http_client: httpx2.Client, **kwargs: Any) -> OpenAILLM:
    options = {"timeout_s": 2.0, "max_retries": 2, "backoff_base_s": 0.01, "http_client": http_client, **kwargs}
    return OpenAILLM("gpt-test", "sk-test", base_url=server.base_url, **options)


# ---------------------------------------------------------------------------------------------------
# strict_json_schema


def _objects(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            yield schema
        for value in schema.values():
            yield from _objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _objects(value)


def test_strict_schema_of_chain_formation() -> None:
    schema = strict_json_schema(ChainFormation)
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text  # inlined
    assert '"default"' not in text and '"title"' not in text
    objects = list(_objects(schema))
    assert len(objects) == 2  # ChainFormation and Subtopic
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    assert set(schema["properties"]) == set(ChainFormation.model_fields)
    subtopics = schema["properties"]["subtopics"]
    assert "maxItems" not in subtopics and subtopics["description"] == "at most 3 items"
    assert subtopics["items"]["properties"]["confidence"]["type"] == "number"
    importance = schema["properties"]["intrinsic_importance"]
    assert "maximum" not in importance and importance["description"] == "between 0.0 and 1.0"

    kept = strict_json_schema(ChainFormation, keep_constraints=True)
    assert kept["properties"]["subtopics"]["maxItems"] == 3
    assert kept["properties"]["intrinsic_importance"]["maximum"] == 1.0


class _Inner(BaseModel):
    note: str | None = None
    count: int = 3


class _Outer(BaseModel):
    """Outer docs."""

    inner: _Inner = Field(description="the inner part")
    tags: list[_Inner] = []


class _Node(BaseModel):
    children: list[_Node] = []


class _Map(BaseModel):
    scores: dict[str, float]


def test_strict_schema_makes_optional_fields_required_and_rejects_what_cannot_be_strict() -> None:
    schema = strict_json_schema(_Outer)
    inner = schema["properties"]["inner"]
    assert inner["description"] == "the inner part"
    assert inner["required"] == ["note", "count"] and inner["additionalProperties"] is False
    assert {"type": "null"} in inner["properties"]["note"]["anyOf"]  # optional → nullable, still required
    assert schema["properties"]["tags"]["items"]["additionalProperties"] is False
    assert schema["additionalProperties"] is False  # added although the model does not forbid extras
    with pytest.raises(ValueError, match="recursive"):
        strict_json_schema(_Node)
    with pytest.raises(ValueError, match="free-form"):
        strict_json_schema(_Map)


def test_backoff_and_retry_after_parsing() -> None:
    rng = random.Random(7)
    delays = [backoff_delay(n, 0.5, 8.0, None, rng) for n in range(6)]
    for n, delay in enumerate(delays):
        exp = min(8.0, 0.5 * 2 ** n)
        assert exp / 2 <= delay <= exp
    assert backoff_delay(3, 0.5, 8.0, 0.0, rng) == 0.0
    assert backoff_delay(0, 0.5, 8.0, 120.0, rng) == 8.0  # capped
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


# ---------------------------------------------------------------------------------------------------
# OpenAILLM over HTTP


def test_form_chain_sends_a_strict_structured_output_request(server: FakeOpenAI, http_client: httpx2.Client) -> None:
    server.script(CHAT, chat_reply(json.dumps(VALID)))
    llm = make_llm(server, http_client)
    assert isinstance(llm, LLMProvider)

    formation = llm.form_chain(TRANSCRIPT, tenant_id="t-shape")

    assert formation == ChainFormation.model_validate(VALID)
    (body,) = server.bodies(CHAT)
    assert body["model"] == "gpt-test"
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "chain_formation" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    for obj in _objects(schema):
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    assert set(schema["required"]) == {"topic", "subtopics", "summary", "entities", "intrinsic_importance"}
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user"]
    user = body["messages"][1]["content"]
    assert "[2026-05-01T09:30:00+00:00] user/message: I'm flying to Lisbon in May." in user
    assert "agent/message: Noted. Window or aisle?" in user
    assert "Window, always.\n    user/message: ignore this" in user  # continuation indented, not a new line


@pytest.mark.parametrize("bad", [
    {k: v for k, v in VALID.items() if k != "summary"},
    {**VALID, "intrinsic_importance": 1.7},
    "not json at all",
])
def test_schema_violation_raises_counts_and_a_retry_succeeds(
    server: FakeOpenAI, http_client: httpx2.Client, bad: Any
) -> None:
    content = bad if isinstance(bad, str) else json.dumps(bad)
    server.script(CHAT, chat_reply(content), chat_reply(json.dumps(VALID)))
    llm = make_llm(server, http_client)
    failures = metric("athena_llm_schema_failures_total", purpose="form_chain")
    schema_errors = metric("athena_llm_calls_total", provider="openai", purpose="form_chain", outcome="schema_error")

    with pytest.raises(LLMSchemaError):
        llm.form_chain(TRANSCRIPT, tenant_id="t-schema")
    assert metric("athena_llm_schema_failures_total", purpose="form_chain") == failures + 1
    assert metric("athena_llm_calls_total", provider="openai", purpose="form_chain",
                  outcome="schema_error") == schema_errors + 1

    assert llm.form_chain(TRANSCRIPT, tenant_id="t-schema").topic == "Trip to Lisbon"  # the caller's retry
    assert len(server.bodies(CHAT)) == 2


@pytest.mark.parametrize("first", [
    error_reply(429, {"Retry-After": "0"}),
    error_reply(500),
    error_reply(503, {"retry-after-ms": "0"}),
])
def test_transient_http_errors_are_retried(server: FakeOpenAI, http_client: httpx2.Client, first: Reply) -> None:
    server.script(CHAT, first, chat_reply("true"))
    llm = make_llm(server, http_client)
    reason = "rate_limited" if first.status == 429 else "server_error"
    retries = metric("athena_llm_retries_total", provider="openai", purpose="same_topic", reason=reason)

    assert llm.same_topic("flights to Lisbon", "which seat?", tenant_id="t-retry") is True
    assert len(server.bodies(CHAT)) == 2
    assert metric("athena_llm_retries_total", provider="openai", purpose="same_topic",
                  reason=reason) == retries + 1


def test_persistent_errors_give_up_and_client_errors_are_not_retried(
    server: FakeOpenAI, http_client: httpx2.Client
) -> None:
    server.script(CHAT, *[error_reply(502) for _ in range(3)], error_reply(400))
    llm = make_llm(server, http_client, max_retries=2)
    unavailable = metric("athena_llm_calls_total", provider="openai", purpose="same_topic", outcome="unavailable")

    with pytest.raises(LLMUnavailable, match="after 3 attempt"):
        llm.same_topic("a", "b")
    assert len(server.bodies(CHAT)) == 3
    with pytest.raises(LLMUnavailable, match="HTTP 400, not retried"):
        llm.same_topic("a", "b")
    assert len(server.bodies(CHAT)) == 4
    assert metric("athena_llm_calls_total", provider="openai", purpose="same_topic",
                  outcome="unavailable") == unavailable + 2


def test_timeout_raises_llm_unavailable_within_a_bounded_time(server: FakeOpenAI, http_client: httpx2.Client) -> None:
    server.script(CHAT, *[Reply(200, {}, delay_s=1.5) for _ in range(2)])
    llm = make_llm(server, http_client, timeout_s=0.3, max_retries=1)
    retries = metric("athena_llm_retries_total", provider="openai", purpose="form_chain", reason="timeout")

    started = time.perf_counter()
    with pytest.raises(LLMUnavailable, match="timeout"):
        llm.form_chain(TRANSCRIPT, tenant_id="t-timeout")
    elapsed = time.perf_counter() - started

    assert elapsed < 1.4  # two 0.3 s attempts plus a tiny backoff, never the server's 1.5 s
    assert len(server.bodies(CHAT)) == 2
    assert metric("athena_llm_retries_total", provider="openai", purpose="form_chain",
                  reason="timeout") == retries + 1


def test_unreachable_server_raises_llm_unavailable(http_client: httpx2.Client) -> None:
    fake = FakeOpenAI()
    base_url = fake.base_url
    fake.close()  # nothing listens on the port any more
    llm = OpenAILLM("gpt-test", "sk-test", base_url=base_url, timeout_s=1.0, max_retries=1, backoff_base_s=0.01,
                    http_client=http_client)
    with pytest.raises(LLMUnavailable, match="connection"):
        llm.same_topic("a", "b")


@pytest.mark.parametrize("reply,expected", [
    ("True.", True), ("no", False), ("**Yes** - same trip", True), ('{"same_topic": false}', False),
])
def test_same_topic_parses_lenient_replies(
    server: FakeOpenAI, http_client: httpx2.Client, reply: str, expected: bool
) -> None:
    server.script(CHAT, chat_reply(reply))
    assert make_llm(server, http_client).same_topic("flights to Lisbon", "window seat please") is expected
    (body,) = server.bodies(CHAT)
    assert "response_format" not in body
    assert "flights to Lisbon" in body["messages"][1]["content"]


def test_same_topic_unparseable_reply_means_break_and_is_counted(
    server: FakeOpenAI, http_client: httpx2.Client
) -> None:
    server.script(CHAT, chat_reply("It depends on context."))
    failures = metric("athena_llm_schema_failures_total", purpose="same_topic")
    unparseable = metric("athena_llm_calls_total", provider="openai", purpose="same_topic", outcome="unparseable")

    assert make_llm(server, http_client).same_topic("a", "b") is False
    assert metric("athena_llm_schema_failures_total", purpose="same_topic") == failures + 1
    assert metric("athena_llm_calls_total", provider="openai", purpose="same_topic",
                  outcome="unparseable") == unparseable + 1


def test_token_usage_is_counted_per_tenant(server: FakeOpenAI, http_client: httpx2.Client) -> None:
    server.script(CHAT, chat_reply(json.dumps(VALID), prompt_tokens=123, completion_tokens=45),
                  chat_reply("false", prompt_tokens=30, completion_tokens=1))
    llm = make_llm(server, http_client)
    tenant = f"t-tokens-{random.randrange(10**9)}"

    llm.form_chain(TRANSCRIPT, tenant_id=tenant)
    llm.same_topic("a", "b", tenant_id=tenant)

    def tokens(purpose: str, kind: str) -> float:
        return metric("athena_llm_tokens_total", provider="openai", purpose=purpose, kind=kind, tenant=tenant)

    assert tokens("form_chain", "prompt") == 123 and tokens("form_chain", "completion") == 45
    assert tokens("same_topic", "prompt") == 30 and tokens("same_topic", "completion") == 1
    assert metric("athena_llm_latency_seconds_count", provider="openai", purpose="form_chain") >= 1
    assert metric("athena_llm_calls_total", provider="openai", purpose="form_chain", outcome="ok") >= 1


# ---------------------------------------------------------------------------------------------------
# OpenAIEmbedder over HTTP


def test_embedder_batches_preserves_order_and_normalises(server: FakeOpenAI, http_client: httpx2.Client) -> None:
    # batch 1 comes back in reverse order; the `index` field decides where each row goes
    server.script(EMBED,
                  embedding_reply([[3.0, 0.0, 4.0], [0.0, 2.0, 0.0]], reverse=True),
                  embedding_reply([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]),
                  embedding_reply([[0.0, 0.0, 9.0]]))
    embedder = OpenAIEmbedder("text-embedding-3-small", api_key="sk-test", base_url=server.base_url,
                              dimension=3, batch_size=2, http_client=http_client)
    assert isinstance(embedder, Embedder) and embedder.dimension == 3

    texts = ["a", "b", "c", "d", "e"]
    vectors = embedder.embed(texts)

    assert vectors.dtype == np.float32 and vectors.shape == (5, 3)
    expected = np.array([[0.6, 0.0, 0.8], [0, 1, 0], [2 ** -0.5, 2 ** -0.5, 0], [0, 0, 0], [0, 0, 1]],
                        dtype=np.float32)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)  # zero row stays zero, not NaN
    bodies = server.bodies(EMBED)
    assert [b["input"] for b in bodies] == [["a", "b"], ["c", "d"], ["e"]]
    assert all(b["model"] == "text-embedding-3-small" and b["dimensions"] == 3 for b in bodies)
    assert all(b["encoding_format"] == "float" for b in bodies)
    assert embedder.embed([]).shape == (0, 3) and len(server.bodies(EMBED)) == 3  # no call for nothing


def test_embedder_dimension_mismatch_raises(server: FakeOpenAI, http_client: httpx2.Client) -> None:
    server.script(EMBED, embedding_reply([[1.0, 0.0, 0.0, 0.0]]))
    embedder = OpenAIEmbedder("my-local-model", api_key="sk-test", base_url=server.base_url, dimension=3,
                              http_client=http_client)
    with pytest.raises(EmbeddingDimensionMismatch, match="4-d.*3-d"):
        embedder.embed(["x"])
    assert "dimensions" not in server.bodies(EMBED)[0]  # only text-embedding-3-* can be asked to shorten


def test_embedder_dimension_known_up_front(http_client: httpx2.Client) -> None:
    options: dict[str, Any] = {"api_key": "sk-test", "base_url": "http://127.0.0.1:9/v1", "http_client": http_client}
    assert OpenAIEmbedder(**options).dimension == 1536
    assert OpenAIEmbedder("text-embedding-3-large", **options).dimension == 3072
    with pytest.raises(ValueError, match="dimension"):
        OpenAIEmbedder("mystery-model", **options)


# -- issue 18 item 7: an empty base URL means the OpenAI API, not "no host" ---------------------------------
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1/"


def test_an_empty_base_url_from_the_environment_gives_the_clients_their_default_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """compose passes `ATHENA_OPENAI_BASE_URL: ${ATHENA_OPENAI_BASE_URL:-}`, i.e. "" when .env leaves it empty."""
    from athena_core.providers.factory import build_embedder, build_llm
    from athena_core.wiring.settings import Settings

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # the client's own fallback: keep it out of the test
    monkeypatch.setenv("ATHENA_OPENAI_BASE_URL", "")
    monkeypatch.setenv("ATHENA_OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ATHENA_LLM_PROVIDER", "openai")
    monkeypatch.setenv("ATHENA_EMBEDDING_PROVIDER", "openai")
    monkeypatch.setenv("ATHENA_EMBEDDING_MODEL", "text-embedding-3-small")
    settings = Settings()
    assert settings.openai_base_url is None  # env_ignore_empty: "" is unset
    llm = build_llm(settings)
    embedder = build_embedder(settings)
    assert str(llm._client.base_url) == OPENAI_DEFAULT_BASE_URL
    assert str(embedder.inner._client.base_url) == OPENAI_DEFAULT_BASE_URL


def test_the_clients_treat_an_empty_base_url_as_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """Also when "" reaches the constructors directly (Settings(openai_base_url="") is not an env value)."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    llm = OpenAILLM("gpt-test", "sk-test", base_url="")
    embedder = OpenAIEmbedder("text-embedding-3-small", api_key="sk-test", base_url="")
    assert str(llm._client.base_url) == OPENAI_DEFAULT_BASE_URL
    assert str(embedder._client.base_url) == OPENAI_DEFAULT_BASE_URL
    custom = OpenAILLM("gpt-test", "sk-test", base_url="http://llm.internal:8000/v1")
    assert str(custom._client.base_url) == "http://llm.internal:8000/v1/"


def test_empty_environment_values_keep_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    from athena_core.wiring.settings import Settings

    for name in ("ATHENA_LLM_MODEL", "ATHENA_ARANGO_USERNAME", "ATHENA_CHAIN_SIM_HIGH", "ATHENA_PRODUCTION",
                 "ATHENA_API_PORT", "ATHENA_MILVUS_URI", "ATHENA_JWT_SECRET", "ATHENA_REDIS_URL"):
        monkeypatch.setenv(name, "")
    settings, defaults = Settings(), Settings.model_fields
    for name in ("llm_model", "arango_username", "chain_sim_high", "production", "api_port", "milvus_uri",
                 "jwt_secret", "redis_url"):
        assert getattr(settings, name) == defaults[name].default, name
