"""`_set_config_key`: the harness's Milvus server settings (Bounded staleness; the bench's session lease TTL) are
written into the resolved milvus.yaml, and a template that does not hold the key exactly once is refused
rather than silently left at its default."""
from __future__ import annotations

from pathlib import Path

import pytest

from athena_devtools.engine_servers import EngineStartError, _set_config_key

TEMPLATE = """common:
  gracefulTime: 5000 # milliseconds
  session:
    ttl: 30 # ttl value when session granting a lease to register service
    retryTimes: 30
"""


def test_each_key_is_set_and_the_rest_kept(tmp_path: Path) -> None:
    config = tmp_path / "milvus.yaml"
    config.write_text(TEMPLATE)
    _set_config_key(config, "gracefulTime", 1000)
    _set_config_key(config, "ttl", 300)
    assert config.read_text() == TEMPLATE.replace("5000", "1000").replace("ttl: 30", "ttl: 300")


@pytest.mark.parametrize("text", [TEMPLATE.replace("    ttl: 30", "    lease: 30"), TEMPLATE + "  other:\n    ttl: 9\n"])
def test_a_key_missing_or_found_twice_is_refused(tmp_path: Path, text: str) -> None:
    config = tmp_path / "milvus.yaml"
    config.write_text(text)
    with pytest.raises(EngineStartError, match="ttl"):
        _set_config_key(config, "ttl", 300)
    assert config.read_text() == text
