"""Realistic made-up resources in bulk, for tests, demos and benchmarks (`catalogue seed`).

Rows go in inside one transaction (the caller's, or one of its own with `seed`): the resources
with executemany, their links with one statement per table and batch; the indexes are filled or
built once at the end (see seed_resources). A large load of `seed` has its links and indexes
built alongside, by worker processes (seed_side).
"""

from __future__ import annotations

import gc
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import numpy as np

from catalogue_app.clock import now
from catalogue_app.store import db, text_index
from catalogue_app.seeding import extents as seed_extents
from catalogue_app.seeding import side as seed_side
from catalogue_app.store.migrations import add_to_tally, change_triggers, fill_listed_extents, fill_word_index
from catalogue_app.seeding.side import INSERT_KEYWORDS, INSERT_LISTED, INSERT_PERMS, INSERT_REGIONS, packed
from catalogue_app.store.users import ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID

SUBJECTS = ["river", "flood", "forest", "soil", "road", "railway", "coastline", "wetland", "glacier", "land use",
            "population", "school", "hospital", "water supply", "power line", "vineyard", "airport", "harbour",
            "landslide", "wildfire", "groundwater", "cadastre", "bridge", "hiking trail", "protected area"]
KINDS = ["map", "survey", "inventory", "plan", "atlas", "model", "census", "monitoring", "assessment", "network"]
PLACES = ["Zürich", "São Paulo", "Kraków", "Nairobi", "Québec", "Reykjavík", "Kyoto", "Lima", "Tromsø", "Accra",
          "Dakar", "Hanoi", "Valparaíso", "Tbilisi", "Cusco", "Ålesund", "Toulouse", "Bergen", "Oaxaca", "Pune"]
KEYWORDS = ["hydrology", "agriculture", "transport", "energy", "biodiversity", "climate", "elevation", "boundaries",
            "demography", "health", "education", "imagery", "geology", "oceans", "urban", "forestry", "risk",
            "infrastructure", "tourism", "heritage", "satellite", "lidar", "survey", "open data", "école"]
TYPES = [("dataset", "vector", 45), ("dataset", "raster", 15), ("document", None, 25), ("map", None, 10),
         ("geostory", None, 3), ("dashboard", None, 2)]

# A row binds each of its 21 distinct values once (?N repeats it: date and the end of the time
# extent are the creation date, the WGS84 box is the native one); constant columns are literals.
INSERT = (
    "INSERT INTO resources (id, uuid, resource_type, subtype, owner_id, title, abstract, created, last_updated,"
    " date, date_type, category_id, license_id, alternate, srid, bbox_x0, bbox_y0, bbox_x1, bbox_y1,"
    " ll_x0, ll_y0, ll_x1, ll_y1, temporal_extent_start, temporal_extent_end, popular_count, featured,"
    " is_published, is_approved, advertised, public_view, attribution, blob)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?8, 'publication', ?10, ?11, ?12, 'EPSG:4326', ?13, ?14, ?15, ?16,"
    " ?13, ?14, ?15, ?16, ?17, ?8, ?18, ?19, 1, 1, 1, ?20, 'Seed data', ?21)"
)
# Triggers that keep an index in step row by row: dropped during the load, made again after it,
# their index filled in bulk by seed_resources (extents: seed_extents.fill; text, words and the
# keywords of listed resources: one INSERT ... SELECT each, or built by seed_side; the tally:
# from the counts the batches bring). A new index kept by triggers on these tables goes here
# with its bulk fill.
INDEX_TRIGGERS = ("resources_extent_insert", "resources_text_insert", "listed_keywords_insert", "resources_words_insert",
                  "resource_tally_insert", "listed_extents_insert")
