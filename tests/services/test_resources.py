"""services/resources.py on a real SQLite file, through the database owner's one writer, without
HTTP: who may see, change, delete and copy a resource, what a refused write leaves (nothing),
and what each family's scope reaches."""

from __future__ import annotations

import pytest

from catalogue_app.services import resources as rules
from catalogue_app.services.errors import Busy, Forbidden, Invalid, NotFound
from catalogue_app.store import executions, groups, permissions, resource_writes, resources, users
from catalogue_app.store.db import Database, migrate

MAPS = rules.Scope(("map",), "Map", layers=True)
GEOAPPS = rules.Scope(("geostory", "dashboard"), "GeoApp", app_name=True)


@pytest.fixture
def world(tmp_path):
    """An owner's private document, an editor with edit rights on it, a member of its group with
    download rights, a stranger and a superuser; ``viewer(name)`` as the store sees each."""
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    database = Database(path, read_threads=1)

    def build(conn):
        ids = {name: users.create(conn, {"username": name, "password": ""})
               for name in ("owner", "editor", "member", "stranger")}
        ids["admin"] = users.create(conn, {"username": "root", "password": "", "is_superuser": 1})
        profile = groups.create(conn, {"slug": "crew", "title": "Crew"}, [], ids["owner"])
        group_id = groups.get(conn, profile)["group_id"]
        groups.set_role(conn, group_id, ids["member"], "member")
        rid = resource_writes.create(conn, "document", ids["owner"], {"title": "Notes", "group_id": group_id},
                                     public=False)
        permissions.apply(conn, rid, {ids["editor"]: "edit"}, {group_id: "download"}, replace=False)
        return ids, rid

    ids, rid = database.write_sync(build)

    def viewer(name):
        return database.read_sync(resources.viewer_of, ids[name], name == "admin")

    yield database, ids, rid, viewer
    database.close()


def title_of(database, rid):
    return database.read_sync(lambda conn: conn.execute("SELECT title FROM resources WHERE id = ?", (rid,)).fetchone()[0])


def test_hidden_and_missing_look_alike(world):
    database, _, rid, viewer = world
    for pk in (rid, 999_999):
        with pytest.raises(NotFound, match="No ResourceBase matches"):
            database.read_sync(rules.visible, viewer("stranger"), pk)
    assert database.read_sync(rules.visible, viewer("member"), rid)["title"] == "Notes"


@pytest.mark.parametrize(("who", "may_change"), [
    ("owner", True), ("admin", True), ("editor", True), ("member", False)])
def test_who_may_change(world, who, may_change):
    database, _, rid, viewer = world
    if may_change:
        database.write_sync(rules.change, viewer(who), rid, {"title": f"By {who}"})
        assert title_of(database, rid) == f"By {who}"
    else:
        with pytest.raises(Forbidden):
            database.write_sync(rules.change, viewer(who), rid, {"title": "Nope"})
        assert title_of(database, rid) == "Notes"


def test_a_refused_change_writes_nothing(world):
    database, _, rid, viewer = world
    with pytest.raises(Invalid, match="wrong format"):
        database.write_sync(rules.change, viewer("owner"), rid, {"title": "Half", "date": "yesterday"})
    assert title_of(database, rid) == "Notes"
    with pytest.raises(NotFound, match="No Map matches"):  # a document is no map: the maps scope does not reach it
        database.write_sync(rules.change, viewer("owner"), rid, {"title": "Map?"}, MAPS)


def test_only_those_who_may_delete_do_and_never_while_a_job_runs(world):
    database, ids, rid, viewer = world
    for who in ("editor", "member"):
        with pytest.raises(Forbidden):
            database.write_sync(rules.delete, viewer(who), rid)
    exec_id = database.write_sync(lambda conn: executions.create(
        conn, user_id=ids["owner"], func_name="update", action="update", input_params={}, resource_id=rid))
    with pytest.raises(Busy):
        database.write_sync(rules.delete, viewer("owner"), rid)
    database.write_sync(executions.finish, exec_id, {})
    uuid = database.write_sync(rules.delete, viewer("owner"), rid)
    assert isinstance(uuid, str) and len(uuid) == 36
    with pytest.raises(NotFound):
        database.read_sync(rules.visible, viewer("admin"), rid)


def test_several_deletions_are_all_or_none(world):
    database, ids, rid, viewer = world
    other = database.write_sync(resource_writes.create, "document", ids["stranger"], {"title": "Theirs"})
    with pytest.raises(Forbidden):
        database.write_sync(rules.delete_each, viewer("owner"), [rid, other])
    assert database.read_sync(rules.visible, viewer("admin"), rid)["title"] == "Notes"


def test_what_may_be_created(world):
    database, ids, _, viewer = world
    with pytest.raises(Invalid, match="datasets come from uploads"):
        rules.creatable_type({"resource_type": "dataset"}, rules.ANY)
    with pytest.raises(Invalid, match="expected one of map"):
        rules.creatable_type({"resource_type": "document"}, MAPS)
    assert rules.creatable_type({}, MAPS) == "map"
    with pytest.raises(Invalid, match="mandatory"):  # a geoapp names itself
        rules.creatable_type({"resource_type": "geostory"}, GEOAPPS)
    item = {"resource_type": "geostory", "name": "Tour"}
    assert rules.creatable_type(item, GEOAPPS) == "geostory" and item["title"] == "Tour"
    [rid] = database.write_sync(rules.create, viewer("stranger"), ids["stranger"], [item], GEOAPPS)
    row = database.read_sync(rules.visible, viewer("stranger"), rid)
    assert (row["owner_id"], row["title"], row["resource_type"]) == (ids["stranger"], "Tour", "geostory")
    with pytest.raises(Busy, match="same 'name'"):  # one geoapp per name, and the second is not written
        database.write_sync(rules.create, viewer("owner"), ids["owner"],
                            [{"resource_type": "dashboard", "name": "Tour", "title": "Tour"}], GEOAPPS)


def test_copying_needs_download_rights_on_documents(world):
    database, _, rid, viewer = world
    assert database.read_sync(rules.copyable, viewer("member"), rid)["id"] == rid  # the group may download
    editor_may = database.read_sync(lambda conn: rules.copyable(conn, viewer("editor"), rid)["id"])
    assert editor_may == rid  # edit includes download
    with pytest.raises(NotFound):
        database.read_sync(rules.copyable, viewer("stranger"), rid)
