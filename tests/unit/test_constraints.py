"""constraints.txt pins what a fresh checkout installs (Makefile: `pip install -c constraints.txt`): every
requirement of pyproject.toml is pinned, each pin is allowed by pyproject.toml, and this venv holds the
pinned versions, so CI tests exactly what a user's `make` installs."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, pinned = line.partition("==")
        assert sep and name.strip() and pinned.strip(), f"not a name==version pin: {line!r}"
        pins[canonicalize_name(name)] = Version(pinned)
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [r for group in project.get("optional-dependencies", {}).values() for r in group]
    return [Requirement(r) for r in [*project["dependencies"], *extras]]


def test_every_requirement_is_pinned_within_what_pyproject_allows() -> None:
    pins = _pins()
    unpinned = [str(r) for r in _requirements() if canonicalize_name(r.name) not in pins]
    assert unpinned == [], "requirements missing from constraints.txt (make constraints)"
    outside = [f"{r} but pinned {pins[canonicalize_name(r.name)]}" for r in _requirements()
               if not r.specifier.contains(pins[canonicalize_name(r.name)], prereleases=True)]
    assert outside == [], "constraints.txt pins versions pyproject.toml does not allow"


def test_this_venv_holds_the_pinned_versions() -> None:
    """Fails when the Makefile stops installing with the constraints, or a package was upgraded by hand
    (`make clean test` rebuilds the venv). A pin without a local label (torch==2.13.0) holds for any build
    of that version (2.13.0+cpu), as it does for pip."""
    drift = []
    for name, pinned in _pins().items():
        try:
            installed = Version(version(name))
        except PackageNotFoundError:
            drift.append(f"{name}: pinned {pinned}, not installed")
            continue
        if installed != pinned and not (pinned.local is None and Version(installed.public) == pinned):
            drift.append(f"{name}: pinned {pinned}, installed {installed}")
    assert drift == []


def test_the_pinned_set_is_consistent() -> None:
    """The pins satisfy each other's requirements (a refresh that resolved badly fails here, not in use)."""
    check = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