BATCH = 20_000
SWITCH_INTERVAL = 0.0002  # seconds, while the seed's threads share Python's lock
# The page cache of the seed's connection. Past it, the pages that a large load writes go to the
# write-ahead log during the load, while the workers of seed_side still work, rather than all at
# the commit (at 1,000,000 resources: 4 % faster than 1 GB, and 0.8 GB less memory).
BULK_CACHE_KIB = 256 * 1024
BULK_TABLES = ("resources", "resource_perms", "resource_keywords", "resource_regions")
# Indexes kept up to date during a large load: the new rows' keys go at the end (they lead with
# the new id) or at the end of a few runs (a handful of owners, groups, keywords... followed by
# the new id), or the new rows are not in them at all (partial indexes). The others are dropped
# and built again from sorted data afterwards, which is cheaper than inserting keys at random.
APPENDED_INDEXES = {"resources_visible", "resources_owner", "resources_category", "resources_thumbnail",
                    "resource_perms_by_user", "resource_perms_by_group", "resource_perms_resource",
                    "resource_keywords_keyword", "resource_regions_region"}


def _stamps(moments: np.ndarray) -> list[str]:
    """Moments (numpy datetime64) as the store writes them: 2015-01-01T00:00:00.000000Z."""
    return np.char.add(np.datetime_as_string(moments, unit="us"), "Z").tolist()


@dataclass
class Batch:
    """The rows of a run of new resources with consecutive ids from ``start``: the resources as
    tuples for executemany, the link tables as JSON arrays of packed integers (one statement
    each, see seed_side.INSERT_PERMS...), what the indexes filled after the load need."""

    start: int
    resources: list[tuple]
    links: tuple[str, str, str]  # permissions, keywords, regions
    listed: np.ndarray  # keyword_id << 32 | resource_id for the keywords of listed (public) rows
    titles: list[str]
    abstracts: list[str]
    hidden: list[str | None]  # the word index's column: 'h' for the rows anonymous callers do not list
    extent_ids: np.ndarray  # the extent index's entries: ids (2 * resource id) and their boxes
    extent_boxes: np.ndarray  # (n, 4): minx, maxx, miny, maxy
    tally: Counter  # how many of each (resource_type, public_view, advertised, dirty)


def _packed(high: np.ndarray, low: np.ndarray) -> str:
    return packed(high.astype(np.int64) << 32 | low)


