"""A package read into this catalogue, resource by resource, with a report.

The import opens the package and checks it whole (archive.py: a zip, the manifest, the
signature, every member's hash, the free disk) before anything is written, and refuses a
"since" package whose base this catalogue never exported or imported. It then decides, for each
resource, what to do (the sync points of store/packages.py: created, updated, unchanged,
conflict, deleted, kept, refused), extracts the files of those it writes into its workspace
under tmp/, and writes each resource in a savepoint of its own: its files renamed into files/ in
the write that makes its rows, renamed back if that write fails (the resource is then ``failed``
and left as it was). Datasets come first, then documents, then maps and apps (their layers find
their datasets), then the links between resources, then deletions.

``create_from_record`` and ``apply_update`` write one incoming record; the conflicts' "keep
theirs" and "keep both" (packages/conflicts.py) call them too. Their ``folder`` holds the
resource's members as the package had them under resources/<uuid>/ (``data/...``,
``styles/<name>.sld``, ``thumbnail.<ext>``, ``changes.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalogue_app.store import Connection

VIA = "package"  # what the versions an import writes came through


@dataclass
class Written:
    """What writing one record did: the resource's id, notes for the report (unknown owner,
    groups, permissions...), and the files it moved (undone with ``undo`` when the write fails;
    ``retired`` folders are removed once it has committed)."""

    resource_id: int
    notes: list[str] = field(default_factory=list)
    moved: list[tuple[Path, Path]] = field(default_factory=list)   # (from, to)
    retired: list[Path] = field(default_factory=list)
    data_changed: bool = False

    def undo(self) -> None:
        """Put the moved files back where they came from (the write was rolled back)."""
        import os

        for source, target in reversed(self.moved):
            try:
                os.rename(target, source)
            except OSError:
                pass
        self.moved.clear()


def create_from_record(conn: Connection, record: dict[str, Any], folder: Path | None, *, files_dir: Path,
                       importer_id: int, new_uuid: str | None = None, title: str | None = None) -> Written:
    """Write ``record`` as a new resource (its uuid, or ``new_uuid`` for a second copy, then
    titled ``title``), its files moved from ``folder`` into files/, inside the caller's write
    transaction. Owner, group, contacts and permissions by name (unknown owner: ``importer_id``,
    said in the notes). Raises on failure (the caller rolls back and calls ``undo``)."""
    from catalogue_app.packages import _write

    return _write.create(conn, record, folder, files_dir=files_dir, importer_id=importer_id, new_uuid=new_uuid,
                         title=title)


def apply_update(conn: Connection, resource_id: int, record: dict[str, Any], folder: Path | None, *,
                 files_dir: Path, by_user_id: int | None) -> Written:
    """Write ``record`` over the existing resource ``resource_id`` (fields, keywords, regions,
    contacts, links, styles, permissions by name, map layers...) as one ``metadata`` version via
    "package", and its data: ``changes.json`` applied version by version to a copy of the working
    GeoPackage, or whole data replacing it (a ``replace`` version); inside the caller's write
    transaction. Raises on failure (the caller rolls back and calls ``undo``)."""
    from catalogue_app.packages import _write

    return _write.update(conn, resource_id, record, folder, files_dir=files_dir, by_user_id=by_user_id)
