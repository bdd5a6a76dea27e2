"""``restore ARCHIVE``: a backup (management/backup.py) made into a data folder again.

Command line only, into an empty or new data folder on which no server runs. Every member of
the archive is checked as it is read: a regular file (no links, devices or folders of its own),
a relative path without ``..`` inside catalogue.sqlite3, files/, thumbs/ or keys/ (and passed through
tarfile's ``data`` filter), then against the manifest (size and SHA-256). It is extracted into
a temporary folder beside the target (same file system), the database is checked
(``PRAGMA integrity_check``) and brought up to this version's schema when older, and only then
is the folder renamed into place: a refused or failed restore leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tarfile
import zlib
from pathlib import Path

from catalogue_app import files
from catalogue_app.management.backup import DATABASE, FILES, FORMAT, FORMAT_VERSION, KEYS, MANIFEST, THUMBS
from catalogue_app.management.base import Command, CommandContext, CommandError
from catalogue_app.store import db as dbmod
from catalogue_app.store import integrity

CHUNK = 1024 * 1024


class Restore(Command):
    name = "restore"
    help = "Restore a backup archive into an empty (or new) data folder: catalogue restore ARCHIVE --data-dir D"
    over_http = False
    prepares_data = False

    def add_arguments(self, parser) -> None:
        parser.add_argument("archive", help="the archive written by `catalogue backup`")

    def run(self, ctx: CommandContext, options) -> None:
        archive = Path(options.archive).expanduser().absolute()
        target = ctx.data_dir.expanduser().absolute()
        if not archive.is_file():
            raise CommandError(f"{archive}: no such file.")
        if ctx.server_running:
            raise CommandError(f"A server runs on {target}: restore into a new data folder.")
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise CommandError(f"{target} is not empty: restore into an empty or new data folder.")
        if not target.parent.is_dir():
            raise CommandError(f"{target.parent} is not a folder.")
        work = target.parent / f".{target.name}.restore-{secrets.token_hex(4)}"
        try:
            work.mkdir()
        except OSError as exc:
            raise CommandError(f"Cannot write in {target.parent}: {exc.strerror or exc}") from None
        try:
            manifest, read = extract(archive, work)
            verify(manifest, read)
            database = work / DATABASE
            problems = integrity.problems_of_file(database)
            if problems:
                raise CommandError(f"The database in {archive.name} is damaged: {problems[0]}")
            schema = manifest["user_version"]
            newest = integrity.newest_schema()
            if schema > newest:
                raise CommandError(f"The backup's database has schema {schema}; this catalogue knows up to {newest}:"
                                   " restore it with a newer catalogue.")
            if schema < newest:
                dbmod.migrate(database)
                ctx.say(f"Database schema {schema} brought up to {newest}.")
            for sub in ("tmp", "import", FILES, THUMBS):
                (work / sub).mkdir(exist_ok=True)
            keep_keys_private(work / KEYS)
            files.sync_tree(work)
            if target.exists():
                target.rmdir()  # empty, as checked
            os.rename(work, target)
            files.sync_folder(target.parent)
        except BaseException:
            files.remove(work)
            raise
        counts = manifest.get("counts", {})
        size = sum(m["size"] for m in manifest["members"])
        ctx.say(f"Restored {archive} into {target}:")
        ctx.say(f"  {counts.get('resources', '?')} resources ({counts.get('datasets', 0)} datasets,"
                f" {counts.get('documents', 0)} documents, {counts.get('maps', 0)} maps),"
                f" {counts.get('users', '?')} users, {len(manifest['members']) - 1} files, {size / 1e6:.1f} MB")
        ctx.say(f"  made {manifest.get('created')} by catalogue {manifest.get('catalogue_version')}"
                f" (database schema {schema})")
        for name in manifest.get("missing", []):
            ctx.say(f"  MISSING {name}: absent from the catalogue when the backup was made")


def keep_keys_private(folder: Path) -> None:
    """The restored signing key readable by this user only, as the catalogue made it."""
    if folder.is_dir():
        folder.chmod(0o700)
        for path in folder.iterdir():
            path.chmod(0o600)


def _safe(member: tarfile.TarInfo, work: Path) -> None:
    """CommandError unless the member is a plain file at a harmless place."""
    name = member.name
    if not (member.isfile() and member.type in (tarfile.REGTYPE, tarfile.AREGTYPE)):
        kind = "a link" if member.issym() or member.islnk() else "not a regular file"
        raise CommandError(f"Refused: member {name!r} is {kind}.")
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
        raise CommandError(f"Refused: member {name!r} has an absolute path or '..' in it.")
    if not (name in (DATABASE, MANIFEST) or (parts[0] in (FILES, THUMBS) and len(parts) > 1)
            or (parts[0] == KEYS and len(parts) == 2)):
        raise CommandError(f"Refused: member {name!r} is not part of a catalogue backup.")
    try:
        tarfile.data_filter(member, str(work))
    except tarfile.FilterError as exc:
        raise CommandError(f"Refused: member {name!r}: {exc}") from None


def extract(archive: Path, work: Path) -> tuple[dict, dict[str, tuple[int, str]]]:
    """Read the archive once, each member checked and written under ``work``; the manifest and
    what was read (name: (size, sha256))."""
    read: dict[str, tuple[int, str]] = {}
    manifest = None
    try:
        tar = tarfile.open(archive, "r:*")
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        first = str(exc).splitlines()[0].rstrip(":")
        raise CommandError(f"{archive.name} is not a backup archive (a tar, or a gzip-compressed tar): {first}") from None
    try:
        with tar:
            for member in tar:
                _safe(member, work)
                if member.name in read or (member.name == MANIFEST and manifest is not None):
                    raise CommandError(f"Refused: member {member.name!r} is in the archive twice.")
                source = tar.extractfile(member)
                if member.name == MANIFEST:
                    manifest = _manifest(source.read(16 * 1024 * 1024 + 1))
                    continue
                path = work / member.name
                path.parent.mkdir(parents=True, exist_ok=True)
                sha, size = hashlib.sha256(), 0
                with open(path, "wb") as out:
                    while chunk := source.read(CHUNK):
                        sha.update(chunk)
                        size += len(chunk)
                        out.write(chunk)
                read[member.name] = (size, sha.hexdigest())
    except CommandError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise CommandError(f"{archive.name} is damaged or cut short: {exc}") from None
    if manifest is None:
        raise CommandError(f"{archive.name} is damaged, cut short or not a catalogue backup: it ends without"
                           f" {MANIFEST}.")
    return manifest, read


def _manifest(body: bytes) -> dict:
    try:
        manifest = json.loads(body)
    except ValueError:
        raise CommandError(f"The archive's {MANIFEST} is damaged (not JSON).") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CommandError(f"The archive's {MANIFEST} is not that of a catalogue backup.")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CommandError(f"Backup format {manifest.get('format_version')} is not one this catalogue reads"
                           f" ({FORMAT_VERSION}).")
    members = manifest.get("members")
    if not isinstance(members, list) or not isinstance(manifest.get("user_version"), int) or not all(
            isinstance(m, dict) and isinstance(m.get("name"), str) and isinstance(m.get("size"), int)
            and isinstance(m.get("sha256"), str) for m in members):
        raise CommandError(f"The archive's {MANIFEST} is damaged (its list of members).")
    return manifest


def verify(manifest: dict, read: dict[str, tuple[int, str]]) -> None:
    """Every member as the manifest says, and nothing else; CommandError naming the first that is not."""
    listed = {m["name"]: (m["size"], m["sha256"]) for m in manifest["members"]}
    if DATABASE not in listed:
        raise CommandError(f"The backup holds no {DATABASE}.")
    for name, (size, sha) in listed.items():
        got = read.get(name)
        if got is None:
            raise CommandError(f"The archive is damaged: member {name} is missing.")
        if got[0] != size:
            raise CommandError(f"The archive is damaged: member {name} has {got[0]} bytes, the manifest says {size}.")
        if got[1] != sha:
            raise CommandError(f"The archive is damaged: member {name} does not match its SHA-256 in the manifest.")
    extra = sorted(set(read) - set(listed))
    if extra:
        raise CommandError(f"The archive is damaged: member {extra[0]} is not in the manifest.")