class Generator:
    """Makes up resources from the reference data of one database (owners, groups, regions...)."""

    def __init__(self, conn: sqlite3.Connection, rng: np.random.Generator, public_share: float,
                 types: tuple[str, ...] = ()):
        self.rng, self.public_share = rng, public_share
        self.owners = [r[0] for r in conn.execute("SELECT id FROM users WHERE is_active = 1")]
        self.groups = [r[0] for r in conn.execute("SELECT group_id FROM group_profiles")]
        self.categories = [r[0] for r in conn.execute("SELECT id FROM categories")]
        self.licenses = [r[0] for r in conn.execute("SELECT id FROM licenses")]
        countries = conn.execute("SELECT id, bbox_x0, bbox_y0, bbox_x1, bbox_y1 FROM regions WHERE level = 2").fetchall()
        self.country_ids = np.array([c[0] for c in countries], np.int64)
        self.boxes = np.array([tuple(c)[1:] for c in countries], np.float64).reshape(len(countries), 4)
        self.keyword_ids = []
        for name in KEYWORDS:
            slug = name.replace(" ", "-").replace("é", "e")
            conn.execute("INSERT OR IGNORE INTO keywords (name, slug) VALUES (?, ?)", (name, slug))
            self.keyword_ids.append(conn.execute("SELECT id FROM keywords WHERE slug = ?", (slug,)).fetchone()[0])
        self.kinds = [t for t in TYPES if not types or t[0] in types for _ in range(t[2])]
        if not self.kinds:
            raise ValueError(f"no resource type among {types!r}; known: {sorted({t[0] for t in TYPES})}")
        # a pool of (created, a year before) stamps: formatting dates row by row is slow
        moments = np.datetime64("2015-01-01T00:00:00", "us") + rng.integers(0, 11 * 365 * 86400, 20_000).astype("m8[s]")
        self.stamps = list(zip(_stamps(moments), _stamps(moments - np.timedelta64(365, "D"))))
        self.now = now()

    def batch(self, ids: range) -> Batch:
        """The rows of the resources with these ids: every choice is drawn for the whole run at
        once with numpy, then the rows are zipped from the columns."""
        rng, n = self.rng, len(ids)
        rid = np.arange(ids.start, ids.stop, dtype=np.int64)

        def pick(seq: list, size: int = n) -> list:
            return [seq[i] for i in rng.integers(0, len(seq), size).tolist()]

        kind, subtype, _ = zip(*pick(self.kinds))
        subjects = [(s, s.capitalize()) for s in SUBJECTS]
        subject, place, kinds = pick(subjects), pick(PLACES), pick(KINDS)
        rids = rid.tolist()
        titles = [f"{s[1]} {k} of {p} {r:06d}" for s, k, p, r in zip(subject, kinds, place, rids)]
        abstracts = [f"This {k} describes the {s[0]} of the {p} area, with {a} and {b} observed in {2000 + r % 25}."
                     f" Produced for the {w} programme."
                     for k, s, p, a, b, r, w in zip(kind, subject, place, pick(SUBJECTS), pick(SUBJECTS), rids, pick(KEYWORDS))]
        country = rng.integers(0, len(self.country_ids), n)
        x0, y0, x1, y1 = (self.boxes[:, i][country] for i in range(4))
        w, h = (x1 - x0) * (0.05 + 0.45 * rng.random(n)), (y1 - y0) * (0.05 + 0.45 * rng.random(n))
        bx0, by0 = x0 + (x1 - w - x0) * rng.random(n), y0 + (y1 - h - y0) * rng.random(n)
        box = [np.round(v, 6) for v in (bx0, by0, bx0 + w, by0 + h)]
        created, year_before = zip(*pick(self.stamps))
        public = rng.random(n) < self.public_share
        datasets = [k == "dataset" for k in kind]
        resources = list(zip(  # in the order of INSERT's parameters
            rids, _uuids(rng, n), kind, subtype, pick(self.owners), titles, abstracts, created, repeat(self.now),
            pick(self.categories), pick(self.licenses),
            [f"catalogue:seed_{r}" if d else None for r, d in zip(rids, datasets)], *(v.tolist() for v in box),
            year_before, (rng.random(n) * 500).astype(np.int64).tolist(), (rng.random(n) < 0.05).astype(np.int64).tolist(),
            public.astype(np.int64).tolist(),
            ['{"seed": true}' if k in ("map", "geostory", "dashboard") else None for k in kind],
        ))
        # permissions: public rows for everyone (view and download); otherwise half to a group,
        # else half to members; the rest to their owner alone (no row)
        heads, tails = rng.random(n) < 0.5, rng.random(n) < 0.5
        to_group = ~public & heads if self.groups else np.zeros(n, bool)
        to_members = ~public & ~to_group & tails
        group = np.asarray(self.groups or [0], np.int64)[rng.integers(0, max(len(self.groups), 1), n)]
        grants = np.full((n, 2), -1, np.int64)  # (group << 1 | download) per resource, -1: none
        grants[:, 0] = np.select([public, to_group, to_members],
                                 [ANONYMOUS_GROUP_ID << 1, group << 1, REGISTERED_GROUP_ID << 1], -1)
        grants[public, 1] = ANONYMOUS_GROUP_ID << 1 | 1
        granted = grants >= 0
        # one to four distinct keywords: the keywords with the smallest random keys
        keys = rng.random((n, len(self.keyword_ids))).argsort(axis=1)[:, :4]
        chosen = np.asarray(self.keyword_ids, np.int64)[keys]
        kept = np.arange(4) < rng.integers(1, 5, n)[:, None]
        listed = kept & public[:, None]
        extent_boxes = np.column_stack([box[0], box[2], box[1], box[3]])
        return Batch(
            start=ids.start, resources=resources,
            links=(_packed(np.broadcast_to(rid[:, None], (n, 2))[granted], grants[granted]),
                   _packed(np.broadcast_to(rid[:, None], (n, 4))[kept], chosen[kept]),
                   _packed(rid, self.country_ids[country])),
            listed=chosen[listed] << 32 | np.broadcast_to(rid[:, None], (n, 4))[listed],
            titles=titles, abstracts=abstracts, hidden=[None if p else "h" for p in public.tolist()],
            extent_ids=rid * 2, extent_boxes=extent_boxes,
            tally=Counter((k, p, 1, 0) for k, p in zip(kind, public.tolist())),  # (advertised, not dirty: see INSERT)
        )


