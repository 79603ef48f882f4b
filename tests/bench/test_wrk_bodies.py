"""The reads benchmark's wrk readers send each of their bodies in turn, across both wrk threads.

Each wrk thread runs its own Lua state, so the script cannot count threads from `setup`: it did, read zero,
and every thread sent its first body forever (two distinct queries per phase instead of hundreds).
"""
from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from http_load import ensure_wrk, start_wrk  # noqa: E402


@pytest.fixture(scope="module")
def wrk() -> str:
    """The wrk binary, installed as the benchmarks install it (apt-get, when root): a skip mark read at
    collection skipped these tests on a fresh machine although `make bench-quick`, run earlier in the
    same suite, installs wrk."""
    try:
        return ensure_wrk()
    except SystemExit as exc:
        pytest.skip(str(exc))


class Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.lock:
            self.seen.append(json.loads(body)["query"])
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"[]")

    def log_message(self, *args) -> None:
        pass


def test_readers_send_every_body_across_threads(tmp_path: Path, wrk: str) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        bodies = [{"query": f"question {i}"} for i in range(12)]
        run = start_wrk(wrk, f"http://127.0.0.1:{server.server_port}", "/search", connections=4,
                        duration_s=1.0, out_dir=tmp_path, name="readers", bodies=bodies)
        result = run.result()
    finally:
        server.shutdown()
    assert result["status_2xx"] >= 24
    assert set(Recorder.seen) == {b["query"] for b in bodies}


class SlowRecorder(BaseHTTPRequestHandler):
    """Answers after 50 ms and notes when each request arrived."""
    arrived: list[float] = []
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        with self.lock:
            self.arrived.append(time.monotonic())
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        time.sleep(0.05)
        try:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"[]")
        except BrokenPipeError:  # wrk closes its connections when its time is up
            pass

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize("arrivals", ["poisson", "even"])
def test_scheduled_requests_keep_their_rate_whatever_the_latency(tmp_path: Path, arrivals: str, wrk: str) -> None:
    """The old pacing paused after each answer, so the rate depended on the latency (the reads bench's
    "500 events/s" ingest reached 310-400) and readers started together stayed in step (bursts of 8
    searches). On a schedule, 40/s holds with 50 ms answers; without one, 8 connections make 160/s."""
    SlowRecorder.arrived = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowRecorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        run = start_wrk(wrk, f"http://127.0.0.1:{server.server_port}", "/search", connections=8,
                        duration_s=3.0, out_dir=tmp_path, name="paced", bodies=[{"query": "q"}],
                        rate_per_s=40.0, arrivals=arrivals)
        result = run.result()
    finally:
        server.shutdown()
    assert 60 <= result["status_2xx"] <= 180  # 120 expected in 3 s; 480 with no schedule and no pause


def test_start_wrk_refuses_an_unknown_arrival_law(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="arrivals"):
        start_wrk("wrk", "http://127.0.0.1:9", "/", connections=1, duration_s=1.0, out_dir=tmp_path, name="x",
                  rate_per_s=1.0, arrivals="bursty")
