"""``backup``: one archive holding a consistent snapshot of the catalogue, taken while the
server goes on serving and writing.

What is consistent, and why this order works:

1. A read transaction is opened on the database (WAL: it sees the catalogue as committed at
   that moment, whatever is committed after). That is the snapshot.
2. Inside it, the files its rows name are hard-linked (copied where the file system cannot
   link) into a workspace under tmp/: the folder of every resource that has stored files
   (``datasets.folder``, else the resource's uuid; every file its ``resource_files`` rows list
   must be there) or that owns a folder of files/, and every thumbnail file a
   ``thumbnail_url`` names. A folder of files/ and a thumbnail file are never changed once
   their record is committed: jobs write into tmp/ and rename the whole folder into files/
   before the commit (jobs/imports.py); replacing a dataset's data writes a NEW folder
   (``<uuid>-<job>``) and switches ``datasets.folder`` in the commit, the old folder being
   removed only after it; a new thumbnail gets a new name and the old file is removed once no
   row names it (jobs/thumbnails.py). So a file the snapshot names either is there with the
   content it had at the snapshot, or was removed by a commit after the snapshot: then the
   snapshot is taken again (up to ATTEMPTS times; after that the backup goes on and names the
   missing files, which the catalogue itself lacks: ``check`` reports them too). A link keeps
   the content even if the catalogue removes the file right after. The one exception is a
   dataset's working GeoPackage, which edits change in place (services/edits.py): it is copied
   with SQLite's backup API, as at one commit of its own, which may be later than the snapshot;
   a restore then finds data versions the catalogue lacks and adds them at start.
3. Still inside it, SQLite's online backup copies the database into the workspace in steps of
   PAGES pages (``ctx.check()`` between steps); reading a snapshot, it is never restarted by
   the writes of the server and does not hold them up.
4. The read transaction ends; the archive is written from the workspace to a temporary name
   beside the output, fsynced and renamed: no half archive ever has the final name.

Folders and files the snapshot does not name (written after it, or orphans) are left out, as
are the lock files, tmp/, import/, the -wal/-shm files (the copy is one self-contained file)
and the backups/ folder itself.

The archive is a tar (``--gzip``: gzip-compressed) of ``catalogue.sqlite3``, ``files/...``,
``thumbs/...``, ``keys/...`` (the signing key of field packages) and, last, ``manifest.json``: the format and its version, the catalogue's
version, when it was made, the database's schema version (user_version), counts (resources,
users, ...), the files the snapshot named but the catalogue lacked, and each member's size
and SHA-256, which ``restore`` checks.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
import shutil
import sqlite3
import tarfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from catalogue_app import __version__, clock, files
from catalogue_app.geo import gpkg_edit
from catalogue_app.jobs import thumbnails
from catalogue_app.management.base import Command, CommandContext, CommandError
from catalogue_app.store import db as dbmod
from catalogue_app.store import executions, integrity

FORMAT = "catalogue-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DATABASE = "catalogue.sqlite3"
FILES = "files"
THUMBS = "thumbs"
KEYS = "keys"  # the catalogue's signing key (packages/keys.py): restored with it, so its fingerprint stays
BACKUPS = "backups"  # the default place of backups, in the data folder
PAGES = 1024  # database pages copied per step of the online backup (4 MB at SQLite's 4 KB pages)
ATTEMPTS = 3  # snapshots tried when files named by one were removed before they were linked
CHECK_EVERY = 16 * 1024 * 1024  # bytes archived between two looks at a stop request
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass
class Snapshot:
    folder: Path  # the workspace's copy: catalogue.sqlite3, files/, thumbs/
    schema: int
    counts: dict[str, int]
    missing: list[str] = field(default_factory=list)
    attempts: int = 1


class Backup(Command):
    name = "backup"
    help = ("Write a consistent snapshot of the catalogue (database, files, thumbnails) into one archive, "
            "while the server goes on serving.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--output", help="the archive to write (default: <data folder>/backups/catalogue-<UTC time>"
                            ".tar); a folder: the default name in it. Over HTTP only a file name, in backups/")
        parser.add_argument("--gzip", action="store_true", help="compress the archive (gzip; .tar.gz)")

    def run(self, ctx: CommandContext, options) -> None:
        started = time.monotonic()
        target = output_path(ctx, options.output, options.gzip)
        database = ctx.db.path if ctx.db is not None else ctx.data_dir / DATABASE
        if not database.is_file():
            raise CommandError(f"No catalogue in {ctx.data_dir} (no {DATABASE}).")
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        workspace = files.claim_workspace(ctx.tmp_dir / f"backup-{os.getpid()}-{stamp}-{secrets.token_hex(3)}")
        try:
            snap = take_snapshot(ctx, database, workspace)
            snapped = time.monotonic() - started
            members, size = write_archive(ctx, snap, target, options.gzip)
        finally:
            files.remove(workspace)
        took = time.monotonic() - started
        for name in snap.missing:
            ctx.say(f"MISSING {name} (named by the database, absent from the data folder: not in the backup)")
        c = snap.counts
        ctx.say(f"Backup written: {target}")
        ctx.say(f"  {c.get('resources', 0)} resources, {c.get('users', 0)} users, {members - 2} files,"
                f" {size / 1e6:.1f} MB, database schema {snap.schema}; snapshot in {snapped:.2f} s,"
                f" {took:.2f} s in all")


def output_path(ctx: CommandContext, output: str | None, gzip: bool) -> Path:
    """Where the archive goes; CommandError when it is not a place to write a new one."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    default = f"catalogue-{stamp}.tar" + (".gz" if gzip else "")
    backups = ctx.data_dir / BACKUPS
    if ctx.user_id is not None:  # over HTTP: never a path of the server's choosing elsewhere
        if output and (Path(output).name != output or output in (".", "..")):
            raise CommandError("Over HTTP, --output is a file name only: the archive goes into the data folder's"
                               " backups/ folder.")
        target = backups / (output or default)
        backups.mkdir(exist_ok=True)
    elif output is None:
        backups.mkdir(exist_ok=True)
        target = backups / default
    else:
        target = Path(output).expanduser().absolute()
        if target.is_dir():
            target = target / default
    if target.exists():
        raise CommandError(f"{target} exists already: choose another --output.")
    if not target.parent.is_dir():
        raise CommandError(f"Cannot write the backup to {target}: {target.parent} is not a folder.")
    if not os.access(target.parent, os.W_OK):
        raise CommandError(f"Cannot write the backup to {target}: {target.parent} is not writable.")
    data = ctx.data_dir.resolve()
    if target.parent.resolve() != (data / BACKUPS) and data in target.resolve().parents:
        raise CommandError(f"{target} is inside the data folder: write backups into {data / BACKUPS} or elsewhere.")
    return target


