"""The permission matrix of the catalogue: what anonymous callers, plain users, a user with a
direct grant, a group member, the owner and an admin see on every endpoint that shows resources.

Every resource carries its own marker word, keyword, region, category, thesaurus keyword and
links to the others, so each list, count and lookup tells exactly which resources it was built
from. Nothing private may show anywhere: not in a list, a total, a count, a lookup, a link or a
favorite.
"""

import sqlite3
from contextlib import nullcontext

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, insert_resource, login, make_group, make_user

ANON_GROUP, REGISTERED_GROUP = 1, 2
PUBLIC = [(None, ANON_GROUP, "view_resourcebase"), (None, ANON_GROUP, "download_resourcebase")]
FIJI = dict(ll_x0=177.0, ll_y0=-19.0, ll_x1=-179.5, ll_y1=-16.0)          # crosses the antimeridian
ALPS = dict(ll_x0=9.0, ll_y0=46.0, ll_x1=11.0, ll_y1=47.5)

# name: (resource type, region code, category identifier, extent)
SPECS = {
    "pub": ("dataset", "CHE", "biota", FIJI),
    "reg": ("document", "AUT", "economy", ALPS),
    "user": ("map", "FRA", "health", FIJI),
    "team": ("document", "DEU", "farming", ALPS),
    "own": ("dataset", "ITA", "oceans", ALPS),
    "hermit": ("geostory", "ESP", "society", FIJI),
}
CALLERS = ["anon", "stranger", "reader", "member", "owner", "hermit", "admin"]
VISIBLE = {
    "anon": {"pub"},
    "stranger": {"pub", "reg"},
    "reader": {"pub", "reg", "user"},
    "member": {"pub", "reg", "team"},
    "owner": {"pub", "reg", "user", "team", "own"},
    "hermit": {"pub", "reg", "hermit"},
    "admin": set(SPECS),
}
OWNER_ALL = {"view_resourcebase", "download_resourcebase", "change_resourcebase", "change_resourcebase_metadata",
             "delete_resourcebase", "change_resourcebase_permissions", "publish_resourcebase",
             "can_manage_anonymous_permissions", "can_manage_registered_member_permissions"}
VECTOR_EXTRA = {"change_dataset_data", "change_dataset_style"}


def marker(name: str) -> str:
    return f"zz{name}mark"


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("perms") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    people = {name: make_user(admin) for name in ("owner", "reader", "member", "stranger", "hermit")}
    team = make_group(admin)
    r = admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [people["member"]["pk"]]})
    assert r.status_code == 200, r.text
    grants = {
        "pub": PUBLIC,
        "reg": [(None, REGISTERED_GROUP, "view_resourcebase")],
        "user": [(people["reader"]["pk"], None, "view_resourcebase")],
        "team": [(None, team["group"]["pk"], "view_resourcebase")],
        "own": [],
        "hermit": [],
    }
    ids, uuids = {}, {}
    for name, (kind, region, _, box) in SPECS.items():
        owner = people["hermit" if name == "hermit" else "owner"]
        ids[name] = insert_resource(
            srv, owner["pk"], f"{name.title()} {marker(name)} record", grants[name], resource_type=kind,
            abstract=f"About {marker(name)}.", keywords=[f"kw{name}"], regions=[region], featured=1,
            subtype="vector" if kind == "dataset" else None,
            alternate=f"catalogue:{name}" if kind == "dataset" else None,
            date="2024-03-01T00:00:00.000000Z", **box, **{k.replace("ll_", "bbox_"): v for k, v in box.items()})
    for name, (_, _, category, _) in SPECS.items():
        body = {"category": {"identifier": category}, "license": "cc-by" if name == "pub" else "odbl"}
        if name == "team":
            body["group"] = team["group"]["pk"]
        r = admin.patch(f"/api/v2/resources/{ids[name]}", json=body)
        assert r.status_code == 200, r.text
        uuids[name] = r.json()["resource"]["uuid"]
    # thesaurus keywords have no write API yet: one per resource, straight into the file
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        thesaurus = conn.execute("INSERT INTO thesauri (identifier, title, uri) VALUES ('perm', 'Perm', 'http://t/perm')"
                                 ).lastrowid
        tkeywords = {}
        for name in SPECS:
            tkeywords[name] = conn.execute(
                "INSERT INTO thesaurus_keywords (thesaurus_id, alt_label, about, labels) VALUES (?, ?, ?, ?)",
                (thesaurus, f"tk-{name}", f"http://t/perm/{name}", '{"en": "tk"}')).lastrowid
            conn.execute("INSERT INTO resource_tkeywords VALUES (?, ?)", (ids[name], tkeywords[name]))
    conn.close()
    # every resource links to "pub" and "pub" links to every other; "user" also links to "team" and "own"
    hub = ids["pub"]
    r = admin.post(f"/api/v2/resources/{hub}/linked_resources", json={"target": [ids[n] for n in SPECS if n != "pub"]})
    assert r.status_code == 200, r.text
    for name in SPECS:
        if name != "pub":
            assert admin.post(f"/api/v2/resources/{ids[name]}/linked_resources", json={"target": [hub]}).status_code == 200
    r = admin.post(f"/api/v2/resources/{ids['user']}/linked_resources", json={"target": [ids["team"], ids["own"]]})
    assert r.status_code == 200, r.text
    clients = {}
    yield {"srv": srv, "admin": admin, "people": people, "team": team, "ids": ids, "uuids": uuids,
           "tkeywords": tkeywords, "clients": clients}
    for c in clients.values():
        c.close()
    admin.close()
    srv.stop()


