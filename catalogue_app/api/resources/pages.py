"""A page of resources from kept rendering.

Building a resource's JSON costs most of a list request. What does not depend on the caller is
kept, already encoded, per reader connection (store/db.py ``Database.kept``: emptied as soon as
any connection commits), under the request's base URL, the resource id and which user fields the
caller is shown (``user_schemas.user``: e-mail for signed-in callers, global ``perms`` of a user
for admins and for that user). The caller's permissions and favorites are kept beside it, under
who asks. A page then costs the page query and joining bytes. The bytes are those of
``resource_schema.render`` encoded by msgspec: the answer is the one a fresh rendering gives.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec
from litestar.serialization import encode_json

from catalogue_app import rules
from catalogue_app.api.middleware.auth import Caller
from catalogue_app.api.resources.representation import CONTACT_ROLES, Resource, caller_perms, render
from catalogue_app.store import Connection, Row, resources
from catalogue_app.store.db import Database
from catalogue_app.store.resources import Viewer

# Where the caller's own fields sit in a resource encoded with perms=[] and favorite=false; a
# '"' inside a JSON string is escaped, so these bytes cannot come from a value.
PERMS = b',"perms":[]'
FAVORITE = b',"favorite":false'
MAX_KEPT = 2048  # entries per reader connection: a resource is about 4 KB, so some 9 MB at most

_encode = encode_json  # Litestar's own, so that the bytes are those a Response would hold


class Kept(NamedTuple):
    """One resource's JSON without the caller's ``perms`` and ``favorite`` values."""

    head: bytes     # up to '"perms":'
    middle: bytes   # from ',"owner":' up to '"favorite":'
    tail: bytes     # after the favorite value
    user_ids: frozenset[int]  # the users shown in it (owner and contacts)


def audience(caller: Caller) -> str:
    """Which fields of the embedded users the caller sees."""
    if caller.is_anonymous:
        return "anonymous"
    return "admin" if rules.sees_every_account(caller) else "member"


def split(item: Resource) -> Kept:
    users = frozenset([item.owner.pk, *(u.pk for role in CONTACT_ROLES for u in getattr(item, role))])
    item.perms, item.favorite = [], False
    encoded = _encode(item)
    p = encoded.index(PERMS + b',"owner":')
    f = encoded.index(FAVORITE + b',"thumbnail_url":', p)
    return Kept(encoded[:p + len(PERMS) - 2], encoded[p + len(PERMS):f + len(FAVORITE) - 5],
                encoded[f + len(FAVORITE):], users)


def page_json(db: Database, conn: Connection, rows: list[Row], caller: Caller, viewer: Viewer,
              base: str) -> msgspec.Raw:
    """The JSON array of the rows as ``render`` shows them to the caller on /resources; ``rows``
    need only ``resources.PERMS_COLUMNS``."""
    kept = db.kept(conn)
    group = audience(caller)
    parts: dict[int, Kept] = {}
    missing = []
    for row in rows:
        entry = kept.get(("resource", base, group, row["id"]))
        # a user's own entry shows their global perms: not for other members
        if entry is None or (group == "member" and caller.id in entry.user_ids):
            missing.append(row["id"])
        else:
            parts[row["id"]] = entry
    if missing:
        full = resources.rows_by_ids(conn, missing)
        for row, item in zip(full, render(conn, full, caller, viewer, base)):
            entry = parts[row["id"]] = split(item)
            if group != "member" or caller.id not in entry.user_ids:
                keep(kept, ("resource", base, group, row["id"]), entry)
    perms = _perms(conn, kept, rows, viewer)
    favorites = _favorites(conn, db.kept(conn, "favorites"), rows, viewer)  # kept apart: see store/db.py kept
    out = []
    for row in rows:
        rid = row["id"]
        entry = parts[rid]
        out.append(b"".join((entry.head, perms[rid], entry.middle, favorites[rid], entry.tail)))
    return msgspec.Raw(b"[" + b",".join(out) + b"]")


def keep(kept: dict, key: tuple, value: object) -> None:
    if len(kept) >= MAX_KEPT:
        del kept[next(iter(kept))]  # the oldest
    kept[key] = value


def _perms(conn: Connection, kept: dict, rows: list[Row], viewer: Viewer) -> dict[int, bytes]:
    """The viewer's permission names on each row, encoded; kept under everything they depend on
    (the key starts with a tuple, so it never meets a resource's or a favorite's)."""
    who = ("perms", viewer)  # the rule book's answer depends on all of the viewer
    out = {}
    missing = []
    for row in rows:
        found = kept.get((who, row["id"]))
        if found is None:
            missing.append(row)
        else:
            out[row["id"]] = found
    if missing:
        held = resources.held_on_page(conn, missing, viewer)
        for row in missing:
            out[row["id"]] = _encode(caller_perms(row, held[row["id"]], viewer))
            keep(kept, (who, row["id"]), out[row["id"]])
    return out


def _favorites(conn: Connection, kept: dict, rows: list[Row], viewer: Viewer) -> dict[int, bytes]:
    """Whether the viewer has marked each row as a favorite, as JSON."""
    if viewer.id is None:
        return {row["id"]: b"false" for row in rows}
    out = {}
    missing = []
    for row in rows:
        found = kept.get(("favorite", viewer.id, row["id"]))
        if found is None:
            missing.append(row["id"])
        else:
            out[row["id"]] = found
    if missing:
        marked = resources.favorites_on_page(conn, missing, viewer)
        for rid in missing:
            out[rid] = b"true" if rid in marked else b"false"
            keep(kept, ("favorite", viewer.id, rid), out[rid])
    return out
