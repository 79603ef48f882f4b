"""Filesystem paths and object keys built from ids stay inside their root (SPEC S1).

Ids are opaque names with no path meaning. The id rules refuse `.`/`..` and separators at the door, but
every store that turns ids into a path or key checks again here, so a scope built without validation
(an old row, a bypassed model, a bug elsewhere) can never name anything outside its root.
"""
from __future__ import annotations

from pathlib import Path


class PathEscape(ValueError):
    """A path or key built from ids would leave its root (or is not a plain name at all)."""


def checked_segment(part: object, what: str = "path segment") -> str:
    """`part` unchanged if it is one plain name: not empty, not `.`/`..`, no separator, no control character."""
    if not isinstance(part, str) or part in ("", ".", ".."):
        raise PathEscape(f"{what} {part!r} is not a plain name")
    if "/" in part or "\\" in part or any(ord(c) < 0x20 or ord(c) == 0x7F for c in part):
        raise PathEscape(f"{what} {part!r} holds a separator or control character")
    return part


def contained_path(root: Path, *parts: str) -> Path:
    """`root/parts[0]/parts[1]/…`, resolved, each level strictly one directory below the previous one.

    Raises `PathEscape` when a part is not a plain name, or when resolving (symlinks) moves any level
    anywhere but directly below its parent: the result is strictly inside the resolved root, never the
    root itself, and a symlinked tenant or user directory cannot redirect into a sibling's tree.
    """
    if not parts:
        raise PathEscape("no path below the root was named")
    current = Path(root).resolve()
    for part in parts:
        checked_segment(part)
        below = (current / part).resolve()
        if below.parent != current:
            raise PathEscape(f"{part!r} resolves outside {current}")
        current = below
    return current


def contained_key(*parts: str) -> str:
    """An object key `parts[0]/parts[1]/…` of plain names only (S3 layout `tenant/user/name`)."""
    if not parts:
        raise PathEscape("empty object key")
    return "/".join(checked_segment(p, "key segment") for p in parts)
