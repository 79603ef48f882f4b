"""`contained_path` / `contained_key` (SPEC S1, issue 12 item 1): ids never act as paths."""
from __future__ import annotations

from pathlib import Path

import pytest

from athena_core.stores.blobs.contained_path import PathEscape, checked_segment, contained_key, contained_path

NOT_PLAIN = ["", ".", "..", "a/b", "/abs", "a\\b", "..\\..", "a\x00b", "a\nb", "\x7f"]


@pytest.mark.parametrize("part", NOT_PLAIN)
def test_parts_that_are_not_plain_names_are_refused(tmp_path: Path, part: str) -> None:
    with pytest.raises(PathEscape):
        contained_path(tmp_path, part)
    with pytest.raises(PathEscape):
        contained_path(tmp_path, "t", part)
    with pytest.raises(PathEscape):
        contained_key("t", part, "name")


def test_a_path_is_strictly_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "data" / "blobs"
    root.mkdir(parents=True)
    assert contained_path(root, "t", "u", "blob_1") == root.resolve() / "t" / "u" / "blob_1"
    assert contained_path(root, "a..b", ".hidden", "x.y") == root.resolve() / "a..b" / ".hidden" / "x.y"
    with pytest.raises(PathEscape):
        contained_path(root)  # the root itself is never a target
    with pytest.raises(PathEscape):
        checked_segment(None)  # type: ignore[arg-type]


def test_symlinks_cannot_redirect_a_level(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    (root / "tb" / "u1").mkdir(parents=True)
    (root / "out").symlink_to(tmp_path, target_is_directory=True)
    (root / "ta").mkdir()
    (root / "ta" / "u1").symlink_to(root / "tb" / "u1", target_is_directory=True)
    for parts in (("out",), ("out", "blobs"), ("ta", "u1"), ("ta", "u1", "blob_1")):
        with pytest.raises(PathEscape):
            contained_path(root, *parts)
    # A symlinked root is fine: it is resolved first.
    (tmp_path / "link").symlink_to(root, target_is_directory=True)
    assert contained_path(tmp_path / "link", "tb", "u1") == root.resolve() / "tb" / "u1"


def test_keys_are_joined_plain_names() -> None:
    assert contained_key("t", "u", "blob_1") == "t/u/blob_1"
    with pytest.raises(PathEscape):
        contained_key()
