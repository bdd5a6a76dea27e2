"""Numbered schema migrations. Step N brings the database to ``PRAGMA user_version = N``.

Never edit a step that has shipped: add a new one. A step is an SQL script or a function
taking the connection (both run inside the migration transaction).
"""

import re
import sqlite3


def statements(script: str) -> list[str]:
    """Split a migration script into complete statements (triggers contain semicolons)."""
    out, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                out.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        out.append(buffer.strip())
    return out


ACCOUNTS = """
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL COLLATE NOCASE UNIQUE,
    password      TEXT NOT NULL DEFAULT '',          -- '' means: no password login
    email         TEXT NOT NULL DEFAULT '',
    first_name    TEXT NOT NULL DEFAULT '',
    last_name     TEXT NOT NULL DEFAULT '',
    avatar        TEXT NOT NULL DEFAULT '',
    is_superuser  INTEGER NOT NULL DEFAULT 0,
    is_staff      INTEGER NOT NULL DEFAULT 0,
    is_active     INTEGER NOT NULL DEFAULT 1,
    date_joined   TEXT NOT NULL,
    last_login    TEXT
);
CREATE UNIQUE INDEX users_email ON users(email COLLATE NOCASE) WHERE email <> '';

CREATE TABLE tokens (
    id        INTEGER PRIMARY KEY,
    digest    TEXT NOT NULL UNIQUE,                  -- sha256 of the token; the token is not kept
    user_id   INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created   TEXT NOT NULL,
    expires   TEXT NOT NULL,
    scope     TEXT NOT NULL DEFAULT 'read write groups'
);
CREATE INDEX tokens_user ON tokens(user_id);

-- A group as used by permissions. Groups with a profile are the ones the API lists; the two
-- special groups (anonymous users, registered members) have none.
CREATE TABLE groups (
    id    INTEGER PRIMARY KEY,
    name  TEXT NOT NULL UNIQUE
);

CREATE TABLE group_profiles (
    id            INTEGER PRIMARY KEY,
    group_id      INTEGER NOT NULL UNIQUE REFERENCES groups(id) ON DELETE CASCADE,
    title         TEXT NOT NULL,
    slug          TEXT NOT NULL UNIQUE,
    description   TEXT NOT NULL DEFAULT '',
    email         TEXT,
    logo          TEXT,
    access        TEXT NOT NULL DEFAULT 'public'
                  CHECK (access IN ('public', 'public-invite', 'private')),
    created       TEXT NOT NULL,
    last_modified TEXT NOT NULL
);
CREATE INDEX group_profiles_title ON group_profiles(title);

CREATE TABLE group_categories (
    id           INTEGER PRIMARY KEY,
    slug         TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT ''
);

CREATE TABLE group_profile_categories (
    profile_id   INTEGER NOT NULL REFERENCES group_profiles(id) ON DELETE CASCADE,
    category_id  INTEGER NOT NULL REFERENCES group_categories(id) ON DELETE CASCADE,
    PRIMARY KEY (profile_id, category_id)
) WITHOUT ROWID;

CREATE TABLE group_profile_keywords (
    profile_id  INTEGER NOT NULL REFERENCES group_profiles(id) ON DELETE CASCADE,
    slug        TEXT NOT NULL,
    PRIMARY KEY (profile_id, slug)
) WITHOUT ROWID;

CREATE TABLE group_members (
    group_id  INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
    user_id   INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role      TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('manager', 'member')),
    joined    TEXT NOT NULL,
    PRIMARY KEY (group_id, user_id)
) WITHOUT ROWID;
CREATE INDEX group_members_user ON group_members(user_id, group_id);

-- The common part of every catalogue resource; type-specific data lives beside it.
CREATE TABLE resources (
    id             INTEGER PRIMARY KEY,
    uuid           TEXT NOT NULL UNIQUE,
    resource_type  TEXT NOT NULL,
    owner_id       INTEGER NOT NULL REFERENCES users(id),
    group_id       INTEGER REFERENCES groups(id) ON DELETE SET NULL,
    title          TEXT NOT NULL DEFAULT '',
    abstract       TEXT NOT NULL DEFAULT '',
    created        TEXT NOT NULL,
    last_updated   TEXT NOT NULL
);
CREATE INDEX resources_owner ON resources(owner_id);

-- Permissions are data: a user or a group holds a permission name on a resource.
CREATE TABLE resource_perms (
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    user_id      INTEGER REFERENCES users(id) ON DELETE CASCADE,
    group_id     INTEGER REFERENCES groups(id) ON DELETE CASCADE,
    perm         TEXT NOT NULL,
    CHECK ((user_id IS NULL) <> (group_id IS NULL))
);
CREATE UNIQUE INDEX resource_perms_by_user
    ON resource_perms(user_id, resource_id, perm) WHERE user_id IS NOT NULL;
CREATE UNIQUE INDEX resource_perms_by_group
    ON resource_perms(group_id, resource_id, perm) WHERE group_id IS NOT NULL;
CREATE INDEX resource_perms_resource ON resource_perms(resource_id);

-- The two special groups always exist, with fixed ids.
INSERT INTO groups (id, name) VALUES (1, 'anonymous'), (2, 'registered-members');
"""



