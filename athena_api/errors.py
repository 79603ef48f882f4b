"""One JSON error shape for every 4xx/5xx: {"error": {"code", "message", "fields": [{"field", "message"}]}}.

Clients (and SPEC S2) need the offending field named, so validation errors are flattened from
pydantic's `loc` tuples into dotted field names without the leading location (`body`, `query`, ...): only
the first element is dropped, so a body field named `query` is still reported as `query`.
"""
from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException


class ApiError(Exception):
    """An answer with the JSON error shape. `fields` names several fields at once (a batch names each bad
    item, `events[3].content`); `field` is the one-field form."""

    def __init__(
        self, status: int, code: str, message: str, field: str | None = None, headers: dict | None = None,
        fields: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers
        self.fields = fields


def store_unavailable() -> ApiError:
    """503 with Retry-After when the event log does not answer: nothing was accepted, the client retries."""
    return ApiError(503, "store_unavailable", "the document store does not answer; retry", headers={"Retry-After": "1"})


def error_body(code: str, message: str, fields: list[dict] | None = None) -> dict:
    return {"error": {"code": code, "message": message, "fields": fields or []}}


# How many field names an error's `message` lists; `fields` always holds every one. A batch of 500 items
# each missing a field would otherwise repeat 500 names in the one line a client shows a person.
MESSAGE_NAMES_SHOWN = 10


def naming(prefix: str, names: list[str]) -> str:
    """`prefix: a, b, c`, the first `MESSAGE_NAMES_SHOWN` distinct names, then how many more there are."""
    distinct = list(dict.fromkeys(names))
    shown = ", ".join(distinct[:MESSAGE_NAMES_SHOWN])
    more = len(distinct) - MESSAGE_NAMES_SHOWN
    return f"{prefix}: {shown}" + (f" and {more} more" if more > 0 else "")


LOCATIONS = ("body", "query", "path", "header", "cookie")
BODY_PARSE_ERROR = "There was an error parsing the body"  # FastAPI's 400 detail when reading the body fails


class BodyTooLarge(StarletteHTTPException):
    """Raised from the ASGI `receive` once a streamed body passes the limit. A Starlette HTTPException, because
    FastAPI's body reader re-raises those unchanged (anything else would become its generic 400)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body exceeds the limit of {limit} bytes")
        self.limit = limit


def _utf8_safe(text: str) -> str:
    """Field names can hold client text (a metadata key): never let a lone surrogate break the error itself."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def field_name(loc: tuple) -> str:
    """("body", "events", 3, "content") → `events[3].content`: list positions in brackets, keys dotted."""
    parts = list(loc)
    if parts and parts[0] in LOCATIONS:
        parts = parts[1:]
    name = ""
    for part in parts:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return _utf8_safe(name) or "body"


def _validation_field(error: dict) -> dict:
    if error.get("type") == "json_invalid":  # loc is ("body", <char offset>): the body is at fault
        detail = (error.get("ctx") or {}).get("error", "")
        position = error["loc"][-1] if error.get("loc") else None
        where = f" at character {position}" if isinstance(position, int) else ""
        return {"field": "body", "message": _utf8_safe(f"invalid JSON{where}: {detail}".rstrip(": "))}
    return {"field": field_name(tuple(error["loc"])), "message": _utf8_safe(str(error["msg"]))}


def api_error_response(exc: ApiError) -> JSONResponse:
    """The answer to an `ApiError` (the handler's, and the fast write path's, which runs outside FastAPI)."""
    message = _utf8_safe(exc.message)
    fields = [{"field": _utf8_safe(exc.field), "message": message}] if exc.field else []
    fields += [{"field": _utf8_safe(f), "message": _utf8_safe(m)} for f, m in exc.fields or ()]
    return JSONResponse(error_body(exc.code, message, fields), status_code=exc.status, headers=exc.headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return api_error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        fields = [_validation_field(e) for e in exc.errors()]
        message = naming("invalid request", [f["field"] for f in fields])
        if any(e.get("type") == "json_invalid" for e in exc.errors()):
            message = "invalid request: the body is not valid JSON"
        return JSONResponse(error_body("validation_error", message, fields), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc, BodyTooLarge):
            return JSONResponse(
                error_body("too_large", str(exc.detail), [{"field": "body", "message": "request body too large"}]),
                status_code=413,
            )
        if exc.status_code == 400 and exc.detail == BODY_PARSE_ERROR:
            # FastAPI could not read the body: invalid UTF-8 (json.loads' UnicodeDecodeError), nesting too deep…
            cause = exc.__cause__
            reason = ("the body is not valid UTF-8" if isinstance(cause, UnicodeDecodeError)
                      else "the body could not be parsed as JSON")
            return JSONResponse(
                error_body("validation_error", f"invalid request: {reason}", [{"field": "body", "message": reason}]),
                status_code=422,
            )
        return JSONResponse(
            error_body(f"http_{exc.status_code}", str(exc.detail)), status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )
