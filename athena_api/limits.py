"""Size limits of write bodies (SPEC S2): 413 for sizes, 422 for count and key shape, always naming the field."""
from __future__ import annotations

from athena_api.errors import ApiError
from athena_core.models.text import metadata_problem
from athena_core.wiring.settings import Settings


def check_text_size(field: str, text: str, limit: int) -> None:
    size = len(text.encode("utf-8"))  # strict UTF-8 is already guaranteed by the body models
    if size > limit:
        raise ApiError(413, "too_large", f"{field} is {size} bytes; the limit is {limit}", field=field)


def check_metadata(settings: Settings, metadata: dict[str, str], field: str = "metadata") -> None:
    problem = metadata_problem(
        metadata, max_bytes=settings.max_metadata_bytes, max_keys=settings.max_metadata_keys,
        max_key_bytes=settings.max_metadata_key_bytes, field=field,
    )
    if problem is not None:
        code = "too_large" if problem.status == 413 else "validation_error"
        raise ApiError(problem.status, code, problem.message, field=problem.field)
