"""Call counts and latency for an LLM provider that does not meter itself (the offline one).

The `openai` provider meters its own calls (it sees retries and tokens); this wrapper gives the
offline provider the same `athena_llm_calls_total` / `athena_llm_latency_seconds` series, so
dashboards read the same whichever provider runs.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from athena_core.observability import metrics
from athena_core.providers.llm import M, ChainFormation, LLMProvider, TranscriptLine

T = TypeVar("T")


class MeteredLLM:
    def __init__(self, inner: LLMProvider) -> None:
        self.inner = inner
        self.name = inner.name

    def _metered(self, purpose: str, call: Callable[[], T]) -> T:
        started = time.perf_counter()
        outcome = "error"
        try:
            result = call()
            outcome = "ok"
            return result
        finally:
            metrics.LLM_CALLS.labels(self.name, purpose, outcome).inc()
            metrics.LLM_LATENCY.labels(self.name, purpose).observe(time.perf_counter() - started)

    def form_chain(self, transcript: list[TranscriptLine], *, tenant_id: str = "") -> ChainFormation:
        return self._metered("form_chain", lambda: self.inner.form_chain(transcript, tenant_id=tenant_id))

    def same_topic(self, previous: str, current: str, *, tenant_id: str = "") -> bool:
        return self._metered("same_topic", lambda: self.inner.same_topic(previous, current, tenant_id=tenant_id))

    def structured(
        self, purpose: str, messages: list[dict[str, str]], model_cls: type[M], *, schema_name: str,
        tenant_id: str = "", schema: dict[str, Any] | None = None,
    ) -> M:
        return self._metered(purpose, lambda: self.inner.structured(
            purpose, messages, model_cls, schema_name=schema_name, tenant_id=tenant_id, schema=schema))
