"""Errors as answers: one envelope ``{"success": false, "errors": [message], "code": code}``.

Services refuse with the exceptions of services/errors.py (turned here into their status);
handlers raise those too, or ``ApiError`` for what only HTTP knows (methods, media types, sizes).
Every other exception, Litestar's own included, is turned into the same envelope here, so no
input can produce a bare 500 page.
"""

from __future__ import annotations

import logging

from litestar import MediaType, Request, Response
from litestar.exceptions import (
    HTTPException,
    MethodNotAllowedException,
    NotFoundException,
    ValidationException,
)
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR

from catalogue_app.services.errors import Busy, Conflict, Forbidden, Invalid, NotFound, NotSignedIn, Refused, Unreadable, refusal_for
from catalogue_app.store.db import WriteConflict

log = logging.getLogger("catalogue")

DEFAULT_CODES = {
    400: "invalid",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "request_too_large",
    415: "unsupported_media_type",
    429: "throttled",
    500: "error",
}


class ApiError(Exception):
    """An answer with the error envelope; ``extra`` adds keys some GeoNode actions also send
    (``{"message": ...}``), so clients reading either shape understand it."""

    def __init__(self, status: int, message: str, code: str | None = None,
                 headers: dict[str, str] | None = None, extra: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or DEFAULT_CODES.get(status, "error")
        self.headers = headers or {}
        self.extra = extra or {}


def invalid(message: str) -> Invalid:
    return Invalid(message)


def parse_error(message: str) -> Unreadable:
    return Unreadable(message)


def not_authenticated() -> NotSignedIn:
    return NotSignedIn()


def authentication_failed(message: str = "Invalid username/password.") -> ApiError:
    return ApiError(401, message, "authentication_failed", {"WWW-Authenticate": 'Basic realm="api"'})


def permission_denied(message: str = "You do not have permission to perform this action.") -> Forbidden:
    return Forbidden(message)


def not_found(model: str = "") -> NotFound:
    return NotFound(model)


def denied(caller) -> Refused:
    """401 for an anonymous caller, 403 for a known one."""
    return refusal_for(caller)


# The status of each kind of refusal the services give.
REFUSAL_STATUS = {Invalid: 400, NotSignedIn: 401, Forbidden: 403, NotFound: 404, Busy: 409, Conflict: 409}


def envelope(status: int, message: str, code: str, headers: dict[str, str] | None = None,
             extra: dict | None = None) -> Response:
    body = {"success": False, "errors": [message], "code": code, **(extra or {})}
    if status == 404:
        body["detail"] = message  # what GeoNode's plain object lookups answer
    return Response(body, status_code=status, headers=headers, media_type=MediaType.JSON)


def handle_api_error(_: Request, exc: ApiError) -> Response:
    return envelope(exc.status, exc.message, exc.code, exc.headers, exc.extra)


def status_of(exc: ApiError | Refused) -> int:
    """The HTTP status an error answers with."""
    if isinstance(exc, ApiError):
        return exc.status
    return next(code for kind, code in REFUSAL_STATUS.items() if isinstance(exc, kind))


def handle_refused(_: Request, exc: Refused) -> Response:
    status = status_of(exc)
    headers = {"WWW-Authenticate": 'Basic realm="api"'} if status == 401 else None
    return envelope(status, exc.message, exc.reason, headers, exc.extra)


def handle_http_exception(request: Request, exc: HTTPException) -> Response:
    status = exc.status_code
    if isinstance(exc, NotFoundException):
        return envelope(404, "Not found.", "not_found")
    if isinstance(exc, MethodNotAllowedException):
        return envelope(405, f'Method "{request.method}" not allowed.', "method_not_allowed",
                        dict(exc.headers or {}))
    if isinstance(exc, ValidationException):
        return envelope(400, _validation_message(exc), "invalid")
    if status == 413:
        limit = getattr(request.route_handler, "request_max_body_size", None) if "route_handler" in request.scope else None
        if not isinstance(limit, int) or isinstance(limit, bool):
            limit = getattr(request.app, "request_max_body_size", None)
        size = f" of {limit / 1048576:g} MB" if isinstance(limit, int) and limit > 0 else ""
        return envelope(413, f"The request body is larger than the limit{size} of this address.", "request_too_large")
    if status >= 500:
        log.error("server error on %s %s: %s", request.method, request.url.path, exc.detail)
        return envelope(500, "A server error occurred.", "error")
    return envelope(status, str(exc.detail), DEFAULT_CODES.get(status, "error"), dict(exc.headers or {}))


def _validation_message(exc: ValidationException) -> str:
    extra = exc.extra
    if isinstance(extra, list) and extra and isinstance(extra[0], dict):
        first = extra[0]
        key = first.get("key")
        message = first.get("message", exc.detail)
        return f"{key}: {message}" if key else str(message)
    return str(exc.detail)


def handle_conflict(_: Request, exc: Exception) -> Response:
    """A write that broke a uniqueness or reference rule, e.g. two requests racing for one name."""
    return envelope(409, f"The change conflicts with the stored data: {exc}", "conflict")


def handle_overflow(_: Request, exc: OverflowError) -> Response:
    return envelope(400, "A number in the request is out of range.", "invalid")


def handle_recursion(request: Request, exc: RecursionError) -> Response:
    """Input nested so deeply that reading it ran out of stack (bodies are bounded before that)."""
    log.warning("input nested too deeply on %s %s", request.method, request.url.path)
    return envelope(400, "The request is nested too deeply to be read.", "parse_error")


def handle_unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return envelope(HTTP_500_INTERNAL_SERVER_ERROR, "A server error occurred.", "error")


# The OGC APIs (/ogcapi/) answer errors in their own JSON shape: {"code", "description"}.
OGC_API_PREFIX = "/ogcapi"
OGC_CODES = {400: "InvalidParameterValue", 401: "NotAuthenticated", 403: "Forbidden", 404: "NotFound",
             405: "MethodNotAllowed", 406: "NotAcceptable", 409: "Conflict", 412: "PreconditionFailed",
             413: "RequestTooLarge", 415: "UnsupportedMediaType", 429: "Throttled", 500: "ServerError"}


def ogc_exception(status: int, description: str, code: str | None = None,
                  headers: dict[str, str] | None = None) -> Response:
    """The OGC API exception: {"code", "description"} (OGC API - Common, Features Part 1)."""
    return Response({"code": code or OGC_CODES.get(status, "Error"), "description": description},
                    status_code=status, headers=headers, media_type=MediaType.JSON)


def _ogc_aware(handler):
    """The handler, answering in the OGC APIs' shape for a request under /ogcapi/."""

    def answer(request: Request, exc: Exception) -> Response:
        response = handler(request, exc)
        path = request.scope.get("path", "")
        if not (path == OGC_API_PREFIX or path.startswith(OGC_API_PREFIX + "/")):
            return response
        body = response.content if isinstance(response.content, dict) else {}
        errors = body.get("errors") or ["Error."]
        code = getattr(exc, "ogc_code", None)
        return ogc_exception(response.status_code, str(errors[0]), code, dict(response.headers))

    return answer


EXCEPTION_HANDLERS = {kind: _ogc_aware(handler) for kind, handler in {
    ApiError: handle_api_error,
    Refused: handle_refused,
    WriteConflict: handle_conflict,
    OverflowError: handle_overflow,
    RecursionError: handle_recursion,
    HTTPException: handle_http_exception,
    Exception: handle_unexpected,
}.items()}
