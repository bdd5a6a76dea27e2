"""The folders that work done in the background reads and writes, in one object: the data
folder, files/ (one folder per resource), tmp/ (one workspace per job), the import folder an
administrator fills, and thumbs/. The job runner, the management runner, harvesting and an
import run outside the runner (a command, a harvest) are all given the same Folders."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalogue_app.config import Settings

THUMBS = "thumbs"  # the folder of thumbnail files, in the data folder


@dataclass(frozen=True)
class Folders:
    data: Path
    files: Path
    tmp: Path
    imports: Path

    @classmethod
    def of(cls, settings: Settings) -> Folders:
        """The folders of a server's (or a command's) settings."""
        return cls(settings.data_dir, settings.files_dir, settings.tmp_dir, settings.import_folder)

    @property
    def thumbs(self) -> Path:
        return self.data / THUMBS

    def workspace(self, name: str) -> Path:
        """The workspace of one job (``name``: its exec_id), under tmp/."""
        return self.tmp / name