CATALOGUE = """
CREATE TABLE categories (
    id              INTEGER PRIMARY KEY,
    identifier      TEXT NOT NULL UNIQUE,
    gn_description  TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    fa_class        TEXT NOT NULL DEFAULT 'fa-times',
    is_choice       INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE licenses (
    id            INTEGER PRIMARY KEY,
    identifier    TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    abbreviation  TEXT NOT NULL DEFAULT '',
    url           TEXT NOT NULL DEFAULT ''
);

-- World, continents and countries as a tree (lft/rght: nested-set numbers, as GeoNode shows them).
CREATE TABLE regions (
    id         INTEGER PRIMARY KEY,
    code       TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    parent_id  INTEGER REFERENCES regions(id),
    level      INTEGER NOT NULL DEFAULT 0,
    lft        INTEGER NOT NULL DEFAULT 0,
    rght       INTEGER NOT NULL DEFAULT 0,
    bbox_x0    REAL, bbox_x1 REAL, bbox_y0 REAL, bbox_y1 REAL
);

-- Free keywords; path/depth keep room for GeoNode's hierarchy.
CREATE TABLE keywords (
    id     INTEGER PRIMARY KEY,
    name   TEXT NOT NULL,
    slug   TEXT NOT NULL UNIQUE,
    path   TEXT NOT NULL DEFAULT '',
    depth  INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX keywords_name ON keywords(name);

CREATE TABLE thesauri (
    id          INTEGER PRIMARY KEY,
    identifier  TEXT NOT NULL UNIQUE,
    title       TEXT NOT NULL,
    uri         TEXT NOT NULL DEFAULT ''
);

CREATE TABLE thesaurus_keywords (
    id            INTEGER PRIMARY KEY,
    thesaurus_id  INTEGER NOT NULL REFERENCES thesauri(id) ON DELETE CASCADE,
    alt_label     TEXT NOT NULL,
    about         TEXT NOT NULL DEFAULT '',
    labels        TEXT NOT NULL DEFAULT '{}'        -- JSON: language -> label
);

ALTER TABLE resources ADD COLUMN subtype TEXT;
ALTER TABLE resources ADD COLUMN alternate TEXT;
ALTER TABLE resources ADD COLUMN attribution TEXT;
ALTER TABLE resources ADD COLUMN doi TEXT;
ALTER TABLE resources ADD COLUMN edition TEXT;
ALTER TABLE resources ADD COLUMN purpose TEXT;
ALTER TABLE resources ADD COLUMN maintenance_frequency TEXT;
ALTER TABLE resources ADD COLUMN constraints_other TEXT;
ALTER TABLE resources ADD COLUMN supplemental_information TEXT;
ALTER TABLE resources ADD COLUMN data_quality_statement TEXT;
ALTER TABLE resources ADD COLUMN restriction_code_type TEXT;
ALTER TABLE resources ADD COLUMN spatial_representation_type TEXT;
ALTER TABLE resources ADD COLUMN language TEXT NOT NULL DEFAULT 'eng';
ALTER TABLE resources ADD COLUMN srid TEXT NOT NULL DEFAULT 'EPSG:4326';
-- the box in the resource's own CRS (srid) and in WGS84
ALTER TABLE resources ADD COLUMN bbox_x0 REAL;
ALTER TABLE resources ADD COLUMN bbox_y0 REAL;
ALTER TABLE resources ADD COLUMN bbox_x1 REAL;
ALTER TABLE resources ADD COLUMN bbox_y1 REAL;
ALTER TABLE resources ADD COLUMN ll_x0 REAL;
ALTER TABLE resources ADD COLUMN ll_y0 REAL;
ALTER TABLE resources ADD COLUMN ll_x1 REAL;
ALTER TABLE resources ADD COLUMN ll_y1 REAL;
ALTER TABLE resources ADD COLUMN date TEXT;
ALTER TABLE resources ADD COLUMN date_type TEXT NOT NULL DEFAULT 'publication';
ALTER TABLE resources ADD COLUMN temporal_extent_start TEXT;
ALTER TABLE resources ADD COLUMN temporal_extent_end TEXT;
ALTER TABLE resources ADD COLUMN category_id INTEGER REFERENCES categories(id) ON DELETE SET NULL;
ALTER TABLE resources ADD COLUMN license_id INTEGER REFERENCES licenses(id) ON DELETE SET NULL;
ALTER TABLE resources ADD COLUMN popular_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE resources ADD COLUMN share_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE resources ADD COLUMN featured INTEGER NOT NULL DEFAULT 0;
ALTER TABLE resources ADD COLUMN advertised INTEGER NOT NULL DEFAULT 1;
ALTER TABLE resources ADD COLUMN is_published INTEGER NOT NULL DEFAULT 1;
ALTER TABLE resources ADD COLUMN is_approved INTEGER NOT NULL DEFAULT 1;
ALTER TABLE resources ADD COLUMN metadata_only INTEGER NOT NULL DEFAULT 0;
ALTER TABLE resources ADD COLUMN metadata_uploaded_preserve INTEGER NOT NULL DEFAULT 0;
ALTER TABLE resources ADD COLUMN state TEXT NOT NULL DEFAULT 'PROCESSED';
ALTER TABLE resources ADD COLUMN dirty INTEGER NOT NULL DEFAULT 0;
ALTER TABLE resources ADD COLUMN sourcetype TEXT NOT NULL DEFAULT 'LOCAL';
ALTER TABLE resources ADD COLUMN thumbnail_url TEXT;
ALTER TABLE resources ADD COLUMN blob TEXT;                    -- JSON document (maps, geoapps)
-- 1 when the anonymous group may view: kept by the permission writes, so the public
-- listing and its count are served by one index.
ALTER TABLE resources ADD COLUMN public_view INTEGER NOT NULL DEFAULT 0;

CREATE INDEX resources_created ON resources(created DESC, id DESC);
CREATE INDEX resources_public ON resources(public_view, advertised, dirty, created DESC);
CREATE INDEX resources_type ON resources(resource_type, created DESC);
CREATE INDEX resources_title ON resources(title);
CREATE INDEX resources_category ON resources(category_id);
CREATE INDEX resources_alternate ON resources(alternate);

CREATE TABLE resource_keywords (
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    keyword_id   INTEGER NOT NULL REFERENCES keywords(id) ON DELETE CASCADE,
    PRIMARY KEY (resource_id, keyword_id)
) WITHOUT ROWID;
CREATE INDEX resource_keywords_keyword ON resource_keywords(keyword_id, resource_id);

CREATE TABLE resource_tkeywords (
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    tkeyword_id  INTEGER NOT NULL REFERENCES thesaurus_keywords(id) ON DELETE CASCADE,
    PRIMARY KEY (resource_id, tkeyword_id)
) WITHOUT ROWID;
CREATE INDEX resource_tkeywords_tkeyword ON resource_tkeywords(tkeyword_id, resource_id);

CREATE TABLE resource_regions (
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    region_id    INTEGER NOT NULL REFERENCES regions(id) ON DELETE CASCADE,
    PRIMARY KEY (resource_id, region_id)
) WITHOUT ROWID;
CREATE INDEX resource_regions_region ON resource_regions(region_id, resource_id);

-- Contact roles (poc, metadata_author, ...): users attached to a resource in a role.
CREATE TABLE resource_contacts (
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    role         TEXT NOT NULL,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (resource_id, role, user_id)
) WITHOUT ROWID;

CREATE TABLE favorites (
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    created      TEXT NOT NULL,
    PRIMARY KEY (user_id, resource_id)
) WITHOUT ROWID;

CREATE TABLE ratings (
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    rating       INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
    created      TEXT NOT NULL,
    PRIMARY KEY (user_id, resource_id)
) WITHOUT ROWID;
CREATE INDEX ratings_resource ON ratings(resource_id);

CREATE TABLE extra_metadata (
    id           INTEGER PRIMARY KEY,
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    metadata     TEXT NOT NULL                       -- JSON object
);
CREATE INDEX extra_metadata_resource ON extra_metadata(resource_id);

CREATE TABLE linked_resources (
    source_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    target_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    internal   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (source_id, target_id),
    CHECK (source_id <> target_id)
) WITHOUT ROWID;
CREATE INDEX linked_resources_target ON linked_resources(target_id, source_id);

-- WGS84 extents: entry 2*id holds the box (the whole world when the resource has none, as in
-- GeoNode); a box crossing the antimeridian (west > east) is split, its eastern part in 2*id+1.
CREATE VIRTUAL TABLE resource_extents USING rtree(id, minx, maxx, miny, maxy);
CREATE TRIGGER resources_extent_insert AFTER INSERT ON resources BEGIN
    INSERT INTO resource_extents (id, minx, maxx, miny, maxy) VALUES (
        NEW.id * 2, coalesce(NEW.ll_x0, -180),
        CASE WHEN NEW.ll_x0 > NEW.ll_x1 THEN 180 ELSE coalesce(NEW.ll_x1, 180) END,
        coalesce(NEW.ll_y0, -90), coalesce(NEW.ll_y1, 90));
    INSERT INTO resource_extents (id, minx, maxx, miny, maxy)
        SELECT NEW.id * 2 + 1, -180, NEW.ll_x1, NEW.ll_y0, NEW.ll_y1 WHERE NEW.ll_x0 > NEW.ll_x1;
END;
CREATE TRIGGER resources_extent_update AFTER UPDATE OF ll_x0, ll_y0, ll_x1, ll_y1 ON resources BEGIN
    DELETE FROM resource_extents WHERE id IN (OLD.id * 2, OLD.id * 2 + 1);
    INSERT INTO resource_extents (id, minx, maxx, miny, maxy) VALUES (
        NEW.id * 2, coalesce(NEW.ll_x0, -180),
        CASE WHEN NEW.ll_x0 > NEW.ll_x1 THEN 180 ELSE coalesce(NEW.ll_x1, 180) END,
        coalesce(NEW.ll_y0, -90), coalesce(NEW.ll_y1, 90));
    INSERT INTO resource_extents (id, minx, maxx, miny, maxy)
        SELECT NEW.id * 2 + 1, -180, NEW.ll_x1, NEW.ll_y0, NEW.ll_y1 WHERE NEW.ll_x0 > NEW.ll_x1;
END;
CREATE TRIGGER resources_extent_delete AFTER DELETE ON resources BEGIN
    DELETE FROM resource_extents WHERE id IN (OLD.id * 2, OLD.id * 2 + 1);
END;

-- Substring search on title and abstract (trigram: case-insensitive, any language).
CREATE VIRTUAL TABLE resource_text USING fts5(
    title, abstract, content='resources', content_rowid='id', tokenize='trigram');
CREATE TRIGGER resources_text_insert AFTER INSERT ON resources BEGIN
    INSERT INTO resource_text (rowid, title, abstract) VALUES (NEW.id, NEW.title, NEW.abstract);
END;
CREATE TRIGGER resources_text_update AFTER UPDATE OF title, abstract ON resources BEGIN
    INSERT INTO resource_text (resource_text, rowid, title, abstract) VALUES ('delete', OLD.id, OLD.title, OLD.abstract);
    INSERT INTO resource_text (rowid, title, abstract) VALUES (NEW.id, NEW.title, NEW.abstract);
END;
CREATE TRIGGER resources_text_delete AFTER DELETE ON resources BEGIN
    INSERT INTO resource_text (resource_text, rowid, title, abstract) VALUES ('delete', OLD.id, OLD.title, OLD.abstract);
END;
"""


def seed_reference_data(conn) -> None:
    """Categories, licences and the region tree (Global > continents > countries)."""
    from catalogue_app.store import seeds

    conn.executemany(
        "INSERT INTO categories (identifier, gn_description, fa_class, description) VALUES (?, ?, ?, ?)",
        seeds.CATEGORIES)
    conn.executemany("INSERT INTO licenses (identifier, name, abbreviation, url) VALUES (?, ?, ?, ?)",
                     seeds.LICENSES)
    data = seeds.regions()
    by_continent: dict[str, list[dict]] = {}
    for country in data["countries"]:
        by_continent.setdefault(country["continent"], []).append(country)
    counter = iter(range(1, 10**6))
    world_left = next(counter)
    world = conn.execute(
        "INSERT INTO regions (code, name, level, lft, bbox_x0, bbox_x1, bbox_y0, bbox_y1)"
        " VALUES ('GLO', 'Global', 0, ?, -180, 180, -90, 90)", (world_left,)).lastrowid
    for continent in sorted(by_continent):
        members = by_continent[continent]
        left = next(counter)
        x0 = min(c["bbox"][0] for c in members)
        y0 = min(c["bbox"][1] for c in members)
        x1 = max(c["bbox"][2] for c in members)
        y1 = max(c["bbox"][3] for c in members)
        cid = conn.execute(
            "INSERT INTO regions (code, name, parent_id, level, lft, bbox_x0, bbox_x1, bbox_y0, bbox_y1)"
            " VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)",
            (data["continents"][continent], continent, world, left, x0, x1, y0, y1)).lastrowid
        for c in members:
            pos = next(counter)
            conn.execute(
                "INSERT INTO regions (code, name, parent_id, level, lft, rght, bbox_x0, bbox_x1, bbox_y0, bbox_y1)"
                " VALUES (?, ?, ?, 2, ?, ?, ?, ?, ?, ?)",
                (c["code"], c["name"], cid, pos, next(counter), c["bbox"][0], c["bbox"][2], c["bbox"][1], c["bbox"][3]))
        conn.execute("UPDATE regions SET rght = ? WHERE id = ?", (next(counter), cid))
    conn.execute("UPDATE regions SET rght = ? WHERE id = ?", (next(counter), world))


