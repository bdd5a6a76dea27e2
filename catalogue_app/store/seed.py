"""Realistic made-up resources in bulk, for tests, demos and benchmarks (`catalogue seed`).

Rows go in with executemany inside one transaction; the search and extent indexes are filled
once for the new rows at the end instead of by the per-row triggers.
"""

from __future__ import annotations

import random
import sqlite3
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
INDEX_TRIGGERS = ("resources_extent_insert", "resources_text_insert")


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seed_resources(conn: sqlite3.Connection, count: int, *, seed: int = 1, public_share: float = 0.8) -> int:
    """Add ``count`` resources owned by existing users; returns the first new id."""
    first = (conn.execute("SELECT max(id) FROM resources").fetchone()[0] or 0) + 1
    rng = random.Random(f"{seed}:{first}")  # another batch, other rows (and other uuids)
    owners = [r[0] for r in conn.execute("SELECT id FROM users WHERE is_active = 1")]
    groups = [r[0] for r in conn.execute("SELECT group_id FROM group_profiles")]
    categories = [r[0] for r in conn.execute("SELECT id FROM categories")]
    licenses = [r[0] for r in conn.execute("SELECT id FROM licenses")]
    countries = conn.execute("SELECT id, bbox_x0, bbox_y0, bbox_x1, bbox_y1 FROM regions WHERE level = 2").fetchall()
    keyword_ids = []
    for name in KEYWORDS:
        slug = name.replace(" ", "-").replace("é", "e")
        conn.execute("INSERT OR IGNORE INTO keywords (name, slug) VALUES (?, ?)", (name, slug))
        keyword_ids.append(conn.execute("SELECT id FROM keywords WHERE slug = ?", (slug,)).fetchone()[0])
    kinds = [t for t in TYPES for _ in range(t[2])]
    start = datetime(2015, 1, 1, tzinfo=timezone.utc)
    # a pool of (created, a year before) stamps: formatting dates row by row is the slow part
    pool = []
    for _ in range(min(count, 20_000)):
        moment = start + timedelta(seconds=rng.randrange(0, 11 * 365 * 86400))
        pool.append((_stamp(moment), _stamp(moment - timedelta(days=365))))
    stamp = now()
    rand = rng.random

    def pick(seq):
        return seq[int(rand() * len(seq))]

    rows, perms, kw_rows, region_rows = [], [], [], []
    for rid in range(first, first + count):
        kind, subtype, _ = pick(kinds)
        subject, place = pick(SUBJECTS), pick(PLACES)
        title = f"{subject.capitalize()} {pick(KINDS)} of {place} {rid:06d}"
        abstract = (f"This {kind} describes the {subject} of the {place} area, "
                    f"with {pick(SUBJECTS)} and {pick(SUBJECTS)} observed in {2000 + rid % 25}. "
                    f"Produced for the {pick(KEYWORDS)} programme.")
        country = pick(countries)
        x0, y0, x1, y1 = country[1], country[2], country[3], country[4]
        w, h = (x1 - x0) * (0.05 + 0.45 * rand()), (y1 - y0) * (0.05 + 0.45 * rand())
        bx0, by0 = x0 + (x1 - w - x0) * rand(), y0 + (y1 - h - y0) * rand()
        box = (round(bx0, 6), round(by0, 6), round(bx0 + w, 6), round(by0 + h, 6))
        created, year_before = pick(pool)
        public = rand() < public_share
        bits = f"{rng.getrandbits(128):032x}"
        rows.append((
            rid, f"{bits[:8]}-{bits[8:12]}-4{bits[13:16]}-a{bits[17:20]}-{bits[20:]}", kind, subtype, pick(owners),
            title, abstract, created, stamp, created, "publication", pick(categories), pick(licenses),
            f"catalogue:seed_{rid}" if kind == "dataset" else None, "EPSG:4326", *box, *box,
            year_before, created, int(rand() * 500), int(rand() < 0.05), 1, 1, 1, int(public), "Seed data",
            '{"seed": true}' if kind in ("map", "geostory", "dashboard") else None,
        ))
        if public:
            perms.append((rid, None, ANONYMOUS_GROUP_ID, VIEW[0]))
            perms.append((rid, None, ANONYMOUS_GROUP_ID, VIEW[1]))
        elif groups and rand() < 0.5:
            perms.append((rid, None, pick(groups), "view_resourcebase"))
        elif rand() < 0.5:
            perms.append((rid, None, REGISTERED_GROUP_ID, "view_resourcebase"))
        kw_rows += [(rid, k) for k in rng.sample(keyword_ids, 1 + int(rand() * 4))]
        region_rows.append((rid, country[0]))
    triggers = {name: sql for name, sql in conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN {INDEX_TRIGGERS}")}
    for name in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    try:
        conn.executemany(INSERT, rows)
        conn.executemany("INSERT INTO resource_perms (resource_id, user_id, group_id, perm) VALUES (?, ?, ?, ?)", perms)
        conn.executemany("INSERT INTO resource_keywords (resource_id, keyword_id) VALUES (?, ?)", kw_rows)
        conn.executemany("INSERT INTO resource_regions (resource_id, region_id) VALUES (?, ?)", region_rows)
        conn.execute("INSERT INTO resource_extents (id, minx, maxx, miny, maxy)"
                     " SELECT id * 2, ll_x0, ll_x1, ll_y0, ll_y1 FROM resources WHERE id >= ?", (first,))
        # merge the text index once at the end, not while the rows go in
        conn.execute("INSERT INTO resource_text (resource_text, rank) VALUES ('automerge', 0)")
        conn.execute("INSERT INTO resource_text (resource_text, rank) VALUES ('crisismerge', 64)")
        conn.execute("INSERT INTO resource_text (rowid, title, abstract) SELECT id, title, abstract FROM resources"
                     " WHERE id >= ?", (first,))
        conn.execute("INSERT INTO resource_text (resource_text, rank) VALUES ('automerge', 4)")
        conn.execute("INSERT INTO resource_text (resource_text, rank) VALUES ('crisismerge', 16)")
    finally:
        for sql in triggers.values():
            conn.execute(sql)
    return first
