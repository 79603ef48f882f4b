"""SQLite FTS5 adapter of the lexical index: BM25 over a user's events and chain summaries.

Porter stemming ("hikes" meets "hiking"), unicode61 folding. Every row carries a scope token (a hash of
tenant, user and kind) in an indexed column, and every query ANDs it in, so FTS5 resolves the scope from
its own index: a search never reads another tenant's postings. A plain table maps rows to their
(tenant, user, kind, doc_id) so upserts replace and purges delete by scope.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path

from athena_core.models.scope import UserScope
from athena_core.stores.lexical.port import LexicalDoc, plain_terms
from athena_core.stores.sqlite_file import SqliteAdapter

SCHEMA = """
CREATE TABLE IF NOT EXISTS lexical_docs (
    id INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, kind TEXT NOT NULL, doc_id TEXT NOT NULL,
    UNIQUE (tenant_id, user_id, kind, doc_id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS lexical_fts USING fts5(body, scope, tokenize = 'porter unicode61');
"""


# How long a term's document frequency is reused. It only decides which terms are too common to score
# (`max_df`); counting it cost half of a large user's lexical search (25 of 52 ms at 200k docs), and a
# user's counts move slowly: a term crossing `max_df` is noticed within this time.
DF_CACHE_S = 60.0
DF_CACHE_ENTRIES = 100_000


def _phrase(term: str) -> str:
    """A term as an FTS5 string: quoted, inner quotes doubled, so no character of it is query syntax."""
    return '"' + term.replace('"', '""') + '"'


def scope_token(scope: UserScope, kind: str) -> str:
    digest = hashlib.sha1(f"{scope.tenant_id}\x00{scope.user_id}\x00{kind}".encode()).hexdigest()[:24]
    return f"s{digest}"


class SqliteLexical(SqliteAdapter):
    """Implements `LexicalIndex` with FTS5 (multi-process safe like every SQLite adapter here)."""

    engine = "sqlite-fts5"
    schema = SCHEMA

    def __init__(self, path: Path | str, synchronous: str = "NORMAL", max_df: int = 5000,
                 df_cache_s: float = DF_CACHE_S) -> None:
        super().__init__(path, synchronous)
        self.max_df = max_df
        self.df_cache_s = df_cache_s
        self._df: dict[tuple[str, str], tuple[int, float]] = {}  # (scope token, term) → (count, when)

    def upsert(self, scope: UserScope, docs: list[LexicalDoc]) -> None:
        if not docs:
            return
        with self._write() as conn:
            for doc in docs:
                row = conn.execute(
                    "INSERT INTO lexical_docs (tenant_id, user_id, kind, doc_id) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT DO UPDATE SET kind = excluded.kind RETURNING id",
                    (scope.tenant_id, scope.user_id, doc.kind, doc.doc_id),
                ).fetchone()
                conn.execute("DELETE FROM lexical_fts WHERE rowid = ?", (row[0],))
                conn.execute("INSERT INTO lexical_fts (rowid, body, scope) VALUES (?, ?, ?)",
                             (row[0], doc.body, scope_token(scope, doc.kind)))

    def _delete_rows(self, conn, where: str, params: tuple) -> int:
        ids = [r[0] for r in conn.execute(f"SELECT id FROM lexical_docs WHERE {where}", params)]
        conn.executemany("DELETE FROM lexical_fts WHERE rowid = ?", [(i,) for i in ids])
        conn.executemany("DELETE FROM lexical_docs WHERE id = ?", [(i,) for i in ids])
        return len(ids)

    def delete(self, scope: UserScope, kind: str, doc_ids: list[str]) -> int:
        if not doc_ids:
            return 0
        with self._write() as conn:
            marks = ",".join("?" * len(doc_ids))
            return self._delete_rows(conn, f"tenant_id = ? AND user_id = ? AND kind = ? AND doc_id IN ({marks})",
                                     (scope.tenant_id, scope.user_id, kind, *doc_ids))

    def delete_user(self, scope: UserScope) -> int:
        tokens = {scope_token(scope, kind) for kind in ("event", "chain")}
        for key in [k for k in list(self._df) if k[0] in tokens]:  # list(): one atomic copy
            self._df.pop(key, None)
        with self._write() as conn:
            return self._delete_rows(conn, "tenant_id = ? AND user_id = ?", (scope.tenant_id, scope.user_id))

    def scrub(self, *, vacuum: bool, wait_s: float) -> str:
        """After a purge. An FTS5 delete only adds delete markers: the deleted rows' terms stay in the older
        index segments until they are merged. `optimize` merges every segment into one without them; then
        the file is scrubbed like every SQLite file (VACUUM, WAL truncated)."""
        with self._write() as conn:
            conn.execute("INSERT INTO lexical_fts (lexical_fts) VALUES ('optimize')")
        return "optimized, " + super().scrub(vacuum=vacuum, wait_s=wait_s)

    def _document_frequency(self, conn, token: str, term: str) -> int:
        """How many of the scope's docs hold `term`, counted up to `max_df` + 1 (cheap for rare terms),
        reused for `df_cache_s` (the cache holds counts only, per scope token; a purge drops its own)."""
        now = time.monotonic()
        cached = self._df.get((token, term))
        if cached is not None and now - cached[1] < self.df_cache_s:
            return cached[0]
        count = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM lexical_fts WHERE lexical_fts MATCH ? LIMIT ?)",
            (f'scope : "{token}" AND body : {_phrase(term)}', self.max_df + 1),
        ).fetchone()[0]
        if len(self._df) >= DF_CACHE_ENTRIES:
            self._df.clear()  # rare (100k distinct terms in a minute); a cleared cache only recounts
        self._df[(token, term)] = (count, now)
        return count

    def _informative(self, conn, token: str, terms: list[str]) -> list[str]:
        """Terms found in more than `max_df` of the scope's docs weigh little in BM25 but make FTS5 score
        every doc holding them (the cost of a search grows with them): they are dropped, unless all terms
        are that common, then the two rarest stay."""
        if self.max_df <= 0 or len(terms) < 2:
            return terms
        df = {t: self._document_frequency(conn, token, t) for t in terms}
        rare = [t for t in terms if df[t] <= self.max_df]
        return rare or sorted(terms, key=lambda t: df[t])[:2]

    def search(self, scope: UserScope, terms: Sequence[str], kind: str, limit: int) -> list[str]:
        terms = plain_terms(terms)
        if not terms or limit <= 0:
            return []
        conn = self._conn()
        token = scope_token(scope, kind)
        terms = self._informative(conn, token, terms)
        expression = f'scope : "{token}" AND body : (' + " OR ".join(_phrase(t) for t in terms) + ")"
        # rank first, join after: the inner query touches only the FTS index; the join reads `limit` rows
        rows = conn.execute(
            "SELECT d.doc_id FROM (SELECT rowid AS id, bm25(lexical_fts, 1.0, 0.0) AS score FROM lexical_fts "
            "WHERE lexical_fts MATCH ? ORDER BY score LIMIT ?) AS best JOIN lexical_docs d ON d.id = best.id "
            "ORDER BY best.score",
            (expression, limit),
        ).fetchall()
        return [r[0] for r in rows]

    def count(self, scope: UserScope) -> int:
        row = self._conn().execute("SELECT COUNT(*) FROM lexical_docs WHERE tenant_id = ? AND user_id = ?",
                                   (scope.tenant_id, scope.user_id)).fetchone()
        return int(row[0])