# What visibility tests, in a narrow index: counting thousands of search or extent candidates
# reads this instead of the wide rows (about four times faster).
VISIBILITY_INDEX = """
CREATE INDEX resources_visible ON resources(id, dirty, public_view, advertised, owner_id, resource_type);
"""

# Execution requests: slow work (permission changes, copies, deletes, uploads) as stored jobs.
# A request is written 'ready' before its work is queued; the runner that claims it writes its
# process id, so that a runner starting later can tell a crash's leftovers from live work.
EXECUTIONS = """
CREATE TABLE execution_requests (
    id             INTEGER PRIMARY KEY,
    exec_id        TEXT NOT NULL UNIQUE,
    user_id        INTEGER REFERENCES users(id) ON DELETE SET NULL,
    func_name      TEXT NOT NULL,
    action         TEXT NOT NULL DEFAULT 'unknown',
    source         TEXT,
    name           TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL DEFAULT 'ready'
                   CHECK (status IN ('ready', 'running', 'finished', 'failed')),
    progress       INTEGER NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    step           TEXT,
    log            TEXT,
    input_params   TEXT NOT NULL DEFAULT '{}',               -- JSON object
    output_params  TEXT NOT NULL DEFAULT '{}',               -- JSON object
    resource_id    INTEGER REFERENCES resources(id) ON DELETE SET NULL,
    runner_pid     INTEGER,
    created        TEXT NOT NULL,
    last_updated   TEXT NOT NULL,
    finished       TEXT
);
CREATE INDEX execution_requests_user ON execution_requests(user_id, id);
CREATE INDEX execution_requests_open ON execution_requests(status, resource_id)
    WHERE status IN ('ready', 'running');
"""

# How many jobs of one user may run at once (GeoNode's upload parallelism limit; its API comes
# with uploads).
PARALLELISM = """
CREATE TABLE upload_parallelism_limits (
    slug         TEXT PRIMARY KEY,
    description  TEXT NOT NULL DEFAULT '',
    max_number   INTEGER NOT NULL CHECK (max_number >= 1)
);
INSERT INTO upload_parallelism_limits (slug, description, max_number) VALUES
    ('default_max_parallel_uploads', 'The default maximum number of parallel uploads and jobs of one user.', 5);
CREATE INDEX execution_requests_running ON execution_requests(user_id) WHERE status = 'running';
"""

# The files of a resource, stored under files/<resource uuid>/<name>.
RESOURCE_FILES = """
CREATE TABLE resource_files (
    id           INTEGER PRIMARY KEY,
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    size         INTEGER NOT NULL,
    mime_type    TEXT NOT NULL DEFAULT 'application/octet-stream',
    created      TEXT NOT NULL,
    UNIQUE (resource_id, name)
);
"""

# Upload size limits in bytes (GeoNode's seeded rows: 100 MB each).
SIZE_LIMITS = """
CREATE TABLE upload_size_limits (
    slug         TEXT PRIMARY KEY,
    description  TEXT NOT NULL DEFAULT '',
    max_size     INTEGER NOT NULL CHECK (max_size >= 0)
);
INSERT INTO upload_size_limits (slug, description, max_size) VALUES
    ('dataset_upload_size', 'The sum of sizes for the files of a dataset upload.', 104857600),
    ('document_upload_size', 'The maximum size for document files.', 104857600),
    ('asset_upload_size', 'The sum of sizes for the files of an asset upload.', 104857600);
UPDATE upload_parallelism_limits SET description = 'The default maximum parallel uploads per user.'
    WHERE slug = 'default_max_parallel_uploads';
"""

# The fields of a vector dataset (GeoNode's attribute_set), or the bands of a raster.
DATASET_ATTRIBUTES = """
CREATE TABLE dataset_attributes (
    id               INTEGER PRIMARY KEY,
    resource_id      INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    attribute        TEXT NOT NULL,
    attribute_type   TEXT NOT NULL,
    attribute_label  TEXT,
    description      TEXT,
    display_order    INTEGER NOT NULL DEFAULT 1,
    visible          INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX dataset_attributes_resource ON dataset_attributes(resource_id, display_order);
"""

# What datasets and documents hold beyond the common record. A dataset's files live in
# files/<folder>/ (its uuid at first; a replacement of its data writes a new folder and switches
# to it in the transaction that records the new data, so readers never see half of either).
# Datasets made up by `catalogue seed` have no row here: readers treat that as "no data".
DATASET_DETAILS = """
CREATE TABLE datasets (
    resource_id      INTEGER PRIMARY KEY REFERENCES resources(id) ON DELETE CASCADE,
    name             TEXT NOT NULL,                   -- the layer name: alternate without its workspace
    workspace        TEXT NOT NULL,
    store            TEXT NOT NULL DEFAULT '',
    source_name      TEXT NOT NULL,                   -- the name the file gave, before it was made unique
    folder           TEXT NOT NULL UNIQUE,            -- under files/
    charset          TEXT NOT NULL DEFAULT 'UTF-8',
    geometry_type    TEXT,
    feature_count    INTEGER,
    crs_wkt          TEXT,                            -- the CRS when it has no EPSG code
    has_time         INTEGER NOT NULL DEFAULT 0,
    time_attribute   TEXT,
    featureinfo_custom_template      TEXT,
    use_featureinfo_custom_template  INTEGER NOT NULL DEFAULT 0,
    default_style_id INTEGER REFERENCES styles(id) ON DELETE SET NULL
);
CREATE INDEX datasets_source_name ON datasets(source_name);

-- SLD styles; a dataset's default style is one of its own.
CREATE TABLE styles (
    id           INTEGER PRIMARY KEY,
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    name         TEXT NOT NULL UNIQUE,
    workspace    TEXT NOT NULL,
    sld_title    TEXT,
    sld_body     TEXT NOT NULL,
    generated    INTEGER NOT NULL DEFAULT 0,          -- 1: made by the catalogue, not uploaded
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);
CREATE INDEX styles_resource ON styles(resource_id);

-- An uploaded ISO 19115/19139 XML document, kept as sent.
CREATE TABLE iso_metadata (
    resource_id  INTEGER PRIMARY KEY REFERENCES resources(id) ON DELETE CASCADE,
    xml          BLOB NOT NULL,
    uploaded     TEXT NOT NULL
);

-- A document's file (under files/<uuid>/) or remote address.
CREATE TABLE documents (
    resource_id  INTEGER PRIMARY KEY REFERENCES resources(id) ON DELETE CASCADE,
    extension    TEXT,
    file_name    TEXT,
    doc_url      TEXT,
    mime_type    TEXT
);
"""


def dataset_details(conn) -> None:
    """DATASET_DETAILS, and the rows of datasets and documents uploaded before it existed."""
    import os


    for statement in statements(DATASET_DETAILS):
        conn.execute(statement)
    conn.execute(
        "INSERT INTO datasets (resource_id, name, workspace, source_name, folder)"
        " SELECT id, substr(alternate, instr(alternate, ':') + 1), substr(alternate, 1, instr(alternate, ':') - 1),"
        " substr(alternate, instr(alternate, ':') + 1), uuid FROM resources r WHERE resource_type = 'dataset'"
        " AND alternate LIKE '%:%' AND EXISTS (SELECT 1 FROM resource_files f WHERE f.resource_id = r.id)")
    for rid, name, mime in conn.execute(
            "SELECT r.id, f.name, f.mime_type FROM resources r JOIN resource_files f ON f.resource_id = r.id"
            " WHERE r.resource_type = 'document'").fetchall():
        extension = os.path.splitext(name)[1].lstrip(".").lower() or None
        conn.execute("INSERT OR IGNORE INTO documents (resource_id, extension, file_name, mime_type)"
                     " VALUES (?, ?, ?, ?)", (rid, extension, name, mime))

# Thumbnail files are looked up by their address: to serve one (which resource is it of?), and
# before one is removed (does a copy still use it?).
THUMBNAIL_INDEX = """
CREATE INDEX resources_thumbnail ON resources(thumbnail_url) WHERE thumbnail_url IS NOT NULL;
"""

def special_groups_read_only(conn) -> None:
    """The anonymous and registered-members groups stand for everyone and may only read: drop the
    write rows an older version let through, and recompute who may view without an account."""
    where = "group_id IN (1, 2) AND perm NOT IN ('view_resourcebase', 'download_resourcebase')"
    ids = [r[0] for r in conn.execute(f"SELECT DISTINCT resource_id FROM resource_perms WHERE {where}")]
    conn.execute(f"DELETE FROM resource_perms WHERE {where}")
    conn.executemany("UPDATE resources SET public_view = EXISTS (SELECT 1 FROM resource_perms p WHERE p.resource_id = ?"
                     " AND p.group_id = 1 AND p.perm = 'view_resourcebase') WHERE id = ?", [(i, i) for i in ids])


# Tables whose ids clients see and keep (in favorites, links, scripts): their ids come from a
# counter that never goes back (AUTOINCREMENT), so a deleted row's id is never given again.
COUNTED_TABLES = ("users", "groups", "group_profiles", "resources", "keywords", "thesaurus_keywords", "extra_metadata",
                  "execution_requests", "resource_files", "dataset_attributes", "styles", "map_layers")
_ID_COLUMN = re.compile(r"\bid(\s+)INTEGER\s+PRIMARY\s+KEY\b(?!\s+AUTOINCREMENT)", re.I)


