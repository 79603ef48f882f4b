"""The reads benchmark's wrk readers send each of their bodies in turn, across both wrk threads.

Each wrk thread runs its own Lua state, so the script cannot count threads from `setup`: it did, read zero,
and every thread sent its first body forever (two distinct queries per phase instead of hundreds).
"""
from __future__ import annotations

import json
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from http_load import start_wrk  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk (Debian package) is not installed")


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


def test_readers_send_every_body_across_threads(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        bodies = [{"query": f"question {i}"} for i in range(12)]
        run = start_wrk(shutil.which("wrk"), f"http://127.0.0.1:{server.server_port}", "/search", connections=4,
                        duration_s=1.0, out_dir=tmp_path, name="readers", bodies=bodies, pause_ms=5)
        result = run.result()
    finally:
        server.shutdown()
    assert result["status_2xx"] >= 24
    assert set(Recorder.seen) == {b["query"] for b in bodies}
