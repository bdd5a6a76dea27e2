"""CQL2 (OGC Common Query Language), text and JSON, read with pygeofilter and checked against
the queryables of a collection: what the Records and Features ``filter=`` parameters take.

``parse`` gives an expression tree that names only declared queryables with values of their
types; ``store/cql2_sql.py`` writes it as SQL over the catalogue's resources (Records), and
``geo/cql2_features.py`` as a filter over a dataset's features (Features)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("string", "number", "integer", "boolean", "datetime", "geometry")


@dataclass(frozen=True)
class Queryable:
    """One property a filter may name: ``name`` as clients write it, its ``kind`` (one of KINDS),
    ``column`` what a compiler writes for it (an SQL expression, or a field name of a layer), and a
    ``title`` for /queryables."""

    name: str
    kind: str
    column: str
    title: str = ""


class Cql2Error(ValueError):
    """A filter that cannot be used: not CQL2, an unknown queryable, a value of the wrong type,
    an operator not supported. ``message`` says it to the person who wrote the filter."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def parse(text: str, lang: str | None, queryables: dict[str, Queryable]) -> Any:
    """The filter ``text`` in ``lang`` ("cql2-text", "cql2-json"; None: JSON when it starts with
    "{", else text) as an expression over ``queryables``; Cql2Error when it cannot be used."""
    raise Cql2Error("CQL2 filters are not available yet.")
