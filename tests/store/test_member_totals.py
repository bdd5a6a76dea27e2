"""The totals of unfiltered lists and the counts by type, for every kind of viewer, against a
plain count through the visibility condition, after each of a long run of shares, unshares,
group joins and leaves, owner changes, listing flags and deletions.

Signed-in users' totals are not counted through that condition (store/resources.py
``_member_counts``): they add what anonymous callers list, what every registered user sees
beyond it, and the rows the user sees beyond that. A real SQLite file, seeded by ``catalogue
seed``'s code with groups to share to, read through the database owner's reader connection (so
that what it keeps between requests is dropped on every change) and written through its writer.
"""

from __future__ import annotations

import random

import pytest

from catalogue_app.api.resources.params import resource_query
from catalogue_app.passwords import hash_password
from catalogue_app.seeding.resources import seed_resources
from catalogue_app.store import db, groups, permissions, resource_writes, resources, users

QUERIES = [[], [("advertised", "false")], [("advertised", "true")], [("advertised", "all")]]
TYPES = [(), ("dataset",), ("geostory", "dashboard"), ("document",)]


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    path = tmp_path_factory.mktemp("member-totals") / "catalogue.sqlite3"
    db.migrate(path)
    with db.transaction(path) as conn:
        hashed = hash_password("pw-123456")
        people = {name: users.create(conn, {"username": name, "email": f"{name}@example.org", "password": hashed})
                  for name in ("owner", "member", "manager", "plain", "root")}
        conn.execute("UPDATE users SET is_superuser = 1 WHERE id = ?", (people["root"],))
        teams = []
        for i in range(4):
            profile = groups.create(conn, {"title": f"Team {i}", "slug": f"team-{i}"}, [], None)
            teams.append(groups.get(conn, profile)["group_id"])
        groups.set_role(conn, teams[0], people["member"], "member")
        groups.set_role(conn, teams[1], people["member"], "member")
        groups.set_role(conn, teams[0], people["manager"], "manager")
        # the seed shares private resources to the teams and to registered members
        seed_resources(conn, 1500, seed=9, public_share=0.5)
    database = db.Database(path)
    yield {"db": database, "people": people, "teams": teams}
    database.close()


def viewers(conn, people) -> dict[str, resources.Viewer]:
    return {"anonymous": resources.viewer_of(conn, None),
            **{name: resources.viewer_of(conn, uid, name == "root") for name, uid in people.items()}}


def plain_counts(conn, viewer, query) -> dict[str, int]:
    """What the viewer lists, counted row by row through the visibility condition."""
    cond, params = resources.visibility(viewer)
    adv, adv_params = resources._advertised(viewer, query)
    types = ""
    if query.resource_types:
        types = f" AND r.resource_type IN ({','.join('?' * len(query.resource_types))})"
    return dict(conn.execute(f"SELECT r.resource_type, count(*) FROM resources r WHERE {cond}{adv}{types}"
                             " GROUP BY r.resource_type", params + adv_params + list(query.resource_types)).fetchall())


def check(cat) -> None:
    def read(conn):
        for name, viewer in viewers(conn, cat["people"]).items():
            for params in QUERIES:
                for types in TYPES:
                    query, _, _ = resource_query(params, viewer.id, types)
                    want = plain_counts(conn, viewer, query)
                    total, rows = resources.page(conn, viewer, query, 10, 0, resources.PERMS_COLUMNS)
                    assert total == sum(want.values()), (name, params, types)
                    assert len(rows) == min(total, 10)
            assert resources.type_counts(conn, viewer) == plain_counts(conn, viewer, resources.ResourceQuery()), name
    cat["db"].read(read)
    cat["db"].read(read)  # a second time: from what the reader kept


def test_totals_stay_exact_for_every_viewer_through_every_kind_of_change(cat):
    people, teams, database = cat["people"], cat["teams"], cat["db"]
    ids = database.read(lambda conn: [r[0] for r in conn.execute("SELECT id FROM resources ORDER BY id")])
    rng = random.Random(4)
    special = [resources.ANONYMOUS_GROUP_ID, resources.REGISTERED_GROUP_ID]
    check(cat)

    def share(conn, rid, who, level):
        kind, target = who
        permissions.apply(conn, rid, {target: level} if kind == "user" else {},
                          {target: level} if kind == "group" else {}, replace=False)

    changes = {
        "share to a user": lambda conn: share(conn, rng.choice(ids), ("user", rng.choice(list(people.values()))),
                                              rng.choice(["view", "download", "edit", "manage"])),
        "share to a group": lambda conn: share(conn, rng.choice(ids), ("group", rng.choice(teams + special)),
                                               rng.choice(["view", "download"])),
        "unshare from a user": lambda conn: share(conn, rng.choice(ids), ("user", rng.choice(list(people.values()))),
                                                  "none"),
        "unshare from a group": lambda conn: share(conn, rng.choice(ids), ("group", rng.choice(teams + special)), "none"),
        "join a group": lambda conn: groups.set_role(conn, rng.choice(teams), rng.choice(list(people.values())),
                                                     rng.choice(["member", "manager"])),
        "leave a group": lambda conn: groups.remove_member(conn, rng.choice(teams), rng.choice(list(people.values()))),
        "give to another owner": lambda conn: conn.execute("UPDATE resources SET owner_id = ? WHERE id = ?",
                                                           (rng.choice(list(people.values())), rng.choice(ids))),
        "unlist or list": lambda conn: resource_writes.update(conn, rng.choice(ids), {"advertised": rng.randrange(2)}),
        "mark dirty or clean": lambda conn: conn.execute("UPDATE resources SET dirty = ? WHERE id = ?",
                                                         (rng.randrange(2), rng.choice(ids))),
        "strip all shares": lambda conn: permissions.remove_all(conn, rng.choice(ids)),
    }
    for step in range(60):
        name = list(changes)[step % len(changes)]
        for _ in range(3):  # a few changes of that kind in one commit
            try:
                database.write_sync(changes[name])
            except LookupError:  # the resource is gone
                pass
        if step % 10 == 9:  # now and then a resource goes, or comes
            gone = ids.pop(rng.randrange(len(ids)))
            database.write_sync(resource_writes.delete, gone)
            ids.append(database.write_sync(resource_writes.create, "document", rng.choice(list(people.values())),
                                           {"title": f"New {step}"}))
        check(cat)


def test_a_viewer_in_no_group_and_with_nothing_shared(cat):
    """A user who owns nothing, is in no group and was given nothing sees what every registered
    user sees: the same total as any other such user."""
    def read(conn):
        fresh = conn.execute("SELECT id FROM users WHERE username = 'nobody'").fetchone()[0]
        viewer = resources.viewer_of(conn, fresh)
        query = resources.ResourceQuery()
        assert resources.page(conn, viewer, query, 10, 0)[0] == sum(plain_counts(conn, viewer, query).values())
        assert resources.type_counts(conn, viewer) == plain_counts(conn, viewer, query)
    cat["db"].write_sync(lambda conn: users.create(conn, {"username": "nobody", "email": "nobody@example.org",
                                                          "password": hash_password("pw-123456")}))
    cat["db"].read(read)
