"""The resource rows that account endpoints list (users/{pk}/resources, groups/{pk}/resources)."""

from __future__ import annotations

import sqlite3

import msgspec

from catalogue_app.api.auth import Caller
from catalogue_app.api.shapes import User, user
from catalogue_app.store import users


class ResourceRow(msgspec.Struct, kw_only=True):
    pk: str
    uuid: str
    resource_type: str
    title: str
    abstract: str
    owner: User
    created: str
    last_updated: str
    link: str


def resource_rows(conn: sqlite3.Connection, rows: list[sqlite3.Row], caller: Caller, base: str) -> list[ResourceRow]:
    owners = {r["id"]: user(r, caller, base) for r in users.by_ids(conn, {row["owner_id"] for row in rows})}
    return [
        ResourceRow(
            pk=str(r["id"]), uuid=r["uuid"], resource_type=r["resource_type"], title=r["title"],
            abstract=r["abstract"], owner=owners[r["owner_id"]], created=r["created"],
            last_updated=r["last_updated"], link=f"{base}/api/v2/resources/{r['id']}",
        )
        for r in rows
    ]
