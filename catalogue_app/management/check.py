"""``check`` and ``repair``: is the data folder what its database says, and are the database and
the indexes its triggers keep sound?

``check`` only looks (it runs FTS5's 'integrity-check' through the writer, which changes
nothing but is an INSERT for SQLite) and prints one line per problem, a code first:

- ``INTEGRITY <message>``: SQLite's integrity_check (``--quick``: quick_check) found damage;
- ``FOREIGN_KEY <table> row <rowid> -> <table>``: a reference to a missing row;
- ``MISSING_FOLDER resource <id> files/<folder>``, ``MISSING_FILE resource <id> files/<folder>/<name>``:
  a stored file of a resource (its resource_files rows, under ``datasets.folder`` or its uuid) is gone;
- ``MISSING_THUMBNAIL resource <id> thumbs/<name>``: the file its thumbnail_url names is gone;
- ``ORPHAN_FOLDER files/<name>``, ``ORPHAN_FILE files/<name>`` or ``thumbs/<name>``: no record
  owns it (only those older than ``--min-age`` seconds, 600 by default as the start-up sweep,
  and not noted by a job's workspace: a job moves its folder into files/ just before its commit);
- ``STALE_INDEX <index>: ...``: a text index out of step with its table (counts, then FTS5's
  'integrity-check', which holds the writers while it reads, about 2 s per 100,000 resources;
  ``--quick`` leaves it out, with SQLite's integrity_check made a quick_check);
- ``STALE_EXTENTS resource_extents: ...``: the R*Tree of extents out of step with the resources' boxes;
- ``INVALID_MARK resource <id>``: marked INVALID by repair, and its files are all there again.

A resource that ``repair`` marked INVALID and whose files are still missing is a NOTE line, not a
problem (it is known and visible in the API: ``state`` INVALID, ``processed`` false). Then a
summary. On the command line the exit code is 1 when a problem was found.

``repair`` does what is safe, each fix in its own transaction (``ctx.db.write_sync``) with a look
at stop requests between two: rebuilds a stale text index (FTS5 'rebuild'; the contentless word
index is emptied and filled again) and the R*Tree; moves orphans into
``<data folder>/lost+found/<UTC time>/`` (never deletes them: move them back, or delete them);
marks a resource whose files are gone INVALID (its record is kept; ``repair`` sets it back to
PROCESSED once its files are back) and forgets a thumbnail address whose file is gone (draw a new
one with ``set_thumbnail_from_bbox``). Damage SQLite finds and broken references are left to a
person (restore a backup). ``--dry-run`` says what it would do.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from catalogue_app import files
from catalogue_app.jobs import thumbnails
from catalogue_app.management.base import Command, CommandContext, CommandError
from catalogue_app.store import executions, integrity

MIN_AGE = 600.0
LOST = "lost+found"


@dataclass
class Finding:
    code: str
    text: str
    fix: tuple | None = None  # what repair does: ("rebuild_text", table), ("mark", rid)...; None: a person

    def line(self) -> str:
        return f"{self.code} {self.text}"


@dataclass
class Survey:
    problems: list[Finding]
    notes: list[str]
    looked_at: str


def _age(path: Path) -> float:
    info = path.lstat()
    return time.time() - max(info.st_mtime, info.st_ctime)


def _missing_of(files_dir: Path, folder: str, names: list[str]) -> tuple[bool, list[str]]:
    """(whether the folder is gone, the stored files not there)."""
    base = files_dir / folder
    if not base.is_dir():
        return True, names
    return False, [n for n in names if not (base / n).is_file()]


def survey(ctx: CommandContext, quick: bool = False, min_age: float = MIN_AGE) -> Survey:
    """Every check, in order, with a look at stop requests between two."""
    db = ctx.db
    if db is None:
        raise CommandError("check needs the catalogue's database.")
    problems: list[Finding] = []
    notes: list[str] = []

    # the database file
    for message in db.read_sync(integrity.integrity_problems, quick):
        problems.append(Finding("INTEGRITY", message))
    ctx.check()
    for table, rowid, parent in db.read_sync(integrity.foreign_key_problems):
        problems.append(Finding("FOREIGN_KEY", f"{table} row {rowid} -> {parent}"))
    ctx.check()

    # each resource's files
    stored = db.read_sync(lambda conn: list(integrity.stored_files(conn)))
    invalid = set(db.read_sync(integrity.invalid_resources))
    for rid, folder, names in stored:
        gone, missing = _missing_of(ctx.files_dir, folder, names)
        if missing:  # looked at again, as committed now: a job may have just switched folders
            now = db.read_sync(integrity.files_of, rid)
            if now is None:
                continue
            folder, names = now
            gone, missing = _missing_of(ctx.files_dir, folder, names)
        if not missing:
            if rid in invalid:
                problems.append(Finding("INVALID_MARK", f"resource {rid}: marked INVALID, its files are all there again",
                                        ("unmark", rid)))
            continue
        if rid in invalid:
            notes.append(f"NOTE resource {rid} is marked INVALID: {len(missing)} of its files are missing"
                         f" (files/{folder}/{missing[0]}{', ...' if len(missing) > 1 else ''})")
            continue
        if gone:
            problems.append(Finding("MISSING_FOLDER", f"resource {rid} files/{folder}", ("mark", rid)))
        else:
            for name in missing:
                problems.append(Finding("MISSING_FILE", f"resource {rid} files/{folder}/{name}", ("mark", rid)))
    ctx.check()
    thumbs = thumbnails.folder(ctx.data_dir)
    for rid, url in db.read_sync(integrity.thumbnails):
        name = thumbnails.file_of(url)
        if name is not None and not (thumbs / name).is_file() and db.read_sync(integrity.thumbnail_of, rid) == url:
            problems.append(Finding("MISSING_THUMBNAIL", f"resource {rid} thumbs/{name}", ("thumbnail", rid, url)))
    ctx.check()

    # what no record owns
    noted = files.noted_folders(ctx.tmp_dir)
    folders = 0
    for entry in sorted(ctx.files_dir.iterdir()) if ctx.files_dir.is_dir() else ():
        folders += 1
        try:
            if _age(entry) < min_age:
                continue
        except OSError:
            continue
        if entry.is_dir() and not entry.is_symlink():
            if entry.name not in noted and not db.read_sync(executions.folder_in_use, entry.name):
                problems.append(Finding("ORPHAN_FOLDER", f"files/{entry.name}", ("orphan", "files", entry.name)))
        else:
            problems.append(Finding("ORPHAN_FILE", f"files/{entry.name}", ("orphan", "files", entry.name)))
    used = {thumbnails.file_of(url) for _, url in db.read_sync(integrity.thumbnails)}
    thumb_files = 0
    for entry in sorted(thumbs.iterdir()) if thumbs.is_dir() else ():
        thumb_files += 1
        try:
            if entry.name in used or _age(entry) < min_age:
                continue
        except OSError:
            continue
        problems.append(Finding("ORPHAN_FILE", f"thumbs/{entry.name}", ("orphan", "thumbs", entry.name)))
    ctx.check()

    # the indexes kept by triggers
    stale: dict[str, str] = dict(db.read_sync(integrity.text_index_counts))
    tables = db.read_sync(integrity.text_indexes)
    for table in tables:
        ctx.check()
        if table not in stale and not quick:  # (an INSERT for SQLite: it holds the writers while it reads)
            message = db.write_sync(integrity.text_index_check, table)
            if message:
                stale[table] = f"FTS5 integrity-check: {message}"
    for table in tables:
        if table in stale:
            problems.append(Finding("STALE_INDEX", f"{table}: {stale[table]}", ("rebuild_text", table)))
    ctx.check()
    for message in db.read_sync(integrity.extent_problems):
        problems.append(Finding("STALE_EXTENTS", f"resource_extents: {message}", ("rebuild_extents",)))
    looked_at = (f"{'quick_check' if quick else 'integrity_check'}, foreign keys, {len(stored)} resources' files,"
                 f" {folders} entries of files/, {thumb_files} thumbnails, {len(tables)} text indexes, the extents")
    return Survey(problems, notes, looked_at)


def _report(ctx: CommandContext, found: Survey) -> None:
    for finding in found.problems:
        ctx.say(finding.line())
    for note in found.notes:
        ctx.say(note)


def _options(parser) -> None:
    parser.add_argument("--quick", action="store_true",
                        help="SQLite's quick_check instead of integrity_check, and the text indexes compared by their"
                             " counts only, without FTS5's integrity-check (which holds the writers while it reads:"
                             " about 2 s per 100,000 resources)")
    parser.add_argument("--min-age", type=float, default=MIN_AGE, metavar="SECONDS",
                        help=f"orphans younger than this are left alone: a job may be moving them (default {MIN_AGE:g})")


class Check(Command):
    name = "check"
    help = ("Report what is wrong with the catalogue (database, files, orphans, text and extent indexes);"
            " changes nothing. Exit code 1 when a problem is found.")

    def add_arguments(self, parser) -> None:
        _options(parser)

    def run(self, ctx: CommandContext, options) -> None:
        found = survey(ctx, options.quick, max(0.0, options.min_age))
        _report(ctx, found)
        n = len(found.problems)
        ctx.say(f"Checked {found.looked_at}: " + (f"{n} problem(s)." if n else "no problems."))
        if n:
            codes = sorted({f.code for f in found.problems})
            raise CommandError(f"{n} problem(s) found ({', '.join(codes)}); `catalogue repair` fixes the safe ones.")


class Repair(Command):
    name = "repair"
    help = ("Fix what check finds that is safe to fix: rebuild stale indexes, move orphans into lost+found/,"
            " mark resources whose files are gone INVALID. Never deletes a record or a file.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="say what would be done, do nothing")
        _options(parser)

    def run(self, ctx: CommandContext, options) -> None:
        found = survey(ctx, options.quick, max(0.0, options.min_age))
        _report(ctx, found)
        lost = ctx.data_dir / LOST / datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        done: set[tuple] = set()
        fixed, left = 0, []
        for finding in found.problems:
            if finding.fix is None:
                left.append(finding)
                continue
            if finding.fix in done:
                continue
            done.add(finding.fix)
            ctx.check()
            what = describe(finding.fix, lost, ctx.data_dir)
            if options.dry_run:
                ctx.say(f"would {what}")
                continue
            if apply(ctx, finding.fix, lost):
                fixed += 1
                ctx.say(f"fixed: {what}")
            else:
                ctx.say(f"skipped (changed meanwhile): {what}")
        for finding in left:
            ctx.say(f"not repaired: {finding.line()} (needs a person: restore a backup, or mend it by hand)")
        verb = "would fix" if options.dry_run else "fixed"
        ctx.say(f"Repair {verb} {len(done) if options.dry_run else fixed} thing(s); {len(left)} problem(s) left"
                " that it does not repair.")
        if left:
            raise CommandError(f"{len(left)} problem(s) need a person ({', '.join(sorted({f.code for f in left}))}).")


def describe(fix: tuple, lost: Path, data_dir: Path) -> str:
    kind = fix[0]
    if kind == "rebuild_text":
        return f"rebuild the text index {fix[1]}"
    if kind == "rebuild_extents":
        return "rebuild the extents index resource_extents from the resources' boxes"
    if kind == "orphan":
        return f"move {fix[1]}/{fix[2]} to {(lost / fix[1] / fix[2]).relative_to(data_dir)}"
    if kind == "mark":
        return f"mark resource {fix[1]} INVALID (its files are missing; its record is kept)"
    if kind == "unmark":
        return f"set resource {fix[1]} back to PROCESSED (its files are there again)"
    if kind == "thumbnail":
        return f"forget the thumbnail of resource {fix[1]} (its file {fix[2]} is gone)"
    return repr(fix)


def apply(ctx: CommandContext, fix: tuple, lost: Path) -> bool:
    """One fix in its own transaction, with what it depends on looked at again inside it;
    whether it was done."""
    db, kind = ctx.db, fix[0]
    if kind == "rebuild_text":
        db.write_sync(integrity.rebuild_text_index, fix[1])
        return True
    if kind == "rebuild_extents":
        db.write_sync(integrity.rebuild_extents)
        return True
    if kind == "orphan":
        return db.write_sync(_move_orphan(ctx, fix[1], fix[2], lost))
    if kind in ("mark", "unmark"):
        def mark(conn) -> bool:
            now = integrity.files_of(conn, fix[1])
            missing = now is not None and any(_missing_of(ctx.files_dir, *now))
            if kind == "mark":
                return missing and integrity.mark_invalid(conn, fix[1])
            return not missing and integrity.unmark_invalid(conn, fix[1])
        return db.write_sync(mark)
    if kind == "thumbnail":
        name = thumbnails.file_of(fix[2])

        def forget(conn) -> bool:
            gone = name is None or not (thumbnails.folder(ctx.data_dir) / name).is_file()
            return gone and integrity.clear_thumbnail(conn, fix[1], fix[2])
        return db.write_sync(forget)
    raise ValueError(fix)


def _move_orphan(ctx: CommandContext, top: str, name: str, lost: Path) -> Callable:
    """The write that moves an orphan into lost+found, if no record owns it by then (looked at
    inside the write transaction, so that none can take it up between the look and the move)."""
    def move(conn) -> bool:
        if top == "files":
            source = ctx.files_dir / name
            if source.is_dir() and executions.folder_in_use(conn, name):
                return False
        else:
            source = thumbnails.folder(ctx.data_dir) / name
            if integrity.thumbnail_used(conn, thumbnails.URL_PREFIX + name):
                return False
        if not source.exists() and not source.is_symlink():
            return False
        (lost / top).mkdir(parents=True, exist_ok=True)
        os.rename(source, lost / top / name)
        files.sync_folder(source.parent)
        return True
    return move
