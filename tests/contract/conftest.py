"""Real server engines for the contract suites (SPEC S0, issue 17), one per test session, started lazily.

- Milvus standalone 2.3.5 (the `milvus` wheel) on free ports and a fresh data directory, unless
  `ATHENA_TEST_MILVUS_URI` names a server to use instead.
- SecantusDB 0.7.0b3 (`secantusd-py`, a MongoDB-wire server; not MongoDB) on a free port and a fresh
  directory, unless `ATHENA_TEST_MONGO_URL` names a server (a real MongoDB, say) to use instead.

A server that cannot start makes the tests that need it fail with the reason (EngineStartError); they
never skip. Only tests that ask for a fixture start its server, so `-k sqlite` starts none.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from athena_devtools.engine_servers import MilvusServerProcess, SecantusServerProcess


@pytest.fixture(scope="session")
def milvus_server_uri() -> Iterator[str]:
    if os.environ.get("ATHENA_TEST_MILVUS_URI"):
        yield os.environ["ATHENA_TEST_MILVUS_URI"]
        return
    directory = Path(tempfile.mkdtemp(prefix="athena-milvus-server-"))
    server = MilvusServerProcess(directory)
    try:
        server.start()
        yield server.uri
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def mongo_wire() -> Iterator[tuple[str, str]]:
    """(url, engine name): the configured server, else a private SecantusDB."""
    if os.environ.get("ATHENA_TEST_MONGO_URL"):
        yield os.environ["ATHENA_TEST_MONGO_URL"], "configured"
        return
    directory = Path(tempfile.mkdtemp(prefix="athena-secantus-"))
    server = SecantusServerProcess(directory)
    try:
        server.start()
        yield server.url, "secantusdb"
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def mongo_wire_url(mongo_wire: tuple[str, str]) -> str:
    return mongo_wire[0]
