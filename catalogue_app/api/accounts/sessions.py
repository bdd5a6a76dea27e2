"""Browser sign-in for the web UI: /account/login/, /account/logout/ and /account/session/.

Signing in sets the ``catalogue_session`` cookie (HttpOnly, SameSite=Lax; Secure over HTTPS) and
answers the CSRF token that writes made with the cookie must send in ``X-CSRFToken`` (checked in
auth.AuthMiddleware). Failed attempts slow down further ones on the same user name; the count
is kept in the database, so every worker process sees it. These routes serve the UI, not API
clients, and stay out of the OpenAPI document.
"""

from __future__ import annotations

import asyncio

import anyio.to_thread
import msgspec
from litestar import Request, Response, get, post

from catalogue_app.api.middleware.auth import (
    CSRF_FAILED,
    DUMMY_HASH,
    SESSION_COOKIE,
    cookie_value,
    session_of,
)
from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.request_bodies import read_body
from catalogue_app.passwords import verify_password
from catalogue_app.reads import users as user_reads
from catalogue_app.services import sign_in

WRONG_CREDENTIALS = "Wrong username or password."
FIRST_DELAY_SECONDS = 0.5
MAX_DELAY_SECONDS = 8.0
# No user name is longer (api/accounts/users.py); a longer one is simply wrong.
MAX_USERNAME = 150
NO_STORE = {"Cache-Control": "no-store"}


class SessionUser(msgspec.Struct):
    pk: int
    username: str
    first_name: str
    last_name: str
    is_superuser: bool
    is_staff: bool


class SessionAnswer(msgspec.Struct):
    user: SessionUser | None
    csrf_token: str | None


class Detail(msgspec.Struct):
    detail: str


def failure_delay(earlier_attempts: int) -> float:
    """Seconds to wait before checking an attempt that follows ``earlier_attempts`` recent ones
    on the same user name: none, then 0.5 s, doubling up to 8 s."""
    if earlier_attempts <= 0:
        return 0.0
    return min(FIRST_DELAY_SECONDS * 2 ** min(earlier_attempts - 1, 16), MAX_DELAY_SECONDS)


def _user(row) -> SessionUser:
    return SessionUser(row["id"], row["username"], row["first_name"], row["last_name"],
                       bool(row["is_superuser"]), bool(row["is_staff"]))


def _over_https(request: Request) -> bool:
    if request.url.scheme == "https":
        return True
    forwarded = request.headers.get("x-forwarded-proto", "")
    return forwarded.split(",")[0].strip().lower() == "https"


def _set_cookie(request: Request, value: str, max_age: int) -> dict[str, str]:
    """The Set-Cookie header (with Max-Age=0 and no value, it clears the cookie)."""
    header = f"{SESSION_COOKIE}={value}; HttpOnly; SameSite=Lax; Path=/; Max-Age={max_age}"
    if _over_https(request):
        header += "; Secure"
    return {"Set-Cookie": header, **NO_STORE}


async def _credentials(request: Request) -> tuple[str, str]:
    body = await read_body(request)
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise invalid("Expected a JSON object with username and password.")
    missing = [name for name in ("username", "password") if not isinstance(body.get(name), str) or not body[name]]
    if missing:
        raise invalid(f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required.")
    return body["username"], body["password"]


@post("/account/login/", status_code=200, include_in_schema=False)
async def login(ctx: Ctx) -> Response[SessionAnswer]:
    """Check a user name and password; on success open a session and set its cookie."""
    # A page of another site may post a form here to sign the browser in to the attacker's
    # account; browsers say where a request comes from, other clients send no such header.
    request = ctx.request
    if request.headers.get("sec-fetch-site", "").lower() == "cross-site":
        raise ApiError(403, CSRF_FAILED, "permission_denied")
    username, password = await _credentials(request)
    name = username[:MAX_USERNAME]
    delay = failure_delay(await ctx.db.write(sign_in.attempt, name))
    if delay:
        await asyncio.sleep(delay)
    row = await ctx.db.read(user_reads.by_username, username) if len(username) <= MAX_USERNAME else None
    stored = row["password"] if row is not None and row["is_active"] else ""
    ok = await anyio.to_thread.run_sync(verify_password, password, stored or DUMMY_HASH)
    if not (ok and stored):
        raise invalid(WRONG_CREDENTIALS)  # the same answer for an unknown or inactive user
    lifetime = ctx.settings.session_lifetime_seconds
    previous = cookie_value(request.scope["headers"], SESSION_COOKIE)
    value, csrf_token = await ctx.db.write(sign_in.open_session, row["id"], name, lifetime, previous)
    return Response(SessionAnswer(_user(row), csrf_token), headers=_set_cookie(request, value, lifetime))


@post("/account/logout/", status_code=200, include_in_schema=False)
async def logout(ctx: Ctx) -> Response[Detail]:
    """End the session the cookie names (the CSRF token was checked on the way in) and clear it."""
    session = session_of(ctx.request)
    if session is not None:
        await ctx.db.write(sign_in.close, session["session_digest"])
    return Response(Detail("Signed out."), headers=_set_cookie(ctx.request, "", 0))


@get("/account/session/", include_in_schema=False)
async def current_session(request: Request) -> Response[SessionAnswer]:
    """Who the session cookie signs in, and its CSRF token; nulls without a valid cookie."""
    session = session_of(request)
    if session is None:
        return Response(SessionAnswer(None, None), headers=NO_STORE)
    return Response(SessionAnswer(_user(session), session["csrf_token"]), headers=NO_STORE)


ROUTES = [login, logout, current_session]
