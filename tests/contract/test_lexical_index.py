"""One contract suite for every LexicalIndex adapter (issue 7; SPEC S1, S7.4).

Runs on SQLite FTS5 (a temporary file) and on a real MongoDB when ATHENA_TEST_MONGO_URL is set (skipped
otherwise, and said so in the README: no MongoDB server can be had here). mongomock does not implement
`$text`, and SecantusDB, the MongoDB-wire server the document-store suite runs on, has no text indexes:
on it the adapter must refuse at start naming the fix (`ATHENA_LEXICAL_STORE=sqlite`), checked below.
"""
from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from athena_core.models.scope import UserScope
from athena_core.retrieval.lexical_terms import search_terms
from athena_core.stores.lexical.port import LexicalDoc, LexicalIndex
from athena_core.stores.lexical.sqlite_lexical import SqliteLexical

MONGO_URL = os.environ.get("ATHENA_TEST_MONGO_URL")


@pytest.fixture(params=["sqlite", "mongo"])
def index(request, tmp_path) -> Iterator[LexicalIndex]:
    if request.param == "sqlite":
        adapter: LexicalIndex = SqliteLexical(tmp_path / "lexical.sqlite3")
    else:
        if not MONGO_URL:
            pytest.skip("ATHENA_TEST_MONGO_URL not set: no MongoDB server here, and SecantusDB has no text "
                        "indexes (test_the_mongo_adapter_refuses_a_server_without_text_indexes)")
        from athena_core.stores.lexical.mongo_lexical import MongoLexical

        adapter = MongoLexical.connect(MONGO_URL, f"athena_test_{uuid.uuid4().hex[:8]}")
    yield adapter
    if request.param == "mongo":
        adapter.docs.database.client.drop_database(adapter.docs.database.name)
    adapter.close()


def _scope(tenant: str | None = None, user: str = "u1") -> UserScope:
    return UserScope(tenant_id=tenant or f"t-{uuid.uuid4().hex[:8]}", user_id=user)


DOCS = [
    LexicalDoc("e1", "event", "My new manager Ottoline wants the budget spreadsheet by Friday."),
    LexicalDoc("e2", "event", "We went hiking in the Dolomites last summer."),
    LexicalDoc("e3", "event", "The budget for the kitchen renovation is tight."),
    LexicalDoc("c1", "chain", "Planning the quarterly budget with the new manager."),
]


def test_a_rare_name_ranks_its_event_first_and_kinds_are_kept_apart(index: LexicalIndex) -> None:
    scope = _scope()
    index.upsert(scope, DOCS)
    assert index.search(scope, search_terms("What did Ottoline want?"), "event", 10)[0] == "e1"
    assert set(index.search(scope, search_terms("budget"), "event", 10)) == {"e1", "e3"}
    assert index.search(scope, search_terms("budget"), "chain", 10) == ["c1"]
    assert index.search(scope, search_terms("hikes"), "event", 10) == ["e2"]  # stemming: hikes ~ hiking
    assert index.search(scope, search_terms("the and of"), "event", 10) == []  # nothing but stop words
    assert index.search(scope, search_terms("budget"), "event", 1) in (["e1"], ["e3"])
    assert index.count(scope) == 4


def test_upsert_replaces_and_is_idempotent(index: LexicalIndex) -> None:
    scope = _scope()
    index.upsert(scope, DOCS)
    index.upsert(scope, DOCS)
    index.upsert(scope, [LexicalDoc("e2", "event", "A quiet weekend reading at home.")])
    assert index.count(scope) == 4
    assert index.search(scope, search_terms("hiking"), "event", 10) == []
    assert index.search(scope, search_terms("reading weekend"), "event", 10) == ["e2"]


def test_tenants_and_users_are_walled_off(index: LexicalIndex) -> None:
    mine, same_user_other_tenant, other_user = _scope(), _scope(user="u1"), None
    other_user = UserScope(tenant_id=mine.tenant_id, user_id="u2")
    index.upsert(mine, DOCS)
    index.upsert(same_user_other_tenant, [LexicalDoc("x1", "event", "Ottoline again, in another tenant")])
    assert index.search(mine, search_terms("Ottoline"), "event", 10) == ["e1"]
    assert index.search(same_user_other_tenant, search_terms("Ottoline"), "event", 10) == ["x1"]
    assert index.search(other_user, search_terms("Ottoline"), "event", 10) == []


