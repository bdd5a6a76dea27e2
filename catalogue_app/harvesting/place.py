"""Where harvesting writes: the database, the files folder, the scratch folder, the thumbnails."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from catalogue_app.store.db import Database


@dataclass
class Place:
    db: Database
    files: Path
    tmp: Path
    data_dir: Path

    @property
    def thumbs(self) -> Path:
        from catalogue_app.jobs import thumbnails  # Pillow: loaded when first needed

        return thumbnails.folder(self.data_dir)
