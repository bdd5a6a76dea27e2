"""Numbered schema migrations. Step N brings the database to ``PRAGMA user_version = N``.

Never edit a step that has shipped: add a new one. A step is an SQL script or a function
taking the connection (both run inside the migration transaction).
"""

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

MIGRATIONS: list = [ACCOUNTS]
