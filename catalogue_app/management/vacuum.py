"""``vacuum``: give the database's free pages back to the file system, while the server serves.

The catalogue's database is made with auto_vacuum NONE (SQLite's default, fixed when the file is
created), so PRAGMA incremental_vacuum does nothing for it: a full VACUUM is the way. In WAL mode
VACUUM is one write transaction that writes the compacted database into the write-ahead log;
readers go on reading the snapshot they have, writers wait for it. It cannot run inside a
transaction, so it runs on the writer's own connection between two writes
(``Database.maintenance_sync``: the writers of every server process wait for it, as for any
write). Then a TRUNCATE checkpoint copies the log into the file, which shrinks, and empties the
log. A database made with auto_vacuum INCREMENTAL (none is, today) gets incremental_vacuum,
which needs no copy. VACUUM needs free disk space of about twice the database's size (its
temporary copy, then the log): it is refused with less.

``--drop-versions-before DATE`` first forgets the versions made before the date, on request only
(services/history.py ``drop_versions_before``): versions of fields and of data, each resource's
history cut at one number, but never its newest version nor its newest version of data. The
catalogue's rows go first, then each dataset's GeoPackage forgets the same data versions with
their feature changes and is compacted (its own VACUUM); the report says how many went and how
much space the GeoPackages gave back. A version before a cut is then refused plainly.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from catalogue_app.clock import now
from catalogue_app.management.base import Command, CommandContext, CommandError
from catalogue_app.services import history
from catalogue_app.services.errors import Invalid
from catalogue_app.services.values import parse_datetime
from catalogue_app.store import integrity


def _on_disk(path: Path) -> int:
    """The database file and its write-ahead log, in bytes."""
    total = 0
    for suffix in ("", "-wal"):
        try:
            total += Path(f"{path}{suffix}").stat().st_size
        except FileNotFoundError:
            pass
    return total


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def _size(n: float) -> str:
    return _mb(n) if n >= 1e6 else f"{n / 1e3:.0f} kB"


def _cutoff(value: str) -> str:
    """The time ``--drop-versions-before`` names, as the store keeps times; not in the future."""
    try:
        moment = parse_datetime(value)
    except Invalid:
        raise CommandError(f"--drop-versions-before: {value!r} is not a date (YYYY-MM-DD) or a time "
                           "(YYYY-MM-DDThh:mm[:ss][+HH:MM|Z]).") from None
    if moment > now():
        raise CommandError(f"--drop-versions-before: {value} is in the future.")
    return moment


class Vacuum(Command):
    name = "vacuum"
    help = ("Compact the database (VACUUM) while the server serves; prints its size before and after. With"
            " --drop-versions-before, first forget the versions (of fields and of data) older than that date.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--drop-versions-before", metavar="DATE",
                            help="forget the versions (of fields and of data) made before this date or time (UTC"
                                 " unless it says otherwise), but each resource's newest version and newest version"
                                 " of data")

    def run(self, ctx: CommandContext, options) -> None:
        db = ctx.db
        if db is None:
            raise CommandError("vacuum needs the catalogue's database.")
        if options.drop_versions_before:
            cutoff = _cutoff(options.drop_versions_before)
            ctx.check()
            dropped = history.drop_versions_before(db, cutoff, between=ctx.check)
            ctx.say(f"Versions: {dropped.field_versions} metadata version(s) and {dropped.data_versions} data"
                    f" version(s) made before {cutoff} forgotten, from {dropped.resources} resource(s).")
            if dropped.files:
                ctx.say(f"Data versions: {dropped.file_versions} data version(s) and {dropped.changes} feature"
                        f" change(s) deleted from {dropped.files} dataset GeoPackage(s);"
                        f" {_size(dropped.freed)} given back.")
            for note in dropped.notes:
                ctx.say(f"Note: {note}.")
            ctx.check()
        before = db.read_sync(integrity.space)
        disk_before = _on_disk(db.path)
        ctx.say(f"Before: {_mb(disk_before)} on disk (database and log), {before['pages']} pages of"
                f" {before['page_size']} bytes, {before['free_pages']} free; auto_vacuum {before['auto_vacuum']}")
        ctx.check()
        started = time.monotonic()
        if before["auto_vacuum"] == "INCREMENTAL":
            db.write_sync(integrity.incremental_vacuum)
            how = "incremental_vacuum"
        else:
            needed = 2 * before["pages"] * before["page_size"]
            free = shutil.disk_usage(db.path.parent).free
            if free < needed:
                raise CommandError(f"VACUUM needs about {_mb(needed)} of free disk space; {_mb(free)} are free.")
            db.maintenance_sync(integrity.vacuum)
            how = "VACUUM"
        took = time.monotonic() - started
        busy, _, _ = db.maintenance_sync(integrity.checkpoint)
        after = db.read_sync(integrity.space)
        disk_after = _on_disk(db.path)
        ctx.say(f"{how} took {took:.2f} s (writes waited meanwhile; reads went on).")
        ctx.say(f"After: {_mb(disk_after)} on disk, {after['pages']} pages, {after['free_pages']} free:"
                f" {_mb(max(0, disk_before - disk_after))} given back.")
        if busy:
            ctx.say("Readers kept the log from being emptied now: the file shrinks at a later checkpoint.")
