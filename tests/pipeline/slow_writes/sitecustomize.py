"""Test-only fault shim, put on PYTHONPATH of a stack's processes by tests/pipeline/test_purge.py.

With ATHENA_TEST_SLOW_WRITES_S set, chain formation and indexing sleep that long after reading the
user's events and before writing anything: every run is "in flight" for a wide, known window, so a purge
sent meanwhile reliably races it (as a slow LLM would make it in production).
"""
import os

_delay = float(os.environ.get("ATHENA_TEST_SLOW_WRITES_S") or 0)
if _delay > 0:
    import functools
    import time

    from athena_core.mtm.chain_formation import ChainFormer
    from athena_core.retrieval.evidence_index import EvidenceIndex

    def _slowed(method):
        @functools.wraps(method)
        def wrapper(*args, **kwargs):
            time.sleep(_delay)
            return method(*args, **kwargs)
        return wrapper

    ChainFormer.form = _slowed(ChainFormer.form)
    EvidenceIndex.index = _slowed(EvidenceIndex.index)
