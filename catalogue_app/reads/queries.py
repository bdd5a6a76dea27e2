"""What a parsed resource query still needs from the database before it runs."""

from __future__ import annotations

from catalogue_app.store import Connection, resources
from catalogue_app.store.resources import ResourceQuery


def with_tkeywords(conn: Connection, query: ResourceQuery, tkeyword_ids: list[int], force_and: bool) -> ResourceQuery:
    """The query with the thesaurus keywords asked for, grouped by thesaurus (any of a group,
    all groups; with ``force_and`` each keyword a group of its own)."""
    if tkeyword_ids:
        query.tkeyword_groups = resources.tkeyword_groups(conn, tkeyword_ids, force_and)
    return query
