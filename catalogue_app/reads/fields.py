"""One field of one resource, as its family's detail shows it (GET .../{pk}/{field_name})."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from catalogue_app.reads.resources import Deferred, Family, present
from catalogue_app.rules import Viewer
from catalogue_app.store import Connection, resources

if TYPE_CHECKING:
    from catalogue_app.api.middleware.auth import Caller


def field(conn: Connection, family: Family, resource_id: int, field_name: str, caller: Caller, viewer: Viewer,
          base: str, selection: Any = None, deferred: Deferred | None = None) -> dict[str, Any] | None:
    """``{field_name: value}`` for a resource of the family the viewer sees (None otherwise). A
    field sent only when asked for (include[]) comes from ``deferred`` with ``selection``."""
    row = resources.get_visible(conn, viewer, resource_id, family.types)
    if row is None:
        return None
    if selection is not None and deferred is not None:
        return deferred(conn, [row["id"]], selection, viewer, base)[0]
    item = present(conn, family, [row], caller, viewer, base, detail=True, with_data=field_name == "data")[0]
    return {field_name: msgspec.to_builtins(item).get(field_name, [])}
