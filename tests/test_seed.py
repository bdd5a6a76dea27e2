"""`catalogue seed --resources N`: made-up resources that the API then serves like any others.

The command runs as a subprocess on a fresh data folder, then the app serves that folder and
everything is checked over HTTP: every row has the shape clients read, each caller sees exactly the
resources granted to them, and totals, type counts, lookup counts, search and extent agree with
the rows. The database file is opened read-only only to learn which grants the seed made up.
"""

import os
import sqlite3
import subprocess
import sys

import pytest

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, Server, in_process, login, make_group, make_user
from tests.row_shape import check_row

FIRST, SECOND = 600, 400
ANON_GROUP, REGISTERED_GROUP = 1, 2
VIEW = ("view_resourcebase", "change_resourcebase")


def run_seed(data_dir, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD, **(env or {})}
    return subprocess.run([sys.executable, "-m", "catalogue_app", "seed", "--data-dir", str(data_dir), *args],
                          check=False, capture_output=True, text=True, env=env, timeout=120)


def granted(data_dir, user_id: int | None, group_ids: tuple[int, ...]) -> set[int]:
    """Ids of resources the seed made visible to that user (None: an anonymous caller) through
    the given groups, a grant of their own, or ownership."""
    conn = sqlite3.connect(f"file:{data_dir / 'catalogue.sqlite3'}?mode=ro", uri=True)
    try:
        marks = ",".join("?" * len(group_ids))
        ids = {r[0] for r in conn.execute(
            f"SELECT resource_id FROM resource_perms WHERE perm IN (?, ?) AND group_id IN ({marks})", [*VIEW, *group_ids])}
        if user_id is not None:
            ids |= {r[0] for r in conn.execute(
                "SELECT resource_id FROM resource_perms WHERE perm IN (?, ?) AND user_id = ?", [*VIEW, user_id])}
            ids |= {r[0] for r in conn.execute("SELECT id FROM resources WHERE owner_id = ?", (user_id,))}
    finally:
        conn.close()
    return ids


def all_rows(client, path: str = "/api/v2/resources/", key: str = "resources", **params) -> list[dict]:
    r = client.get(path, params={"page_size": 5000, **params})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == len(body[key]), "one page holds them all"
    return body[key]


def pks(client, **params) -> set[str]:
    """The pks a resource query finds (only the pks are sent back)."""
    return {r["pk"] for r in all_rows(client, **params, **{"exclude[]": "*", "include[]": "pk"})}


@pytest.fixture(scope="module")
def s(tmp_path_factory):
    data = tmp_path_factory.mktemp("seeded") / "data"
    first = run_seed(data, "--resources", str(FIRST), "--seed", "7")
    assert first.returncode == 0, first.stderr
    srv = in_process(data)  # the seed below runs in a process of its own
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    with srv.client() as anon:
        before = {"anon": anon.get("/api/v2/resources/").json()["total"],
                  "admin": admin.get("/api/v2/resources/").json()["total"]}
    # people and a group for the second batch, seeded while the server runs
    plain, crewman = make_user(admin), make_user(admin)
    crew = make_group(admin)
    assert admin.post(f"/api/v2/groups/{crew['pk']}/members", json={"users": [crewman["pk"]]}).status_code == 200
    second = run_seed(data, "--resources", str(SECOND))
    assert second.returncode == 0, second.stderr
    yield {"srv": srv, "data": data, "admin": admin, "plain": plain, "crewman": crewman, "crew": crew,
           "outputs": (first.stdout, second.stdout), "before": before}
    admin.close()
    srv.stop()


CALLERS = ("anon", "plain", "crewman", "admin")


def client(s, name: str):
    if name == "anon":
        return s["srv"].client()
    if name == "admin":
        return s["srv"].client(auth=("admin", ADMIN_PASSWORD))
    return login(s["srv"], s[name])


def expected_ids(s, name: str) -> set[int] | None:
    """Ids the seed made visible to the caller; None for the admin, who sees everything."""
    groups = {"anon": (ANON_GROUP,), "plain": (ANON_GROUP, REGISTERED_GROUP),
              "crewman": (ANON_GROUP, REGISTERED_GROUP, s["crew"]["group"]["pk"])}
    if name == "admin":
        return None
    return granted(s["data"], None if name == "anon" else s[name]["pk"], groups[name])


@pytest.fixture(scope="module")
def rows(s):
    """Every row each caller sees, read once (the tests after the fixture only read)."""
    out = {}
    for name in CALLERS:
        with client(s, name) as c:
            out[name] = all_rows(c)
    return out


def test_seed_reports_what_it_added(s):
    assert s["outputs"][0].startswith(f"{FIRST} resources added in ")
    assert s["outputs"][1].startswith(f"{SECOND} resources added in ")
    # the server answered from its caches before the second batch; it must see the new rows at once
    assert s["before"]["admin"] == FIRST and 0 < s["before"]["anon"] < FIRST


