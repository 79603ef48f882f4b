"""One JSON error shape for every 4xx/5xx: {"error": {"code", "message", "fields": [{"field", "message"}]}}.

Clients (and SPEC S2) need the offending field named, so validation errors are flattened from
pydantic's `loc` tuples into dotted field names without the `body`/`query` prefix.
"""
from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException


class ApiError(Exception):
    def __init__(
        self, status: int, code: str, message: str, field: str | None = None, headers: dict | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers


def error_body(code: str, message: str, fields: list[dict] | None = None) -> dict:
    return {"error": {"code": code, "message": message, "fields": fields or []}}


def field_name(loc: tuple) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        fields = [{"field": exc.field, "message": exc.message}] if exc.field else []
        return JSONResponse(error_body(exc.code, exc.message, fields), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        fields = [{"field": field_name(tuple(e["loc"])), "message": e["msg"]} for e in exc.errors()]
        names = ", ".join(dict.fromkeys(f["field"] for f in fields))
        return JSONResponse(error_body("validation_error", f"invalid request: {names}", fields), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            error_body(f"http_{exc.status_code}", str(exc.detail)), status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )
