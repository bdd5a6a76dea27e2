"""GeoNode's facets API (/api/v2/facets/, /api/v2/facets/{name}) on a real server: the shapes of
GeoNode 4.1+, counts that follow the whole search (text included) and agree with the totals of
/api/v2/resources for the same search, for every kind of caller (a private resource counts only
for those who see it), the facets' own parameters, and clear 400s for bad ones."""

from __future__ import annotations

import pytest

from tests.conftest import (ADMIN_PASSWORD, assert_envelope, in_process, login, make_group, make_user, unique,
                            wait_finished)

ANONYMOUS, REGISTERED = 1, 2
CALLERS = ("anon", "other", "member", "owner", "admin")
NAMES = ("resourcetype", "featured", "category", "keyword", "region", "owner", "group")


@pytest.fixture(scope="module")
def w(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("facets") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    people = {name: make_user(admin) for name in ("owner", "other", "member")}
    team = make_group(admin)
    r = admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [people["member"]["pk"]], "role": "member"})
    assert r.status_code == 200, r.text
    clients = {name: login(srv, user) for name, user in people.items()}
    clients["admin"], clients["anon"] = admin, srv.client()
    tag = unique("facetz")
    state = {"srv": srv, "c": clients, "people": people, "team": team, "tag": tag, "res": {}}

    def create(key, who, resource_type="document", share=None, **fields):
        body = {"resource_type": resource_type, "title": f"{tag} {key} river", **fields}
        r = clients[who].post("/api/v2/resources/", json=body)
        assert r.status_code == 201, r.text
        pk = int(r.json()["resource"]["pk"])
        state["res"][key] = pk
        if share is not None:
            r = clients[who].put(f"/api/v2/resources/{pk}/permissions", json=share)
            assert r.status_code == 200, r.text
            wait_finished(clients[who], r.json()["status_url"])
        return pk

    private = {"users": [], "groups": [{"id": ANONYMOUS, "permissions": "none"},
                                       {"id": REGISTERED, "permissions": "none"}]}
    create("alpha", "owner", category={"identifier": "biota"}, keywords=["Rivers"],
           extent={"coords": [8.4, 46.0, 8.9, 46.6], "srid": "EPSG:4326"})
    create("beta", "owner", "map", category={"identifier": "economy"}, keywords=["Lakes", "Rivers"])
    create("gamma", "owner", category={"identifier": "biota"}, keywords=["Secretkw"], share={
        "users": [], "groups": [*private["groups"], {"id": team["group"]["pk"], "permissions": "view"}]})
    create("delta", "other", category={"identifier": "health"}, share=private)
    r = admin.patch(f"/api/v2/resources/{state['res']['alpha']}", json={"featured": True, "group": team["group"]["pk"]})
    assert r.status_code == 200, r.text
    yield state
    for c in clients.values():
        c.close()
    srv.stop()


def facet(w, who, name, **params):
    r = w["c"][who].get(f"/api/v2/facets/{name}", params={"search": w["tag"], **params})
    assert r.status_code == 200, r.text
    return r.json()


def total(w, who, **params):
    r = w["c"][who].get("/api/v2/resources/", params={"search": w["tag"], "page_size": 1, **params})
    assert r.status_code == 200, r.text
    return r.json()["total"]