def test_admin_sees_every_seeded_resource_with_the_client_row_shape(s, rows):
    srv = s["srv"]
    rows = rows["admin"]
    assert len(rows) == FIRST + SECOND
    assert len({r["pk"] for r in rows}) == len(rows) and len({r["uuid"] for r in rows}) == len(rows)
    for row in rows:
        check_row(row, srv.url)
        assert row["title"] and row["abstract"] and row["keywords"] and len(row["regions"]) == 1
        assert row["category"] is not None and row["license"] is not None
        assert row["ll_bbox_polygon"] is not None
        if row["resource_type"] == "dataset":
            assert row["subtype"] in ("vector", "raster") and row["alternate"].startswith("catalogue:")
    kinds = {r["resource_type"] for r in rows}
    assert {"dataset", "document", "map", "geostory", "dashboard"} <= kinds
    owners = {r["owner"]["username"] for r in rows}
    assert {"admin", s["plain"]["username"], s["crewman"]["username"]} <= owners  # the second batch used the new people
    for path, key in (("datasets", "datasets"), ("documents", "documents"), ("maps", "maps"), ("geoapps", "geoapps")):
        for row in all_rows(s["admin"], f"/api/v2/{path}/", key)[:50]:
            check_row(row, srv.url)
    for row in rows[:: len(rows) // 20]:
        detail = s["admin"].get(f"/api/v2/resources/{row['pk']}").json()["resource"]
        assert detail == row


def test_each_caller_sees_exactly_what_the_seed_granted(s, rows):
    admin_ids = {int(r["pk"]) for r in rows["admin"]}
    assert len(admin_ids) == FIRST + SECOND
    seen = {}
    for name in CALLERS[:-1]:
        expected = expected_ids(s, name)
        with client(s, name) as c:
            ids = seen[name] = {int(r["pk"]) for r in rows[name]}
            assert ids == expected, name
            assert 0 < len(ids) < len(admin_ids)
            for row in rows[name]:
                check_row(row, s["srv"].url)
                if name == "anon":
                    assert set(row["perms"]) == {"view_resourcebase", "download_resourcebase"} or \
                        set(row["perms"]) == {"view_resourcebase"}
            hidden = sorted(admin_ids - ids)[:25]
            for rid in hidden:
                assert c.get(f"/api/v2/resources/{rid}").status_code == 404
            assert c.get("/api/v2/resources/", params={"filter{pk.in}": hidden}).json()["total"] == 0
    # the crew member sees what the crew was given; the plain user does not
    crew_only = granted(s["data"], None, (s["crew"]["group"]["pk"],)) - seen["plain"]
    assert crew_only, "the second batch granted some resources to the group alone"
    assert crew_only <= seen["crewman"] and seen["anon"] < seen["plain"]


def test_totals_agree_with_resource_type_counts(s):
    for name in CALLERS:
        with client(s, name) as c:
            counts = {t["name"]: t["count"] for t in c.get("/api/v2/resources/resource_types/").json()["resource_types"]}
            total = c.get("/api/v2/resources/").json()["total"]
            assert sum(counts.values()) == total, name
            for kind, count in counts.items():
                assert c.get("/api/v2/resources/", params={"filter{resource_type}": kind}).json()["total"] == count
            assert c.get("/api/v2/datasets/").json()["total"] == counts["dataset"]
            assert c.get("/api/v2/documents/").json()["total"] == counts["document"]
            assert c.get("/api/v2/maps/").json()["total"] == counts["map"]
            assert c.get("/api/v2/geoapps/").json()["total"] == counts["geostory"] + counts["dashboard"]
            vector = c.get("/api/v2/datasets/", params={"filter{subtype}": "vector"}).json()["total"]
            raster = c.get("/api/v2/datasets/", params={"filter{subtype}": "raster"}).json()["total"]
            assert vector + raster == counts["dataset"] and vector > raster > 0


def test_lookup_counts_agree_with_the_rows(s, rows):
    for name in CALLERS:
        with client(s, name) as c:
            expected: dict[str, dict] = {"keywords": {}, "categories": {}, "regions": {}, "owners": {}}
            for row in rows[name]:
                for k in row["keywords"]:
                    expected["keywords"][k["slug"]] = expected["keywords"].get(k["slug"], 0) + 1
                cat = row["category"]["identifier"]
                expected["categories"][cat] = expected["categories"].get(cat, 0) + 1
                code = row["regions"][0]["code"]
                expected["regions"][code] = expected["regions"].get(code, 0) + 1
                who = row["owner"]["username"]
                expected["owners"][who] = expected["owners"].get(who, 0) + 1
            got = {
                "keywords": {k["slug"]: k["count"] for k in all_rows(c, "/api/v2/keywords/", "keywords")},
                "categories": {k["identifier"]: k["count"] for k in all_rows(c, "/api/v2/categories/", "categories") if k["count"]},
                "regions": {k["code"]: k["count"] for k in all_rows(c, "/api/v2/regions/", "regions") if k["count"]},
                "owners": {k["username"]: k["count"] for k in all_rows(c, "/api/v2/owners/", "owners")},
            }
            for lookup, counts in expected.items():
                assert got[lookup] == counts, (name, lookup)
            # and a lookup count is what the matching filter finds
            slug, count = max(expected["keywords"].items(), key=lambda kv: kv[1])
            assert c.get("/api/v2/resources/", params={"filter{keywords.slug}": slug}).json()["total"] == count
            code, count = max(expected["regions"].items(), key=lambda kv: kv[1])
            assert c.get("/api/v2/resources/", params={"filter{regions.code}": code}).json()["total"] == count


def _intersects(coords, box, slack):
    x0, y0, x1, y1 = coords
    w, south, e, north = box
    return x0 <= e + slack and x1 >= w - slack and y0 <= north + slack and y1 >= south - slack


def test_search_agrees_with_the_rows(s, rows):
    """The seed fills the trigram index itself: search must find exactly the rows that contain every term."""
    for name in ("anon", "admin"):
        with client(s, name) as c:
            for search in ("river", "RIVER survey", "zürich", "ZÜRICH", "kraków", "ky", "ål", "école"):
                terms = [t.casefold() for t in search.split()]
                expected = {r["pk"] for r in rows[name]
                            if all(t in r["title"].casefold() or t in r["abstract"].casefold() for t in terms)}
                assert expected, search
                assert pks(c, search=search, search_fields=["title", "abstract"]) == expected, (name, search)
                titles = {r["pk"] for r in rows[name] if all(t in r["title"].casefold() for t in terms)}
                assert pks(c, search=search, search_fields="title") == titles, (name, search)


def test_extent_agrees_with_the_rows(s, rows):
    """The seed fills the extent index itself: extent must find the rows whose box meets the query box."""
    for name in ("anon", "admin"):
        with client(s, name) as c:
            for box in ((5.9, 45.8, 10.5, 47.8), (-20.0, -40.0, 55.0, 40.0), (170.0, -50.0, -170.0, 70.0)):
                w, south, e, north = box
                halves = [(w, south, 180.0, north), (-180.0, south, e, north)] if w > e else [box]
                found = pks(c, extent=",".join(map(str, box)))
                coords = [(r["pk"], r["extent"]["coords"]) for r in rows[name]]
                surely = {pk for pk, xy in coords if any(_intersects(xy, h, -1e-4) for h in halves)}
                maybe = {pk for pk, xy in coords if any(_intersects(xy, h, 1e-4) for h in halves)}
                assert surely <= found <= maybe, (name, box)
                assert found, box


@pytest.mark.parametrize("count, ok", [("0", True), ("-5", False)])
def test_seed_with_nothing_to_add_fails_cleanly(tmp_path, count, ok):
    r = run_seed(tmp_path / "data", "--resources", count)
    assert "Traceback" not in r.stderr, r.stderr
    assert (r.returncode == 0) == ok


def test_seed_rejects_bad_arguments(tmp_path):
    for args in ((), ("--resources", "many")):
        r = run_seed(tmp_path / "data", *args)
        assert r.returncode == 2 and "--resources" in r.stderr and "Traceback" not in r.stderr


def test_seed_on_a_fresh_folder_does_not_lose_the_admin_password(tmp_path):
    data = tmp_path / "fresh"
    r = run_seed(data, "--resources", "5", env={"CATALOGUE_ADMIN_PASSWORD": ""})
    assert r.returncode == 0, r.stderr
    srv = Server(data, env={"CATALOGUE_ADMIN_PASSWORD": ""})
    try:
        shown = r.stdout + r.stderr + srv.output()
        assert "admin / " in shown, shown
        password = shown.split("admin / ", 1)[1].split()[0]
        with srv.client(auth=("admin", password)) as c:
            assert c.get("/api/v2/resources/").json()["total"] == 5
    finally:
        srv.stop()


def test_seeded_owners_hold_owner_rights_on_their_rows_only(s):
    with s["srv"].client(auth=(s["plain"]["username"], USER_PASSWORD)) as c:
        rows = all_rows(c, **{"filter{owner.username}": s["plain"]["username"]})
        assert rows and all("delete_resourcebase" in r["perms"] for r in rows)
        others = all_rows(c, **{"filter{-owner.username}": s["plain"]["username"]})
        assert all("delete_resourcebase" not in r["perms"] for r in others)
