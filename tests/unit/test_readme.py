"""The README's configuration table names every setting, and only real ones (keep the README true)."""
from __future__ import annotations

import re
from pathlib import Path

from athena_core.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_setting_is_documented_in_the_readme() -> None:
    documented = set(re.findall(r"ATHENA_[A-Z0-9_]+", README.read_text())) - {
        "ATHENA_TEST_MONGO_URL", "ATHENA_TEST_ARANGO_URL", "ATHENA_TEST_MILVUS_URI", "ATHENA_TEST_REDIS_URL"}
    settings = {f"ATHENA_{name.upper()}" for name in Settings.model_fields}
    assert settings - documented == set(), "settings missing from the README"
    assert documented - settings == set(), "README names settings that do not exist"


def test_readme_names_the_two_commands() -> None:
    text = README.read_text()
    assert "make demo" in text and "make test" in text
    assert "make test" in (README.parent / ".ci" / "run").read_text()