def take_snapshot(ctx: CommandContext, database: Path, workspace: Path) -> Snapshot:
    """The database and the files its rows name, as of one moment, into ``workspace``."""
    conn = dbmod.connect(database, readonly=True)
    try:
        for attempt in range(1, ATTEMPTS + 1):
            staged = workspace / "snapshot"
            files.remove(staged)
            staged.mkdir()
            integrity.begin_snapshot(conn)
            try:
                missing = link_named_files(ctx, conn, staged)
                link_keys(ctx, staged)
                if missing and attempt < ATTEMPTS:
                    ctx.say(f"{len(missing)} file(s) named by the snapshot were removed meanwhile: taking it again")
                    continue

                def between(done: int, total: int) -> None:
                    ctx.check()

                integrity.copy_database(conn, staged / DATABASE, PAGES, between)
                return Snapshot(staged, integrity.schema_version(conn), integrity.counts(conn), missing, attempt)
            finally:
                integrity.end_snapshot(conn)
        raise AssertionError("unreachable")
    finally:
        conn.close()


def link_named_files(ctx: CommandContext, conn, staged: Path) -> list[str]:
    """Hard-link into ``staged`` the folders of files/ and the thumbnails that the snapshot of
    ``conn`` names; the files it names that are not there (as paths in the archive)."""
    expected: dict[str, list[str]] = {}
    for _rid, folder, names in integrity.stored_files(conn):
        expected.setdefault(folder, []).extend(names)
    folders = set(expected)
    if ctx.files_dir.is_dir():
        for entry in os.scandir(ctx.files_dir):
            if entry.is_dir(follow_symlinks=False) and executions.folder_in_use(conn, entry.name):
                folders.add(entry.name)
    missing: list[str] = []
    for folder in sorted(folders):
        ctx.check()
        if not SAFE_NAME.fullmatch(folder):
            continue
        source, copy = ctx.files_dir / folder, staged / FILES / folder
        for root, dirs, names in os.walk(source):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
            for name in names:
                path = Path(root, name)
                if path.is_symlink() or name.endswith(files.SQLITE_SIDE_FILES):
                    continue
                if files.is_working_geopackage(path.relative_to(source).as_posix()):
                    _copy_geopackage(ctx, path, copy / path.relative_to(source))  # edits change it in place
                else:
                    _link(path, copy / path.relative_to(source))
        for name in expected.get(folder, []):
            if not (copy / name).is_file():
                missing.append(f"{FILES}/{folder}/{name}")
    thumbs = thumbnails.folder(ctx.data_dir)
    for _rid, url in integrity.thumbnails(conn):
        name = thumbnails.file_of(url)
        if name is None or (staged / THUMBS / name).exists():
            continue
        if not _link(thumbs / name, staged / THUMBS / name):
            missing.append(f"{THUMBS}/{name}")
    return missing


