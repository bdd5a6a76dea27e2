"""Files written so that a crash never leaves half of one where the catalogue looks.

Jobs stage what they write under tmp/<exec_id>/, fsync it, and rename it into files/<uuid>/
(a rename within one file system is atomic). Start-up sweeps what a crash left behind.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path

CHUNK = 1024 * 1024


def inside(folder: Path, relative: str) -> Path:
    """``relative`` resolved inside ``folder``; ValueError when it is absolute, climbs out
    (``..``, or a link pointing elsewhere) or names no regular file."""
    if not relative or os.path.isabs(relative) or "\\" in relative or "\x00" in relative:
        raise ValueError(f"{relative!r} is not a path relative to the import folder")
    base = folder.resolve()
    path = (base / relative).resolve()
    if path == base or base not in path.parents:
        raise ValueError(f"{relative!r} is outside the import folder")
    if not path.is_file():
        raise ValueError(f"{relative!r} is not a file in the import folder")
    return path


def copy_file(source: Path, target: Path, progress: Callable[[int], None] | None = None) -> int:
    """Copy in chunks, reporting the percentage done, then fsync; returns the size."""
    total = source.stat().st_size
    done = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(source, "rb") as src, open(target, "wb") as dst:
        while chunk := src.read(CHUNK):
            dst.write(chunk)
            done += len(chunk)
            if progress and total:
                progress(done * 100 // total)
        dst.flush()
        os.fsync(dst.fileno())
    sync_folder(target.parent)
    return done


def sync_folder(folder: Path) -> None:
    """Make a rename or a new entry in ``folder`` durable (where the system allows it)."""
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def sweep(tmp_dir: Path, files_dir: Path, keep_tmp: Iterable[str], known: Callable[[str], bool],
          min_age_seconds: float = 600) -> list[Path]:
    """Remove what crashes left: workspaces under tmp/ not named in ``keep_tmp``, and folders
    of files/ older than ``min_age_seconds`` whose resource does not exist (``known(uuid)``)."""
    removed = []
    keep = set(keep_tmp)
    for entry in tmp_dir.iterdir() if tmp_dir.is_dir() else ():
        if entry.name not in keep:
            remove(entry) if entry.is_dir() else entry.unlink(missing_ok=True)
            removed.append(entry)
    now = time.time()
    for entry in files_dir.iterdir() if files_dir.is_dir() else ():
        if entry.is_dir() and now - entry.stat().st_mtime > min_age_seconds and not known(entry.name):
            remove(entry)
            removed.append(entry)
    return removed
