"""SQLite FTS5 adapter of the lexical index: BM25 over a user's events and chain summaries.

Porter stemming ("hikes" meets "hiking"), unicode61 folding. Every indexed word carries its scope: it is
stored as a scope prefix (31 digits of a hash of tenant, user and kind) glued to the word, and a query
asks for prefixed words, so FTS5 finds a user's postings in its own index and a search never reads
another tenant's. Each (scope, word) is its own FTS5 term, so BM25's document frequencies are the user's
own, not all tenants' together. A plain table maps rows to their (tenant, user, kind, doc_id) and holds
their text, so upserts replace, purges delete by scope, and every result row is checked against the scope
it was asked for. The FTS5 table is contentless (it holds the index only): a text is stored once, in the
plain table, and an FTS5 row is deleted by giving it the prefixed text again (FTS5's 'delete' command).

Why no per-row token counts (`columnsize = 0`): BM25's length normalisation needs each row's length,
which FTS5 reads from its `docsize` table, one B-tree lookup per matching row. That lookup was about 70 %
of a search's BM25 scoring: top 200 of 200k event docs took 10.3 ms with it and 2.9 ms without
(docs/retrieval.md, "eighth round"). Without them FTS5 gives every row the same length, so BM25 keeps its
idf and its term-frequency saturation and drops the length normalisation. That is put back on the best
rows only (`length_normalised`: three times the asked number, their text lengths read in the join that
checks their scope), so short turns that match as well as long ones still rank first. Files of the
layout before are indexed again on open.

Why prefixes and not a scope column ANDed into every query (the layout before, migrated on open): BM25
was computed for every matching row over every phrase of the query, the scope phrase too, whose postings
hold all the user's docs. At 200k docs a user's event search took 19 ms with it and 7 ms without
(docs/retrieval.md, "fifth round"). Digits are consonants to the Porter stemmer, so the prefix does not
change how a word is stemmed (except a word starting with "y", which it then reads as a vowel).
"""
from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from athena_core.models.scope import UserScope
from athena_core.stores.lexical.port import LexicalDoc, plain_terms
from athena_core.stores.sqlite_file import SqliteAdapter
from athena_core.stores.sqlite_one_step import exact_real, rows_in_one_step

SCHEMA = """
CREATE TABLE IF NOT EXISTS lexical_docs (
    id INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, kind TEXT NOT NULL, doc_id TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    UNIQUE (tenant_id, user_id, kind, doc_id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS lexical_terms_fts USING fts5(body, content = '', columnsize = 0,
                                                           tokenize = 'porter unicode61');
"""
# The layouts before, moved on open: texts in the FTS5 table with a scope column ANDed into each query;
# then scope-prefixed words with FTS5's per-row token counts (`columnsize`, see the module docstring).
OLD_TABLE = "lexical_fts"
SIZED_TABLE = "lexical_scoped_fts"

log = logging.getLogger(__name__)

# What unicode61 reads as one token: letters, digits and private-use characters; "_" and punctuation split.
WORD = re.compile(r"[^\W_]+")


# How long a term's document frequency is reused. It only decides which terms are too common to score
# (`max_df`); counting it cost half of a large user's lexical search (25 of 52 ms at 200k docs), and a
# user's counts move slowly: a term crossing `max_df` is noticed within this time.
DF_CACHE_S = 60.0
DF_CACHE_ENTRIES = 100_000


def _phrase(term: str) -> str:
    """A term as an FTS5 string: quoted, inner quotes doubled, so no character of it is query syntax."""
    return '"' + term.replace('"', '""') + '"'


def scope_prefix(tenant_id: str, user_id: str, kind: str) -> str:
    """31 digits (100 bits of a hash) put before each of the scope's words. A fixed length, so a prefixed
    word can only be read one way: another scope's word never equals it, whatever that word is."""
    digest = hashlib.sha1(f"{tenant_id}\x00{user_id}\x00{kind}".encode()).hexdigest()[:25]
    return str(int(digest, 16)).zfill(31)


def scoped_text(prefix: str, text: str) -> str:
    """The text as the index holds it: its words, each glued to the scope prefix."""
    return " ".join(prefix + word for word in WORD.findall(text))


def _indexed(row: Sequence) -> tuple[int, str]:
    """(rowid, text as indexed) of a `lexical_docs` row read as (id, body, tenant_id, user_id, kind)."""
    return row[0], scoped_text(scope_prefix(row[2], row[3], row[4]), row[1])


def _scoped_phrase(prefix: str, term: str) -> str | None:
    """A query term as an FTS5 phrase of the scope's words ("e-mail": two words in a row); None when it
    holds no word."""
    words = scoped_text(prefix, term)
    return _phrase(words) if words else None


# BM25's length normalisation, put back on the best `LENGTH_POOL` × limit rows (module docstring).
BM25_K1, BM25_B = 1.2, 0.75  # FTS5's own constants
LENGTH_POOL = 3