def test_delete_and_delete_user(index: LexicalIndex) -> None:
    scope, other = _scope(), _scope()
    index.upsert(scope, DOCS)
    index.upsert(other, DOCS)
    assert index.delete(scope, "event", ["e1", "missing"]) == 1
    assert index.search(scope, search_terms("Ottoline"), "event", 10) == []
    assert index.delete(scope, "chain", ["e3"]) == 0  # kind matters
    assert index.delete_user(scope) == 3
    assert index.count(scope) == 0 and index.count(other) == 4
    assert index.search(other, search_terms("Ottoline"), "event", 10) == ["e1"]


def test_queries_with_fts_syntax_characters_are_plain_words(index: LexicalIndex) -> None:
    scope = _scope()
    index.upsert(scope, DOCS)
    assert index.search(scope, search_terms('budget" OR scope : * NEAR('), "event", 10)
    assert index.search(scope, search_terms(""), "event", 10) == []
    # terms reach the engine as plain words, whatever characters a caller left in them
    assert index.search(scope, ['budget"', "OR", "scope", ":", "*", "NEAR("], "event", 10)
    assert index.search(scope, [], "event", 10) == []


def test_search_takes_terms_not_a_query(index: LexicalIndex) -> None:
    scope = _scope()
    index.upsert(scope, DOCS)
    assert index.search(scope, ["ottoline", "budget"], "event", 10)[0] == "e1"
    with pytest.raises(TypeError):
        index.search(scope, "Ottoline", "event", 10)  # a query string: the caller reduces it to terms


def test_words_in_too_many_texts_are_dropped_unless_all_are_common(tmp_path) -> None:
    index = SqliteLexical(tmp_path / "df.sqlite3", max_df=3)
    scope = _scope()
    index.upsert(scope, [LexicalDoc(f"c{i}", "event", f"common filler words number {i}") for i in range(10)] +
                 [LexicalDoc("r1", "event", "common words and the rare zeppelin")])
    # "common" is in 11 texts (> 3): only "zeppelin" decides, so the filler texts do not come back
    assert index.search(scope, search_terms("common zeppelin"), "event", 20) == ["r1"]
    # every term common: the two rarest stay and still find texts
    assert len(index.search(scope, search_terms("common filler"), "event", 20)) == 11
    unlimited = SqliteLexical(tmp_path / "df.sqlite3", max_df=0)
    assert len(unlimited.search(scope, search_terms("common zeppelin"), "event", 20)) == 11


def test_document_frequencies_are_reused_for_a_while_per_scope_and_dropped_by_a_purge(tmp_path) -> None:
    path = tmp_path / "df.sqlite3"
    cached, fresh = SqliteLexical(path, max_df=3, df_cache_s=3600.0), SqliteLexical(path, max_df=3, df_cache_s=0.0)
    scope, other = _scope(), _scope()
    for s in (scope, other):
        s_docs = [LexicalDoc(f"c{i}", "event", f"common filler {i}") for i in range(2)]
        cached.upsert(s, [*s_docs, LexicalDoc("r1", "event", "common and the rare zeppelin")])
    query = search_terms("common zeppelin")
    assert len(cached.search(scope, query, "event", 20)) == 3  # "common" is in 3 texts: not too common
    cached.upsert(scope, [LexicalDoc(f"m{i}", "event", f"common more {i}") for i in range(10)])
    # counted 3 a moment ago, so "common" still counts; a recount (no cache) drops it (13 > max_df)
    assert len(cached.search(scope, query, "event", 20)) == 13
    assert fresh.search(scope, query, "event", 20) == ["r1"]
    # the other user's count is its own
    cached.upsert(other, [LexicalDoc(f"m{i}", "event", f"common more {i}") for i in range(10)])
    assert cached.search(other, query, "event", 20) == ["r1"]
    cached.delete_user(scope)  # a purge forgets the user's counts with its texts
    cached.upsert(scope, [LexicalDoc(f"n{i}", "event", f"common again {i}") for i in range(5)] +
                  [LexicalDoc("r2", "event", "common zeppelin")])
    assert cached.search(scope, query, "event", 20) == ["r2"]


def test_the_mongo_adapter_refuses_a_server_without_text_indexes(mongo_wire) -> None:
    """On SecantusDB the text index cannot be built: a clear error at start naming the setting, never
    an adapter that silently finds nothing."""
    url, engine = mongo_wire
    if engine != "secantusdb":
        pytest.skip("ATHENA_TEST_MONGO_URL names a server of its own; the suite above covers it")
    from athena_core.stores.lexical.mongo_lexical import MongoLexical, TextIndexUnsupported

    with pytest.raises(TextIndexUnsupported, match="ATHENA_LEXICAL_STORE=sqlite"):
        MongoLexical.connect(url, f"athena_test_{uuid.uuid4().hex[:8]}")


