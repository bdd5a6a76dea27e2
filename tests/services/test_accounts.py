"""services/users.py and services/groups.py on a real SQLite file, without HTTP: who edits,
deletes or demotes whom, the last superuser kept, transfers, and who may join or change a group."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from catalogue_app.services import groups as group_rules
from catalogue_app.services import users as user_rules
from catalogue_app.services.errors import Forbidden, Invalid, NotFound
from catalogue_app.store import groups, resource_writes, users
from catalogue_app.store.db import Database, migrate


@dataclass
class Caller:
    """Who asks, as the services read it."""

    id: int | None
    is_superuser: bool = False
    is_staff: bool = False

    @property
    def is_admin(self) -> bool:
        return self.is_superuser or self.is_staff

    @property
    def is_anonymous(self) -> bool:
        return self.id is None


@pytest.fixture
def world(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    database = Database(path, read_threads=1)

    def build(conn):
        ids = {name: users.create(conn, {"username": name, "password": ""}) for name in ("alice", "bob", "staff")}
        users.update(conn, ids["staff"], {"is_staff": True})
        ids["root"] = users.create(conn, {"username": "root", "password": "", "is_superuser": 1})
        public = groups.create(conn, {"slug": "open", "title": "Open", "access": "public"}, [], ids["alice"])
        private = groups.create(conn, {"slug": "closed", "title": "Closed", "access": "private"}, [], ids["alice"])
        return ids, {"public": public, "private": private}

    ids, profiles = database.write_sync(build)
    callers = {"alice": Caller(ids["alice"]), "bob": Caller(ids["bob"]),
               "staff": Caller(ids["staff"], is_staff=True), "root": Caller(ids["root"], is_superuser=True)}
    yield database, ids, profiles, callers
    database.close()


def test_who_edits_whom(world):
    database, ids, _, callers = world
    database.write_sync(user_rules.change, callers["bob"], [(ids["bob"], {"first_name": "Bob"})])
    with pytest.raises(Forbidden):
        database.write_sync(user_rules.change, callers["bob"], [(ids["alice"], {"first_name": "X"})])
    with pytest.raises(Forbidden):  # staff edit everyone but superusers
        database.write_sync(user_rules.change, callers["staff"], [(ids["root"], {"first_name": "X"})])
    database.write_sync(user_rules.change, callers["staff"], [(ids["alice"], {"first_name": "Alice"})])
    names = database.read_sync(lambda conn: [users.get(conn, ids[n])["first_name"] for n in ("alice", "bob", "root")])
    assert names == ["Alice", "Bob", ""]


def test_field_rules_need_no_database(world):
    *_, callers = world
    with pytest.raises(Forbidden, match="is_staff"):
        user_rules.check_values({"is_staff": True}, callers["bob"], creating=False, settings=None)
    with pytest.raises(Forbidden, match="superuser"):
        user_rules.check_values({"is_superuser": True}, callers["staff"], creating=False, settings=None)
    with pytest.raises(Invalid, match="cannot be updated"):
        user_rules.check_values({"username": "new"}, callers["root"], creating=False, settings=None)


def test_the_last_superuser_stays(world):
    database, ids, _, callers = world
    with pytest.raises(Invalid, match="last active superuser"):
        database.write_sync(user_rules.change, callers["root"], [(ids["root"], {"is_superuser": False})])
    with pytest.raises(Invalid, match="last active superuser"):
        database.write_sync(user_rules.delete, callers["root"], [ids["root"]], ())
    assert database.read_sync(users.get, ids["root"])["is_superuser"]


def test_deletion_rules_and_transfers(world):
    database, ids, _, callers = world
    rid = database.write_sync(resource_writes.create, "document", ids["bob"], {"title": "Bob's"})
    with pytest.raises(Invalid, match="user_has_resources"):
        database.write_sync(user_rules.delete, callers["root"], [ids["bob"]], ("user_has_resources",))
    with pytest.raises(Forbidden):  # only administrators give away what is not theirs
        database.write_sync(user_rules.transfer, callers["alice"], ids["bob"], ids["bob"], ids["alice"], None)
    with pytest.raises(Invalid, match="self"):
        database.write_sync(user_rules.transfer, callers["bob"], ids["bob"], ids["bob"], ids["bob"], None)
    with pytest.raises(NotFound):
        database.write_sync(user_rules.transfer, callers["bob"], ids["bob"], ids["bob"], 999_999, None)
    assert database.write_sync(user_rules.transfer, callers["bob"], ids["bob"], ids["bob"], ids["alice"], None) == 1
    owner = database.read_sync(lambda conn: conn.execute("SELECT owner_id FROM resources WHERE id = ?", (rid,)).fetchone()[0])
    assert owner == ids["alice"]
    database.write_sync(user_rules.delete, callers["root"], [ids["bob"]], ("user_has_resources",))
    assert database.read_sync(users.get, ids["bob"]) is None


def test_demoting_managers(world):
    database, ids, profiles, callers = world
    assert user_rules.may_demote(callers["alice"], ids["alice"]) and user_rules.may_demote(callers["staff"], ids["alice"])
    assert not user_rules.may_demote(callers["bob"], ids["alice"])
    public_group = database.read_sync(groups.get, profiles["public"])["group_id"]
    titles, refused = database.write_sync(user_rules.demote, ids["alice"], [public_group, 999])
    assert titles == ["Open"] and refused == [999]
    assert database.read_sync(groups.role, public_group, ids["alice"]) == "member"


def test_who_may_join_and_change_a_group(world):
    database, ids, profiles, callers = world
    public = database.read_sync(group_rules.visible, callers["bob"], profiles["public"])
    database.write_sync(group_rules.change_members, callers["bob"], public, [ids["bob"]], "member", True)
    assert database.read_sync(groups.role, public["group_id"], ids["bob"]) == "member"
    with pytest.raises(Forbidden):  # a member makes nobody a manager, not even themselves
        database.write_sync(group_rules.change_members, callers["bob"], public, [ids["bob"]], "manager", True)
    with pytest.raises(NotFound):  # a private group is hidden from those outside it
        database.read_sync(group_rules.visible, callers["bob"], profiles["private"])
    with pytest.raises(Forbidden):
        database.write_sync(group_rules.change, callers["bob"], profiles["public"], {"title": "Mine"}, None)
    database.write_sync(group_rules.change, callers["alice"], profiles["public"], {"title": "Ours"}, None)
    with pytest.raises(Forbidden):  # PUT: administrators only, even for the manager
        database.write_sync(group_rules.change, callers["alice"], profiles["public"], {"title": "X"}, None, True)
    with pytest.raises(Forbidden):
        database.write_sync(group_rules.create, callers["alice"], [({"slug": "new", "title": "New"}, None)])
    with pytest.raises(Invalid, match="slug"):
        database.write_sync(group_rules.create, callers["root"], [({"slug": "open", "title": "Again"}, None)])
    with pytest.raises(Forbidden):
        database.write_sync(group_rules.delete_each, callers["alice"], [profiles["public"]])
    assert database.read_sync(groups.get, profiles["public"])["title"] == "Ours"