def ids_never_reused(conn) -> None:
    """Rebuild the counted tables with AUTOINCREMENT, keeping every row, id, index and trigger.

    Runs with foreign keys off (see db.migrate): the old table is dropped without cascading and
    the new one takes its name, so the references of other tables point at it unchanged. The
    text and extent indexes are keyed by resource id, which is kept, so they stay valid."""
    for table in COUNTED_TABLES:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
        if sql is None or not _ID_COLUMN.search(sql[0]):
            continue
        extras = [r[0] for r in conn.execute(
            "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL",
            (table,))]
        created = _ID_COLUMN.sub(r"id\1INTEGER PRIMARY KEY AUTOINCREMENT", sql[0], count=1)
        created = re.sub(rf'^CREATE TABLE\s+"?{table}"?', f"CREATE TABLE {table}__counted", created, count=1)
        conn.execute(created)
        conn.execute(f"INSERT INTO {table}__counted SELECT * FROM {table}")
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"ALTER TABLE {table}__counted RENAME TO {table}")
        for statement in extras:
            conn.execute(statement)


# Browser sign-in. A session is found by the SHA-256 of its cookie (the cookie itself is not
# kept); its ids are never shown. A changed password or a deactivated account ends the user's
# sessions here, whichever process or command made the change; deleting the user cascades.
# login_failures holds recent sign-in attempts per user name (any process may read them) for the
# growing delay; rows older than the counting window are pruned as new ones arrive.
# (IF NOT EXISTS: a data folder set back to an older user_version may run it again.)
SESSIONS = """
CREATE TABLE IF NOT EXISTS sessions (
    digest      TEXT PRIMARY KEY,                   -- sha256 (hex) of the cookie value
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf_token  TEXT NOT NULL,
    created     TEXT NOT NULL,
    expires     TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_user ON sessions(user_id);
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions(expires);

CREATE TRIGGER IF NOT EXISTS users_end_sessions AFTER UPDATE OF password, is_active ON users
WHEN NEW.password IS NOT OLD.password OR NOT NEW.is_active BEGIN
    DELETE FROM sessions WHERE user_id = NEW.id;
END;

CREATE TABLE IF NOT EXISTS login_failures (
    username  TEXT NOT NULL COLLATE NOCASE,
    at        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS login_failures_username ON login_failures(username, at);
CREATE INDEX IF NOT EXISTS login_failures_at ON login_failures(at);
"""


# Map layers: one row per layer of a map, in the map's order. A layer may show a dataset of the
# catalogue (deleting the dataset leaves the layer, with no dataset) or a layer from elsewhere,
# named in extra_params. Their ids are shown and kept by clients: never given twice.
MAP_LAYERS = """
CREATE TABLE IF NOT EXISTS map_layers (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    map_id         INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    dataset_id     INTEGER REFERENCES resources(id) ON DELETE SET NULL,
    name           TEXT NOT NULL,
    position       INTEGER NOT NULL DEFAULT 0,      -- the layer's "order"
    visibility     INTEGER NOT NULL DEFAULT 1,
    opacity        REAL NOT NULL DEFAULT 1.0,
    current_style  TEXT,
    extra_params   TEXT NOT NULL DEFAULT '{}'       -- a JSON object
);
CREATE INDEX IF NOT EXISTS map_layers_map ON map_layers(map_id, position);
CREATE INDEX IF NOT EXISTS map_layers_dataset ON map_layers(dataset_id) WHERE dataset_id IS NOT NULL;
"""


# Migration 16: a geoapp's name, unique among geoapps (GeoNode answers 409 to a second one).
GEOAPPS = """
CREATE TABLE IF NOT EXISTS geoapps (
    resource_id  INTEGER PRIMARY KEY REFERENCES resources(id) ON DELETE CASCADE,
    name         TEXT NOT NULL UNIQUE
);
"""


# Migration 17: the text index merges in small steps between writes (store/text_index.py), not
# inside the write that happens to cross FTS5's threshold.
def text_index_merges_in_steps(conn) -> None:
    from catalogue_app.store import text_index

    text_index.configure(conn, **text_index.SETTINGS)


# Migration 18: the narrow index also holds the default order, so that the candidates of a
# search or an extent are sorted without reading their rows; the ids of what anonymous callers
# list, alone, so that counting thousands of candidates for them reads a small index; and the
# keyword links of those resources. It runs again cleanly on a folder set back to an older schema.
LIST_INDEXES = """
DROP INDEX IF EXISTS resources_visible;
CREATE INDEX resources_visible ON resources(id, dirty, public_view, advertised, owner_id, resource_type, created);
CREATE INDEX IF NOT EXISTS resources_listed ON resources(id) WHERE public_view = 1 AND dirty = 0 AND advertised = 1;

-- The keyword links of the resources that anonymous callers list, kept by triggers: counting
-- the resources of a keyword for them reads this table alone (catalogue seed fills it itself).
CREATE TABLE IF NOT EXISTS listed_keywords (
    keyword_id   INTEGER NOT NULL,
    resource_id  INTEGER NOT NULL,
    PRIMARY KEY (keyword_id, resource_id)
) WITHOUT ROWID;
DELETE FROM listed_keywords;
INSERT INTO listed_keywords (keyword_id, resource_id)
    SELECT rk.keyword_id, rk.resource_id FROM resource_keywords rk JOIN resources r ON r.id = rk.resource_id
    WHERE r.public_view = 1 AND r.dirty = 0 AND r.advertised = 1 ORDER BY rk.keyword_id, rk.resource_id;
CREATE TRIGGER IF NOT EXISTS listed_keywords_insert AFTER INSERT ON resource_keywords BEGIN
    INSERT OR IGNORE INTO listed_keywords (keyword_id, resource_id)
        SELECT NEW.keyword_id, NEW.resource_id FROM resources
        WHERE id = NEW.resource_id AND public_view = 1 AND dirty = 0 AND advertised = 1;
END;
CREATE TRIGGER IF NOT EXISTS listed_keywords_delete AFTER DELETE ON resource_keywords BEGIN
    DELETE FROM listed_keywords WHERE keyword_id = OLD.keyword_id AND resource_id = OLD.resource_id;
END;
CREATE TRIGGER IF NOT EXISTS listed_keywords_update AFTER UPDATE ON resource_keywords BEGIN
    DELETE FROM listed_keywords WHERE keyword_id = OLD.keyword_id AND resource_id = OLD.resource_id;
    INSERT OR IGNORE INTO listed_keywords (keyword_id, resource_id)
        SELECT NEW.keyword_id, NEW.resource_id FROM resources
        WHERE id = NEW.resource_id AND public_view = 1 AND dirty = 0 AND advertised = 1;
END;
CREATE TRIGGER IF NOT EXISTS listed_keywords_listing AFTER UPDATE OF public_view, dirty, advertised ON resources
WHEN (OLD.public_view = 1 AND OLD.dirty = 0 AND OLD.advertised = 1)
    IS NOT (NEW.public_view = 1 AND NEW.dirty = 0 AND NEW.advertised = 1)
BEGIN
    DELETE FROM listed_keywords WHERE resource_id = NEW.id
        AND keyword_id IN (SELECT keyword_id FROM resource_keywords WHERE resource_id = NEW.id);
    INSERT OR IGNORE INTO listed_keywords (keyword_id, resource_id)
        SELECT keyword_id, NEW.id FROM resource_keywords
        WHERE resource_id = NEW.id AND NEW.public_view = 1 AND NEW.dirty = 0 AND NEW.advertised = 1;
END;
"""


# Migration 19: a count of the commits that changed data, for what readers keep (store/db.py
# ``kept``). SQLite's own data_version also moves on commits that change no data a reader keeps
# anything of: the text index merged between writes, sessions and tokens.
DATA_CHANGES = """
CREATE TABLE IF NOT EXISTS data_changes (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    n   INTEGER NOT NULL
);
INSERT OR IGNORE INTO data_changes (id, n) VALUES (1, 0);
"""

# Migration 21 (made anew by migration 29): a second text index, of whole words
# (store/text_index.py says how a search uses it), with the words it holds and a trigram index of
# those words. The words of a resource that anonymous callers list go in columns title and
# abstract, those of any other in title_unlisted and abstract_unlisted (and 'h' in hidden), so
# that anonymous callers count their matches from the first two columns alone, and everyone
# else from all four. Contentless: a row is removed by giving back what was indexed, which the
# triggers recompute. It runs again cleanly on a folder set back to an older schema (all is made
# anew).
LISTED = "{0}.public_view = 1 AND {0}.dirty = 0 AND {0}.advertised = 1"
HIDDEN = f"CASE WHEN {LISTED} THEN NULL ELSE 'h' END"
WORD_COLUMNS = "title, abstract, hidden, title_unlisted, abstract_unlisted"
# the values of WORD_COLUMNS for the row {0} of resources
WORD_VALUES = (f"CASE WHEN {LISTED} THEN {{0}}.title END, CASE WHEN {LISTED} THEN {{0}}.abstract END, {HIDDEN},"
               f" CASE WHEN {LISTED} THEN NULL ELSE {{0}}.title END, CASE WHEN {LISTED} THEN NULL ELSE {{0}}.abstract END")