def test_the_runtime_keeps_lexical_in_sqlite_when_told(tmp_path, mongo_wire_url) -> None:
    from athena_core.wiring.runtime import build_lexical
    from athena_core.wiring.settings import Settings

    settings = Settings(data_dir=tmp_path, document_store="mongo", mongo_url=mongo_wire_url, lexical_store="sqlite")
    index = build_lexical(settings)
    try:
        assert isinstance(index, SqliteLexical)
        scope = _scope()
        index.upsert(scope, DOCS)
        assert index.search(scope, search_terms("Ottoline"), "event", 10) == ["e1"]
    finally:
        index.close()


def test_an_index_of_the_layout_before_is_moved_on_open_and_searches_alike(tmp_path) -> None:
    """Before the scope prefixes a scope column was ANDed into each query: such a file's rows are moved
    into the prefixed table when the adapter opens it, and every doc is found as before, in its scope only."""
    import hashlib
    import sqlite3

    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE lexical_docs (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, "
        "kind TEXT NOT NULL, doc_id TEXT NOT NULL, UNIQUE (tenant_id, user_id, kind, doc_id));"
        "CREATE VIRTUAL TABLE lexical_fts USING fts5(body, scope, tokenize = 'porter unicode61');")
    scope, other = _scope(), _scope()
    for n, (owner, doc) in enumerate([(scope, d) for d in DOCS] + [(other, LexicalDoc("x1", "event", "Ottoline"))]):
        token = "s" + hashlib.sha1(f"{owner.tenant_id}\x00{owner.user_id}\x00{doc.kind}".encode()).hexdigest()[:24]
        conn.execute("INSERT INTO lexical_docs VALUES (?, ?, ?, ?, ?)", (n + 1, owner.tenant_id, owner.user_id,
                                                                       doc.kind, doc.doc_id))
        conn.execute("INSERT INTO lexical_fts (rowid, body, scope) VALUES (?, ?, ?)", (n + 1, doc.body, token))
    conn.commit()
    conn.close()

    index = SqliteLexical(path)
    assert index.search(scope, search_terms("What did Ottoline want?"), "event", 10) == ["e1"]
    assert index.search(scope, search_terms("hikes"), "event", 10) == ["e2"]
    assert index.search(scope, search_terms("budget"), "chain", 10) == ["c1"]
    assert index.search(other, search_terms("Ottoline"), "event", 10) == ["x1"]
    tables = {r[0] for r in index._conn().execute("SELECT name FROM sqlite_master")}
    assert "lexical_fts" not in tables
    index.upsert(scope, [LexicalDoc("e4", "event", "Ottoline again")])  # and it takes new docs as usual
    assert set(index.search(scope, search_terms("Ottoline"), "event", 10)) == {"e1", "e4"}
    SqliteLexical(path).close()  # a second open finds nothing left to move


def test_an_index_with_per_row_token_counts_is_indexed_again_on_open(tmp_path) -> None:
    """The layout before this one (`lexical_scoped_fts`, FTS5's default columnsize) is rebuilt from
    `lexical_docs` into the table without token counts; searches and deletes work as before."""
    import sqlite3

    from athena_core.stores.lexical.sqlite_lexical import SIZED_TABLE, _indexed

    path = tmp_path / "sized.sqlite3"
    index = SqliteLexical(path)
    scope, other = _scope(), _scope()
    index.upsert(scope, DOCS)
    index.upsert(other, [LexicalDoc("x1", "event", "Ottoline")])
    index.close()
    conn = sqlite3.connect(path)  # turn the file into the layout before: the same rows, the sized table
    conn.execute("DROP TABLE lexical_terms_fts")
    conn.execute(f"CREATE VIRTUAL TABLE {SIZED_TABLE} USING fts5(body, content = '', tokenize = 'porter unicode61')")
    rows = conn.execute("SELECT id, body, tenant_id, user_id, kind FROM lexical_docs").fetchall()
    conn.executemany(f"INSERT INTO {SIZED_TABLE} (rowid, body) VALUES (?, ?)", map(_indexed, rows))
    conn.commit()
    conn.close()

    index = SqliteLexical(path)
    tables = {r[0] for r in index._conn().execute("SELECT name FROM sqlite_master")}
    assert SIZED_TABLE not in tables and "lexical_terms_fts" in tables
    assert index.search(scope, search_terms("What did Ottoline want?"), "event", 10) == ["e1"]
    assert index.search(other, search_terms("Ottoline"), "event", 10) == ["x1"]
    assert index.delete(scope, "event", ["e1"]) == 1
    assert index.search(scope, search_terms("Ottoline"), "event", 10) == []
    index._conn().execute("INSERT INTO lexical_terms_fts (lexical_terms_fts) VALUES ('integrity-check')")
    SqliteLexical(path).close()  # a second open finds nothing left to move


