"""Small helpers shared by the benchmarks under `bench/` (SPEC S9).

Every benchmark prints one JSON line per configuration to stdout and appends the same records to
`bench/results/<name>-<UTC timestamp>.json` (a JSON array). Figures that matter are ratios against a
baseline measured in the same run, because machines are noisy.
"""
from __future__ import annotations

import json
import math
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

from athena_devtools.engine_servers import free_port

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"


def machine_info() -> dict:
    """What the figures were measured on: enough to tell two result files apart."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(terse=True),
    }


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of an already sorted list; NaN when empty."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def utc_stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def emit(record: dict) -> None:
    """One JSON line on stdout, flushed so a long run shows progress."""
    print(json.dumps(record, sort_keys=False), flush=True)


def save_results(name: str, records: list[dict], stamp: str | None = None) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}-{stamp or utc_stamp()}.json"
    path.write_text(json.dumps(records, indent=2) + "\n")
    return path


def log(message: str) -> None:
    """Progress goes to stderr so stdout stays pure JSON lines."""
    print(message, file=sys.stderr, flush=True)


def process_tree(pid: int) -> list:
    """A process and its live descendants (uvicorn workers, a Celery worker's pool); [] once it is gone."""
    import psutil

    try:
        proc = psutil.Process(pid)
        return [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return []


def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its live descendants (0.0 once it is gone)."""
    import psutil

    total = 0.0
    for proc in process_tree(pid):
        try:
            times = proc.cpu_times()
        except psutil.Error:  # a child that exited meanwhile
            continue
        total += times.user + times.system
    return total
