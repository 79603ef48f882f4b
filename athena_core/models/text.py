"""Text and metadata rules shared by every write body (SPEC S2): strict UTF-8, bounded metadata.

Python's JSON decoder turns a `"\\ud83d"` escape (and raw surrogate bytes, which it decodes with
`surrogatepass`) into a lone surrogate; such a string can be neither stored, embedded nor rendered, so it is
refused at the door (422 naming the field) instead of failing every later read of the scope.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator

UTF8_RULE = "must be valid UTF-8 text (a lone surrogate such as \\ud83d is not)"


def check_utf8(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(UTF8_RULE) from exc
    return value


# A str that is strict UTF-8; use it for every text field of a request body, metadata keys and values too.
Text = Annotated[str, AfterValidator(check_utf8)]
Metadata = dict[Text, Text]


def printable_field(text: str, limit: int = 64) -> str:
    """A key as it may appear in an error's field name: UTF-8 safe and short."""
    safe = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return safe if len(safe) <= limit else safe[:limit] + "…"


@dataclass(frozen=True)
class MetadataProblem:
    status: int  # 413 for sizes, 422 for count and key shape
    field: str
    message: str


def metadata_problem(
    metadata: dict[str, str], *, max_bytes: int, max_keys: int, max_key_bytes: int, field: str = "metadata"
) -> MetadataProblem | None:
    """The first limit `metadata` breaks, or None. Sizes are UTF-8 bytes; the map's size is its compact JSON."""
    if len(metadata) > max_keys:
        return MetadataProblem(422, field, f"{field} has {len(metadata)} keys; at most {max_keys} are allowed")
    for key, value in metadata.items():
        name = f"{field}.{printable_field(key)}"
        key_bytes = len(key.encode("utf-8"))
        if key_bytes > max_key_bytes:
            return MetadataProblem(422, name, f"metadata key is {key_bytes} bytes; the limit is {max_key_bytes}")
        value_bytes = len(value.encode("utf-8"))
        if value_bytes > max_bytes:
            return MetadataProblem(413, name, f"metadata value is {value_bytes} bytes; the limit is {max_bytes}")
    size = len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if size > max_bytes:
        return MetadataProblem(413, field, f"{field} is {size} bytes as JSON; the limit is {max_bytes}")
    return None