WORD_INDEX = f"""
DROP TRIGGER IF EXISTS resources_words_insert;
DROP TRIGGER IF EXISTS resources_words_update;
DROP TRIGGER IF EXISTS resources_vocab_update;
DROP TRIGGER IF EXISTS resources_words_delete;
DROP TABLE IF EXISTS resource_words_new_terms;
DROP TABLE IF EXISTS resource_words_new;
DROP TABLE IF EXISTS resource_words_by_column;
DROP TABLE IF EXISTS resource_words;
DROP TABLE IF EXISTS resource_vocab_text;
DROP TABLE IF EXISTS resource_vocab;
CREATE VIRTUAL TABLE resource_words USING fts5(
    {WORD_COLUMNS}, content='', detail=column, columnsize=0, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE resource_words_by_column USING fts5vocab(resource_words, 'col');
-- every word of a title or an abstract but those made of digits alone (kept, never removed)
CREATE TABLE resource_vocab (
    id    INTEGER PRIMARY KEY,
    word  TEXT NOT NULL UNIQUE
);
CREATE VIRTUAL TABLE resource_vocab_text USING fts5(
    word, content='resource_vocab', content_rowid='id', tokenize='trigram');
CREATE TRIGGER resource_vocab_insert AFTER INSERT ON resource_vocab BEGIN
    INSERT INTO resource_vocab_text (rowid, word) VALUES (NEW.id, NEW.word);
END;
-- one row at a time: the words of a new title or abstract, split as resource_words splits them
CREATE VIRTUAL TABLE resource_words_new USING fts5(
    words, content='', detail=none, columnsize=0, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE resource_words_new_terms USING fts5vocab(resource_words_new, 'row');
CREATE TRIGGER resources_words_insert AFTER INSERT ON resources BEGIN
    INSERT INTO resource_words (rowid, {WORD_COLUMNS}) VALUES (NEW.id, {WORD_VALUES.format("NEW")});
    INSERT INTO resource_words_new (rowid, words) VALUES (1, coalesce(NEW.title, '') || ' ' || coalesce(NEW.abstract, ''));
    INSERT OR IGNORE INTO resource_vocab (word) SELECT term FROM resource_words_new_terms WHERE term GLOB '*[^0-9]*';
    INSERT INTO resource_words_new (resource_words_new) VALUES ('delete-all');
END;
CREATE TRIGGER resources_words_update AFTER UPDATE OF title, abstract, public_view, dirty, advertised ON resources
WHEN OLD.title IS NOT NEW.title OR OLD.abstract IS NOT NEW.abstract
    OR {HIDDEN.format("OLD")} IS NOT {HIDDEN.format("NEW")}
BEGIN
    INSERT INTO resource_words (resource_words, rowid, {WORD_COLUMNS})
        VALUES ('delete', OLD.id, {WORD_VALUES.format("OLD")});
    INSERT INTO resource_words (rowid, {WORD_COLUMNS}) VALUES (NEW.id, {WORD_VALUES.format("NEW")});
END;
CREATE TRIGGER resources_vocab_update AFTER UPDATE OF title, abstract ON resources
WHEN OLD.title IS NOT NEW.title OR OLD.abstract IS NOT NEW.abstract
BEGIN
    INSERT INTO resource_words_new (rowid, words) VALUES (1, coalesce(NEW.title, '') || ' ' || coalesce(NEW.abstract, ''));
    INSERT OR IGNORE INTO resource_vocab (word) SELECT term FROM resource_words_new_terms WHERE term GLOB '*[^0-9]*';
    INSERT INTO resource_words_new (resource_words_new) VALUES ('delete-all');
END;
CREATE TRIGGER resources_words_delete AFTER DELETE ON resources BEGIN
    INSERT INTO resource_words (resource_words, rowid, {WORD_COLUMNS})
        VALUES ('delete', OLD.id, {WORD_VALUES.format("OLD")});
END;
"""


def word_index(conn) -> None:
    """Migration 21: make the word index and fill it from the resources in one pass."""
    from catalogue_app.store import text_index

    for statement in statements(WORD_INDEX):
        conn.execute(statement)
    fill_word_index(conn, 1)
    text_index.configure(conn, "resource_vocab_text", **text_index.SETTINGS)


def unlisted_words(conn) -> None:
    """Migration 29: the word index made anew, the words of resources that anonymous callers do
    not list in columns of their own (see migration 21)."""
    word_index(conn)


TEXT_COLUMNS = "'title', 'abstract', 'title_unlisted', 'abstract_unlisted'"  # the word index's columns of words


def fill_word_index(conn, first: int) -> None:
    """Index the resources from id ``first`` on (inserted while the insert trigger was off) and
    add their words to the vocabulary (read from the whole index: a second or so at a million)."""
    from catalogue_app.store import text_index

    # With the usual small in-memory buffer, a large fill is written as several segments that
    # optimize merges into one at a level above them; a fill written as one lone segment would
    # stay at level 0, where the first merge after a few edits would rewrite the whole index
    # inside a client's write.
    text_index.configure(conn, "resource_words", **text_index.SETTINGS)
    conn.execute(f"INSERT INTO resource_words (rowid, {WORD_COLUMNS}) SELECT r.id, {WORD_VALUES.format('r')}"
                 " FROM resources r WHERE r.id >= ?", (first,))
    text_index.optimize(conn, "resource_words")
    conn.execute("INSERT OR IGNORE INTO resource_vocab (word) SELECT DISTINCT term FROM resource_words_by_column"
                 f" WHERE col IN ({TEXT_COLUMNS}) AND term GLOB '*[^0-9]*' ORDER BY term")


# Migration 22: how many resources there are of each type and state (public, listed, dirty),
# kept by triggers, so that the total of an unfiltered list (the first page of the catalogue)
# and the counts by type are read from a handful of rows, not counted again after every write.
TALLY_KEY = ("resource_type", "public_view", "advertised", "dirty")
TALLY_MATCH = " AND ".join(f"{c} = {{0}}.{c}" for c in TALLY_KEY)
RESOURCE_TALLY = f"""
DROP TRIGGER IF EXISTS resource_tally_insert;
DROP TRIGGER IF EXISTS resource_tally_update;
DROP TRIGGER IF EXISTS resource_tally_delete;
DROP TABLE IF EXISTS resource_tally;
CREATE TABLE resource_tally (
    resource_type  TEXT NOT NULL,
    public_view    INTEGER NOT NULL,
    advertised     INTEGER NOT NULL,
    dirty          INTEGER NOT NULL,
    n              INTEGER NOT NULL,
    PRIMARY KEY (resource_type, public_view, advertised, dirty)
) WITHOUT ROWID;
INSERT INTO resource_tally (resource_type, public_view, advertised, dirty, n)
    SELECT resource_type, public_view, advertised, dirty, count(*) FROM resources GROUP BY 1, 2, 3, 4;
CREATE TRIGGER resource_tally_insert AFTER INSERT ON resources BEGIN
    INSERT INTO resource_tally (resource_type, public_view, advertised, dirty, n)
        VALUES (NEW.resource_type, NEW.public_view, NEW.advertised, NEW.dirty, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER resource_tally_update AFTER UPDATE OF resource_type, public_view, advertised, dirty ON resources
WHEN OLD.resource_type IS NOT NEW.resource_type OR OLD.public_view IS NOT NEW.public_view
    OR OLD.advertised IS NOT NEW.advertised OR OLD.dirty IS NOT NEW.dirty
BEGIN
    UPDATE resource_tally SET n = n - 1 WHERE {TALLY_MATCH.format("OLD")};
    INSERT INTO resource_tally (resource_type, public_view, advertised, dirty, n)
        VALUES (NEW.resource_type, NEW.public_view, NEW.advertised, NEW.dirty, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER resource_tally_delete AFTER DELETE ON resources BEGIN
    UPDATE resource_tally SET n = n - 1 WHERE {TALLY_MATCH.format("OLD")};
END;
"""


def add_to_tally(conn, counts: dict[tuple, int]) -> None:
    """Add resources inserted while the insert trigger was off to the tally, given how many
    there are of each (resource_type, public_view, advertised, dirty)."""
    conn.executemany("INSERT INTO resource_tally (resource_type, public_view, advertised, dirty, n) VALUES (?, ?, ?, ?, ?)"
                     " ON CONFLICT DO UPDATE SET n = n + excluded.n", [(*key, n) for key, n in counts.items()])


def steady_writes(conn) -> None:
    """Migration 23: the requests of a user still waiting to run, found without reading all of
    theirs (the job runner asks after every job; an account that changes permissions all day
    has thousands of finished ones), and the text indexes' crisis merges out of reach
    (store/text_index.py)."""
    from catalogue_app.store import text_index

    conn.execute("CREATE INDEX IF NOT EXISTS execution_requests_ready ON execution_requests(user_id, id)"
                 " WHERE status = 'ready'")
    for table in text_index.present(conn):
        text_index.configure(conn, table, crisismerge=text_index.SETTINGS["crisismerge"])