def test_a_word_that_spells_another_scopes_prefix_finds_nothing_of_that_scope(tmp_path) -> None:
    """Words are stored glued to their scope's prefix: a tenant that writes (or asks for) another scope's
    prefix followed by a word still reads only its own docs."""
    from athena_core.stores.lexical.sqlite_lexical import scope_prefix

    index = SqliteLexical(tmp_path / "walls.sqlite3")
    victim, attacker = _scope(), _scope()
    index.upsert(victim, [LexicalDoc("v1", "event", "the vault code is zanzibar")])
    forged = scope_prefix(victim.tenant_id, victim.user_id, "event") + "zanzibar"
    index.upsert(attacker, [LexicalDoc("a1", "event", f"my note {forged}")])
    assert index.search(attacker, [forged], "event", 10) == ["a1"]  # its own doc, holding the forged word
    assert index.search(attacker, ["zanzibar"], "event", 10) == []
    assert index.search(victim, [forged], "event", 10) == []  # nor does the victim see the attacker's
    assert index.search(victim, ["zanzibar"], "event", 10) == ["v1"]


def test_bm25_weighs_a_word_by_how_rare_it_is_among_the_users_own_texts(tmp_path) -> None:
    """A word common in another tenant's texts is still rare in this user's: document frequencies are the
    scope's own, so another tenant's data does not change this user's ranking."""
    index = SqliteLexical(tmp_path / "idf.sqlite3", max_df=0)
    scope, other = _scope(), _scope()
    index.upsert(scope, [LexicalDoc("k", "event", "kayak trip"), LexicalDoc("p", "event", "pottery class")] +
                 [LexicalDoc(f"f{i}", "event", f"pottery notes {i}") for i in range(6)])
    alone = index.search(scope, ["kayak", "pottery"], "event", 10)
    index.upsert(other, [LexicalDoc(f"o{i}", "event", "kayak kayak kayak") for i in range(200)])
    assert index.search(scope, ["kayak", "pottery"], "event", 10) == alone
    assert alone[0] == "k"  # the user's rare word ranks its text first


def test_replaced_and_deleted_texts_leave_no_postings_behind(tmp_path) -> None:
    """The FTS5 table is contentless: a row is removed by handing FTS5 the text it indexed. Were that text
    wrong, the old postings would stay (found by a raw MATCH, counted as document frequencies) even though
    the join to `lexical_docs` hides them from results; so count them in the FTS5 table itself."""
    from athena_core.stores.lexical.sqlite_lexical import scope_prefix

    index = SqliteLexical(tmp_path / "postings.sqlite3")
    scope = _scope()
    index.upsert(scope, [LexicalDoc(f"d{i}", "event", f"Zeppelin trip number {i}") for i in range(5)])
    index.upsert(scope, [LexicalDoc("d0", "event", "Kayak trip instead"), LexicalDoc("d1", "event", "Kayak too")])
    index.upsert(scope, [LexicalDoc("d1", "event", "Kayak too")])  # the same text again: no change
    index.delete(scope, "event", ["d2"])
    prefix = scope_prefix(scope.tenant_id, scope.user_id, "event")
    conn = index._conn()

    def postings(word: str) -> int:
        return conn.execute("SELECT count(*) FROM lexical_terms_fts WHERE lexical_terms_fts MATCH ?",
                            (f'"{prefix}{word}"',)).fetchone()[0]

    assert postings("zeppelin") == 2 and postings("kayak") == 2 and postings("trip") == 3
    conn.execute("INSERT INTO lexical_terms_fts (lexical_terms_fts) VALUES ('integrity-check')")
    index.delete_user(scope)
    assert postings("zeppelin") == 0 and postings("kayak") == 0 and postings("trip") == 0
