"""Realistic made-up resources in bulk, for tests, demos and benchmarks (`catalogue seed`).

Rows go in with executemany inside one transaction (the caller's).
"""

from __future__ import annotations

import gc
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import repeat

import numpy as np

from catalogue_app.clock import now
from catalogue_app.store import seed_extents, text_index
from catalogue_app.store.migrations import change_triggers, fill_word_index
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
VIEW = ["view_resourcebase", "download_resourcebase"]

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
# keywords of listed resources: one INSERT ... SELECT each). A new index kept by triggers on these tables
# goes here with its bulk fill.
INDEX_TRIGGERS = ("resources_extent_insert", "resources_text_insert", "listed_keywords_insert", "resources_words_insert")
BATCH = 20_000
BULK_TABLES = ("resources", "resource_perms", "resource_keywords", "resource_regions")
# Indexes kept up to date during a large load: the new rows' keys go at the end (they lead with
# the new id) or at the end of a few runs (a handful of owners, groups, keywords... followed by
# the new id), or the new rows are not in them at all (partial indexes). The others are dropped
# and built again from sorted data afterwards, which is cheaper than inserting keys at random.
APPENDED_INDEXES = {"resources_visible", "resources_owner", "resources_category", "resources_thumbnail",
                    "resource_perms_by_user", "resource_perms_by_group", "resource_perms_resource",
                    "resource_keywords_keyword", "resource_regions_region"}


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Batch:
    """The rows of a run of new resources, ready for executemany."""

    resources: list[tuple] = field(default_factory=list)
    perms: list[tuple] = field(default_factory=list)
    keywords: list[tuple] = field(default_factory=list)
    regions: list[tuple] = field(default_factory=list)


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
        start = datetime(2015, 1, 1, tzinfo=UTC)
        self.stamps = []
        for seconds in rng.integers(0, 11 * 365 * 86400, 20_000).tolist():
            moment = start + timedelta(seconds=seconds)
            self.stamps.append((_stamp(moment), _stamp(moment - timedelta(days=365))))
        self.now = now()

    def batch(self, ids: range) -> Batch:
        """The rows of the resources with these ids: every choice is drawn for the whole run at
        once with numpy, then the rows are zipped from the columns."""
        rng, n, out = self.rng, len(ids), Batch()
        rid = np.arange(ids.start, ids.stop)

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
        box = [np.round(v, 6).tolist() for v in (bx0, by0, bx0 + w, by0 + h)]
        created, year_before = zip(*pick(self.stamps))
        public = rng.random(n) < self.public_share
        datasets = [k == "dataset" for k in kind]
        out.resources = list(zip(  # in the order of INSERT's parameters
            rids, _uuids(rng, n), kind, subtype, pick(self.owners), titles, abstracts, created, repeat(self.now),
            pick(self.categories), pick(self.licenses),
            [f"catalogue:seed_{r}" if d else None for r, d in zip(rids, datasets)], *box, year_before,
            (rng.random(n) * 500).astype(np.int64).tolist(), (rng.random(n) < 0.05).astype(np.int64).tolist(),
            public.astype(np.int64).tolist(),
            ['{"seed": true}' if k in ("map", "geostory", "dashboard") else None for k in kind],
        ))
        # permissions: public rows for everyone; otherwise half to a group, else half to members
        heads, tails = rng.random(n) < 0.5, rng.random(n) < 0.5
        to_group = ~public & heads if self.groups else np.zeros(n, bool)
        to_members = ~public & ~to_group & tails
        groups = pick(self.groups or [0])
        for r, p, g, m, group in zip(rids, public.tolist(), to_group.tolist(), to_members.tolist(), groups):
            if p:
                out.perms += ((r, None, ANONYMOUS_GROUP_ID, VIEW[0]), (r, None, ANONYMOUS_GROUP_ID, VIEW[1]))
            elif g:
                out.perms.append((r, None, group, "view_resourcebase"))
            elif m:
                out.perms.append((r, None, REGISTERED_GROUP_ID, "view_resourcebase"))
        # one to four distinct keywords: the keywords with the smallest random keys
        keys = rng.random((n, len(self.keyword_ids))).argsort(axis=1)[:, :4]
        chosen = np.asarray(self.keyword_ids)[keys].tolist()
        how_many = rng.integers(1, 5, n).tolist()
        out.keywords = [(r, k) for r, ks, c in zip(rids, chosen, how_many) for k in ks[:c]]
        out.regions = list(zip(rids, self.country_ids[country].tolist()))
        return out


