"""The facet engine's counts (store/facets.py) of what each viewer lists with no search, for every
facet, against a plain count of the rows the visibility condition lets through, after each of a
run of shares, unshares, group joins and leaves, owner changes, listing flags, featured flags,
group changes and deletions.

A signed-in user's counts are not counted through that condition: they add what anonymous
callers list, what every signed-in user lists besides (both kept for all), and the rows the user
sees of their own. A real SQLite file, seeded by ``catalogue seed``'s code with groups to share
to, read through the database owner's reader connection (what it keeps is dropped on every
change) and written through its writer."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from catalogue_app.passwords import hash_password
from catalogue_app.seeding.resources import seed_resources
from catalogue_app.store import db, facets, groups, permissions, resource_writes, resources, users

NAMES = facets.NAMES


@pytest.fixture(scope="module", params=[0.3, 0.9], ids=["mostly private", "mostly public"])
def cat(tmp_path_factory, request):
    """(Mostly public: a facet of what anonymous callers list is counted as all, less the
    unlisted; mostly private: over the listed.)"""
    path = tmp_path_factory.mktemp("facet-counts") / "catalogue.sqlite3"
    db.migrate(path)
    with db.transaction(path) as conn:
        hashed = hash_password("pw-123456")
        people = {name: users.create(conn, {"username": name, "email": f"{name}@example.org", "password": hashed})
                  for name in ("owner", "member", "plain", "root")}
        conn.execute("UPDATE users SET is_superuser = 1 WHERE id = ?", (people["root"],))
        teams = []
        for i in range(3):
            profile = groups.create(conn, {"title": f"Team {i}", "slug": f"team-{i}",
                                           "access": "private" if i == 2 else "public"}, [], None)
            teams.append(groups.get(conn, profile)["group_id"])
        groups.set_role(conn, teams[0], people["member"], "member")
        groups.set_role(conn, teams[2], people["member"], "member")
        seed_resources(conn, 1200, seed=5, public_share=request.param)
    database = db.Database(path)
    yield {"db": database, "people": people, "teams": teams}
    database.close()


def plain(conn, viewer) -> dict[str, Counter]:
    """Each facet's counts over the rows the viewer lists, found row by row through visibility."""
    cond, params = resources.visibility(viewer)
    adv, adv_params = resources._advertised(viewer, resources.ResourceQuery())
    rows = conn.execute(f"SELECT r.id, r.resource_type, r.featured, r.category_id, r.owner_id, r.group_id"
                        f" FROM resources r WHERE {cond}{adv}", params + adv_params).fetchall()
    ids = {r[0] for r in rows}
    out = {"type": Counter(r[1] for r in rows), "featured": Counter(r[2] for r in rows),
           "category": Counter(r[3] for r in rows if r[3] is not None), "owner": Counter(r[4] for r in rows),
           "group": Counter(r[5] for r in rows if r[5] is not None)}
    out["keyword"] = Counter(k for rid, k in conn.execute("SELECT resource_id, keyword_id FROM resource_keywords")
                             if rid in ids)
    out["region"] = Counter(g for rid, g in conn.execute("SELECT resource_id, region_id FROM resource_regions")
                            if rid in ids)
    return out


def check(cat) -> None:
    def read(conn):
        for name, uid in [("anonymous", None), *cat["people"].items()]:
            viewer = resources.viewer_of(conn, uid, name == "root")
            want = plain(conn, viewer)
            got = facets.counts(conn, viewer, resources.ResourceQuery(), NAMES)
            for facet in NAMES:
                shown = {b.id: b.count for b in got[facet]}
                expected = {k: n for k, n in want[facet].items() if n}
                if facet == "group":  # a group the viewer may not see is not shown
                    assert set(shown) <= set(expected) and all(expected[k] == n for k, n in shown.items()), name
                else:
                    assert shown == expected, (name, facet)
    cat["db"].read_sync(read)
    cat["db"].read_sync(read)  # a second time: from what the reader kept


def test_counts_stay_exact_for_every_viewer_through_every_kind_of_change(cat):
    people, teams, database = cat["people"], cat["teams"], cat["db"]
    ids = database.read_sync(lambda conn: [r[0] for r in conn.execute("SELECT id FROM resources ORDER BY id")])
    rng = random.Random(7)
    special = [resources.ANONYMOUS_GROUP_ID, resources.REGISTERED_GROUP_ID]
    check(cat)

    def share(conn, rid, who, level):
        kind, target = who
        permissions.apply(conn, rid, {target: level} if kind == "user" else {},
                          {target: level} if kind == "group" else {}, replace=False)

    everyone = list(people.values())
    changes = {
        "share to a user": lambda conn: share(conn, rng.choice(ids), ("user", rng.choice(everyone)),
                                              rng.choice(["view", "download", "edit"])),
        "share to a group": lambda conn: share(conn, rng.choice(ids), ("group", rng.choice(teams + special)),
                                               rng.choice(["view", "download"])),
        "unshare from a group": lambda conn: share(conn, rng.choice(ids), ("group", rng.choice(teams + special)), "none"),
        "join a group": lambda conn: groups.set_role(conn, rng.choice(teams), rng.choice(everyone), "member"),
        "leave a group": lambda conn: groups.remove_member(conn, rng.choice(teams), rng.choice(everyone)),
        "give to another owner": lambda conn: conn.execute("UPDATE resources SET owner_id = ? WHERE id = ?",
                                                           (rng.choice(everyone), rng.choice(ids))),
        "unlist or list": lambda conn: resource_writes.update(conn, rng.choice(ids), {"advertised": rng.randrange(2)}),
        "feature": lambda conn: conn.execute("UPDATE resources SET featured = ? WHERE id = ?",
                                             (rng.randrange(2), rng.choice(ids))),
        "put in a group": lambda conn: conn.execute("UPDATE resources SET group_id = ? WHERE id = ?",
                                                    (rng.choice([*teams, None]), rng.choice(ids))),
        "mark dirty or clean": lambda conn: conn.execute("UPDATE resources SET dirty = ? WHERE id = ?",
                                                         (rng.randrange(2), rng.choice(ids))),
    }
    for step in range(40):
        name = list(changes)[step % len(changes)]
        for _ in range(4):
            try:
                database.write_sync(changes[name])
            except LookupError:
                pass
        if step % 10 == 9:
            gone = ids.pop(rng.randrange(len(ids)))
            database.write_sync(resource_writes.delete, gone)
            ids.append(database.write_sync(resource_writes.create, "document", rng.choice(everyone),
                                           {"title": f"New {step}"}))
        check(cat)
