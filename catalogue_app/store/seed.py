"""Realistic made-up resources in bulk, for tests, demos and benchmarks (`catalogue seed`).

Rows go in with executemany inside one transaction (the caller's).
"""

from __future__ import annotations

import random
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from catalogue_app.clock import now
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

INSERT = (
    "INSERT INTO resources (id, uuid, resource_type, subtype, owner_id, title, abstract, created, last_updated,"
    " date, date_type, category_id, license_id, alternate, srid, bbox_x0, bbox_y0, bbox_x1, bbox_y1,"
    " ll_x0, ll_y0, ll_x1, ll_y1, temporal_extent_start, temporal_extent_end, popular_count, featured,"
    " is_published, is_approved, advertised, public_view, attribution, blob)"
    " VALUES (" + ",".join("?" * 33) + ")"
)
INDEX_TRIGGERS = ("resources_extent_insert", "resources_text_insert", "listed_keywords_insert")
BATCH = 20_000
BULK_TABLES = ("resources", "resource_perms", "resource_keywords", "resource_regions")


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

    def __init__(self, conn: sqlite3.Connection, rng: random.Random, public_share: float,
                 types: tuple[str, ...] = ()):
        self.rng, self.public_share = rng, public_share
        self.owners = [r[0] for r in conn.execute("SELECT id FROM users WHERE is_active = 1")]
        self.groups = [r[0] for r in conn.execute("SELECT group_id FROM group_profiles")]
        self.categories = [r[0] for r in conn.execute("SELECT id FROM categories")]
        self.licenses = [r[0] for r in conn.execute("SELECT id FROM licenses")]
        self.countries = conn.execute(
            "SELECT id, bbox_x0, bbox_y0, bbox_x1, bbox_y1 FROM regions WHERE level = 2").fetchall()
        self.keyword_ids = []
        for name in KEYWORDS:
            slug = name.replace(" ", "-").replace("é", "e")
            conn.execute("INSERT OR IGNORE INTO keywords (name, slug) VALUES (?, ?)", (name, slug))
            self.keyword_ids.append(conn.execute("SELECT id FROM keywords WHERE slug = ?", (slug,)).fetchone()[0])
        self.kinds = [t for t in TYPES if not types or t[0] in types for _ in range(t[2])]
        if not self.kinds:
            raise ValueError(f"no resource type among {types!r}; known: {sorted({t[0] for t in TYPES})}")
        # a pool of (created, a year before) stamps: formatting dates row by row is slow
        start = datetime(2015, 1, 1, tzinfo=timezone.utc)
        self.stamps = []
        for _ in range(20_000):
            moment = start + timedelta(seconds=rng.randrange(0, 11 * 365 * 86400))
            self.stamps.append((_stamp(moment), _stamp(moment - timedelta(days=365))))
        self.now = now()

    def batch(self, ids: range) -> Batch:
        rng, out = self.rng, Batch()
        rand = rng.random

        def pick(seq):
            return seq[int(rand() * len(seq))]

        for rid in ids:
            kind, subtype, _ = pick(self.kinds)
            subject, place = pick(SUBJECTS), pick(PLACES)
            title = f"{subject.capitalize()} {pick(KINDS)} of {place} {rid:06d}"
            abstract = (f"This {kind} describes the {subject} of the {place} area, "
                        f"with {pick(SUBJECTS)} and {pick(SUBJECTS)} observed in {2000 + rid % 25}. "
                        f"Produced for the {pick(KEYWORDS)} programme.")
            country = pick(self.countries)
            x0, y0, x1, y1 = country[1], country[2], country[3], country[4]
            w, h = (x1 - x0) * (0.05 + 0.45 * rand()), (y1 - y0) * (0.05 + 0.45 * rand())
            bx0, by0 = x0 + (x1 - w - x0) * rand(), y0 + (y1 - h - y0) * rand()
            box = (round(bx0, 6), round(by0, 6), round(bx0 + w, 6), round(by0 + h, 6))
            created, year_before = pick(self.stamps)
            public = rand() < self.public_share
            bits = f"{rng.getrandbits(128):032x}"
            out.resources.append((
                rid, f"{bits[:8]}-{bits[8:12]}-4{bits[13:16]}-a{bits[17:20]}-{bits[20:]}", kind, subtype,
                pick(self.owners), title, abstract, created, self.now, created, "publication", pick(self.categories),
                pick(self.licenses), f"catalogue:seed_{rid}" if kind == "dataset" else None, "EPSG:4326", *box, *box,
                year_before, created, int(rand() * 500), int(rand() < 0.05), 1, 1, 1, int(public), "Seed data",
                '{"seed": true}' if kind in ("map", "geostory", "dashboard") else None,
            ))
            if public:
                out.perms.append((rid, None, ANONYMOUS_GROUP_ID, VIEW[0]))
                out.perms.append((rid, None, ANONYMOUS_GROUP_ID, VIEW[1]))
            elif self.groups and rand() < 0.5:
                out.perms.append((rid, None, pick(self.groups), "view_resourcebase"))
            elif rand() < 0.5:
                out.perms.append((rid, None, REGISTERED_GROUP_ID, "view_resourcebase"))
            out.keywords += [(rid, k) for k in rng.sample(self.keyword_ids, 1 + int(rand() * 4))]
            out.regions.append((rid, country[0]))
        return out


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
    instead of by the per-row triggers.
    """
    # after the highest id ever given (ids are never reused; see migrations.ids_never_reused)
    first = conn.execute("SELECT max(coalesce((SELECT max(id) FROM resources), 0),"
                         " coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'resources'), 0)) + 1").fetchone()[0]
    if count <= 0:
        return first
    generator = Generator(conn, random.Random(f"{seed}:{first}"), public_share, types)  # another batch, other rows
    triggers = {name: sql for name, sql in conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN {INDEX_TRIGGERS}")}
    # Into a table smaller than the batch, building the secondary indexes afterwards from sorted
    # data is cheaper than keeping them up to date row by row.
    indexes = {} if count < first else dict(conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN {BULK_TABLES} AND sql IS NOT NULL"))
    for name in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    for name in indexes:
        conn.execute(f"DROP INDEX {name}")
    try:
        runs = [range(start, min(start + BATCH, first + count)) for start in range(first, first + count, BATCH)]
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(generator.batch, runs[0])
            for following in [*runs[1:], None]:
                batch = pending.result()
                pending = pool.submit(generator.batch, following) if following else None
                _insert(conn, batch)
        conn.execute("INSERT INTO resource_extents (id, minx, maxx, miny, maxy)"
                     " SELECT id * 2, ll_x0, ll_x1, ll_y0, ll_y1 FROM resources WHERE id >= ?", (first,))
        conn.execute("INSERT INTO listed_keywords (keyword_id, resource_id) SELECT rk.keyword_id, rk.resource_id"
                     " FROM resource_keywords rk JOIN resources r ON r.id = rk.resource_id WHERE rk.resource_id >= ?"
                     " AND r.public_view = 1 AND r.dirty = 0 AND r.advertised = 1"
                     " ORDER BY rk.keyword_id, rk.resource_id", (first,))  # in key order: three times faster
        # the text index: a large in-memory buffer, merged once at the end, not while rows go in
        _fts_config(conn, hashsize=64 * 1024 * 1024, automerge=0, crisismerge=64)
        conn.execute("INSERT INTO resource_text (rowid, title, abstract) SELECT id, title, abstract FROM resources"
                     " WHERE id >= ?", (first,))
        _fts_config(conn, **FTS_DEFAULTS)
    finally:
        for sql in [*triggers.values(), *indexes.values()]:
            conn.execute(sql)
    return first


FTS_DEFAULTS = {"hashsize": 1024 * 1024, "automerge": 4, "crisismerge": 16}


def _fts_config(conn: sqlite3.Connection, **values: int) -> None:
    for key, value in values.items():
        conn.execute("INSERT INTO resource_text (resource_text, rank) VALUES (?, ?)", (key, value))
