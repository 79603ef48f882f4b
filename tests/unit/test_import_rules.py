"""The dependency rule (issue 13, docs/architecture.md): `lint-imports` checks the contracts in
`.importlinter` (layers, forbidden imports, independence, no cycles) and must pass."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint_imports), "--config", str(REPO_ROOT / ".importlinter"), "--no-cache"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