def _uuids(rng: np.random.Generator, n: int) -> list[str]:
    """n random (version 4) UUIDs as text, formatted all at once, sorted."""
    nibbles = rng.integers(0, 16, (n, 32), dtype=np.uint8)
    nibbles[:, 12] = 4
    nibbles[:, 16] = 8 + (nibbles[:, 16] & 3)
    chars = np.frombuffer(b"0123456789abcdef", np.uint8)[nibbles]
    text = np.full((n, 37), ord("-"), np.uint8)
    for dst, src in ((0, 0), (9, 8), (14, 12), (19, 16), (24, 20)):
        width = {0: 8, 24: 12}.get(dst, 4)
        text[:, dst:dst + width] = chars[:, src:src + width]
    text[:, 36] = ord("\n")
    # in order within the run: the new keys go into the uuid index one after another rather
    # than at random places (still random version 4 UUIDs)
    return np.sort(text.view("S37").ravel()).tobytes().decode("ascii").split()


def _insert_links(conn: sqlite3.Connection, batch: Batch) -> None:
    for statement, rows in zip((INSERT_PERMS, INSERT_KEYWORDS, INSERT_REGIONS), batch.links):
        conn.execute(statement, (rows,))


def seed(path: Path | str, count: int, *, seed: int = 1, scratch: Path | None = None, **options) -> int:
    """Add ``count`` resources to the database at ``path`` in one transaction of a connection of
    its own (see seed_resources for the options); returns the first new id.

    The connection skips the checks of foreign keys (every id the rows refer to is read in the
    same transaction) and has a larger page cache (BULK_CACHE_KIB). Durability is
    not relaxed: everything is one transaction in the write-ahead log, so a crash or a kill
    before the commit leaves the catalogue as it was, and one after it leaves the whole load.
    ``scratch`` is a folder for what a large load builds alongside (default: a temporary folder).
    """
    conn = db.connect(path)
    temporary = tempfile.TemporaryDirectory(prefix="catalogue-seed-") if scratch is None else None
    try:
        conn.execute("PRAGMA foreign_keys = OFF")  # (only settable outside a transaction)
        conn.execute(f"PRAGMA cache_size = {-BULK_CACHE_KIB}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            first = seed_resources(conn, count, seed=seed, scratch=Path(temporary.name if temporary else scratch),
                                   **options)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()  # (detaches the scratch database of seed_side)
        if temporary:
            temporary.cleanup()
    return first


def seed_resources(conn: sqlite3.Connection, count: int, *, seed: int = 1, public_share: float = 0.8,
                   types: tuple[str, ...] = (), scratch: Path | None = None) -> int:
    """Add ``count`` resources owned by existing users (of the given ``types`` only, e.g.
    ("dataset",), or of every type) inside the caller's transaction; returns the first new id.
    With a ``scratch`` folder, a large load's links and indexes are built there, alongside,
    and its scratch databases are left attached to ``conn`` until it closes.

    The rows are made up in a second thread while the previous batch goes in. The search and
    extent indexes are filled once at the end instead of by the per-row triggers, and for a load
    at least as large as the catalogue the secondary indexes that new rows would enter at random
    places are built again. Such a load, given a ``scratch`` folder, has worker processes build
    the link tables and the text, word and extent indexes of the whole catalogue meanwhile
    (seed_side), which are then copied in; otherwise the links go in batch by batch, the extent
    index is packed anew (seed_extents) and the text and word indexes are filled with one
    statement each.
    """
    # after the highest id ever given (ids are never reused; see migrations.ids_never_reused)
    first = conn.execute("SELECT max(coalesce((SELECT max(id) FROM resources), 0),"
                         " coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'resources'), 0)) + 1").fetchone()[0]
    if count <= 0:
        return first
    large = count >= first  # at least as many new rows as there were
    # (first: its processes start while the generator reads the reference data)
    builder = seed_side.Builder(conn, scratch, first) if large and scratch is not None else None
    try:
        generator = Generator(conn, np.random.default_rng([seed, first]), public_share, types)  # another batch, other rows
        _load(conn, generator, range(first, first + count), large, builder)
    finally:
        if builder:
            builder.close()
    return first


