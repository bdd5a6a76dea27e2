"""Upload limits: size limits (bytes) and parallelism limits (jobs of one user at once), by slug."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from catalogue_app.store.filters import Field, Listing, ListSpec, fetch_page


@dataclass(frozen=True)
class Kind:
    table: str
    value: str  # the column holding the limit
    listing: Listing


def _kind(table: str, value: str) -> Kind:
    fields = {"slug": Field("l.slug"), "description": Field("l.description"), value: Field(f"l.{value}", "int")}
    return Kind(table, value, Listing(f"l.slug, l.description, l.{value}", f"{table} l", fields, {}, "l.slug", "l.slug"))


SIZE = _kind("upload_size_limits", "max_size")
PARALLELISM = _kind("upload_parallelism_limits", "max_number")


def page(conn: sqlite3.Connection, kind: Kind, spec: ListSpec, limit: int, offset: int) -> tuple[int, list[sqlite3.Row]]:
    return fetch_page(conn, kind.listing, spec, ("1", []), limit, offset)


def get(conn: sqlite3.Connection, kind: Kind, slug: str) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {kind.listing.columns} FROM {kind.table} l WHERE l.slug = ?", (slug,)).fetchone()


def create(conn: sqlite3.Connection, kind: Kind, slug: str, description: str, value: int) -> None:
    """A new limit; a slug that exists already is a WriteConflict (409)."""
    conn.execute(f"INSERT INTO {kind.table} (slug, description, {kind.value}) VALUES (?, ?, ?)",
                 (slug, description, value))


def update(conn: sqlite3.Connection, kind: Kind, slug: str, description: str | None, value: int | None) -> bool:
    changes = {k: v for k, v in (("description", description), (kind.value, value)) if v is not None}
    if not changes:
        return get(conn, kind, slug) is not None
    sets = ", ".join(f"{k} = ?" for k in changes)
    return conn.execute(f"UPDATE {kind.table} SET {sets} WHERE slug = ?", [*changes.values(), slug]).rowcount > 0


def size_limit(conn: sqlite3.Connection, slug: str) -> int:
    """The limit in bytes (100 MB when the row is missing, as GeoNode recreates it)."""
    row = get(conn, SIZE, slug)
    return row["max_size"] if row else 104_857_600


def create_many(conn: sqlite3.Connection, kind: Kind, items: list[tuple[str, str | None, int]]) -> list[sqlite3.Row]:
    """Several limits of one kind, ``(slug, description, value)`` each; returns their rows."""
    for slug, description, value in items:
        create(conn, kind, slug, description or "", value)
    return [get(conn, kind, slug) for slug, _, _ in items]