def test_the_list_of_facets_has_geonodes_shape(w):
    r = w["c"]["anon"].get("/api/v2/facets/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    facets = r.json()["facets"]
    assert [f["name"] for f in facets][:len(NAMES)] == list(NAMES)
    by = {f["name"]: f for f in facets}
    assert by["category"]["filter"] == "filter{category.identifier.in}" and by["category"]["type"] == "category"
    assert by["resourcetype"]["hierarchical"] is True and by["featured"]["order"] == 0
    assert by["owner"]["filter"] == "filter{owner.pk.in}" and by["region"]["type"] == "place"
    for one in facets:
        assert {"name", "filter", "label", "localized_label", "type", "hierarchical"} <= set(one)
        assert "topics" not in one and "link" not in one and "config" not in one
    assert "Accept-Language" in r.headers["vary"] and r.headers["content-language"] == "en"
    # include_topics, include_config, add_links (GeoNode's booleans: t/y/1 and f/n/0)
    body = w["c"]["anon"].get("/api/v2/facets", params={"include_topics": "yes", "include_config": "1",
                                                        "add_links": "True", "search": w["tag"]}).json()
    for one in body["facets"]:
        assert set(one["topics"]) == {"page", "page_size", "start", "total", "items"}
        assert isinstance(one["config"], dict) and one["link"].endswith(f"/api/v2/facets/{one['name']}?add_links=True")
    by = {f["name"]: f for f in body["facets"]}
    assert {i["key"]: i["count"] for i in by["category"]["topics"]["items"]} == {"biota": 1, "economy": 1}
    assert w["c"]["anon"].get("/api/v2/facets/", params={"include_topics": "no"}).json()["facets"][0].get("topics") is None


def test_one_facet_has_geonodes_shape(w):
    body = facet(w, "owner", "category")
    assert {k: body[k] for k in ("name", "filter", "label", "type")} == {
        "name": "category", "filter": "filter{category.identifier.in}", "label": "Category", "type": "category"}
    topics = body["topics"]
    assert {k: topics[k] for k in ("page", "page_size", "start", "total")} == {"page": 0, "page_size": 10, "start": 0,
                                                                               "total": 2}
    assert topics["items"] == [{"key": "biota", "label": "Biota", "count": 2, "fa_class": topics["items"][0]["fa_class"]},
                               {"key": "economy", "label": "Economy", "count": 1,
                                "fa_class": topics["items"][1]["fa_class"]}]
    owner = facet(w, "anon", "owner")["topics"]["items"]
    assert owner == [{"key": w["people"]["owner"]["pk"], "label": owner[0]["label"], "count": 2}]
    types = {i["key"]: i["count"] for i in facet(w, "admin", "resourcetype")["topics"]["items"]}
    assert types == {"document": 3, "map": 1}
    featured = {i["key"]: (i["label"], i["count"]) for i in facet(w, "anon", "featured")["topics"]["items"]}
    assert featured == {True: ("True", 1), False: ("False", 1)}
    regions = {i["key"]: i["count"] for i in facet(w, "anon", "region")["topics"]["items"]}
    assert regions.get("CHE") == 1
    groups = facet(w, "member", "group")["topics"]["items"]
    assert groups == [{"key": w["team"]["group"]["pk"], "label": w["team"]["title"], "count": 1}]


@pytest.mark.parametrize("who", CALLERS)
def test_counts_follow_the_whole_search_and_visibility(w, who):
    """Each facet's counts are the totals /api/v2/resources gives for the same search and the
    facet's filter, for this caller; with the text search and with filters."""
    for extra in ({}, {"filter{resource_type}": "document"}, {"search": f"{w['tag']} alpha"}):
        for name, param in (("category", "filter{category.identifier}"), ("keyword", "filter{keywords.slug}"),
                            ("resourcetype", "filter{resource_type}"), ("owner", "filter{owner.pk}"),
                            ("region", "filter{regions.code}"), ("group", "filter{group}")):
            items = facet(w, who, name, page_size=100, **extra)["topics"]["items"]
            for item in items:
                assert item["count"] == total(w, who, **{param: item["key"], **extra}) > 0, (who, name, item, extra)
        featured = {i["key"]: i["count"] for i in facet(w, who, "featured", **extra)["topics"]["items"]}
        assert sum(featured.values()) == total(w, who, **extra)
        assert featured.get(True, 0) == total(w, who, **{"filter{featured}": "true", **extra})


def test_a_private_resource_counts_only_for_those_who_see_it(w):
    seen = {who: {i["key"]: i["count"] for i in facet(w, who, "category")["topics"]["items"]} for who in CALLERS}
    assert seen["anon"] == {"biota": 1, "economy": 1}
    assert seen["other"] == {"biota": 1, "economy": 1, "health": 1}        # delta is theirs
    assert seen["member"] == {"biota": 2, "economy": 1}                     # gamma is shared with their group
    assert seen["owner"] == {"biota": 2, "economy": 1}
    assert seen["admin"] == {"biota": 2, "economy": 1, "health": 1}
    keywords = {who: {i["key"] for i in facet(w, who, "keyword")["topics"]["items"]} for who in CALLERS}
    assert "secretkw" not in keywords["anon"] | keywords["other"]
    assert "secretkw" in keywords["member"] & keywords["owner"] & keywords["admin"]
    owners = {who: {i["key"] for i in facet(w, who, "owner")["topics"]["items"]} for who in CALLERS}
    assert w["people"]["other"]["pk"] in owners["other"] & owners["admin"]
    assert w["people"]["other"]["pk"] not in owners["anon"] | owners["member"] | owners["owner"]


def test_paging_keys_and_topic_contains(w):
    first = facet(w, "owner", "category", page_size=1)
    assert first["topics"]["total"] == 2 and [i["key"] for i in first["topics"]["items"]] == ["biota"]
    second = facet(w, "owner", "category", page=1, page_size=1, add_links="t")
    assert second["topics"]["start"] == 1 and [i["key"] for i in second["topics"]["items"]] == ["economy"]
    assert "page=0" in second["prev"] and second["next"] is None
    assert facet(w, "owner", "category", page=5)["topics"]["items"] == []
    # key: these values only, each with its count, 0 for those nothing selected has
    keyed = facet(w, "anon", "category", key=["economy", "health", "nosuchcategory"])["topics"]
    assert {i["key"]: i["count"] for i in keyed["items"]} == {"economy": 1, "health": 0}
    assert keyed["total"] == 2
    owner_pk = w["people"]["other"]["pk"]
    keyed = facet(w, "anon", "owner", key=str(owner_pk))["topics"]["items"]
    assert [(i["key"], i["count"]) for i in keyed] == [(owner_pk, 0)]
    # topic_contains: on the label, case aside; echoed
    found = facet(w, "anon", "keyword", topic_contains="LAK")
    assert [i["key"] for i in found["topics"]["items"]] == ["lakes"] and found["topic_contains"] == "LAK"


def test_unknown_facet_is_the_apis_404(w):
    assert_envelope(w["c"]["anon"].get("/api/v2/facets/nosuchfacet"), 404, "not_found")
    assert_envelope(w["c"]["anon"].get("/api/v2/facets/t_99999"), 404, "not_found")


@pytest.mark.parametrize("params", [
    {"page": "-1"}, {"page": "x"}, {"page": "1.5"}, {"page_size": "0"}, {"page_size": "100000"},
    {"page_size": "ten"}, {"include_topics": "maybe"}, {"add_links": "2"}, {"include_config": ""},
    {"filter{nosuchfield}": "1"}, {"filter{category.identifier.nope}": "1"}, {"extent": "1,2,3"},
    {"extent": "a,b,c,d"}, {"search_fields": "nosuch"}, {"filter{pk}": "abc"}, {"key": ["k"] * 101},
    {"topic_contains": "x" * 300}, {"favorite": "perhaps"}, {"sort[]": "nosuch"},
])
def test_bad_parameters_are_clear_400s(w, params):
    for path in ("/api/v2/facets/category", "/api/v2/facets/"):
        if path.endswith("/") and not set(params) & {"include_topics", "add_links", "include_config", "page",
                                                     "page_size", "key", "topic_contains"}:
            params = {**params, "include_topics": "true"}
        r = w["c"]["anon"].get(path, params=params)
        assert r.status_code == 400, (path, params, r.text)
        assert r.json()["success"] is False and r.json()["errors"][0]


def test_odd_but_valid_input_is_answered(w):
    for params in ({"topic_contains": "é\u202e"}, {"key": "ü"}, {"lang": "zz"}, {"lang": ""}, {"search": "\"\"\""},
                   {"page": "0", "page_size": "1000"}, {"key": ""}):
        for name in NAMES:
            r = w["c"]["anon"].get(f"/api/v2/facets/{name}", params=params)
            assert r.status_code == 200, (name, params, r.text)
