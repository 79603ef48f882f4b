"""One SQLite file as every SQLite adapter opens it (documents, vectors, graph).

A connection per thread (FastAPI runs sync routes in a thread pool) and per process (a Celery prefork
child must not reuse the connection it inherited), WAL so readers never block the writer, a busy
timeout so concurrent writers queue, and writes in BEGIN IMMEDIATE so they queue at the start instead
of failing on a lock upgrade half-way. `secure_delete` on every connection zeroes what a delete or an
update frees; `scrub` (purge, SPEC S7.4) also wipes the stale cell copies B-tree rebalancing leaves in
live pages (VACUUM) and empties the WAL (checkpoint TRUNCATE), so nothing deleted stays on disk.
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_MS = 30000
CHECKPOINT_ATTEMPT_MS = 200  # one checkpoint attempt waits this long for readers and writers


class SqliteFile:
    def __init__(self, path: Path | str, synchronous: str = "NORMAL") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.synchronous = synchronous
        self._local = threading.local()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={self.synchronous}")
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA secure_delete=ON")
        return conn

    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():
            conn = self._connect()
            self._local.conn = conn
            self._local.pid = os.getpid()
        return conn

    @contextmanager
    def _maintenance(self) -> Iterator[sqlite3.Connection]:
        """A connection of its own for VACUUM and checkpoints: the thread's connection may still have a
        statement open (an unfinished cursor), which makes VACUUM fail. `:memory:` has only the one."""
        if self.path == ":memory:":
            yield self.conn()
            return
        conn = self._connect()
        try:
            yield conn
        finally:
            conn.close()

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

    def checkpoint(self, wait_s: float) -> bool:
        """Copy the WAL into the database and truncate it to zero bytes. A checkpoint that finds a reader
        on an older snapshot (or a writer) cannot truncate: retried for `wait_s`; False if it never could."""
        with self._maintenance() as conn:
            return self._checkpoint(conn, wait_s)

    @staticmethod
    def _checkpoint(conn: sqlite3.Connection, wait_s: float) -> bool:
        deadline = time.monotonic() + wait_s
        conn.execute(f"PRAGMA busy_timeout={CHECKPOINT_ATTEMPT_MS}")
        try:
            while True:
                try:
                    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                    busy = 1
                if not busy:
                    return True
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.05)
        finally:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def scrub(self, *, vacuum: bool, wait_s: float) -> str:
        """After a purge: VACUUM (rebuilds every page, so no stale copy of a deleted row survives in the
        free space of a live page) and an emptied WAL. Returns what was done, e.g. "vacuumed, checkpointed"
        or "checkpoint busy" (a reader held an old snapshot for `wait_s`: the WAL still holds old pages)."""
        done = []
        with self._maintenance() as conn:
            if vacuum and self.path != ":memory:":
                conn.execute("VACUUM")
                done.append("vacuumed")
            done.append("checkpointed" if self._checkpoint(conn, wait_s) else "checkpoint busy")
        return ", ".join(done)

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

    def scrub(self, *, vacuum: bool, wait_s: float) -> str:
        return self._db.scrub(vacuum=vacuum, wait_s=wait_s)

    def close(self) -> None:
        self._db.close()
