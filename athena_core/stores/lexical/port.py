"""The lexical port (issue 7): keyword search over a user's consolidated events and chain summaries."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from athena_core.models.scope import UserScope


class LexicalDoc(tuple):
    """(doc_id, kind, body): one text the lexical index holds; kind is "event" or "chain"."""

    __slots__ = ()

    def __new__(cls, doc_id: str, kind: str, body: str) -> "LexicalDoc":
        return super().__new__(cls, (doc_id, kind, body))

    doc_id = property(lambda self: self[0])
    kind = property(lambda self: self[1])
    body = property(lambda self: self[2])


def plain_terms(terms: Sequence[str]) -> list[str]:
    """What an adapter sends its engine: the distinct non-blank terms, in order. A bare string is a query,
    not terms (iterating it would search its letters): refused with TypeError."""
    if isinstance(terms, str):
        raise TypeError("LexicalIndex.search takes terms (see retrieval.lexical_terms.search_terms), not a query")
    return [t for t in dict.fromkeys(terms) if t and t.strip()]


@runtime_checkable
class LexicalIndex(Protocol):
    """Keyword search over a user's consolidated events and chain summaries (issue 7), user-scoped.

    Engines: SQLite FTS5 (BM25, Porter stemming) in the embedded default; a MongoDB text index in
    production. Search returns doc ids of one kind, best match first (only the rank is used: fusion is
    by rank, so engines with different score scales are interchangeable).

    The index matches terms, it does not read queries: which words of a query are worth matching (stop
    words, question words, numbers) is retrieval policy, decided by the caller
    (`athena_core.retrieval.lexical_terms.search_terms`).
    """

    engine: str

    def ping(self) -> None: ...

    def close(self) -> None: ...

    def upsert(self, scope: UserScope, docs: list[LexicalDoc]) -> None:
        """Insert or replace docs by (scope, kind, doc_id); idempotent."""

    def delete(self, scope: UserScope, kind: str, doc_ids: list[str]) -> int: ...

    def delete_user(self, scope: UserScope) -> int: ...

    def search(self, scope: UserScope, terms: Sequence[str], kind: str, limit: int) -> list[str]:
        """Ids of the `kind` docs matching any of `terms` (words, matched as plain words whatever
        characters they hold; the engine stems them), best first, at most `limit`. No terms: nothing.
        A bare string is refused (TypeError): it is a query, not terms."""

    def count(self, scope: UserScope) -> int: ...
