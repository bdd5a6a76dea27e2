"""Who is calling: HTTP Basic, a Bearer token or a browser session cookie, resolved once per
request into a ``Caller``.

Passwords are checked with a slow KDF, so a verified Basic header is remembered in memory for a
short time, keyed by a hash of the header together with the stored password hash it was checked
against. Each request still reads the user's row (one indexed query): a changed password, from
this process or another, no longer matches and the header is verified again.

A request without an Authorization header may carry the ``catalogue_session`` cookie that
``/account/login/`` sets. Browsers send cookies on their own, so a write authenticated by the
cookie must also send the session's CSRF token in ``X-CSRFToken``; Basic and Bearer need none.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio.to_thread
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from catalogue_app import rules
from catalogue_app.api.errors import ApiError, authentication_failed
from catalogue_app.clock import now
from catalogue_app.passwords import hash_password, verify_password
from catalogue_app.reads import users as user_reads
from catalogue_app.services import sign_in as sign_in_service


@dataclass(frozen=True, slots=True)
class Caller:
    id: int | None
    username: str
    is_superuser: bool = False
    is_staff: bool = False

    @property
    def is_anonymous(self) -> bool:
        return self.id is None

    @property
    def is_admin(self) -> bool:
        """Staff and superusers (rules.is_admin)."""
        return rules.is_admin(self)

    @classmethod
    def from_row(cls, row) -> "Caller":
        return cls(row["id"], row["username"], bool(row["is_superuser"]), bool(row["is_staff"]))


ANONYMOUS = Caller(None, "AnonymousUser")
VIEWER_KEY = "catalogue.viewer"  # the signed-in caller with their groups (store/resources.py Viewer), read with them
SESSION_COOKIE = "catalogue_session"
CSRF_HEADER = b"x-csrftoken"
CSRF_FAILED = "CSRF Failed: CSRF token missing or incorrect."
# Methods that change something: with the session cookie they need the CSRF token.
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Signing in needs no token: the caller has no session yet (and the cookie is ignored there).
CSRF_EXEMPT_PATHS = frozenset({"/account/login"})
# POSTs that only read (CSW requests as XML documents): the cookie counts without the token.
READ_ONLY_POST_PATHS = frozenset({"/catalogue/csw"})
T = TypeVar("T")
USE_EVERY = 60  # seconds: how far behind a token's recorded last use may be
# Checked against when a user name is unknown, so that the answer takes as long as for a known one.
DUMMY_HASH = hash_password("not a real password")


class CredentialCache:
    """Verified Basic headers: digest of the header -> (user id, stored hash, expiry)."""

    def __init__(self, ttl_seconds: float, max_entries: int = 10_000):
        self.ttl = ttl_seconds
        self.max_entries = max_entries
        self._entries: dict[bytes, tuple[int, str, float]] = {}
        self._lock = threading.Lock()
        # Verifications under way: concurrent requests with the same header wait for one KDF run.
        self._inflight: dict[bytes, asyncio.Future] = {}

    async def verify_once(self, key: bytes, check: Callable[[], Awaitable[T]]) -> T:
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await check()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved when nobody else waited
            raise
        else:
            future.set_result(result)
            return result
        finally:
            del self._inflight[key]

    def get(self, key: bytes) -> tuple[int, str] | None:
        entry = self._entries.get(key)
        if entry is None or entry[2] < time.monotonic():
            return None
        return entry[0], entry[1]

    def put(self, key: bytes, user_id: int, stored_hash: str) -> None:
        with self._lock:
            if len(self._entries) >= self.max_entries:
                now = time.monotonic()
                self._entries = {k: v for k, v in self._entries.items() if v[2] >= now}
                if len(self._entries) >= self.max_entries:
                    self._entries.clear()
            self._entries[key] = (user_id, stored_hash, time.monotonic() + self.ttl)

    def forget_user(self, user_id: int) -> None:
        with self._lock:
            self._entries = {k: v for k, v in self._entries.items() if v[0] != user_id}


def caller_of(request) -> Caller:
    return request.scope.get("user") or ANONYMOUS


def session_of(request):
    """The session row (user columns, ``csrf_token``, ``session_digest``) that authenticated the
    request, or None when the caller did not come by the cookie."""
    return request.scope.get("catalogue_session")


def cookie_value(headers, name: str) -> str | None:
    """The first value of cookie ``name`` in the request's Cookie headers."""
    for header, value in headers:
        if header != b"cookie":
            continue
        for part in value.decode("latin-1").split(";"):
            key, sep, text = part.partition("=")
            if sep and key.strip() == name:
                return text.strip().strip('"')
    return None


