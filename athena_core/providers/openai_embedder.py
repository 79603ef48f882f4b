"""The `openai` embedding engine (SPEC S8): `embeddings.create` against any OpenAI-compatible base URL.

The dimension is known before the first call (a table of known models, or given explicitly) so the
vector index can be checked at start; a reply of any other length raises EmbeddingDimensionMismatch
rather than storing a vector the index cannot hold. Transient HTTP failures use the SDK's own retry
(`max_retries`, honours Retry-After); what still fails propagates as the `openai` exception.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import openai

from athena_core.models.errors import EmbeddingDimensionMismatch
from athena_core.providers.embeddings import normalise_rows

if TYPE_CHECKING:
    import httpx2

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# Models that accept the `dimensions` parameter (Matryoshka-trained; others reject it).
_SHORTENABLE_PREFIX = "text-embedding-3-"


class OpenAIEmbedder:
    """`Embedder` on the official `openai` client: batched, order-preserving, L2-normalised float32."""

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        timeout_s: float = 30.0,
        http_client: httpx2.Client | None = None,
        batch_size: int = 256,
        max_retries: int = 2,
    ) -> None:
        if dimension is None:
            dimension = KNOWN_DIMENSIONS.get(model)
            if dimension is None:
                raise ValueError(f"unknown embedding model {model!r}: pass its dimension explicitly")
            self._request_dimensions: int | None = None
        else:
            if dimension <= 0:
                raise ValueError("dimension must be positive")
            # An explicit size is requested from models that can shorten; others must simply match it.
            self._request_dimensions = dimension if model.startswith(_SHORTENABLE_PREFIX) else None
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.model_name = model
        self.dimension = dimension
        self.batch_size = batch_size
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url or None,  # an empty URL would mean no host: use the default
            timeout=timeout_s, max_retries=max_retries, http_client=http_client,
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        """Shape (len(texts), dimension), rows in input order, each L2-normalised."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start:start + self.batch_size]
            out[start:start + len(batch)] = self._embed_batch(batch)
        return out

    def embed_query(self, texts: list[str]) -> np.ndarray:
        """The same vectors as `embed`: OpenAI's models have one form for queries and stored texts."""
        return self.embed(texts)

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        kwargs: dict = {"model": self.model_name, "input": batch, "encoding_format": "float"}
        if self._request_dimensions is not None:
            kwargs["dimensions"] = self._request_dimensions
        response = self._client.embeddings.create(**kwargs)
        rows = sorted(response.data, key=lambda item: item.index)  # the API may reorder; `index` is truth
        if [row.index for row in rows] != list(range(len(batch))):
            raise RuntimeError(
                f"embedding reply covers indexes {[row.index for row in rows]} for {len(batch)} inputs"
            )
        for row in rows:
            if len(row.embedding) != self.dimension:
                raise EmbeddingDimensionMismatch(self.model_name, len(row.embedding), self.dimension)
        return normalise_rows(np.asarray([row.embedding for row in rows], dtype=np.float32))