def client(m, caller: str):
    """The caller's client, made once per module (making one costs more than a request); used
    in `with` blocks, it stays open for the next test."""
    clients = m["clients"]
    if caller not in clients:
        if caller == "anon":
            clients[caller] = m["srv"].client()
        elif caller == "admin":
            clients[caller] = m["srv"].client(auth=("admin", ADMIN_PASSWORD))
        else:
            clients[caller] = login(m["srv"], m["people"][caller])
    return nullcontext(clients[caller])


def names_of(m, rows) -> set[str]:
    by_id = {v: k for k, v in m["ids"].items()}
    return {by_id.get(int(r["pk"]), f"foreign {r['pk']}") for r in rows}


def listed(m, c, url: str, key: str = "resources", **params) -> set[str]:
    r = c.get(url, params={"page_size": 100, **params})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == len(body[key]), "the lists of this module fit on one page"
    return names_of(m, body[key])


@pytest.mark.parametrize("caller", CALLERS)
def test_lists_and_totals(m, caller):
    seen = VISIBLE[caller]
    ids = m["ids"]
    with client(m, caller) as c:
        assert listed(m, c, "/api/v2/resources/") == seen
        assert listed(m, c, "/api/v2/resources/", advertised="all") == seen
        for path, kinds in (("datasets", {"dataset"}), ("documents", {"document"}), ("maps", {"map"}),
                            ("geoapps", {"geostory", "dashboard"})):
            assert listed(m, c, f"/api/v2/{path}/", key=path) == {n for n in seen if SPECS[n][0] in kinds}, path
        for fixed in ("featured", "approved", "published"):
            assert listed(m, c, f"/api/v2/resources/{fixed}/") == seen, fixed
        # queries that name private resources directly still only find the visible ones
        assert listed(m, c, "/api/v2/resources/", **{"filter{pk.in}": list(ids.values())}) == seen
        for name, rid in ids.items():
            found = listed(m, c, "/api/v2/resources/", **{"filter{pk}": rid})
            assert found == ({name} & seen)
        assert listed(m, c, "/api/v2/resources/", **{"filter{-title.icontains}": "nothing"}) == seen
        assert listed(m, c, "/api/v2/resources/", **{"filter{title.icontains}": "mark"}) == seen
        assert listed(m, c, "/api/v2/resources/", **{"filter{}": '{"$or": [{"title.icontains": "zz"}, {"featured": true}]}'}) == seen
        assert listed(m, c, "/api/v2/resources/", search="mark", search_fields=["title", "abstract"]) == seen  # trigram index
        assert listed(m, c, "/api/v2/resources/", search="zz", search_fields=["title"]) == seen                 # short term
        assert listed(m, c, "/api/v2/resources/", search="kw", search_fields="keywords__name") == seen
        assert listed(m, c, "/api/v2/resources/", extent="-180,-90,180,90") == seen
        fiji = {n for n in seen if SPECS[n][3] is FIJI}
        assert listed(m, c, "/api/v2/resources/", extent="170,-20,-170,-10") == fiji   # across the antimeridian
        assert listed(m, c, "/api/v2/resources/", extent="8,45,12,48") == seen - fiji
        assert listed(m, c, "/api/v2/resources/", extent="8,45,12,48", search="mark", search_fields="title") == seen - fiji


