"""The rules of creating a document: its fields checked as every resource's, and its file moved
from the upload's staging folder into files/<uuid>/ inside the transaction that writes the
record (and moved back if the record cannot be written), so that a record never lacks its file
and a file never lacks its record."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from catalogue_app import files
from catalogue_app.services import resource_changes
from catalogue_app.store import Connection, documents
from catalogue_app.store.resources import Viewer


def create(conn: Connection, viewer: Viewer, owner_id: int, new_uuid: str, values: dict[str, Any],
           extension: str | None, *, doc_url: str | None = None, staged: Path | None = None,
           file_name: str | None = None, size: int = 0, final: Path | None = None) -> int:
    """A new document owned by ``owner_id``: a link (``doc_url``) or the file ``file_name`` staged
    in the folder ``staged``, which becomes ``final``. Returns its id."""
    changes = asdict(resource_changes.clean(conn, values, viewer, None, "document"))
    details = {"uuid": new_uuid, "owner_id": owner_id, "changes": changes, "extension": extension}
    if file_name is None or staged is None or final is None:
        return documents.create(conn, **details, doc_url=doc_url)
    final.parent.mkdir(parents=True, exist_ok=True)
    files.note_folders(staged.parent, [new_uuid])  # start-up removes it if the record is not written
    os.rename(staged, final)
    try:
        rid = documents.create(conn, **details, file_name=file_name, size=size)
    except BaseException:
        os.rename(final, staged)
        raise
    files.sync_folder(final.parent)  # the rename is on disk before the record is committed
    return rid
