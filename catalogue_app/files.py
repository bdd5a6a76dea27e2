"""Files written so that a crash never leaves half of one where the catalogue looks.

Jobs stage what they write under tmp/<exec_id>/, fsync it, and rename it into files/<uuid>/
(a rename within one file system is atomic). Start-up sweeps what a crash left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from catalogue_app import processes

CHUNK = 1024 * 1024
# A dataset's folder holds its original files and, in this subfolder (which no uploaded file
# can be named, being a folder), its working copy: data.gpkg or data.tif.
WORKING = "working"


def working_copy(folder: Path) -> Path | None:
    """The working copy in a dataset's folder (folders written before the subfolder existed
    hold working.gpkg or working.tif beside the originals)."""
    for path in (folder / WORKING / "data.gpkg", folder / WORKING / "data.tif", folder / "working.gpkg",
                 folder / "working.tif"):
        if path.is_file():
            return path
    return None


# What SQLite keeps beside a GeoPackage it has open (an edited working copy is in WAL mode): not
# files of the dataset in their own right; a copy of the GeoPackage made with SQLite's backup API
# holds what they hold.
SQLITE_SIDE_FILES = (".gpkg-wal", ".gpkg-shm", ".gpkg-journal")


def relative_files(folder: Path) -> list[str]:
    """The files under ``folder``, as paths relative to it ("a.shp", "working/data.gpkg"), sorted;
    SQLite's side files of a GeoPackage left out."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and not p.name.endswith(SQLITE_SIDE_FILES))


def is_working_geopackage(relative: str) -> bool:
    """Whether a path relative to a dataset's folder is its working GeoPackage (which edits
    change in place: copy it with SQLite's backup API, never link it)."""
    return relative in (f"{WORKING}/data.gpkg", "working.gpkg")


def sync_tree(folder: Path) -> None:
    """fsync every file under ``folder`` and every folder, before the tree is renamed into place."""
    for path in [*folder.rglob("*"), folder]:
        if path.is_dir():
            sync_folder(path)
        elif path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


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


MANIFEST = "folders.json"  # in a workspace: the folders of files/ its commit creates or retires


def note_folders(workspace: Path, names: list[str]) -> None:
    """Record, durably and before they are renamed in or retired, the folders of files/ that a
    commit touches: if the server stops before the commit ends, start-up removes those of them
    that no resource uses (see sweep)."""
    path = workspace / MANIFEST
    known = json.loads(path.read_text()) if path.exists() else []
    path.write_text(json.dumps(known + [n for n in names if n not in known]))
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    sync_folder(workspace)


def remove_resource_files(files_dir: Path, uuid: str) -> None:
    """A deleted resource's folder, and the folders of a dataset's data named after it."""
    for folder in [files_dir / uuid, *files_dir.glob(f"{uuid}-*")]:
        remove(folder)


OWNER = ".owner"  # in a workspace that a request fills: the server process doing it


def claim_workspace(path: Path) -> Path:
    """Make a workspace under tmp/ that this process fills (an upload being received, a
    download being zipped): start-up removes it once this process is gone, whatever its age."""
    path.mkdir(parents=True, exist_ok=True)
    (path / OWNER).write_text(processes.me())
    return path


def _owner_gone(entry: Path) -> bool | None:
    """Whether the process that claimed the workspace has stopped (None: no claim to read)."""
    try:
        owner = (entry / OWNER).read_text()
    except OSError:
        return None
    return not processes.still_running(owner)


def sweep(tmp_dir: Path, files_dir: Path, keep_tmp: Iterable[str], known: Callable[[str], bool],
          ended: Callable[[str], bool] = lambda name: True, min_age_seconds: float = 600) -> list[Path]:
    """Remove what crashes left: workspaces under tmp/ of requests that have ended (``ended``),
    claimed workspaces whose process has stopped, and other entries not named in ``keep_tmp``
    once older than ``min_age_seconds``, with the folders of files/ their commit had noted
    (note_folders) that no resource uses (``known(name)``); and folders of files/ older than
    that which no resource uses. A workspace a live process claimed is left to it."""
    removed = []
    keep = set(keep_tmp)
    now = time.time()
    for entry in tmp_dir.iterdir() if tmp_dir.is_dir() else ():
        if entry.name in keep:
            continue
        if not ended(entry.name):
            gone = _owner_gone(entry) if entry.is_dir() else None
            if gone is False or not (gone or now - _newest(entry) > min_age_seconds):
                continue
        for name in _noted(entry):  # what its commit was moving when the server stopped
            if name and "/" not in name and name not in (".", "..") and not known(name):
                remove(files_dir / name)
                removed.append(files_dir / name)
        remove(entry) if entry.is_dir() else entry.unlink(missing_ok=True)
        removed.append(entry)
    for entry in files_dir.iterdir() if files_dir.is_dir() else ():
        if not entry.is_dir():
            continue
        info = entry.stat()  # a rename into files/ changes a folder's ctime, not its mtime
        if now - max(info.st_mtime, info.st_ctime) > min_age_seconds and not known(entry.name):
            remove(entry)
            removed.append(entry)
    return removed


def _noted(workspace: Path) -> list[str]:
    try:
        names = json.loads((workspace / MANIFEST).read_text())
    except (OSError, ValueError):
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def _newest(path: Path) -> float:
    """The latest change to ``path`` or anything inside it."""
    newest = path.lstat().st_mtime
    if path.is_dir() and not path.is_symlink():
        for root, dirs, names in os.walk(path):
            for name in (*dirs, *names):
                try:
                    newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
                except OSError:
                    continue
    return newest


def noted_folders(tmp_dir: Path) -> set[str]:
    """The folders of files/ that the workspaces under tmp/ have noted (note_folders): those a
    job is moving into place or retiring right now."""
    names: set[str] = set()
    for entry in tmp_dir.iterdir() if tmp_dir.is_dir() else ():
        if entry.is_dir():
            names.update(_noted(entry))
    return names
