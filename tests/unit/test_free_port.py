"""`free_port`: the OS may hand the same loopback port to two binds in a row once the first socket is
closed; the harness configures a Milvus server with nine ports drawn one after another, and in CI two came
out equal (its management HTTP server took the gRPC port). A port is never handed out twice."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from athena_devtools import engine_servers


class RepeatingOsSocket:
    """Stands in for the OS's port choice, which cannot be made to repeat on demand: each bind takes the
    next of `ports`, which the test sets."""

    ports: Iterator[int] = iter(())

    def __init__(self, *args: object) -> None:
        self.port = 0

    def __enter__(self) -> "RepeatingOsSocket":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def bind(self, address: tuple[str, int]) -> None:
        self.port = next(self.ports)

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)


def test_a_port_the_os_repeats_is_not_handed_out_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_servers, "_HANDED_OUT", set())
    monkeypatch.setattr(RepeatingOsSocket, "ports", iter([47001, 47001, 47002]))
    monkeypatch.setattr(engine_servers.socket, "socket", RepeatingOsSocket)
    assert [engine_servers.free_port(), engine_servers.free_port()] == [47001, 47002]


def test_real_ports_are_distinct_and_bindable() -> None:
    import socket

    ports = [engine_servers.free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports[-1]))
