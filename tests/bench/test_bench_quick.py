"""`make bench-quick` as a CI smoke test: every benchmark runs to completion. It fails only when a
benchmark crashes (non-zero exit, timeout, no JSON line), never on a number (SPEC S9)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_quick_benchmark_completes() -> None:
    proc = subprocess.run(
        [sys.executable, "bench/run_all.py", "--quick", "--no-render"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