# Migration 24: harvesting (harvesters, what each remote offers, sessions), publishing to other
# catalogues (the remotes and what was sent to each), and datasets whose data stay on a remote
# service. A harvester's lease (lease_pid, lease_until) lets one process at a time run its work.
HARVESTING = """
CREATE TABLE IF NOT EXISTS harvesters (
    id                      INTEGER PRIMARY KEY,
    name                    TEXT NOT NULL UNIQUE,
    status                  TEXT NOT NULL DEFAULT 'ready',
    remote_url              TEXT NOT NULL,
    remote_available        INTEGER NOT NULL DEFAULT 0,
    scheduling_enabled      INTEGER NOT NULL DEFAULT 1,
    harvesting_session_update_frequency             INTEGER NOT NULL DEFAULT 60,
    refresh_harvestable_resources_update_frequency  INTEGER NOT NULL DEFAULT 30,
    check_availability_frequency                    INTEGER NOT NULL DEFAULT 10,
    default_owner_id        INTEGER NOT NULL REFERENCES users(id),
    harvester_type          TEXT NOT NULL,
    config                  TEXT NOT NULL DEFAULT '{}',
    last_checked_availability           TEXT,
    last_checked_harvestable_resources  TEXT,
    last_check_harvestable_resources_message TEXT NOT NULL DEFAULT '',
    harvest_new_resources_by_default    INTEGER NOT NULL DEFAULT 0,
    delete_orphan_resources_automatically INTEGER NOT NULL DEFAULT 0,
    last_harvested          TEXT,
    last_updated            TEXT NOT NULL,
    lease_pid               INTEGER,
    lease_until             REAL
);

-- What a harvester's remote offers; resource_id is the local resource made from it.
CREATE TABLE IF NOT EXISTS harvestable_resources (
    id                  INTEGER PRIMARY KEY,
    harvester_id        INTEGER NOT NULL REFERENCES harvesters(id) ON DELETE CASCADE,
    unique_identifier   TEXT NOT NULL,
    title               TEXT NOT NULL DEFAULT '',
    should_be_harvested INTEGER NOT NULL DEFAULT 0,
    status              TEXT NOT NULL DEFAULT 'ready',
    remote_resource_type TEXT NOT NULL DEFAULT '',
    remote_url          TEXT,
    remote_last_updated TEXT,
    last_updated        TEXT NOT NULL,
    offered             INTEGER NOT NULL DEFAULT 1,     -- 0 once the remote lists it no more
    resource_id         INTEGER REFERENCES resources(id) ON DELETE SET NULL,
    last_harvested      TEXT,
    last_harvesting_succeeded INTEGER,
    last_harvesting_message   TEXT NOT NULL DEFAULT '',
    harvested_remote_date     TEXT,                     -- the remote's last change when last harvested
    UNIQUE (harvester_id, unique_identifier)
);
CREATE INDEX IF NOT EXISTS harvestable_resources_resource ON harvestable_resources(resource_id);

CREATE TABLE IF NOT EXISTS harvesting_sessions (
    id                       INTEGER PRIMARY KEY,
    harvester_id             INTEGER NOT NULL REFERENCES harvesters(id) ON DELETE CASCADE,
    session_type             TEXT NOT NULL,            -- harvesting | discover-harvestable-resources
    status                   TEXT NOT NULL DEFAULT 'pending',
    started                  TEXT NOT NULL,
    updated                  TEXT NOT NULL,
    ended                    TEXT,
    total_records_to_process INTEGER NOT NULL DEFAULT 0,
    records_done             INTEGER NOT NULL DEFAULT 0,
    records_failed           INTEGER NOT NULL DEFAULT 0,
    details                  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS harvesting_sessions_harvester ON harvesting_sessions(harvester_id, id);

-- Other catalogues (GeoNode API v2) that resources are published to.
CREATE TABLE IF NOT EXISTS remotes (
    id       INTEGER PRIMARY KEY,
    name     TEXT NOT NULL UNIQUE,
    url      TEXT NOT NULL,
    token    TEXT NOT NULL DEFAULT '',
    created  TEXT NOT NULL
);

-- What was published where: the remote's pk and uuid, the step reached, the data sent.
CREATE TABLE IF NOT EXISTS publications (
    remote_id       INTEGER NOT NULL REFERENCES remotes(id) ON DELETE CASCADE,
    resource_id     INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    remote_pk       INTEGER,
    remote_uuid     TEXT,
    stage           TEXT NOT NULL DEFAULT 'new',
    upload_exec_id  TEXT,
    data_checksum   TEXT,
    last_published  TEXT,
    message         TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (remote_id, resource_id)
) WITHOUT ROWID;

-- A dataset whose data stay on a remote OGC service (a harvested WMS layer): shown through it.
CREATE TABLE IF NOT EXISTS remote_layers (
    resource_id   INTEGER PRIMARY KEY REFERENCES resources(id) ON DELETE CASCADE,
    service_type  TEXT NOT NULL DEFAULT 'WMS',
    service_url   TEXT NOT NULL,
    layer_name    TEXT NOT NULL,
    download_url  TEXT
);

-- Links a harvested resource brings from its remote (its pages, services, downloads there).
CREATE TABLE IF NOT EXISTS remote_links (
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    url          TEXT NOT NULL,
    name         TEXT NOT NULL DEFAULT '',
    mime         TEXT NOT NULL DEFAULT '',
    link_type    TEXT NOT NULL DEFAULT 'url',
    extension    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS remote_links_resource ON remote_links(resource_id);
"""

# Migration 25: jobs of the management commands (GeoNode's statuses: CREATED, QUEUED, STARTED,
# FINISHED); ``failed`` says whether the command ended with an error, ``stop_requested`` that it
# was asked to stop, ``pid`` the process that runs it.
MANAGEMENT = """
CREATE TABLE IF NOT EXISTS management_jobs (
    id               INTEGER PRIMARY KEY,
    command          TEXT NOT NULL,
    app_name         TEXT NOT NULL DEFAULT '',
    user_id          INTEGER REFERENCES users(id) ON DELETE SET NULL,
    status           TEXT NOT NULL DEFAULT 'CREATED',
    created_at       TEXT NOT NULL,
    start_time       TEXT,
    end_time         TEXT,
    args             TEXT NOT NULL DEFAULT '[]',
    kwargs           TEXT NOT NULL DEFAULT '{}',
    celery_result_id TEXT,
    output_message   TEXT,
    failed           INTEGER NOT NULL DEFAULT 0,
    stop_requested   INTEGER NOT NULL DEFAULT 0,
    pid              INTEGER
);
CREATE INDEX IF NOT EXISTS management_jobs_command ON management_jobs(command, id);
CREATE INDEX IF NOT EXISTS management_jobs_waiting ON management_jobs(id) WHERE status = 'QUEUED';
"""


