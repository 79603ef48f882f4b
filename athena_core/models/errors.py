"""Errors the ports raise and every layer may catch (kept here so adapters need no provider import)."""
from __future__ import annotations


class EmbeddingDimensionMismatch(RuntimeError):
    """The configured vector index and the embedding model disagree on the dimension (SPEC S8)."""

    def __init__(self, model_name: str, model_dimension: int, index_dimension: int) -> None:
        super().__init__(
            f"embedding model {model_name!r} produces {model_dimension}-d vectors but the vector index "
            f"holds {index_dimension}-d vectors; re-index or configure the matching model"
        )
        self.model_dimension = model_dimension
        self.index_dimension = index_dimension
