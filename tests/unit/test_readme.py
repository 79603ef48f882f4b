"""The README's configuration table names every setting, and only real ones (keep the README true)."""
from __future__ import annotations

import re
from pathlib import Path

from athena_core.wiring.settings import Settings

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


def _readme_defaults() -> dict[str, str]:
    """`ATHENA_X` → the default the README's configuration table states for it (one cell per name when a
    row lists several names and as many defaults, separated by " / ")."""
    stated: dict[str, str] = {}
    for line in README.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`ATHENA_"):
            continue
        names = re.findall(r"`(ATHENA_[A-Z0-9_]+)`", cells[0])
        defaults = [d.strip() for d in cells[1].split(" / ")]
        if len(defaults) != len(names):
            continue  # a prose default ("model calibration"): nothing to compare
        stated.update(zip(names, defaults))
    return stated


def _as_readme_value(value: object) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _same(stated: str, actual: object) -> bool:
    if stated in ("—", "unset"):
        return _as_readme_value(actual) is None
    match = re.match(r"`([^`]*)`", stated)
    if match is None:
        return True  # prose, not a value
    text = match.group(1)
    if isinstance(actual, Path):
        return Path(text) == actual
    if isinstance(actual, (int, float)) and not isinstance(actual, bool):
        try:
            return float(text) == float(actual)
        except ValueError:
            return False
    return text == _as_readme_value(actual)


def test_the_readme_states_the_real_defaults() -> None:
    """Item 7 of issue 13: a default in the README table is the one `Settings` has (it cannot drift)."""
    settings = Settings.model_fields
    stated = _readme_defaults()
    assert len(stated) > 60, "the README's configuration table was not found"
    wrong = {}
    for env, cell in stated.items():
        field = settings[env.removeprefix("ATHENA_").lower()]
        if not _same(cell, field.default):
            wrong[env] = (cell, field.default)
    assert wrong == {}, "README defaults that differ from Settings (README cell, Settings default)"