def token_details(conn) -> None:
    """Migration 26: what each token is and when it was last used. ``label``: given by its user;
    ``kind``: 'personal' (made by its user, API or web UI), 'login' (issued by /o/token/) or 'cli'
    (made by ``catalogue token``); ``client``: the client_id a login named; ``last_used``: when it
    last authenticated a request (kept at most a minute behind). Tokens made before are taken for
    logins when they lived two days or less, else for the command line's."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(tokens)")}
    for name, declaration in (("label", "TEXT NOT NULL DEFAULT ''"), ("kind", "TEXT NOT NULL DEFAULT 'login'"),
                              ("client", "TEXT NOT NULL DEFAULT ''"), ("last_used", "TEXT")):
        if name not in have:
            conn.execute(f"ALTER TABLE tokens ADD COLUMN {name} {declaration}")
    if "kind" not in have:
        conn.execute("UPDATE tokens SET kind = 'cli' WHERE julianday(expires) - julianday(created) > 2")
    conn.execute("CREATE INDEX IF NOT EXISTS tokens_user_kind ON tokens(user_id, kind, client, created)")
    conn.execute("CREATE INDEX IF NOT EXISTS tokens_expires ON tokens(expires)")


# Migration 27: where a resource came from, when it was not made here from scratch (store/origins.py).
# ``copy``: a copy of a resource of this catalogue (original_id, null once the original is
# deleted; its title as it was when copied), or of one elsewhere (url, title: a resource published
# here from another catalogue). ``harvested``: a record a harvester brought (harvester_id, null
# once the harvester is removed; its name and remote address kept; url the remote's page of the
# record). Filled in for what was copied (the copy jobs' requests) and harvested before.
RESOURCE_ORIGINS = """
CREATE TABLE IF NOT EXISTS resource_origins (
    resource_id   INTEGER PRIMARY KEY REFERENCES resources(id) ON DELETE CASCADE,
    kind          TEXT NOT NULL CHECK (kind IN ('copy', 'harvested')),
    original_id   INTEGER REFERENCES resources(id) ON DELETE SET NULL,
    title         TEXT NOT NULL DEFAULT '',
    url           TEXT,
    harvester_id  INTEGER REFERENCES harvesters(id) ON DELETE SET NULL,
    harvester     TEXT NOT NULL DEFAULT '',
    remote_url    TEXT
);
CREATE INDEX IF NOT EXISTS resource_origins_original ON resource_origins(original_id);
CREATE INDEX IF NOT EXISTS resource_origins_harvester ON resource_origins(harvester_id);
CREATE INDEX IF NOT EXISTS resource_origins_kind ON resource_origins(kind);
"""


def resource_origins(conn) -> None:
    """The table, and the origins of what was copied and harvested before it."""
    import json

    for statement in statements(RESOURCE_ORIGINS):
        conn.execute(statement)
    copies = []
    for inputs, outputs in conn.execute("SELECT input_params, output_params FROM execution_requests"
                                        " WHERE func_name = 'copy' AND status = 'finished' ORDER BY id"):
        try:
            original, made = json.loads(inputs).get("instance"), json.loads(outputs).get("output") or {}
        except (ValueError, AttributeError):
            continue
        if isinstance(made, dict) and isinstance(made.get("pk"), int) and isinstance(original, int):
            copies.append((made["pk"], made.get("uuid"), original))
    for pk, uuid, original in copies:
        conn.execute("INSERT OR IGNORE INTO resource_origins (resource_id, kind, original_id, title)"
                     " SELECT c.id, 'copy', o.id, coalesce(o.title, '') FROM resources c"
                     " LEFT JOIN resources o ON o.id = ? WHERE c.id = ? AND c.uuid = ?", (original, pk, uuid))
    conn.execute(
        "INSERT OR IGNORE INTO resource_origins (resource_id, kind, title, url, harvester_id, harvester, remote_url)"
        " SELECT i.resource_id, 'harvested', i.title,"
        " (SELECT l.url FROM remote_links l WHERE l.resource_id = i.resource_id AND l.link_type = 'html'"
        "  AND l.name = 'Page on the remote catalogue' LIMIT 1), h.id, h.name, h.remote_url"
        " FROM harvestable_resources i JOIN harvesters h ON h.id = i.harvester_id"
        " JOIN resources r ON r.id = i.resource_id ORDER BY i.id")
    # harvested by a harvester since removed: data copied from a remote, or shown from its service
    # (so that every COPYREMOTE resource has its row, as origins.SOURCE_SQL expects)
    conn.execute("INSERT OR IGNORE INTO resource_origins (resource_id, kind, title) SELECT r.id, 'harvested', r.title"
                 " FROM resources r WHERE r.sourcetype = 'COPYREMOTE'"
                 " OR r.id IN (SELECT resource_id FROM remote_layers)")


# Tables whose changes leave data_changes alone: nothing kept is derived from them.
UNCOUNTED = {"data_changes", "kind_changes", "sessions", "tokens", "login_failures",
             "resource_tally",  # (changes with the resources, which are counted)
             # harvesting and publishing: read as they are, nothing derived is kept from them
             "harvesters", "harvestable_resources", "harvesting_sessions", "remotes", "publications",
             "management_jobs"}

# Tables counted apart, each in its row of kind_changes (migration 20): what readers keep from
# them is kept apart too (store/db.py ``kept(conn, kind)``), so that a favorite set or an
# execution request stored leaves the kept counts and renderings of everything else alone.
KINDS = {"favorites": "favorites", "execution_requests": "jobs"}

# Migration 20: the counts of changes to the tables of KINDS.
KIND_CHANGES = """
CREATE TABLE IF NOT EXISTS kind_changes (
    kind TEXT PRIMARY KEY,
    n    INTEGER NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO kind_changes (kind, n) VALUES ('favorites', 0), ('jobs', 0);
DROP TRIGGER IF EXISTS data_changes_favorites_insert;
DROP TRIGGER IF EXISTS data_changes_favorites_update;
DROP TRIGGER IF EXISTS data_changes_favorites_delete;
DROP TRIGGER IF EXISTS data_changes_execution_requests_insert;
DROP TRIGGER IF EXISTS data_changes_execution_requests_update;
DROP TRIGGER IF EXISTS data_changes_execution_requests_delete;
"""


def counted_tables(conn) -> list[str]:
    """The tables whose every change bumps data_changes: all but UNCOUNTED, SQLite's own and
    the tables a virtual table keeps its index in (they change with the rows they index)."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
    return [name for name, sql in rows
            if name not in UNCOUNTED and name not in KINDS and not name.startswith("sqlite_")
            and name not in virtual and not any(name.startswith(v + "_") for v in virtual)]


def change_triggers(conn, tables: list[str] | None = None) -> dict[str, str]:
    """The triggers that bump data_changes, by name, for ``tables`` (all counted ones)."""
    out = {}
    for table in counted_tables(conn) if tables is None else tables:
        for event in ("INSERT", "UPDATE", "DELETE"):
            name = f"data_changes_{table}_{event.lower()}"
            out[name] = (f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON {table} "
                         "BEGIN UPDATE data_changes SET n = n + 1; END")
    return out


def kind_triggers() -> dict[str, str]:
    """The triggers that bump a table's row of kind_changes, by name (the tables of KINDS)."""
    out = {}
    for table, kind in KINDS.items():
        for event in ("INSERT", "UPDATE", "DELETE"):
            name = f"kind_changes_{table}_{event.lower()}"
            out[name] = (f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON {table} "
                         f"BEGIN UPDATE kind_changes SET n = n + 1 WHERE kind = '{kind}'; END")
    return out


def count_changes(conn) -> None:
    """Make the triggers of every counted table that lacks them (after every migration, so that
    a table a later step adds is counted too)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'data_changes'").fetchone() is None:
        return
    for sql in change_triggers(conn).values():
        conn.execute(sql)
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'kind_changes'").fetchone() is not None:
        for sql in kind_triggers().values():
            conn.execute(sql)



# Migration 28: the extents of the resources that anonymous callers list, in an R*Tree of their
# own kept by triggers, so that they count the resources in a box and find its newest without
# reading a row or an index entry per resource (store/resources.py ``_listed_in_extents``).
# Entries are those of resource_extents (the box, or the world; a box across the antimeridian in
# two parts), with ids that sort as the resources' creation: the hour ``created`` names, as
# ((year * 12 + month - 1) * 31 + day - 1) * 24 + hour (below 2**27; 0 when ``created`` does not
# start as the store writes it), shifted left by LISTED_EXTENT_SHIFT bits, then the resource id
# (below 2**35) and the part (0: the box or its western part, 1: the eastern part).
LISTED_EXTENT_SHIFT = 36
LISTED_ROW = "{0}.public_view = 1 AND {0}.dirty = 0 AND {0}.advertised = 1"  # as resources.ANONYMOUS_LISTING
CREATED_HOUR = (
    "CASE WHEN {0}.created GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]*'"
    " AND substr({0}.created, 6, 2) BETWEEN '01' AND '12' AND substr({0}.created, 9, 2) BETWEEN '01' AND '31'"
    " AND substr({0}.created, 12, 2) BETWEEN '00' AND '23'"
    " THEN ((CAST(substr({0}.created, 1, 4) AS INTEGER) * 12 + CAST(substr({0}.created, 6, 2) AS INTEGER) - 1) * 31"
    " + CAST(substr({0}.created, 9, 2) AS INTEGER) - 1) * 24 + CAST(substr({0}.created, 12, 2) AS INTEGER) ELSE 0 END")
LISTED_ENTRY = f"((({CREATED_HOUR}) << {LISTED_EXTENT_SHIFT}) | ({{0}}.id << 1))"
# the entries of row {0}: its box (or its western part) and the eastern part of one across the antimeridian
LISTED_ENTRIES = (
    "SELECT {entry} AS id, coalesce({0}.ll_x0, -180) AS minx,"
    " CASE WHEN {0}.ll_x0 > {0}.ll_x1 THEN 180 ELSE coalesce({0}.ll_x1, 180) END AS maxx,"
    " coalesce({0}.ll_y0, -90) AS miny, coalesce({0}.ll_y1, 90) AS maxy {source} WHERE {listed}"
    " UNION ALL SELECT {entry} + 1, -180, {0}.ll_x1, {0}.ll_y0, {0}.ll_y1 {source} WHERE {listed} AND {0}.ll_x0 > {0}.ll_x1")
LISTED_CHANGED = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in ("ll_x0", "ll_y0", "ll_x1", "ll_y1", "created")) + \
    f" OR ({LISTED_ROW.format('OLD')}) IS NOT ({LISTED_ROW.format('NEW')})"


def _listed_entries(row: str, source: str = "", where: str = "") -> str:
    return LISTED_ENTRIES.format(row, entry=LISTED_ENTRY.format(row), source=source,
                                 listed=LISTED_ROW.format(row) + where)


LISTED_EXTENTS = f"""
DROP TRIGGER IF EXISTS listed_extents_insert;
DROP TRIGGER IF EXISTS listed_extents_update;
DROP TRIGGER IF EXISTS listed_extents_delete;
DROP TABLE IF EXISTS listed_extents;
CREATE VIRTUAL TABLE listed_extents USING rtree(id, minx, maxx, miny, maxy);
CREATE TRIGGER listed_extents_insert AFTER INSERT ON resources WHEN {LISTED_ROW.format("NEW")} BEGIN
    INSERT INTO listed_extents (id, minx, maxx, miny, maxy) {_listed_entries("NEW")};
END;
CREATE TRIGGER listed_extents_update AFTER UPDATE OF ll_x0, ll_y0, ll_x1, ll_y1, created, public_view, dirty, advertised
ON resources WHEN {LISTED_CHANGED}
BEGIN
    DELETE FROM listed_extents WHERE id IN ({LISTED_ENTRY.format("OLD")}, {LISTED_ENTRY.format("OLD")} + 1);
    INSERT INTO listed_extents (id, minx, maxx, miny, maxy) {_listed_entries("NEW")};
END;
CREATE TRIGGER listed_extents_delete AFTER DELETE ON resources WHEN {LISTED_ROW.format("OLD")} BEGIN
    DELETE FROM listed_extents WHERE id IN ({LISTED_ENTRY.format("OLD")}, {LISTED_ENTRY.format("OLD")} + 1);
END;
"""


def listed_extents(conn) -> None:
    """Migration 28: make the R*Tree of listed extents and fill it."""
    for statement in statements(LISTED_EXTENTS):
        conn.execute(statement)
    fill_listed_extents(conn, 1)


def fill_listed_extents(conn, first: int) -> None:
    """Add the entries of the listed resources from id ``first`` on (inserted while the insert
    trigger was off), nearby boxes one after another (an R*Tree takes them faster so)."""
    conn.execute(f"INSERT INTO listed_extents (id, minx, maxx, miny, maxy) SELECT * FROM"
                 f" ({_listed_entries('r', 'FROM resources r', ' AND r.id >= :first')})"
                 " ORDER BY CAST((miny + 90) / 4 AS INTEGER), CAST((minx + 180) / 4 AS INTEGER)", {"first": first})

# Migration 30: history. Every committed change of a resource is a version: a uuid that is
# the same in every catalogue it travels to, its number within the resource, who, when, through
# what ('wfs-t', 'ui', 'api', 'upload', 'iso', 'harvest', 'revert'...), its kind ('data',
# 'replace', 'metadata', 'revert') and a summary. A metadata version keeps its fields before and
# after in ``changes``; a data version's features are kept in the dataset's GeoPackage
# (gpkgext_catalogue_* tables), where they are written in the same transaction as the data.
# ``state`` is 'pending' from the number's reservation until the GeoPackage has committed;
# a start finds each pending row in its GeoPackage (then 'done') or drops it.
# datasets.data_version: the number of the last data version applied (0: the upload as it came);
# the caches of layers know a working copy by it.
VERSIONS = """
CREATE TABLE IF NOT EXISTS resource_versions (
    id            INTEGER PRIMARY KEY,
    uuid          TEXT NOT NULL UNIQUE,
    resource_id   INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    number        INTEGER NOT NULL,
    created       TEXT NOT NULL,
    user_id       INTEGER REFERENCES users(id) ON DELETE SET NULL,
    username      TEXT,
    via           TEXT NOT NULL,
    kind          TEXT NOT NULL,
    state         TEXT NOT NULL DEFAULT 'done',
    summary       TEXT NOT NULL DEFAULT '{}',
    changes       TEXT,
    reverts_to    TEXT,
    UNIQUE (resource_id, number)
);
CREATE INDEX IF NOT EXISTS resource_versions_pending ON resource_versions(resource_id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS resource_versions_created ON resource_versions(created);
CREATE TABLE IF NOT EXISTS resource_tombstones (
    uuid          TEXT PRIMARY KEY,
    resource_id   INTEGER NOT NULL,
    resource_type TEXT NOT NULL,
    title         TEXT NOT NULL DEFAULT '',
    deleted       TEXT NOT NULL,
    user_id       INTEGER REFERENCES users(id) ON DELETE SET NULL,
    username      TEXT
);
CREATE INDEX IF NOT EXISTS resource_tombstones_deleted ON resource_tombstones(deleted);
"""


def versions(conn) -> None:
    """Migration 30: the history's tables (VERSIONS) and datasets.data_version (added once: a data
    folder set back to an older user_version runs this again)."""
    for statement in statements(VERSIONS):
        conn.execute(statement)
    if not any(row[1] == "data_version" for row in conn.execute("PRAGMA table_info(datasets)")):
        conn.execute("ALTER TABLE datasets ADD COLUMN data_version INTEGER NOT NULL DEFAULT 0")


# Migration 31: where ``catalogue vacuum --drop-versions-before`` cut each resource's history:
# its versions numbered up to ``upto`` were dropped at ``dropped`` (store/versions.py ``cut``).
HISTORY_CUTS = """
CREATE TABLE IF NOT EXISTS resource_history_cuts (
    resource_id INTEGER PRIMARY KEY REFERENCES resources(id) ON DELETE CASCADE,
    upto        INTEGER NOT NULL,
    dropped     TEXT NOT NULL
);
"""


# Migration 32: field packages (catalogue_app/packages/). ``catalogue_identity`` holds this
# catalogue's own id, made once, which the packages it exports name as their maker. ``packages``
# are the packages this catalogue exported or imported; ``package_members`` the resources each
# one carried, with this catalogue's version of each when it exported it or after it imported
# it (the sync points a later "since" package is compared with); ``package_conflicts`` the
# resources changed on both sides, the incoming copy kept aside until a user chooses.
PACKAGES = """
CREATE TABLE IF NOT EXISTS catalogue_identity (
    id       TEXT PRIMARY KEY,
    created  TEXT NOT NULL
);
INSERT INTO catalogue_identity (id, created)
    SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2)
                 || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2)
                 || '-' || hex(randomblob(6))),
           strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE NOT EXISTS (SELECT 1 FROM catalogue_identity);