def length_normalised(rows: Sequence[tuple[str, float, int]]) -> list[str]:
    """Doc ids best first, from (doc_id, BM25 score without length normalisation, text length in
    characters), best score first. Each score is divided by BM25's length term `1 + k1·(1 − b + b·D/avgdl)`, D the text's
    length and avgdl the rows' mean: exact for words found once in a doc (the common case in chat turns),
    with lengths relative to the best matches rather than to the whole index."""
    if not rows:
        return []
    mean = sum(max(length, 1) for _, _, length in rows) / len(rows)

    def score(row: tuple[str, float, int]) -> float:
        return row[1] / (1.0 + BM25_K1 * (1.0 - BM25_B + BM25_B * max(row[2], 1) / mean))
    return [row[0] for row in sorted(rows, key=lambda row: -score(row))]  # stable: ties keep BM25's order


def _has_table(conn: Any, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _copy_unprefixed_texts(conn: Any) -> None:
    """The oldest layout kept its texts in the FTS5 table: copied into `lexical_docs` first."""
    if "body" not in {r[1] for r in conn.execute("PRAGMA table_info(lexical_docs)")}:
        conn.execute("ALTER TABLE lexical_docs ADD COLUMN body TEXT NOT NULL DEFAULT ''")
    conn.execute(f"UPDATE lexical_docs SET body = (SELECT f.body FROM {OLD_TABLE} f WHERE f.rowid = lexical_docs.id)"
                 f" WHERE id IN (SELECT rowid FROM {OLD_TABLE})")


class SqliteLexical(SqliteAdapter):
    """Implements `LexicalIndex` with FTS5 (multi-process safe like every SQLite adapter here)."""

    engine = "sqlite-fts5"
    schema = SCHEMA

    def __init__(self, path: Path | str, synchronous: str = "NORMAL", max_df: int = 5000,
                 df_cache_s: float = DF_CACHE_S) -> None:
        super().__init__(path, synchronous)
        self.max_df = max_df
        self.df_cache_s = df_cache_s
        self._df: dict[tuple[str, str], tuple[int, float]] = {}  # (scope prefix, term) → (count, when)
        self._migrate()

    def _migrate(self) -> None:
        """Move the layouts before to this one, once: the oldest's texts into `lexical_docs`, then every
        row indexed in this layout's table (prefixed words, no per-row token counts)."""
        self._reindex_from(OLD_TABLE, _copy_unprefixed_texts, "moved to the scope-prefixed layout")
        self._reindex_from(SIZED_TABLE, None, "indexed again without per-row token counts")

    def _reindex_from(self, table: str, before: Callable[[Any], None] | None, what: str) -> None:
        """If the file holds `table`: index every `lexical_docs` row in `lexical_terms_fts`, drop `table`."""
        if not _has_table(self._conn(), table):
            return
        with self._write() as conn:
            if not _has_table(conn, table):
                return  # another process moved them meanwhile
            if before is not None:
                before(conn)
            rows = conn.execute("SELECT id, body, tenant_id, user_id, kind FROM lexical_docs").fetchall()
            conn.executemany("INSERT INTO lexical_terms_fts (rowid, body) VALUES (?, ?)", map(_indexed, rows))
            conn.execute(f"DROP TABLE {table}")
        log.info("lexical index: %d docs %s", len(rows), what)

    @staticmethod
    def _unindex(conn, rows: list) -> None:
        """Remove rows (id, body, tenant, user, kind) from the contentless index: FTS5 must be given the
        very text it indexed to find its terms."""
        conn.executemany(
            "INSERT INTO lexical_terms_fts (lexical_terms_fts, rowid, body) VALUES ('delete', ?, ?)",
            map(_indexed, rows))

    def upsert(self, scope: UserScope, docs: list[LexicalDoc]) -> None:
        if not docs:
            return
        with self._write() as conn:
            for doc in docs:
                old = conn.execute(
                    "SELECT id, body, tenant_id, user_id, kind FROM lexical_docs "
                    "WHERE tenant_id = ? AND user_id = ? AND kind = ? AND doc_id = ?",
                    (scope.tenant_id, scope.user_id, doc.kind, doc.doc_id),
                ).fetchone()
                if old is not None:
                    if old[1] == doc.body:
                        continue  # re-indexing the same text (formation re-indexes its run's events)
                    self._unindex(conn, [old])
                    conn.execute("UPDATE lexical_docs SET body = ? WHERE id = ?", (doc.body, old[0]))
                    rowid = old[0]
                else:
                    rowid = conn.execute(
                        "INSERT INTO lexical_docs (tenant_id, user_id, kind, doc_id, body) VALUES (?, ?, ?, ?, ?) "
                        "RETURNING id", (scope.tenant_id, scope.user_id, doc.kind, doc.doc_id, doc.body),
                    ).fetchone()[0]
                prefix = scope_prefix(scope.tenant_id, scope.user_id, doc.kind)
                conn.execute("INSERT INTO lexical_terms_fts (rowid, body) VALUES (?, ?)",
                             (rowid, scoped_text(prefix, doc.body)))

    def _delete_rows(self, conn, where: str, params: tuple) -> int:
        rows = conn.execute(f"SELECT id, body, tenant_id, user_id, kind FROM lexical_docs WHERE {where}",
                            params).fetchall()
        self._unindex(conn, rows)
        conn.executemany("DELETE FROM lexical_docs WHERE id = ?", [(r[0],) for r in rows])
        return len(rows)

    def delete(self, scope: UserScope, kind: str, doc_ids: list[str]) -> int:
        if not doc_ids:
            return 0
        with self._write() as conn:
            marks = ",".join("?" * len(doc_ids))
            return self._delete_rows(conn, f"tenant_id = ? AND user_id = ? AND kind = ? AND doc_id IN ({marks})",
                                     (scope.tenant_id, scope.user_id, kind, *doc_ids))

    def delete_user(self, scope: UserScope) -> int:
        prefixes = {scope_prefix(scope.tenant_id, scope.user_id, kind) for kind in ("event", "chain")}
        for key in [k for k in list(self._df) if k[0] in prefixes]:  # list(): one atomic copy
            self._df.pop(key, None)
        with self._write() as conn:
            return self._delete_rows(conn, "tenant_id = ? AND user_id = ?", (scope.tenant_id, scope.user_id))

    def scrub(self, *, vacuum: bool, wait_s: float) -> str:
        """After a purge. An FTS5 delete only adds delete markers: the deleted rows' terms stay in the older
        index segments until they are merged. `optimize` merges every segment into one without them; then
        the file is scrubbed like every SQLite file (VACUUM, WAL truncated)."""
        with self._write() as conn:
            conn.execute("INSERT INTO lexical_terms_fts (lexical_terms_fts) VALUES ('optimize')")
        return "optimized, " + super().scrub(vacuum=vacuum, wait_s=wait_s)

    def _document_frequency(self, conn, prefix: str, phrase: str) -> int:
        """How many of the scope's docs hold the phrase, counted up to `max_df` + 1 (cheap for rare terms),
        reused for `df_cache_s` (the cache holds counts only, per scope prefix; a purge drops its own)."""
        now = time.monotonic()
        cached = self._df.get((prefix, phrase))
        if cached is not None and now - cached[1] < self.df_cache_s:
            return cached[0]
        count = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM lexical_terms_fts WHERE lexical_terms_fts MATCH ? LIMIT ?)",
            (phrase, self.max_df + 1),
        ).fetchone()[0]
        if len(self._df) >= DF_CACHE_ENTRIES:
            self._df.clear()  # rare (100k distinct terms in a minute); a cleared cache only recounts
        self._df[(prefix, phrase)] = (count, now)
        return count

    def _informative(self, conn, prefix: str, terms: list[str]) -> list[str]:
        """Terms found in more than `max_df` of the scope's docs weigh little in BM25 but make FTS5 score
        every doc holding them (the cost of a search grows with them): they are dropped, unless all terms
        are that common, then the two rarest stay."""
        if self.max_df <= 0 or len(terms) < 2:
            return terms
        df = {t: self._document_frequency(conn, prefix, t) for t in terms}
        rare = [t for t in terms if df[t] <= self.max_df]
        return rare or sorted(terms, key=lambda t: df[t])[:2]

    def search(self, scope: UserScope, terms: Sequence[str], kind: str, limit: int) -> list[str]:
        terms = plain_terms(terms)
        if not terms or limit <= 0:
            return []
        conn = self._conn()
        prefix = scope_prefix(scope.tenant_id, scope.user_id, kind)
        phrases = [p for t in terms if (p := _scoped_phrase(prefix, t)) is not None]
        if not phrases:
            return []
        phrases = self._informative(conn, prefix, phrases)
        # rank first, join after: the inner query touches only the FTS5 index; the join reads `limit` rows
        # and keeps only the scope's own (a wall, should two scopes' prefixes ever collide)
        # and all in one step (a search runs beside the API's other threads: sqlite_one_step)
        rows = rows_in_one_step(
            conn,
            "SELECT d.doc_id AS doc_id, -best.score AS score, length(d.body) AS length FROM (SELECT rowid AS id, "
            "bm25(lexical_terms_fts) AS score FROM lexical_terms_fts WHERE lexical_terms_fts MATCH ? ORDER BY score "
            "LIMIT ?) AS best JOIN lexical_docs d ON d.id = best.id WHERE d.tenant_id = ? AND d.user_id = ? "
            "AND d.kind = ?", (" OR ".join(phrases), limit * LENGTH_POOL, scope.tenant_id, scope.user_id, kind),
            ["doc_id", exact_real("score"), "length"],
        )
        rows = sorted(((doc_id, float(score), length) for doc_id, score, length in rows), key=lambda r: (-r[1], r[0]))
        return length_normalised(rows)[:limit]

    def count(self, scope: UserScope) -> int:
        row = self._conn().execute("SELECT COUNT(*) FROM lexical_docs WHERE tenant_id = ? AND user_id = ?",
                                   (scope.tenant_id, scope.user_id)).fetchone()
        return int(row[0])
