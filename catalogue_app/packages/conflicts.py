"""Conflicts of field packages: a resource changed both here and in the package's catalogue since
the two last agreed (or deleted on one side and changed on the other).

The import (packages/importer.py) keeps our copy as it is and hands the incoming one to
``set_aside``: its record is stored in a ``package_conflicts`` row, its files are moved under
files/ into a folder of the conflict's own (``aside-<conflict id>``), and the local resource's
history gains a version of kind ``incoming``, state ``aside``, naming the package and who changed
it there, with the field differences between ours and theirs. Nothing of the local resource
changes. ``resolve`` then keeps ours, theirs, or both (services/package_conflicts.py is its door
for HTTP).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalogue_app.store import Connection

KINDS = ("changed_both", "deleted_here", "deleted_there")


def set_aside(conn: Connection, package_id: str, record: dict[str, Any], resource_id: int | None, kind: str,
              folder: Path | None, *, files_dir: Path) -> int:
    """Keep the incoming copy of a resource aside as a conflict; returns the conflict's id.

    Runs inside the caller's write transaction (the import's write of that resource), after the
    ``packages`` row of ``package_id`` is written. ``record`` is the incoming record
    (resources/<uuid>/record.json, parsed); ``resource_id`` the local resource (None: it was
    deleted here, a tombstone; the conflict then gets no version row); ``kind`` one of ``KINDS``;
    ``folder`` the incoming files already extracted under tmp/ (None: none), moved whole, in the
    layout the import gave it, to ``files_dir``/aside-<id> (``files_dir``: the data folder's
    files/), which is what ``apply_update``/``create_from_record`` are handed back on resolving.
    Nothing of the local resource changes."""
    raise NotImplementedError
