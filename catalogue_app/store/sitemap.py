"""What the sitemap and the DCAT records read beyond the resource rows: the resources anyone may
see (the sitemap is the same for every caller), a page of them at a time, and the licences'
names and addresses."""

from __future__ import annotations

import sqlite3

from catalogue_app.store.resources import ANONYMOUS_LISTING

# The resources an anonymous caller lists: public, not being changed, advertised. The partial
# index resources_listed holds exactly their ids.
PUBLIC = ANONYMOUS_LISTING


def public_count(conn: sqlite3.Connection) -> int:
    """How many resources anyone may see and lists."""
    return conn.execute(f"SELECT count(*) FROM resources r INDEXED BY resources_listed WHERE {PUBLIC}").fetchone()[0]


def public_page(conn: sqlite3.Connection, limit: int, offset: int) -> list[sqlite3.Row]:
    """One page of them (id, uuid, resource_type, last_updated), oldest id first, so that a page
    keeps its resources while others are added."""
    return conn.execute(
        f"SELECT r.id, r.uuid, r.resource_type, r.last_updated FROM resources r INDEXED BY resources_listed"
        f" WHERE {PUBLIC} ORDER BY r.id LIMIT ? OFFSET ?", (limit, offset)).fetchall()


def licenses(conn: sqlite3.Connection, identifiers: list[str]) -> dict[str, sqlite3.Row]:
    """The licences with these identifiers: identifier, name, url."""
    if not identifiers:
        return {}
    rows = conn.execute(f"SELECT identifier, name, url FROM licenses WHERE identifier IN"
                        f" ({','.join('?' * len(identifiers))})", identifiers).fetchall()
    return {row["identifier"]: row for row in rows}
