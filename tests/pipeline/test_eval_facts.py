"""`athena eval facts` at quick size (issue 14 item 6): a small seeded corpus through the real pipeline and
promotion, in a process of its own (the runner binds the tasks to its own runtime, which must not meet the
test session's worker); the report carries every metric per stamps and phrasing split, and on the tuning
phrasings the offline provider meets the issue's targets (deterministic: seeded corpus, offline provider)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil

from athena_eval.facts.generator import generate
from athena_eval.facts.runner import COLUMNS

USERS, SEED = 4, 14


def _servers_under(path: Path) -> list[str]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        if "redis-server" in line and str(path) in line:
            found.append(line)
    return found


def test_a_small_run_scores_both_stamps_and_meets_the_targets_on_tuning_phrasings(tmp_path: Path) -> None:
    default_dir = tmp_path / "default-data"  # where a server of the configured deployment would start
    env = {**os.environ, "ATHENA_DATA_DIR": str(default_dir)}
    env.pop("ATHENA_REDIS_URL", None)
    subprocess.run([sys.executable, "-m", "athena_devtools.cli", "eval", "facts", "--users", str(USERS),
                    "--seed", str(SEED), "--provider", "offline", "--fresh-share", "0", "--out", str(tmp_path)],
                   check=True, capture_output=True, timeout=600, env=env)
    # the run uses its own data dir and stops its embedded Redis; it never starts the deployment's one
    assert _servers_under(tmp_path) == []
    (report_path,) = tmp_path.glob("facts-*.json")
    report = json.loads(report_path.read_text())
    results = report["results"]["offline"]
    assert set(results) == {"live", "historical", "all"}
    users = generate(USERS, seed=SEED)
    for stamps in ("live", "historical"):
        tuning = results[stamps]["tuning"]
        assert set(COLUMNS) <= set(tuning)
        assert tuning["planted"] == sum(1 for u in users if u.stamps == stamps for f in u.facts if f.split == "tuning")
        assert tuning["precision"] >= 0.9 and tuning["recall"] >= 0.7 and tuning["decoy_leakage"] <= 0.05
        assert tuning["weight_accuracy"] >= 0.9
    assert "| offline | live | held_out |" in report["table_markdown"]
    assert (tmp_path / report_path.name.replace(".json", ".md")).exists()
