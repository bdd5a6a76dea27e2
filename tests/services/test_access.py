"""services/access.py on a real SQLite file, without HTTP: who may change, delete, download and
restyle a resource, and who may set its flags."""

from __future__ import annotations

import pytest

from catalogue_app.services import access
from catalogue_app.store import db, groups, permissions, resource_writes, resources, users


@pytest.fixture
def world(tmp_path):
    """An owner's document in a group, an editor with change rights, a manager of the group,
    a member of it with download rights, a stranger and a superuser."""
    path = tmp_path / "catalogue.sqlite3"
    db.migrate(path)
    with db.transaction(path) as conn:
        ids = {name: users.create(conn, {"username": name, "password": ""})
               for name in ("owner", "editor", "manager", "member", "stranger")}
        ids["admin"] = users.create(conn, {"username": "root", "password": "", "is_superuser": 1})
        profile = groups.create(conn, {"slug": "crew", "title": "Crew"}, [], ids["manager"])
        group_id = groups.get(conn, profile)["group_id"]
        groups.set_role(conn, group_id, ids["member"], "member")
        rid = resource_writes.create(conn, "document", ids["owner"], {"title": "Notes", "group_id": group_id}, public=False)
        permissions.apply(conn, rid, {ids["editor"]: "edit"}, {group_id: "download"}, replace=False)
    conn = db.connect(path, readonly=True)
    row = conn.execute("SELECT * FROM resources WHERE id = ?", (rid,)).fetchone()

    def viewer(name):
        return resources.viewer_of(conn, ids[name], name == "admin")

    yield conn, row, viewer
    conn.close()


@pytest.mark.parametrize(("who", "change", "delete", "download"), [
    ("owner", True, True, True),
    ("admin", True, True, True),
    ("editor", True, False, True),
    ("member", False, False, True),
    ("manager", True, True, True),   # manages the group of the resource, which it may download
    ("stranger", False, False, False),
])
def test_what_each_may_do(world, who, change, delete, download):
    conn, row, viewer = world
    v = viewer(who)
    assert access.may(conn, v, row, access.CHANGE) is change
    assert access.may(conn, v, row, access.DELETE) is delete
    assert access.may(conn, v, row, access.DOWNLOAD) is download


def test_anonymous_may_do_nothing_with_a_private_resource(world):
    conn, row, _ = world
    anonymous = resources.viewer_of(conn, None)
    assert not any(access.may(conn, anonymous, row, wanted)
                   for wanted in (access.CHANGE, access.DELETE, access.DOWNLOAD, access.EDIT_STYLE))


@pytest.mark.parametrize(("who", "featured", "published", "approved"), [
    ("admin", True, True, True),
    ("manager", True, True, True),   # manages the resource's group
    ("owner", False, True, False),   # approving is someone else's word: a superuser's or a manager's
    ("editor", False, False, False),
    ("stranger", False, False, False),
])
def test_who_may_set_the_flags(world, who, featured, published, approved):
    conn, row, viewer = world
    v = viewer(who)
    assert access.may_set_flag(conn, v, row, "featured") is featured
    assert access.may_set_flag(conn, v, row, "is_published") is published
    assert access.may_set_flag(conn, v, row, "advertised") is published
    assert access.may_set_flag(conn, v, row, "is_approved") is approved
