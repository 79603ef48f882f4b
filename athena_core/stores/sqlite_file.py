"""One SQLite file as every SQLite adapter opens it (documents, vectors, graph).

A connection per thread (FastAPI runs sync routes in a thread pool) and per process (a Celery prefork
child must not reuse the connection it inherited), WAL so readers never block the writer, a busy
timeout so concurrent writers queue, and writes in BEGIN IMMEDIATE so they queue at the start instead
of failing on a lock upgrade half-way.
"""
from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class SqliteFile:
    def __init__(self, path: Path | str, synchronous: str = "NORMAL") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.synchronous = synchronous
        self._local = threading.local()

    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
            self._local.pid = os.getpid()
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        conn = self.conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction for several statements that must agree."""
        conn = self.conn()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def ping(self) -> None:
        self.conn().execute("SELECT 1").fetchone()

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            conn.close()
        self._local.conn = None


class SqliteAdapter:
    """Base of the SQLite adapters: one `SqliteFile`, its schema created on open."""

    schema: str = ""

    def __init__(self, path: Path | str, synchronous: str = "NORMAL") -> None:
        self._db = SqliteFile(path, synchronous)
        self._conn = self._db.conn
        self._write = self._db.write
        self._conn().executescript(self.schema)

    def ping(self) -> None:
        self._db.ping()

    def close(self) -> None:
        self._db.close()