def _uuids(rng: np.random.Generator, n: int) -> list[str]:
    """n random (version 4) UUIDs as text, formatted all at once."""
    nibbles = rng.integers(0, 16, (n, 32), dtype=np.uint8)
    nibbles[:, 12] = 4
    nibbles[:, 16] = 8 + (nibbles[:, 16] & 3)
    chars = np.frombuffer(b"0123456789abcdef", np.uint8)[nibbles]
    text = np.full((n, 37), ord("-"), np.uint8)
    for dst, src in ((0, 0), (9, 8), (14, 12), (19, 16), (24, 20)):
        width = {0: 8, 24: 12}.get(dst, 4)
        text[:, dst:dst + width] = chars[:, src:src + width]
    text[:, 36] = ord("\n")
    return text.tobytes().decode("ascii").split()


def _insert(conn: sqlite3.Connection, batch: Batch) -> None:
    conn.executemany(INSERT, batch.resources)
    conn.executemany("INSERT INTO resource_perms (resource_id, user_id, group_id, perm) VALUES (?, ?, ?, ?)",
                     batch.perms)
    conn.executemany("INSERT INTO resource_keywords (resource_id, keyword_id) VALUES (?, ?)", batch.keywords)
    conn.executemany("INSERT INTO resource_regions (resource_id, region_id) VALUES (?, ?)", batch.regions)


def seed_resources(conn: sqlite3.Connection, count: int, *, seed: int = 1, public_share: float = 0.8,
                   types: tuple[str, ...] = ()) -> int:
    """Add ``count`` resources owned by existing users (of the given ``types`` only, e.g.
    ("dataset",), or of every type); returns the first new id.

    The rows are made up in a second thread while the previous batch goes in (SQLite lets the
    other thread run while it works). The search and extent indexes are filled once at the end
    instead of by the per-row triggers (the extent index packed anew after a large load, see
    seed_extents).
    """
    # after the highest id ever given (ids are never reused; see migrations.ids_never_reused)
    first = conn.execute("SELECT max(coalesce((SELECT max(id) FROM resources), 0),"
                         " coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'resources'), 0)) + 1").fetchone()[0]
    if count <= 0:
        return first
    generator = Generator(conn, np.random.default_rng([seed, first]), public_share, types)  # another batch, other rows
    # the count of data changes (readers' kept values) is bumped once for the load, not per row
    counting = tuple(change_triggers(conn, list(BULK_TABLES)))
    triggers = {name: sql for name, sql in conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN {(*INDEX_TRIGGERS, *counting)}")}
    # Into a table smaller than the batch, building the secondary indexes afterwards from sorted
    # data is cheaper than keeping them up to date row by row.
    indexes = {} if count < first else {name: sql for name, sql in conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN {BULK_TABLES} AND sql IS NOT NULL")
        if name not in APPENDED_INDEXES}
    for name in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    for name in indexes:
        conn.execute(f"DROP INDEX {name}")
    collecting = gc.isenabled()
    gc.disable()  # millions of short-lived tuples and no cycles: the collector would cost a third
    try:
        runs = [range(start, min(start + BATCH, first + count)) for start in range(first, first + count, BATCH)]
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(generator.batch, runs[0])
            for following in [*runs[1:], None]:
                batch = pending.result()
                pending = pool.submit(generator.batch, following) if following else None
                _insert(conn, batch)
        seed_extents.fill(conn, first, count)
        conn.execute("INSERT INTO listed_keywords (keyword_id, resource_id) SELECT rk.keyword_id, rk.resource_id"
                     " FROM resource_keywords rk JOIN resources r ON r.id = rk.resource_id WHERE rk.resource_id >= ?"
                     " AND r.public_view = 1 AND r.dirty = 0 AND r.advertised = 1"
                     " ORDER BY rk.keyword_id, rk.resource_id", (first,))  # in key order: three times faster
        # the text index: a large in-memory buffer, merged once at the end, not while rows go in
        text_index.configure(conn, hashsize=64 * 1024 * 1024, automerge=0, crisismerge=64)
        conn.execute("INSERT INTO resource_text (rowid, title, abstract) SELECT id, title, abstract FROM resources"
                     " WHERE id >= ?", (first,))
        text_index.optimize(conn)
        text_index.configure(conn, **text_index.SETTINGS)
        fill_word_index(conn, first)
    finally:
        if collecting:
            gc.enable()
        for sql in [*triggers.values(), *indexes.values()]:
            conn.execute(sql)
        if counting:
            conn.execute("UPDATE data_changes SET n = n + 1")
    return first


