"""Reads in one SQLite step (`athena_core/stores/sqlite_one_step.py`): the same values as a row-by-row read,
exact floats, any text. What the one step saves beside a busy thread is measured in
`bench/sqlite_one_step.py`, not here."""
from __future__ import annotations

import json
import random
import sqlite3

import pytest

from athena_core.stores.sqlite_one_step import (
    exact_real, json_documents_in_one_step, rows_in_one_step, values_in_one_step,
)


@pytest.fixture
def conn() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY, at REAL, body TEXT, n INTEGER, doc TEXT)")
    return conn


def test_rows_match_a_row_by_row_read_with_exact_floats_and_any_text(conn) -> None:
    rng = random.Random(3)
    texts = ["plain", "nul \x00 inside", 'quote " and \\ backslash', "line\nbreak\ttab", "é ☃ 😀 \u2028", ""]
    rows = [(f"r{i}", rng.uniform(1e9, 2e9) if i % 5 else None, texts[i % len(texts)], i - 3, "{}")
            for i in range(200)]
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    got = rows_in_one_step(conn, "SELECT id, at, body, n FROM t WHERE n >= ?", (0,),
                           ["id", exact_real("at"), "body", "n"])
    as_read = {r[0]: (None if r[1] is None else float(r[1]), r[2], r[3]) for r in got}
    expected = {r[0]: (r[1], r[2], r[3]) for r in rows if r[3] >= 0}
    assert as_read == expected  # every float back bit for bit (json_array alone keeps 15 digits)
    assert rows_in_one_step(conn, "SELECT id FROM t WHERE n > 10000", (), ["id"]) == []


def test_values_and_documents(conn) -> None:
    conn.executemany("INSERT INTO t VALUES (?, 0, '', ?, ?)",
                     [(f"d{i}", i, f'{{"id": "d{i}", "text": "x\\u0000y {i}"}}') for i in range(5)])
    assert sorted(values_in_one_step(conn, "SELECT id AS v FROM t WHERE n < ?", (3,), "v")) == ["d0", "d1", "d2"]
    docs = json.loads(json_documents_in_one_step(conn, "SELECT doc FROM t WHERE n >= ?", (3,), "doc"))
    assert sorted(d["id"] for d in docs) == ["d3", "d4"] and docs[0]["text"].startswith("x\x00y")
    assert json_documents_in_one_step(conn, "SELECT doc FROM t WHERE n > 99", (), "doc") == "[]"
