"""`lower_cpu_priority` (ATHENA_WORKER_NICE): raises a worker's niceness and, only when the worker leads
its own session, its scheduling group's. Each case runs in a child process, never in pytest's own."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

AUTOGROUP = Path("/proc/self/autogroup")  # empty in the root group (e.g. under a container's init session)

CHILD = """
import os, sys
from pathlib import Path
from athena_tasks.cpu_priority import lower_cpu_priority
start = int(sys.argv[2])
if start:
    os.nice(start)
got = lower_cpu_priority(int(sys.argv[1]))
group = Path("/proc/self/autogroup")
print(got, os.getpriority(os.PRIO_PROCESS, 0), (group.read_text().split() or ["root"])[-1] if group.exists() else "none")
"""


def _run(nice: int, start: int = 0, own_session: bool = True) -> tuple[int, int, str]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(nice), str(start)], capture_output=True, text=True,
                         check=True, start_new_session=own_session).stdout.split()
    return int(out[0]), int(out[1]), out[2]


def test_a_session_leader_lowers_itself_and_its_group() -> None:
    got, nice, group = _run(10)
    assert (got, nice) == (10, 10)
    if AUTOGROUP.exists():
        assert group == "10"


def test_it_never_raises_a_priority_and_caps_at_19() -> None:
    assert _run(5, start=12)[:2] == (12, 12)  # already lower: left as it is (raising it needs privileges)
    assert _run(40)[:2] == (19, 19)


@pytest.mark.skipif(not AUTOGROUP.exists(), reason="kernel without autogroup scheduling")
def test_a_worker_in_a_shared_session_leaves_the_group_alone() -> None:
    """Started from a terminal, the session is the terminal's: its group holds the shell and everything
    else started there, so only the worker's own threads are lowered."""
    before = (AUTOGROUP.read_text().split() or ["root"])[-1]
    got, nice, group = _run(10, own_session=False)
    assert (got, nice) == (10, 10)
    assert group == before