@pytest.mark.parametrize("caller", CALLERS)
def test_resource_type_counts_agree_with_the_lists(m, caller):
    seen = VISIBLE[caller]
    with client(m, caller) as c:
        counts = {t["name"]: t["count"] for t in c.get("/api/v2/resources/resource_types/").json()["resource_types"]}
        total = c.get("/api/v2/resources/").json()["total"]
        assert sum(counts.values()) == total == len(seen)
        for kind in ("dataset", "document", "map", "geostory", "dashboard"):
            expected = sum(1 for n in seen if SPECS[n][0] == kind)
            assert counts[kind] == expected, kind
            assert c.get("/api/v2/resources/", params={"filter{resource_type}": kind}).json()["total"] == expected


@pytest.mark.parametrize("caller", CALLERS)
def test_detail_and_everything_hanging_off_a_resource(m, caller):
    seen = VISIBLE[caller]
    typed = {"dataset": "datasets", "document": "documents", "map": "maps", "geostory": "geoapps"}
    with client(m, caller) as c:
        for name, rid in m["ids"].items():
            urls = [f"/api/v2/resources/{rid}", f"/api/v2/resources/{rid}/", f"/api/v2/{typed[SPECS[name][0]]}/{rid}",
                    f"/api/v2/resources/{rid}/keywords", f"/api/v2/resources/{rid}/owner", f"/api/v2/resources/{rid}/ratings",
                    f"/api/v2/resources/{rid}/extra_metadata", f"/api/v2/resources/{rid}/linked_resources"]
            if SPECS[name][0] == "document":
                urls.append(f"/api/v2/documents/{rid}/linked_resources")
            for url in urls:
                r = c.get(url)
                if name in seen:
                    assert r.status_code == 200, (url, r.text)
                else:
                    assert_envelope(r, 404, "not_found")
                    assert marker(name) not in r.text
            if name in seen:
                row = c.get(f"/api/v2/resources/{rid}").json()["resource"]
                assert row["title"].startswith(name.title()) and row["uuid"] == m["uuids"][name]


def expected_perms(caller: str, name: str) -> set[str]:
    kind = SPECS[name][0]
    if caller == "admin" or (caller == "owner" and name != "hermit") or (caller == "hermit" and name == "hermit"):
        perms = set(OWNER_ALL)
        if kind not in ("dataset", "document"):
            perms.discard("download_resourcebase")
        if kind == "dataset":
            perms |= VECTOR_EXTRA
        if caller == "admin":
            perms |= {"approve_resourcebase", "feature_resourcebase"}
        return perms
    if name == "pub":
        return {"view_resourcebase", "download_resourcebase"}
    return {"view_resourcebase"}


@pytest.mark.parametrize("caller", CALLERS)
def test_perms_on_each_row_are_the_callers_own(m, caller):
    with client(m, caller) as c:
        rows = c.get("/api/v2/resources/", params={"page_size": 100}).json()["resources"]
        for row in rows:
            name = names_of(m, [row]).pop()
            assert set(row["perms"]) == expected_perms(caller, name), name
            assert len(row["perms"]) == len(set(row["perms"]))
            assert c.get(f"/api/v2/resources/{row['pk']}").json()["resource"]["perms"] == row["perms"]


