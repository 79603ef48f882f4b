"""Rows in one SQLite step, for the reads a search makes while the API is also busy with other work.

Python's sqlite3 module lets go of the GIL around every `sqlite3_step`, once per row, and must get it
back to build the row. When another thread of the process keeps the GIL busy (the event loop taking
in events, another search), each of those get-backs can wait up to that thread's switch interval.
Reading 190 chain rows one step per row took 6 ms alone and about 1 s beside one busy thread
(docs/retrieval.md, "tenth round"). A query that returns its rows as one JSON array is one step: the GIL
is released once for the whole query, and `json.loads` parses the rows in one C call.
"""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence


def exact_real(column: str) -> str:
    """A REAL column as text that reads back as the same float: `json_array` keeps only 15 significant
    digits, and an epoch timestamp with microseconds needs 16 or 17. NULL stays NULL."""
    return f"iif({column} IS NULL, NULL, printf('%!.17g', {column}))"


def rows_in_one_step(conn: sqlite3.Connection, select: str, params: Sequence, columns: Sequence[str]) -> list[list]:
    """The rows of `select` as lists of `columns` (expressions over its result columns, e.g. `exact_real`),
    read in one step. Their order is SQLite's: a caller that needs one sorts them."""
    sql = f"SELECT json_group_array(json_array({', '.join(columns)})) FROM ({select})"
    return json.loads(conn.execute(sql, tuple(params)).fetchone()[0])


def values_in_one_step(conn: sqlite3.Connection, select: str, params: Sequence, column: str) -> list:
    """One result column of `select` (REAL values: wrap them in `exact_real`), read in one step."""
    sql = f"SELECT json_group_array({column}) FROM ({select})"
    return json.loads(conn.execute(sql, tuple(params)).fetchone()[0])


def json_documents_in_one_step(conn: sqlite3.Connection, select: str, params: Sequence, column: str) -> str:
    """The JSON documents in `column` of `select` (each an object) as one JSON array text, concatenated
    by SQLite without parsing them: for a validator that reads a whole list in one call."""
    sql = f"SELECT '[' || coalesce(group_concat({column}, ','), '') || ']' FROM ({select})"
    return conn.execute(sql, tuple(params)).fetchone()[0]
