"""The JSON shapes of users and groups, shared by every endpoint that embeds them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET, UnsetType

from catalogue_app import rules
from catalogue_app.store import Connection, Row, groups, resources, sessions, tokens, users
from catalogue_app.store.db import kept
from catalogue_app.store.resources import Viewer

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller

DEFAULT_AVATAR = "/static/img/avatar.svg"


class User(msgspec.Struct, kw_only=True):
    """A user as GeoNode embeds one (owner, members, the users API)."""

    pk: int
    username: str
    first_name: str
    last_name: str
    avatar: str
    # Only for the user themselves and for admins.
    perms: list[str] | UnsetType = UNSET
    is_superuser: bool
    is_staff: bool
    # Only for administrators: whether the account may sign in (False once deactivated).
    is_active: bool | UnsetType = UNSET
    # Never shown to anonymous callers.
    email: str | UnsetType = UNSET
    link: str


class GroupRef(msgspec.Struct):
    pk: int
    name: str


class GroupProfile(msgspec.Struct, kw_only=True):
    pk: int
    title: str
    group: GroupRef
    slug: str
    logo: str | None
    description: str
    email: str | None
    keywords: list[str]
    access: str
    categories: list[str]
    link: str


def viewer(conn: Connection, user_id: int | None, is_superuser: bool, is_staff: bool = False) -> Viewer:
    """The caller as the store's visibility rules need them (with their groups), kept until
    the data change."""
    here = kept(conn)
    key = ("viewer", user_id, is_superuser, is_staff)
    found = here.get(key)
    if found is None:
        found = here[key] = resources.viewer_of(conn, user_id, is_superuser, is_staff)
    return found


ANONYMOUS_VIEWER = resources.viewer_of(None, None)  # reads nothing: the anonymous group alone


def signed_in(conn: Connection, find: Callable[..., Row | None], *args: Any) -> tuple[Row | None, Viewer | None]:
    """The user row that ``find(conn, *args)`` gives (by a session, a token, an id), and the
    user as the store's visibility rules need them: one read for the auth middleware."""
    row = find(conn, *args)
    return row, (viewer(conn, row["id"], bool(row["is_superuser"]), bool(row["is_staff"])) if row is not None else None)


def by_session(conn: Connection, value: str) -> tuple[Row | None, Viewer | None]:
    """The user a session cookie signs in (with the session's CSRF token), and their viewer."""
    return signed_in(conn, sessions.user_for, value)


def by_token(conn: Connection, token: str) -> tuple[Row | None, Viewer | None]:
    """The user a Bearer token signs in (with the token's id and last use), and their viewer."""
    return signed_in(conn, tokens.user_for, token)


def by_id(conn: Connection, user_id: int) -> tuple[Row | None, Viewer | None]:
    """A user already checked once (Basic credentials remembered), and their viewer."""
    return signed_in(conn, user_row, user_id)


def by_username(conn: Connection, username: str) -> Row | None:
    """The user row a sign-in names, with its password hash, for the credentials check."""
    return users.by_username(conn, username)


def user_row(conn: Connection, user_id: int) -> Row | None:
    """A user's row by id, kept until the data change (a changed password is a change)."""
    here = kept(conn)
    key = ("user", user_id)
    if key not in here:
        here[key] = users.get(conn, user_id)
    return here[key]


def global_perms(row: Row) -> list[str]:
    return ["add_remote_resource", "add_resource"] if row["is_superuser"] else ["add_resource"]


def absolute(base: str, url: str) -> str:
    return url if "://" in url else f"{base}{url}"


def user(row: Row, caller: Caller, base: str, account: bool = False) -> User:
    """A user as ``caller`` may see them; ``account`` for the users API itself, where
    administrators also get ``is_active`` (not in the owners embedded in resources)."""
    mine = rules.sees_private_fields(caller, row["id"])
    return User(
        pk=row["id"],
        username=row["username"],
        first_name=row["first_name"],
        last_name=row["last_name"],
        avatar=absolute(base, row["avatar"] or DEFAULT_AVATAR),
        perms=global_perms(row) if mine else UNSET,
        is_superuser=bool(row["is_superuser"]),
        is_staff=bool(row["is_staff"]),
        is_active=bool(row["is_active"]) if account and rules.sees_every_account(caller) else UNSET,
        email=UNSET if caller.is_anonymous else row["email"],
        link=f"{base}/api/v2/users/{row['id']}",
    )


def group_profile(row: Row, categories: list[str], keywords: list[str], base: str) -> GroupProfile:
    return GroupProfile(
        pk=row["id"],
        title=row["title"],
        group=GroupRef(row["group_id"], row["group_name"]),
        slug=row["slug"],
        logo=absolute(base, row["logo"]) if row["logo"] else None,
        description=row["description"],
        email=row["email"],
        keywords=keywords,
        access=row["access"],
        categories=categories,
        link=f"{base}/api/v2/groups/{row['id']}",
    )


def group_profiles(conn: Connection, rows: list[Row], base: str) -> list[GroupProfile]:
    categories, keywords = groups.extras(conn, [r["id"] for r in rows])
    return [group_profile(r, categories[r["id"]], keywords[r["id"]], base) for r in rows]
