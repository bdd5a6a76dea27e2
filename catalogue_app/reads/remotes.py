"""What /api/v2/remotes/ and /api/v2/resources/{pk}/publications show: the remotes resources are
published to (never their tokens), and where a resource was published."""

from __future__ import annotations

import msgspec

from catalogue_app.services import publishing as publishing_service
from catalogue_app.store import Connection, Row, remotes


class Remote(msgspec.Struct):
    id: int
    name: str
    url: str
    has_token: bool
    created: str
    link: str


class Publication(msgspec.Struct):
    remote_id: int
    remote: str
    remote_pk: int | None
    remote_uuid: str | None
    remote_url: str | None
    stage: str
    last_published: str | None
    message: str


def shape(row: Row, base: str) -> Remote:
    return Remote(id=row["id"], name=row["name"], url=row["url"], has_token=bool(row["has_token"]),
                  created=row["created"], link=f"{base}/api/v2/remotes/{row['id']}")


def every(conn: Connection, base: str) -> list[Remote]:
    """All the remotes."""
    return [shape(r, base) for r in remotes.all_(conn)]


def one(conn: Connection, remote_id: int, base: str) -> Remote:
    """One remote; NotFound when there is none."""
    return shape(publishing_service.get_remote(conn, remote_id), base)


def publications_of(conn: Connection, resource_id: int) -> list[Publication]:
    """Where the resource was published, and how far each publication got; NotFound for no resource."""
    return [Publication(**row) for row in publishing_service.publications_of(conn, resource_id)]