def _load(conn: sqlite3.Connection, generator: Generator, ids: range, large: bool,
          builder: seed_side.Builder | None) -> None:
    first = ids.start
    # the count of data changes (readers' kept values) is bumped once for the load, not per row
    counting = tuple(change_triggers(conn, [*BULK_TABLES, "listed_keywords", "resource_vocab"]))
    # the tables whose rows seed_side copies in must have no trigger at all
    names, tables = (*INDEX_TRIGGERS, *counting), seed_side.COPIED if builder else ()
    triggers = {name: sql for name, sql in conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND (name IN ({', '.join('?' * len(names))})"
        f" OR tbl_name IN ({', '.join('?' * len(tables))}))", (*names, *tables))}
    # Into a table smaller than the batch, building the secondary indexes afterwards from sorted
    # data is cheaper than keeping them up to date row by row.
    indexes = {} if not large else {name: sql for name, sql in conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN {BULK_TABLES} AND sql IS NOT NULL")
        if name not in APPENDED_INDEXES}
    for name in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    for name in indexes:
        conn.execute(f"DROP INDEX {name}")
    collecting, switching = gc.isenabled(), sys.getswitchinterval()
    gc.disable()  # millions of short-lived tuples and no cycles: the collector would cost a third
    # The writer lets go of Python's lock for each row SQLite works on; while the generator's
    # thread holds it, the writer would wait up to the switch interval (5 ms) to get it back.
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        listed, extent_ids, extent_boxes, tally = [], [], [], Counter()
        for batch in _batches(generator, ids):
            tally.update(batch.tally)
            if builder:
                builder.add(batch.start, batch.titles, batch.abstracts, batch.hidden, batch.links, batch.listed,
                            batch.extent_ids, batch.extent_boxes)
            conn.executemany(INSERT, batch.resources)
            if not builder:  # (after the resources they refer to)
                _insert_links(conn, batch)
                listed.append(batch.listed)
                extent_ids.append(batch.extent_ids)
                extent_boxes.append(batch.extent_boxes)
        if not builder:
            seed_extents.fill(conn, first, len(ids), np.concatenate(extent_ids), np.concatenate(extent_boxes))
            # in key order: appended at the end of each keyword's run
            conn.execute(INSERT_LISTED, (packed(np.sort(np.concatenate(listed))),))
        while indexes:  # while the workers finish theirs
            conn.execute(indexes.popitem()[1])
        if builder:
            builder.finish(conn)
        else:
            # the usual small in-memory buffer: a large load makes several segments, which
            # optimize merges into one above level 0 (see migrations.fill_word_index)
            conn.execute("INSERT INTO resource_text (rowid, title, abstract) SELECT id, title, abstract FROM resources"
                         " WHERE id >= ?", (first,))
            if large:
                text_index.optimize(conn)
            fill_word_index(conn, first)
        if "listed_extents_insert" in triggers:  # (a catalogue at migration 28 or later)
            fill_listed_extents(conn, first)  # in spatial order, cheaper than the trigger row by row
        add_to_tally(conn, tally)
    finally:
        if collecting:
            gc.enable()
        sys.setswitchinterval(switching)
        for sql in [*triggers.values(), *indexes.values()]:
            conn.execute(sql)
        if counting:
            conn.execute("UPDATE data_changes SET n = n + 1")


def _batches(generator: Generator, ids: range) -> Iterator[Batch]:
    """The batches of rows of these ids, each made up in a second thread while the previous one
    goes in (SQLite lets the other thread run while it works)."""
    runs = [range(start, min(start + BATCH, ids.stop)) for start in range(ids.start, ids.stop, BATCH)]
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(generator.batch, runs[0])
        for following in [*runs[1:], None]:
            batch = pending.result()
            pending = pool.submit(generator.batch, following) if following else None
            yield batch