@pytest.mark.parametrize("caller", CALLERS)
def test_geonodectl_uuid_lookup(m, caller):
    with client(m, caller) as c:
        for name, uuid in m["uuids"].items():
            body = c.get("/api/v2/resources/", params={"filter{uuid}": uuid, "advertised": "all"}).json()
            if name in VISIBLE[caller]:
                row = body["resources"][0]
                assert body["total"] == 1 and row["uuid"] == uuid and row["resource_type"] == SPECS[name][0]
                assert int(row["pk"]) == m["ids"][name]
            else:
                assert body["total"] == 0 and body["resources"] == []


@pytest.mark.parametrize("caller", CALLERS)
def test_linked_resources_show_only_what_the_caller_may_see(m, caller):
    seen, ids = VISIBLE[caller], m["ids"]
    by_id = {v: k for k, v in ids.items()}
    with client(m, caller) as c:
        if "pub" in seen:
            body = c.get(f"/api/v2/resources/{ids['pub']}/linked_resources").json()
            to = [by_id[x["pk"]] for x in body["linked_to"]]
            assert set(to) == seen - {"pub"}
            assert [x["pk"] for x in body["linked_to"]] == sorted((x["pk"] for x in body["linked_to"]), reverse=True)
            assert {by_id[x["pk"]] for x in body["linked_by"]} == seen - {"pub"}
            for item in body["linked_to"] + body["linked_by"]:
                assert isinstance(item["pk"], int) and isinstance(item["title"], str) and item["resource_type"]
            only = c.get(f"/api/v2/resources/{ids['pub']}/linked_resources", params={"resource_type": "document,map"}).json()
            assert {by_id[x["pk"]] for x in only["linked_to"]} == {n for n in seen if SPECS[n][0] in ("document", "map")}
            assert list(c.get(f"/api/v2/resources/{ids['pub']}/linked_resources", params={"link_type": "linked_to"}).json()) == ["linked_to"]
            # the same through include[] on the detail and on list rows, and through the single field
            detail = c.get(f"/api/v2/resources/{ids['pub']}", params={"include[]": "linked_resources"}).json()["resource"]
            assert {by_id[x["pk"]] for x in detail["linked_resources"]["linked_to"]} == seen - {"pub"}
            rows = c.get("/api/v2/resources/", params={"include[]": "linked_resources", "filter{pk}": ids["pub"]}).json()
            assert {by_id[x["pk"]] for x in rows["resources"][0]["linked_resources"]["linked_by"]} == seen - {"pub"}
            field = c.get(f"/api/v2/resources/{ids['pub']}/linked_resources/").json()
            assert {by_id[x["pk"]] for x in field["linked_to"]} == seen - {"pub"}
        for name in seen - {"pub"}:
            body = c.get(f"/api/v2/resources/{ids[name]}/linked_resources").json()
            expected_to = {"pub"} | ({"team", "own"} & seen if name == "user" else set())
            assert {by_id[x["pk"]] for x in body["linked_to"]} == expected_to, name
            expected_by = {"pub"} | ({"user"} & seen if name in ("team", "own") else set())
            assert {by_id[x["pk"]] for x in body["linked_by"]} == expected_by, name
        for name in set(SPECS) - seen:
            assert_envelope(c.get(f"/api/v2/resources/{ids[name]}/linked_resources"), 404, "not_found")