class AuthMiddleware(ASGIMiddleware):
    """Puts the Caller in ``scope["user"]``; refuses bad Basic credentials with 401 and a cookie
    write without its CSRF token with 403."""

    exclude_path_pattern = ("^/o/",)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        header = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                header = value
                break
        caller = ANONYMOUS
        if not header and scope["type"] == "http" and scope["path"].rstrip("/") not in CSRF_EXEMPT_PATHS:
            value = cookie_value(scope["headers"], SESSION_COOKIE)
            if value and len(value) <= 256:
                row, viewer = await scope["litestar_app"].state.db.read(user_reads.by_session, value)
                if row is not None:  # an unknown or expired cookie leaves the caller anonymous
                    if scope["method"] in UNSAFE_METHODS and not (
                            scope["method"] == "POST" and scope["path"].rstrip("/") in READ_ONLY_POST_PATHS):
                        _check_csrf(scope["headers"], row["csrf_token"])
                    caller = Caller.from_row(row)
                    scope["catalogue_session"] = row
                    scope[VIEWER_KEY] = viewer
        elif header:
            state = scope["litestar_app"].state
            scheme, _, credentials = header.partition(b" ")
            scheme = scheme.lower()
            if scheme == b"basic":
                caller = await _basic(state, header, credentials.strip(), scope)
            elif scheme == b"bearer":
                row, viewer = await state.db.read(user_reads.by_token, credentials.strip().decode("latin-1"))
                if row is not None:  # an unknown or expired token leaves the caller anonymous
                    caller = Caller.from_row(row)
                    scope[VIEWER_KEY] = viewer
                    _note_use(state, row["token_id"], row["token_last_used"])
        scope["user"] = caller
        await next_app(scope, receive, send)


def _note_use(state, token_id: int, last_used: str | None) -> None:
    """Record when a token was last used, at most once a USE_EVERY per token: the write goes to
    the writer without being awaited, and not at all while the stored time is recent enough or
    this process sent one for the token a moment ago."""
    horizon = now(-USE_EVERY)
    if last_used is not None and last_used >= horizon:
        return
    sent: dict[int, float] = state.setdefault("token_uses", {})
    moment = time.monotonic()
    if sent.get(token_id, -USE_EVERY) > moment - USE_EVERY:
        return
    if len(sent) >= 10_000:
        sent.clear()
    sent[token_id] = moment
    try:
        future = state.db.submit(sign_in_service.note_token_use, token_id, now(), horizon)
    except RuntimeError:  # the database is closing
        return
    future.add_done_callback(lambda done: done.exception())  # a failed note is no request's failure


def _check_csrf(headers, expected: str) -> None:
    sent = b""
    for name, value in headers:
        if name == CSRF_HEADER:
            sent = value
            break
    if not hmac.compare_digest(sent, expected.encode("ascii")):
        raise ApiError(403, CSRF_FAILED, "permission_denied")


async def _basic(state, header: bytes, credentials: bytes, scope: Scope) -> Caller:
    cache: CredentialCache = state.credentials
    key = hashlib.sha256(header).digest()
    hit = cache.get(key)
    if hit is not None:
        row, viewer = await state.db.read(user_reads.by_id, hit[0])
        if row is not None and row["is_active"] and row["password"] == hit[1]:
            scope[VIEWER_KEY] = viewer
            return Caller.from_row(row)
    try:
        decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise authentication_failed("Invalid basic header. Credentials not correctly base64 encoded.")
    username, sep, password = decoded.partition(":")
    if not sep:
        raise authentication_failed("Invalid basic header. No credentials provided.")

    async def check() -> Caller:
        row = await state.db.read(user_reads.by_username, username)
        stored = row["password"] if row is not None and row["is_active"] else ""
        ok = await anyio.to_thread.run_sync(verify_password, password, stored or DUMMY_HASH)
        if not (ok and stored):
            raise authentication_failed()
        cache.put(key, row["id"], stored)
        return Caller.from_row(row)

    return await cache.verify_once(key, check)
