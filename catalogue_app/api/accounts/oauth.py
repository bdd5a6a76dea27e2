"""/o/token/: OAuth2 password grant issuing Bearer tokens; /o/revoke_token/ to drop one.

Errors here follow OAuth2 (RFC 6749 section 5.2: ``{"error", "error_description"}``) because
OAuth clients read that shape, not the API envelope.
"""

from __future__ import annotations

import base64
import binascii

import anyio.to_thread
import msgspec
from litestar import Response, post

from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError
from catalogue_app.api.request_bodies import read_body
from catalogue_app.passwords import verify_password
from catalogue_app.services.errors import Refused
from catalogue_app.store import tokens, users


CLIENT_MAX = 100


class TokenRequest(msgspec.Struct, kw_only=True):
    grant_type: str
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


@post("/o/token/", status_code=200, opt={"body": TokenRequest}, tags=["auth"],
      summary="Exchange a user name and password for a Bearer token (OAuth2 password grant)")
async def token(ctx: Ctx) -> Response[TokenAnswer] | Response[OAuthError]:
    try:
        body = await read_body(ctx.request)
    except (ApiError, Refused) as exc:
        return _oauth_error(400, "invalid_request", exc.message)
    if not isinstance(body, dict):
        return _oauth_error(400, "invalid_request", "Send grant_type, username and password as form fields.")
    if body.get("grant_type") != "password":
        return _oauth_error(400, "unsupported_grant_type", "Only the password grant is supported.")
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not isinstance(password, str):
        return _oauth_error(400, "invalid_request", "username and password are required.")
    row = await ctx.db.read(users.by_username, username)
    stored = row["password"] if row is not None and row["is_active"] else ""
    ok = await anyio.to_thread.run_sync(verify_password, password, stored)
    if not (ok and stored):
        return _oauth_error(400, "invalid_grant", "Invalid credentials given.")
    lifetime = ctx.settings.token_lifetime_seconds
    scope = "read write groups"
    issued = await ctx.db.write(tokens.issue, row["id"], lifetime, scope, "login", "", _client_of(ctx, body))
    return Response(TokenAnswer(issued, "Bearer", lifetime, scope), headers={"Cache-Control": "no-store"})


def _client_of(ctx: Ctx, body: dict) -> str:
    """The client_id a login names, in its form or in an HTTP Basic header (as OAuth2 clients
    send it): a user's login tokens are kept per client (store/tokens.py)."""
    client = body.get("client_id")
    if not isinstance(client, str) or not client.strip():
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


@post("/o/revoke_token/", status_code=200, opt={"body": RevokeRequest}, tags=["auth"],
      summary="Revoke a Bearer token")
async def revoke(ctx: Ctx) -> None:
    body = await read_body(ctx.request)
    if isinstance(body, dict) and isinstance(body.get("token"), str):
        await ctx.db.write(tokens.revoke, body["token"])


ROUTES = [token, revoke]