def test_links_to_what_the_caller_cannot_see_are_refused(m):
    ids = m["ids"]
    with client(m, "owner") as c:
        r = c.post(f"/api/v2/resources/{ids['own']}/linked_resources", json={"target": [ids["hermit"], ids["reg"]]})
        assert r.status_code == 400 and r.json()["error"] == [ids["hermit"]] and r.json()["success"] == [ids["reg"]]
        r = c.request("DELETE", f"/api/v2/resources/{ids['own']}/linked_resources", json={"target": [ids["reg"]]})
        assert r.status_code == 200
    with client(m, "admin") as c:
        linked = c.get(f"/api/v2/resources/{ids['own']}/linked_resources").json()["linked_to"]
        assert [x["pk"] for x in linked] == [ids["pub"]]
    for caller, name in (("reader", "user"), ("member", "team"), ("stranger", "pub")):
        with client(m, caller) as c:  # seeing is not changing
            url = f"/api/v2/resources/{ids[name]}/linked_resources"
            assert_envelope(c.post(url, json={"target": [ids["reg"]]}), 403, "permission_denied")
            assert_envelope(c.request("DELETE", url, json={"target": [ids["pub"] if name != "pub" else ids["reg"]]}),
                            403, "permission_denied")
    with client(m, "stranger") as c:  # an invisible source is not found, whatever the target
        assert_envelope(c.post(f"/api/v2/resources/{ids['own']}/linked_resources", json={"target": [ids["pub"]]}),
                        404, "not_found")
    with client(m, "anon") as c:
        r = c.post(f"/api/v2/resources/{ids['pub']}/linked_resources", json={"target": [ids["reg"]]})
        assert r.status_code in (401, 403)


@pytest.mark.parametrize("caller", [c for c in CALLERS if c != "anon"])
def test_favorites_hold_only_what_the_caller_sees(m, caller):
    seen, ids = VISIBLE[caller], m["ids"]
    with client(m, caller) as c:
        for name, rid in ids.items():
            r = c.post(f"/api/v2/resources/{rid}/favorite")
            if name in seen:
                assert r.status_code == 201, r.text
            else:
                assert_envelope(r, 404, "not_found")
                assert_envelope(c.request("DELETE", f"/api/v2/resources/{rid}/favorite"), 404, "not_found")
        assert listed(m, c, "/api/v2/resources/favorites/", key="favorites") == seen
        assert listed(m, c, "/api/v2/resources/", favorite="true") == seen
        rows = c.get("/api/v2/resources/", params={"page_size": 100}).json()["resources"]
        assert all(r["favorite"] is True for r in rows)
    # everybody has marked what they see; nobody else's favorites show in anybody's list or flags
    with client(m, "anon") as c:
        assert_envelope(c.get("/api/v2/resources/favorites/"), 401, "not_authenticated")
        assert listed(m, c, "/api/v2/resources/", favorite="true") == set()
        assert all(r["favorite"] is False for r in c.get("/api/v2/resources/").json()["resources"])


def test_favorites_follow_group_membership(m):
    """A member who leaves the group loses the group's resource from favorites, counts and lookups."""
    srv, admin, member = m["srv"], m["admin"], m["people"]["member"]
    club = make_group(admin)
    assert admin.post(f"/api/v2/groups/{club['pk']}/members", json={"users": [member["pk"]]}).status_code == 200
    rid = insert_resource(srv, m["people"]["owner"]["pk"], "Club zzclubmark minutes",
                          [(None, club["group"]["pk"], "view_resourcebase")], keywords=["kwclub"])
    with login(srv, member) as c:
        assert c.post(f"/api/v2/resources/{rid}/favorite").status_code == 201
        assert rid in {int(r["pk"]) for r in c.get("/api/v2/resources/favorites/").json()["favorites"]}
        assert "kwclub" in {k["name"] for k in c.get("/api/v2/keywords/").json()["keywords"]}
        before = c.get("/api/v2/resources/").json()["total"]
        r = c.request("DELETE", f"/api/v2/groups/{club['pk']}/members", json={"users": [member["pk"]]})
        assert r.status_code == 200, r.text
        favorites = c.get("/api/v2/resources/favorites/").json()
        assert rid not in {int(r["pk"]) for r in favorites["favorites"]} and "zzclubmark" not in str(favorites)
        assert c.get("/api/v2/resources/", params={"favorite": "true", "filter{pk}": rid}).json()["total"] == 0
        assert c.get("/api/v2/resources/").json()["total"] == before - 1
        assert "kwclub" not in {k["name"] for k in c.get("/api/v2/keywords/").json()["keywords"]}
        assert_envelope(c.get(f"/api/v2/resources/{rid}"), 404, "not_found")
    # the resource is gone from the shared catalogue again for the other tests of this module
    assert admin.delete(f"/api/v2/resources/{rid}").status_code == 204


