"""Run every benchmark (SPEC S9) as a subprocess and collect their JSON lines into one run file.

    python bench/run_all.py            # full mode (long: the 100k/1M sizes)
    python bench/run_all.py --quick    # quick mode (CI smoke)
    python bench/run_all.py --only reads,pipeline --omp-threads 1

Writes `bench/results/run-<UTC timestamp>.json`: {"mode", "started_at", "finished_at", "seconds",
"machine" (cpu count, load averages before/after, python, platform, git commit), "benchmarks": [{"name",
"argv", "returncode", "seconds", "load_avg_before", "load_avg_after", "records": [...JSON lines...],
"stderr_tail"}]}. Then renders bench/results/README.md (bench/render_results.py) unless --no-render.

Exit status 1 only if a benchmark crashed (non-zero exit, timeout, or no JSON line at all), never
because of a number.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO_ROOT, RESULTS_DIR, log, utc_stamp  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
ORDER = ["ingest", "pipeline", "reads", "sqlite_one_step", "embedding_runtime", "vector_search", "document_store", "graph_upsert", "analytics"]
# Extra arguments per mode. Quick (a CI smoke test): ingest loads one configuration per route for 1 s (8 clients), on
# the embedded Redis only, and waits at most 1 s for the worker to drain (the drain waits alone took two of the
# three CI minutes of the quick run: 12 configurations x 10 s). The pipeline runs one configuration (2 worker
# processes) and reads seeds 1k and 2k chains, its concurrent phase at 2k only: a smoke test runs each code
# path once (each configuration or phase cost 17-35 s of CI; seeding 10k chains half of the reads' 64 s).
EXTRA_ARGS = {
    "quick": {"ingest": ["--drain-timeout", "1", "--concurrency", "8", "--embedded-only"],
              "pipeline": ["--workers", "2"], "reads": ["--sizes", "1000,2000", "--concurrent-sizes", "2000"]},
    "full": {},
}
OMP_AWARE = {"pipeline", "reads"}


def load_avg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def machine() -> dict:
    return {
        "cpu_count": os.cpu_count(),
        "load_avg": load_avg(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(terse=True),
        "git_commit": git_commit(),
        "omp_num_threads_env": os.environ.get("OMP_NUM_THREADS"),
    }


def parse_lines(text: str) -> list[dict]:
    records = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def run_one(name: str, mode: str, args: argparse.Namespace) -> dict:
    argv = [sys.executable, str(BENCH_DIR / f"{name}.py")]
    if mode == "quick":
        argv.append("--quick")
    argv += EXTRA_ARGS[mode].get(name, [])
    if args.omp_threads and name in OMP_AWARE:
        argv += ["--omp-threads", str(args.omp_threads)]
    log(f"[run_all] {name}: {' '.join(argv[1:])}  (load {load_avg()})")
    before = load_avg()
    started = time.perf_counter()
    timed_out = False
    try:
        proc = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=args.timeout)
        returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:  # subprocess.run kills the child
        timed_out = True
        returncode = None
        stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
    seconds = time.perf_counter() - started
    records = parse_lines(stdout)
    crashed = timed_out or returncode != 0 or not records
    log(f"[run_all] {name}: {'CRASHED' if crashed else 'ok'} in {seconds:.1f} s, {len(records)} records")
    if crashed:
        log("\n".join(stderr.splitlines()[-20:]))
    return {
        "name": name,
        "argv": argv[1:],
        "returncode": returncode,
        "timed_out": timed_out,
        "crashed": crashed,
        "seconds": round(seconds, 2),
        "load_avg_before": before,
        "load_avg_after": load_avg(),
        "records": records,
        "stderr_tail": "\n".join(stderr.splitlines()[-30:]),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="every benchmark in its --quick mode")
    p.add_argument("--only", default=None, help=f"comma-separated subset of {','.join(ORDER)}")
    p.add_argument("--timeout", type=float, default=None, help="seconds per benchmark (quick 600, full 7200)")
    p.add_argument("--omp-threads", type=int, default=None, help="passed to pipeline and reads")
    p.add_argument("--no-render", action="store_true", help="do not render bench/results/README.md")
    args = p.parse_args(argv)
    mode = "quick" if args.quick else "full"
    if args.timeout is None:
        args.timeout = 600.0 if args.quick else 7200.0
    names = ORDER if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in ORDER]
    if unknown:
        p.error(f"unknown benchmark(s): {', '.join(unknown)}")

    stamp = utc_stamp()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"run-{stamp}.json"
    run = {"mode": mode, "started_at": datetime.now(timezone.utc).isoformat(), "machine": machine(),
           "benchmarks": []}
    started = time.perf_counter()
    for name in names:
        run["benchmarks"].append(run_one(name, mode, args))
        run["seconds"] = round(time.perf_counter() - started, 2)
        path.write_text(json.dumps(run, indent=2) + "\n")  # partial results survive an interrupted run
    run["finished_at"] = datetime.now(timezone.utc).isoformat()
    run["seconds"] = round(time.perf_counter() - started, 2)
    run["machine"]["load_avg_after"] = load_avg()
    path.write_text(json.dumps(run, indent=2) + "\n")
    crashed = [b["name"] for b in run["benchmarks"] if b["crashed"]]
    log(f"[run_all] {mode} run in {run['seconds']:.1f} s -> {path.relative_to(REPO_ROOT)}"
        + (f"; CRASHED: {', '.join(crashed)}" if crashed else ""))
    if not args.no_render:
        rendered = subprocess.run([sys.executable, str(BENCH_DIR / "render_results.py"), str(path)], cwd=REPO_ROOT)
        if rendered.returncode != 0:
            log("[run_all] rendering failed (not a benchmark crash; the run file is complete)")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