def link_keys(ctx: CommandContext, staged: Path) -> None:
    """The files of the data folder's keys/ (the signing key, written once and never changed)."""
    source = ctx.data_dir / KEYS
    if not source.is_dir():
        return
    for entry in os.scandir(source):
        if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
            _link(Path(entry.path), staged / KEYS / entry.name)


def _copy_geopackage(ctx: CommandContext, source: Path, target: Path) -> bool:
    """A working GeoPackage copied with SQLite's backup API (edits change it in place and may
    hold commits in its write-ahead log); one SQLite cannot read is copied as it is (the backup
    keeps what is there). False when ``source`` is gone."""
    try:
        gpkg_edit.copy_database(source, target)
    except FileNotFoundError:
        return False
    except sqlite3.DatabaseError as exc:
        ctx.say(f"NOTE {source.relative_to(ctx.files_dir.parent)} cannot be read as a GeoPackage ({exc}):"
                " copied as it is")
        try:
            shutil.copyfile(source, target)
        except FileNotFoundError:
            return False
    return True


def _link(source: Path, target: Path) -> bool:
    """A hard link (a copy where links cannot be made); False when ``source`` is gone."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except FileNotFoundError:
        return False
    except OSError:  # another file system, or one without links
        try:
            shutil.copyfile(source, target)
        except FileNotFoundError:
            return False
    return True


class _Hashing(io.RawIOBase):
    """A file read through: its SHA-256 and size as they go, a look at stop requests now and then."""

    def __init__(self, path: Path, ctx: CommandContext):
        self._file = open(path, "rb")
        self.sha = hashlib.sha256()
        self.size = 0
        self._ctx = ctx
        self._next_check = CHECK_EVERY

    def read(self, n: int = -1) -> bytes:
        data = self._file.read(n)
        self.sha.update(data)
        self.size += len(data)
        if self.size >= self._next_check:
            self._next_check += CHECK_EVERY
            self._ctx.check()
        return data

    def close(self) -> None:
        self._file.close()
        super().close()


def write_archive(ctx: CommandContext, snap: Snapshot, target: Path, gzip: bool) -> tuple[int, int]:
    """The tar of the snapshot, with its manifest last, written beside ``target`` under a
    temporary name and renamed once complete and fsynced; (members, bytes)."""
    part = target.with_name(f".{target.name}.part-{secrets.token_hex(4)}")
    members: list[dict[str, Any]] = []
    paths = [(snap.folder / DATABASE, DATABASE)]
    for top in (FILES, THUMBS, KEYS):
        base = snap.folder / top
        if base.is_dir():
            paths += [(base / rel, f"{top}/{rel}") for rel in files.relative_files(base)]
    try:
        with open(part, "xb") as raw:
            with tarfile.open(fileobj=raw, mode="w:gz" if gzip else "w", format=tarfile.PAX_FORMAT) as tar:
                for path, name in paths:
                    ctx.check()
                    info = tarfile.TarInfo(name)
                    stat = path.stat()
                    info.size, info.mtime = stat.st_size, int(stat.st_mtime)
                    info.mode = 0o600 if name.startswith(KEYS + "/") else 0o644
                    reader = _Hashing(path, ctx)
                    try:
                        tar.addfile(info, reader)
                    finally:
                        reader.close()
                    members.append({"name": name, "size": reader.size, "sha256": reader.sha.hexdigest()})
                manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "catalogue_version": __version__,
                            "created": clock.now(), "user_version": snap.schema, "counts": snap.counts,
                            "missing": snap.missing, "members": members}
                body = json.dumps(manifest, indent=1, ensure_ascii=False).encode()
                info = tarfile.TarInfo(MANIFEST)
                info.size, info.mtime, info.mode = len(body), int(time.time()), 0o644
                tar.addfile(info, io.BytesIO(body))
            raw.flush()
            os.fsync(raw.fileno())
        if target.exists():
            raise CommandError(f"{target} exists already: choose another --output.")
        os.rename(part, target)
        files.sync_folder(target.parent)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise CommandError(f"Cannot write the backup to {target}: {exc.strerror or exc}") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return len(members) + 1, target.stat().st_size
