"""/o/token/: OAuth2 password grant issuing Bearer tokens; /o/revoke_token/ to drop one.

Errors here follow OAuth2 (RFC 6749 section 5.2: ``{"error", "error_description"}``) because
OAuth clients read that shape, not the API envelope.
"""

from __future__ import annotations

import base64
import binascii
from typing import Literal

import anyio.to_thread
import msgspec
from litestar import Request, Response, post
from litestar.exceptions import HTTPException

from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError, handle_api_error, handle_http_exception, handle_refused, status_of
from catalogue_app.api.request_bodies import declared_body
from catalogue_app.passwords import verify_password
from catalogue_app.services.bodies import FieldError
from catalogue_app.reads import users as user_reads
from catalogue_app.services.errors import Refused
from catalogue_app.services import sign_in as sign_in_service


CLIENT_MAX = 100


class TokenRequest(msgspec.Struct, kw_only=True):
    grant_type: Literal["password"]  # the only grant served
    username: str
    password: str
    scope: str | None = None
    client_id: str | None = None
    client_secret: str | None = None


class TokenAnswer(msgspec.Struct):
    access_token: str
    token_type: str
    expires_in: int
    scope: str


class OAuthError(msgspec.Struct):
    error: str
    error_description: str


def _oauth_error(status: int, error: str, description: str) -> Response[OAuthError]:
    return Response(OAuthError(error, description), status_code=status,
                    headers={"Cache-Control": "no-store"})


def _refused(request: Request, exc: ApiError | Refused | HTTPException) -> Response:
    """A body these addresses refuse, in OAuth2's shape (other refusals keep the envelope)."""
    if isinstance(exc, HTTPException):  # Litestar's own, such as a broken multipart body
        if exc.status_code != 400:
            return handle_http_exception(request, exc)
        return _oauth_error(400, "invalid_request", str(exc.detail))
    if status_of(exc) != 400:
        return handle_api_error(request, exc) if isinstance(exc, ApiError) else handle_refused(request, exc)
    if isinstance(exc, FieldError) and exc.field == "grant_type" and not exc.missing:
        return _oauth_error(400, "unsupported_grant_type", "Only the password grant is supported.")
    return _oauth_error(400, "invalid_request", exc.message)


OAUTH_ERRORS = {ApiError: _refused, Refused: _refused, HTTPException: _refused}


@post("/o/token/", status_code=200, opt={"body": TokenRequest}, tags=["auth"], exception_handlers=OAUTH_ERRORS,
      summary="Exchange a user name and password for a Bearer token (OAuth2 password grant)")
async def token(ctx: Ctx) -> Response[TokenAnswer] | Response[OAuthError]:
    body: TokenRequest = await declared_body(ctx.request)
    username, password = body.username, body.password
    row = await ctx.db.read(user_reads.by_username, username)
    stored = row["password"] if row is not None and row["is_active"] else ""
    ok = await anyio.to_thread.run_sync(verify_password, password, stored)
    if not (ok and stored):
        return _oauth_error(400, "invalid_grant", "Invalid credentials given.")
    lifetime = ctx.settings.token_lifetime_seconds
    scope = "read write groups"
    issued = await ctx.db.write(sign_in_service.issue_login_token, row["id"], lifetime, scope, _client_of(ctx, body))
    if issued is None:
        return _oauth_error(400, "invalid_grant", "Invalid credentials given.")
    return Response(TokenAnswer(issued, "Bearer", lifetime, scope), headers={"Cache-Control": "no-store"})


def _client_of(ctx: Ctx, body: TokenRequest) -> str:
    """The client_id a login names, in its form or in an HTTP Basic header (as OAuth2 clients
    send it): a user's login tokens are kept per client (store/tokens.py)."""
    client = body.client_id
    if not client or not client.strip():
        scheme, _, credentials = ctx.request.headers.get("authorization", "").partition(" ")
        client = ""
        if scheme.lower() == "basic":
            try:
                client = base64.b64decode(credentials.strip(), validate=True).decode("utf-8").partition(":")[0]
            except (binascii.Error, UnicodeDecodeError, ValueError):
                client = ""
    return "".join(c for c in client.strip() if c.isprintable())[:CLIENT_MAX]


class RevokeRequest(msgspec.Struct):
    token: str


@post("/o/revoke_token/", status_code=200, opt={"body": RevokeRequest}, tags=["auth"], exception_handlers=OAUTH_ERRORS,
      summary="Revoke a Bearer token")
async def revoke(ctx: Ctx) -> None:
    """An unknown token is no error (RFC 7009); a body without a token is."""
    body: RevokeRequest = await declared_body(ctx.request)
    await ctx.db.write(sign_in_service.revoke_token, body.token)


ROUTES = [token, revoke]