@pytest.mark.parametrize("caller", CALLERS)
def test_lookups_count_only_visible_resources(m, caller):
    seen = VISIBLE[caller]
    with client(m, caller) as c, client(m, "admin") as a:
        keywords = {k["name"]: k for k in c.get("/api/v2/keywords/", params={"page_size": 100}).json()["keywords"]}
        assert set(keywords) == {f"kw{n}" for n in seen}
        assert all(k["count"] == 1 for k in keywords.values())
        for k in a.get("/api/v2/keywords/", params={"page_size": 100}).json()["keywords"]:
            r = c.get(f"/api/v2/keywords/{k['id']}")
            if k["name"][2:] in seen:
                assert r.json()["keywords"]["count"] == 1
            else:
                assert_envelope(r, 404, "not_found")
        categories = {x["identifier"]: x for x in c.get("/api/v2/categories/", params={"page_size": 100}).json()["categories"]}
        regions = {x["code"]: x for x in c.get("/api/v2/regions/", params={"filter{code.in}": [s[1] for s in SPECS.values()]}
                                               ).json()["regions"]}
        tkeywords = {x["name"]: x for x in c.get("/api/v2/tkeywords/", params={"page_size": 100}).json()["tkeywords"]}
        for name, (kind, region, category, _) in SPECS.items():
            want = int(name in seen)
            assert categories[category]["count"] == want, category
            assert c.get(f"/api/v2/categories/{categories[category]['id']}").json()["categories"]["count"] == want
            assert regions[region]["count"] == want, region
            assert c.get(f"/api/v2/regions/{regions[region]['id']}").json()["regions"]["count"] == want
            assert tkeywords[f"tk-{name}"]["count"] == want
            # narrowed counts: by type and by title
            scoped = c.get(f"/api/v2/categories/{categories[category]['id']}", params={"type": kind}).json()
            assert scoped["categories"]["count"] == want
            other = "map" if kind != "map" else "dataset"
            assert c.get(f"/api/v2/categories/{categories[category]['id']}", params={"type": other}).json()["categories"]["count"] == 0
            titled = c.get("/api/v2/regions/", params={"filter{code}": region, "title__icontains": marker(name).upper()})
            assert titled.json()["regions"][0]["count"] == want
        owners = {o["username"]: o for o in c.get("/api/v2/owners/").json()["owners"]}
        expected = {}
        for name in seen:
            who = m["people"]["hermit" if name == "hermit" else "owner"]["username"]
            expected[who] = expected.get(who, 0) + 1
        assert {u: o["count"] for u, o in owners.items()} == expected
        hermit = m["people"]["hermit"]
        r = c.get(f"/api/v2/owners/{hermit['pk']}")
        if "hermit" in seen:
            assert r.json()["owners"]["count"] == 1
        else:
            assert_envelope(r, 404, "not_found")
            assert hermit["username"] not in r.text


@pytest.mark.parametrize("caller", CALLERS)
def test_relation_filters_under_visibility(m, caller):
    seen, people = VISIBLE[caller], m["people"]
    team_name = m["team"]["group"]["name"]
    with client(m, caller) as c:
        for name, (kind, region, category, _) in SPECS.items():
            want = {name} & seen
            region_name = c.get("/api/v2/regions/", params={"filter{code}": region}).json()["regions"][0]["name"]
            for key, value in (("filter{keywords.name}", f"kw{name}"), ("filter{keywords.slug}", f"kw{name}"),
                               ("filter{regions.code}", region), ("filter{regions.name}", region_name),
                               ("filter{category.identifier}", category), ("filter{tkeywords}", m["tkeywords"][name])):
                assert listed(m, c, "/api/v2/resources/", **{key: value}) == want, (key, value)
        mine = {n for n in seen if n != "hermit"}
        assert listed(m, c, "/api/v2/resources/", **{"filter{owner.username}": people["owner"]["username"]}) == mine
        assert listed(m, c, "/api/v2/resources/", **{"filter{owner.username}": people["hermit"]["username"]}) == {"hermit"} & seen
        assert listed(m, c, "/api/v2/resources/", **{"filter{license.identifier}": "odbl"}) == seen - {"pub"}
        assert listed(m, c, "/api/v2/resources/", **{"filter{license.identifier}": "cc-by"}) == {"pub"} & seen
        assert listed(m, c, "/api/v2/resources/", **{"filter{group.name}": team_name}) == {"team"} & seen
        assert listed(m, c, "/api/v2/resources/", **{"filter{-group.name}": team_name}) == seen - {"team"}


