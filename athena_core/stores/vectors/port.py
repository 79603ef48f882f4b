"""The vector port (SPEC S0, S4): one vector per chain (and per long event's sentence), user-scoped."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from athena_core.models.scope import UserScope

if TYPE_CHECKING:
    import numpy as np

_OWN_WRITES: ContextVar[bool] = ContextVar("vector_reads_need_own_writes", default=False)


@contextmanager
def reading_own_writes() -> Iterator[None]:
    """Searches in this block must see every vector already written, by any process (the pipeline's merge
    candidates). Engines that are always consistent (SQLite) ignore it; Milvus reads at Strong instead of
    its faster search level (issue 17)."""
    token = _OWN_WRITES.set(True)
    try:
        yield
    finally:
        _OWN_WRITES.reset(token)


def own_writes_required() -> bool:
    """Is the caller inside `reading_own_writes()`?"""
    return _OWN_WRITES.get()


class VectorHit(tuple):
    """(chain_id, similarity): cosine similarity in [-1, 1], higher is closer."""

    __slots__ = ()

    def __new__(cls, chain_id: str, similarity: float) -> "VectorHit":
        return super().__new__(cls, (chain_id, float(similarity)))

    @property
    def chain_id(self) -> str:
        return self[0]

    @property
    def similarity(self) -> float:
        return self[1]


@runtime_checkable
class VectorIndex(Protocol):
    """One vector per chain, user-scoped (SPEC S4, S1). Engines: SQLite exact search, Milvus.

    Vectors given to and compared by the index are L2-normalised float32 of `dimension` values.
    """

    engine: str
    dimension: int

    def ping(self) -> None: ...

    def close(self) -> None: ...

    def upsert(self, scope: UserScope, chain_id: str, vector: "np.ndarray") -> None:
        """Insert or replace the chain's vector (upsert by chain id)."""

    def upsert_many(self, scope: UserScope, chain_ids: list[str], vectors: object) -> None:
        """`upsert` for several ids in one write (the embed step indexes a chain's events at once)."""

    def delete(self, scope: UserScope, chain_ids: list[str]) -> int:
        """Remove these chains' vectors (archival); returns how many existed."""

    def delete_user(self, scope: UserScope) -> int:
        """Remove every vector of the user (purge)."""

    def search(self, scope: UserScope, vector: "np.ndarray", limit: int) -> list[VectorHit]:
        """The user's `limit` nearest chains, most similar first. Never another user's or tenant's."""

    def similarities(self, scope: UserScope, vector: "np.ndarray", chain_ids: list[str]) -> dict[str, float]:
        """Cosine of `vector` to each of these ids of the user that has a vector (others are left out):
        hybrid search reports a cosine for results the lexical retriever found, not only the nearest."""

    def vectors_of(self, scope: UserScope, chain_ids: list[str]) -> dict[str, "np.ndarray"]:
        """The stored vectors of these ids of the user (ids without one are left out): the pipeline
        reuses an event's or chain's vector instead of embedding its text again (each text embedded once)."""

    def count(self, scope: UserScope) -> int: ...
