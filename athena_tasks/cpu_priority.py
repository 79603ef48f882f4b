"""Celery workers yield the CPU to the API (`ATHENA_WORKER_NICE`, issue 16).

Indexing, consolidation and promotion are background work that may fall behind for a while; the API's
answers (durable writes, searches) may not. On one machine (the embedded default) the scheduler shares
the cores between them, so a worker embedding a backlog took a core from the readers. A worker started
by the `celery worker` command lowers its own priority before its pool forks, so every child and thread
inherits it.

Linux puts each session in its own scheduling group ("autogroup") and shares the cores between groups
before it looks at niceness inside them. `athena run` starts each process in a session of its own, so
the worker also lowers its group, when the session is its own (never a terminal's shared one).
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from celery.signals import celeryd_init

from athena_core.wiring.settings import get_settings

log = logging.getLogger(__name__)

AUTOGROUP = Path("/proc/self/autogroup")


def lower_cpu_priority(nice: int, autogroup: Path = AUTOGROUP) -> int:
    """Raise this process's niceness to `nice` (never lower it: that needs privileges) and, when it leads
    its own session, its autogroup's too. Returns the niceness now in force."""
    current = os.getpriority(os.PRIO_PROCESS, 0)
    target = max(current, min(19, nice))
    if target != current:
        os.setpriority(os.PRIO_PROCESS, 0, target)  # this thread; threads and processes it starts inherit it
    if target > 0 and os.getsid(0) == os.getpid() and autogroup.exists():
        try:
            autogroup.write_text(str(target))
        except OSError as exc:  # a kernel or sandbox that refuses: the threads' niceness still holds
            log.warning("could not lower the worker's scheduling group to nice %s: %s", target, exc)
    return target


@celeryd_init.connect
def _lower_worker_priority(**_: object) -> None:
    nice = get_settings().worker_nice
    if nice > 0:
        log.info("worker CPU niceness %s (ATHENA_WORKER_NICE)", lower_cpu_priority(nice))