@pytest.mark.parametrize("caller", CALLERS)
def test_account_and_group_lists(m, caller):
    seen, people = VISIBLE[caller], m["people"]
    with client(m, caller) as c:
        for whose in ("owner", "hermit", "member"):
            r = c.get(f"/api/v2/users/{people[whose]['pk']}/resources", params={"page_size": 100})
            if r.status_code != 200:  # the account itself may be hidden from this caller: then nothing shows
                assert r.status_code in (401, 403, 404) and "zz" not in r.text
                continue
            assert names_of(m, r.json()["resources"]) == seen & VISIBLE[whose], whose
        r = c.get(f"/api/v2/groups/{m['team']['pk']}/resources", params={"page_size": 100})
        if r.status_code == 200:
            assert names_of(m, r.json()["resources"]) == {"team"} & seen
        else:
            assert r.status_code in (401, 403, 404) and "zz" not in r.text


@pytest.mark.parametrize("caller", CALLERS)
def test_nothing_private_appears_in_any_answer(m, caller):
    """A crawl of every endpoint that shows resources: no marker, keyword or uuid of a resource the
    caller may not see appears anywhere in any answer, and nothing answers 500."""
    seen, ids = VISIBLE[caller], m["ids"]
    hidden = set(SPECS) - seen
    tokens = [t for n in hidden for t in (marker(n), f"kw{n}", m["uuids"][n])]
    urls = ["/api/v2/resources/", "/api/v2/resources/?advertised=all", "/api/v2/resources/?advertised=false",
            "/api/v2/resources/?include[]=linked_resources&include[]=metadata&include[]=data",
            "/api/v2/resources/?search=mark&search_fields=title&search_fields=abstract",
            "/api/v2/resources/?search=zz&search_fields=title&search_fields=keywords__name",
            "/api/v2/resources/?extent=-180,-90,180,90", "/api/v2/resources/?extent=170,-20,-170,-10",
            "/api/v2/resources/?sort[]=-title", "/api/v2/resources/?favorite=true",
            "/api/v2/resources/featured/", "/api/v2/resources/approved/", "/api/v2/resources/published/",
            "/api/v2/resources/favorites/", "/api/v2/resources/resource_types/",
            "/api/v2/datasets/", "/api/v2/documents/", "/api/v2/maps/", "/api/v2/geoapps/",
            "/api/v2/keywords/?page_size=100", "/api/v2/categories/?page_size=100", "/api/v2/owners/",
            "/api/v2/regions/?with_resources=true&page_size=300", "/api/v2/tkeywords/",
            f"/api/v2/groups/{m['team']['pk']}/resources"]
    urls += [f"/api/v2/users/{p['pk']}/resources" for p in m["people"].values()]
    for rid in ids.values():
        urls += [f"/api/v2/resources/{rid}", f"/api/v2/resources/{rid}/linked_resources",
                 f"/api/v2/resources/{rid}?include[]=linked_resources", f"/api/v2/resources/{rid}/keywords",
                 f"/api/v2/resources/{rid}/regions", f"/api/v2/resources/{rid}/ratings"]
    with client(m, caller) as c:
        for url in urls:
            r = c.get(url, params={"page_size": 100} if "page_size" not in url and "resources/" in url else None)
            assert r.status_code < 500, (url, r.text)
            for token in tokens:
                assert token not in r.text, (url, token)