CREATE TABLE IF NOT EXISTS packages (
    id         TEXT PRIMARY KEY,                 -- the manifest's id (a uuid)
    direction  TEXT NOT NULL CHECK (direction IN ('export', 'import')),
    created    TEXT NOT NULL,                    -- when this catalogue exported or imported it
    user_id    INTEGER REFERENCES users(id) ON DELETE SET NULL,
    maker      TEXT NOT NULL,                    -- the id of the catalogue that made it
    base       TEXT,                             -- a "since" package: the package it follows
    file_name  TEXT,                             -- an export: its file under packages/ (NULL once removed)
    size       INTEGER,
    manifest   TEXT NOT NULL DEFAULT '{}',       -- the manifest, as JSON
    report     TEXT NOT NULL DEFAULT '{}'        -- what exporting or importing it did, as JSON
);
CREATE INDEX IF NOT EXISTS packages_base ON packages(base) WHERE base IS NOT NULL;
CREATE TABLE IF NOT EXISTS package_members (
    package_id          TEXT NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
    uuid                TEXT NOT NULL,           -- the resource's uuid (the same in every catalogue)
    local_version       INTEGER NOT NULL DEFAULT 0,  -- this catalogue's latest version number of it
                                                     -- when exported, or after the import
    local_data_version  INTEGER NOT NULL DEFAULT 0,  -- datasets.data_version then
    peer_version        INTEGER,                 -- an import: the version number the package gave
    peer_data_version   INTEGER,
    data                TEXT NOT NULL DEFAULT 'none',  -- whole | clipped | changes | metadata_only | remote | none
    outcome             TEXT,                    -- an import: created | updated | unchanged | conflict |
                                                 -- deleted | kept | refused | failed
    PRIMARY KEY (package_id, uuid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS package_members_uuid ON package_members(uuid);
CREATE TABLE IF NOT EXISTS package_conflicts (
    id             INTEGER PRIMARY KEY,
    package_id     TEXT NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
    uuid           TEXT NOT NULL,
    resource_id    INTEGER REFERENCES resources(id) ON DELETE SET NULL,
    kind           TEXT NOT NULL,                -- changed_both | deleted_here | deleted_there
    title          TEXT NOT NULL DEFAULT '',
    created        TEXT NOT NULL,
    version_uuid   TEXT,                         -- the incoming copy: a resource_versions row kept aside
    folder         TEXT,                         -- its files, under files/ (NULL: none)
    record         TEXT NOT NULL DEFAULT '{}',   -- its record, as the package carried it
    state          TEXT NOT NULL DEFAULT 'open', -- open | kept_local | kept_incoming | kept_both
    resolved       TEXT,
    resolved_by    INTEGER REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX IF NOT EXISTS package_conflicts_open ON package_conflicts(resource_id) WHERE state = 'open';
"""


# Migration 33: the features another catalogue added to a dataset, by their id there and here.
# A feature added in the field gets a new id at the office (the field's may be taken); a later
# package that changes or deletes it names the field's id, found here (store/packages.py).
PACKAGE_FIDS = """
CREATE TABLE IF NOT EXISTS package_fids (
    resource_id  INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    peer         TEXT NOT NULL,                  -- the id of the catalogue the package came from
    peer_fid     INTEGER NOT NULL,
    local_fid    INTEGER NOT NULL,
    PRIMARY KEY (resource_id, peer, peer_fid)
) WITHOUT ROWID;
"""


# Migration 34: facets (store/facets.py) count types, categories and owners from indexes alone:
# the visibility index carries the category, and the resources anonymous callers list have their
# categories and owners in an index of their own.
FACET_INDEXES = """
DROP INDEX IF EXISTS resources_visible;
CREATE INDEX resources_visible ON resources(id, dirty, public_view, advertised, owner_id, resource_type, created, category_id);
CREATE INDEX IF NOT EXISTS resources_listed_facets ON resources(category_id, owner_id)
    WHERE public_view = 1 AND dirty = 0 AND advertised = 1;
"""


# Migration 35: contacts of a resource that are no users of the catalogue: a name with an
# organisation and an email, in a contact role (as ISO's CI_ResponsibleParty), after the role's users.
CONTACT_NAMES = """
CREATE TABLE IF NOT EXISTS resource_contact_names (
    resource_id   INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
    role          TEXT NOT NULL,
    position      INTEGER NOT NULL,
    name          TEXT NOT NULL DEFAULT '',
    organization  TEXT NOT NULL DEFAULT '',
    email         TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (resource_id, role, position)
) WITHOUT ROWID;
"""


MIGRATIONS: list = [ACCOUNTS, CATALOGUE, seed_reference_data, VISIBILITY_INDEX, EXECUTIONS, PARALLELISM,
                    RESOURCE_FILES, SIZE_LIMITS, DATASET_ATTRIBUTES, dataset_details, THUMBNAIL_INDEX,
                    special_groups_read_only, ids_never_reused, SESSIONS, MAP_LAYERS,
                    GEOAPPS, text_index_merges_in_steps, LIST_INDEXES, DATA_CHANGES, KIND_CHANGES, word_index,
                    RESOURCE_TALLY, steady_writes, HARVESTING, MANAGEMENT, token_details, resource_origins,
                    listed_extents, unlisted_words, versions, HISTORY_CUTS, PACKAGES, PACKAGE_FIDS, FACET_INDEXES,
                    CONTACT_NAMES]
