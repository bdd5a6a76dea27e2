"""The archives that the ``backup`` command wrote into the data folder's backups/ folder: which
are there (staff may see the list), one opened for download (superusers only: an archive holds
the users' password hashes and the digests of their tokens), and the archive a finished backup
job wrote.

A backup is a regular file directly in backups/ (not a link, not a folder, not hidden: the
command writes under a hidden temporary name, then renames) that is a tar or a gzip file. A
name is a file name only: anything with a path in it is refused before the folder is looked
at, and the file is opened without following links, so nothing outside backups/ is ever read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO

from catalogue_app import rules
from catalogue_app.services.errors import Forbidden, Invalid, NotFound, NotSignedIn

FOLDER = "backups"  # in the data folder: where the backup command writes (management/backup.py)
WRITTEN = "Backup written: "  # the line of the command's output that names its archive
MAX_NAME = 255
MAX_LISTED = 1000  # backups listed at most (the newest)
GZIP_MAGIC = b"\x1f\x8b"
TAR_MAGIC = b"ustar"  # at offset 257 of a tar's first header
TAR_MAGIC_AT = 257


@dataclass(frozen=True)
class Backup:
    name: str
    size: int
    created: str  # when the archive got its name (its modification time), UTC, ISO 8601


def folder_of(data_dir: Path) -> Path:
    return data_dir / FOLDER


def require_staff(caller) -> None:
    if caller.is_anonymous:
        raise NotSignedIn()
    if not rules.may_run_management(caller):
        raise Forbidden()


def require_superuser(caller) -> None:
    if caller.is_anonymous:
        raise NotSignedIn()
    if not rules.may_download_backups(caller):
        raise Forbidden("Only superusers may download backups: an archive holds password hashes and token digests.")


def checked_name(name: str) -> str:
    """``name`` when it can be a backup's file name; Invalid (400) when it names a path or a
    hidden file."""
    if (not name or len(name) > MAX_NAME or name in (".", "..") or name.startswith(".")
            or any(c in name for c in "/\\\0") or Path(name).is_absolute()):
        raise Invalid(f"'{name[:100]}' is not the name of a backup: give a file name of the backups list.")
    return name


def _is_archive(head: bytes) -> bool:
    return head.startswith(GZIP_MAGIC) or head[TAR_MAGIC_AT:TAR_MAGIC_AT + len(TAR_MAGIC)] == TAR_MAGIC


def _created(mtime: float) -> str:
    return datetime.fromtimestamp(mtime, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _open(folder: Path, name: str) -> tuple[BinaryIO, os.stat_result] | None:
    """The backup's file, open, with its status; None when ``name`` is not a backup in ``folder``."""
    try:
        fd = os.open(folder / name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:  # absent, a link, or unreadable
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return None
        handle = os.fdopen(fd, "rb")
    except OSError:
        os.close(fd)
        return None
    try:
        if not _is_archive(handle.read(TAR_MAGIC_AT + len(TAR_MAGIC))):
            handle.close()
            return None
        handle.seek(0)
        return handle, info
    except OSError:
        handle.close()
        return None


def listing(caller, data_dir: Path) -> list[Backup]:
    """The backups in the data folder's backups/, newest first (staff)."""
    require_staff(caller)
    folder = folder_of(data_dir)
    found: list[Backup] = []
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
            continue
        opened = _open(folder, entry.name)
        if opened is None:
            continue
        handle, info = opened
        handle.close()
        found.append(Backup(entry.name, info.st_size, _created(info.st_mtime)))
    found.sort(key=lambda b: (b.created, b.name), reverse=True)
    return found[:MAX_LISTED]


def open_for_download(caller, data_dir: Path, name: str) -> tuple[BinaryIO, Backup]:
    """The backup named ``name``, open for reading (superusers); 400 for a name that is not a
    file name, 404 when no backup has it. The caller closes the file."""
    require_superuser(caller)
    checked_name(name)
    opened = _open(folder_of(data_dir), name)
    if opened is None:
        raise NotFound(message=f"No backup is named '{name}'.")
    handle, info = opened
    return handle, Backup(name, info.st_size, _created(info.st_mtime))


def archive_of_job(command: str, status: str, failed: bool, output: str | None, data_dir: Path) -> str | None:
    """The name of the archive a finished backup job wrote, while it is still in backups/."""
    if command != "backup" or status != "FINISHED" or failed or not output:
        return None
    folder = folder_of(data_dir)
    for line in output.splitlines():
        if not line.startswith(WRITTEN):
            continue
        path = Path(line[len(WRITTEN):].strip())
        if path.parent != folder or path.name.startswith("."):
            return None
        opened = _open(folder, path.name)
        if opened is None:
            return None
        opened[0].close()
        return path.name
    return None
