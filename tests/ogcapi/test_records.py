"""OGC API - Records over HTTP, against a real server process (OWSLib opens its own
connections): the record collection, search by text, extent, time, type, ids, sorting and
paging, facets, one record as GeoJSON and HTML, OWSLib's Records client and the requests QGIS
MetaSearch sends, who sees what, and bad input."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from tests.conftest import ADMIN_PASSWORD, Server, make_group, make_user, unique
from tests.rules.world import finish

ITEMS = "/ogcapi/collections/metadata:main/items"
SWITZERLAND = (5.96, 45.82, 10.49, 47.81)
PAGING = 12  # public notes made for paging through
TAG = unique("t")  # a word of this module's titles alone


def _document(c: httpx.Client, title: str, **fields) -> dict:
    r = c.post("/api/v2/resources/", json={"resource_type": "document", "title": title,
                                             "abstract": fields.pop("abstract", "")})
    assert r.status_code == 201, r.text
    pk = r.json()["resource"]["pk"]
    if fields:
        r = c.patch(f"/api/v2/resources/{pk}", json=fields)
        assert r.status_code == 200, r.text
    return r.json()["resource"]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("records") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    out = {"srv": srv, "admin": admin}
    out["alice"], out["bob"], out["carol"] = make_user(admin), make_user(admin), make_user(admin)
    group = make_group(admin, title=unique("Hydrologists "))
    r = admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [out["carol"]["pk"]], "role": "member"})
    assert r.status_code == 200, r.text
    out["rhine"] = _document(
        admin, f"Rhine river flood map {TAG}", abstract="Flood extent of the Rhine river in 2020",
        keywords=[{"name": "water"}, {"name": "flood"}], category={"identifier": "inlandWaters"},
        extent={"coords": list(SWITZERLAND), "srid": "EPSG:4326"}, doi="10.1234/rhine",
        temporal_extent_start="2020-01-01T00:00:00Z", temporal_extent_end="2020-12-31T00:00:00Z")
    out["amazon"] = _document(
        admin, f"Amazon forest survey {TAG}", abstract="Forest cover", keywords=[{"name": "forest"}],
        category={"identifier": "biota"}, extent={"coords": [-74.0, -34.0, -34.0, 5.0], "srid": "EPSG:4326"},
        temporal_extent_start="2031-01-01T00:00:00Z", temporal_extent_end="2031-06-30T00:00:00Z")
    out["notes"] = [_document(admin, f"Paging note {i:02d} {TAG}", abstract="A note to page through",
                              extent={"coords": [100.0, 10.0, 101.0, 11.0], "srid": "EPSG:4326"})
                    for i in range(PAGING)]
    with srv.client(auth=(out["alice"]["username"], out["alice"]["password"])) as alice:
        secret = _document(alice, f"Secret river plan {TAG}", abstract="Not for everyone",
                           keywords=[{"name": "secretkeyword"}], category={"identifier": "intelligenceMilitary"},
                           extent={"coords": list(SWITZERLAND), "srid": "EPSG:4326"})
        special = {g["name"]: g["id"] for g in alice.get(f"/api/v2/resources/{secret['pk']}/permissions").json()["groups"]}
        r = alice.put(f"/api/v2/resources/{secret['pk']}/permissions", json={
            "groups": [{"id": gid, "permissions": "none"} for gid in special.values()],
            "organizations": [{"id": group["group"]["pk"], "permissions": "view"}]})
        assert r.status_code == 200, r.text
        assert finish(alice, r.json()["execution_id"])["status"] == "finished"
    out["secret"] = secret
    out["clients"] = {"anonymous": srv.client(), "admin": admin}
    for name in ("alice", "bob", "carol"):
        out["clients"][name] = srv.client(auth=(out[name]["username"], out[name]["password"]))
    yield out
    for c in out["clients"].values():
        c.close()
    srv.stop()


def items(c: httpx.Client, **params) -> dict:
    r = c.get(ITEMS, params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/geo+json")
    return r.json()


def titles(answer: dict) -> list[str]:
    return [f["properties"]["title"] for f in answer["features"]]


# -- the collection and its items ----------------------------------------------------------------
def test_collection_document(world):
    c = world["clients"]["anonymous"]
    r = c.get("/ogcapi/collections/metadata:main")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert body["id"] == "metadata:main" and body["itemType"] == "record"
    rels = {lk["rel"] for lk in body["links"]}
    assert {"self", "items", "http://www.opengis.net/def/rel/ogc/1.0/queryables"} <= rels
    html = c.get("/ogcapi/collections/metadata:main", params={"f": "html"})
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")


def test_items_answer_what_metasearch_reads_json_by_default(world):
    # no Accept header at all, as OWSLib sends
    r = httpx.get(world["srv"].url + ITEMS, params={"q": TAG}, headers={"Accept": ""})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/geo+json")
    body = r.json()
    assert body["type"] == "FeatureCollection"
    assert body["numberMatched"] == 2 + PAGING and body["numberReturned"] == 10
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["timeStamp"])
    for feature in body["features"]:
        assert feature["type"] == "Feature"
        assert feature["properties"]["type"] == "document"
        assert feature["properties"]["title"]
    rels = [lk["rel"] for lk in body["links"]]
    assert "self" in rels and "next" in rels and "prev" not in rels


def test_record_properties_and_links(world):
    body = items(world["clients"]["anonymous"], ids=world["rhine"]["uuid"])
    assert body["numberMatched"] == 1
    rec = body["features"][0]
    assert rec["id"] == world["rhine"]["uuid"]
    p = rec["properties"]
    assert p["title"].startswith("Rhine river flood map") and p["description"].startswith("Flood extent")
    assert sorted(p["keywords"]) == ["flood", "water"]
    assert p["themes"][0]["concepts"][0]["id"] == "inlandWaters"
    assert p["created"] and p["updated"] and p["contacts"][0]["roles"] == ["owner"]
    assert p["externalIds"] == [{"scheme": "https://doi.org", "value": "10.1234/rhine"}]
    assert {"formats", "license", "rights"} <= set(p)
    assert [t[:10] for t in rec["time"]["interval"]] == ["2020-01-01", "2020-12-31"]
    # the extent as the geometry, in CRS84
    xs = [pt[0] for pt in rec["geometry"]["coordinates"][0]]
    ys = [pt[1] for pt in rec["geometry"]["coordinates"][0]]
    assert rec["geometry"]["type"] == "Polygon"
    assert (min(xs), min(ys), max(xs), max(ys)) == pytest.approx(SWITZERLAND)
    hrefs = {lk["href"] for lk in rec["links"]}
    base = world["srv"].url
    assert f"{base}/api/v2/resources/{world['rhine']['pk']}" in hrefs
    assert f"{base}/#/document/{world['rhine']['pk']}" in hrefs
    iso = [lk for lk in rec["links"] if lk["rel"] == "describedby" and lk["type"] == "application/xml"]
    assert iso and "GetRecordById" in iso[0]["href"]
    r = httpx.get(iso[0]["href"])
    assert r.status_code == 200 and world["rhine"]["uuid"] in r.text


def test_search_by_text_extent_time_type_ids(world):
    c = world["clients"]["anonymous"]
    assert titles(items(c, q=f"rhine {TAG}")) == [world["rhine"]["title"]]
    assert titles(items(c, q=f"amazon {TAG}")) == [world["amazon"]["title"]]
    # commas: any of the alternatives
    assert sorted(titles(items(c, q=f"rhine {TAG},amazon {TAG}"))) == sorted(
        [world["rhine"]["title"], world["amazon"]["title"]])
    found = titles(items(c, q=TAG, bbox=",".join(map(str, (5, 45, 11, 48)))))
    assert world["rhine"]["title"] in found and world["amazon"]["title"] not in found
    assert not any(t.startswith("Paging") for t in found)
    assert titles(items(c, q=TAG, datetime="2020-06-01")) == [world["rhine"]["title"]]
    assert titles(items(c, q=TAG, datetime="2031-03-01T00:00:00Z/..")) == [world["amazon"]["title"]]
    assert titles(items(c, q=TAG, datetime="../2019-12-31")) == []
    assert items(c, q=TAG, type="document")["numberMatched"] == 2 + PAGING
    assert items(c, q=TAG, type="map,dataset")["numberMatched"] == 0
    two = items(c, ids=f"{world['rhine']['uuid']},{world['amazon']['uuid']}")
    assert sorted(titles(two)) == sorted([world["rhine"]["title"], world["amazon"]["title"]])
    assert titles(items(c, externalIds="doi:10.1234/rhine")) == [world["rhine"]["title"]]


def test_sorting(world):
    c = world["clients"]["anonymous"]
    notes = sorted(n["title"] for n in world["notes"])
    assert titles(items(c, q=f"paging {TAG}", sortby="title", limit=3)) == notes[:3]
    assert titles(items(c, q=f"paging {TAG}", sortby="-title", limit=3)) == notes[::-1][:3]
    # "+title" as a browser sends it unencoded: the "+" arrives as a space
    assert titles(items(c, q=f"paging {TAG}", sortby=" title", limit=3)) == notes[:3]
    by_update = items(c, q=TAG, sortby="-updated", limit=50)
    stamps = [f["properties"]["updated"] for f in by_update["features"]]
    assert stamps == sorted(stamps, reverse=True)


def test_paging_through_next_links(world):
    c = world["clients"]["anonymous"]
    seen = []
    url = f"{ITEMS}?q=paging+{TAG}&limit=5"
    pages = 0
    while url:
        r = c.get(url)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["numberMatched"] == PAGING
        seen += titles(body)
        pages += 1
        if pages > 1:
            assert any(lk["rel"] == "prev" for lk in body["links"])
        url = next((lk["href"] for lk in body["links"] if lk["rel"] == "next"), None)
    assert pages == 3 and sorted(seen) == sorted(n["title"] for n in world["notes"])
    last = items(c, q=f"paging {TAG}", limit=5, offset=10)
    assert last["numberReturned"] == 2
    beyond = items(c, q=f"paging {TAG}", offset=500)
    assert beyond["numberReturned"] == 0 and beyond["numberMatched"] == PAGING


def test_limit_of_a_billion_is_capped(world):
    body = items(world["clients"]["anonymous"], q=TAG, limit=10**9)
    assert body["numberReturned"] == 2 + PAGING
    everything = items(world["clients"]["admin"], limit=10**9)
    assert everything["numberReturned"] == everything["numberMatched"]
    assert items(world["clients"]["admin"], limit=10**20)["numberReturned"] == everything["numberMatched"]


# -- who sees what ---------------------------------------------------------------------------------
SEES_SECRET = {"anonymous": False, "bob": False, "carol": True, "alice": True, "admin": True}


@pytest.mark.parametrize("who", list(SEES_SECRET))
def test_private_records_only_for_those_who_may_view(world, who):
    c = world["clients"][who]
    shown = SEES_SECRET[who]
    found = items(c, q=f"river {TAG}")
    assert (world["secret"]["title"] in titles(found)) is shown
    assert found["numberMatched"] == (2 if shown else 1)
    everything = items(c, q=TAG, limit=100, facets="true")
    assert everything["numberMatched"] == 2 + PAGING + shown
    assert (world["secret"]["uuid"] in [f["id"] for f in everything["features"]]) is shown
    facets = everything["facets"]
    keywords = {b["value"]: b["count"] for b in facets["keyword"]["buckets"]}
    categories = {b["value"]: b["count"] for b in facets["category"]["buckets"]}
    owners = {b["value"]: b["count"] for b in facets["owner"]["buckets"]}
    types = {b["value"]: b["count"] for b in facets["type"]["buckets"]}
    assert ("secretkeyword" in keywords) is shown
    assert ("intelligenceMilitary" in categories) is shown
    assert (world["alice"]["username"] in owners) is shown
    assert types == {"document": 2 + PAGING + shown}
    assert keywords["water"] == 1 and categories["inlandWaters"] == 1 and owners["admin"] == 2 + PAGING
    r = c.get(f"{ITEMS}/{world['secret']['uuid']}")
    assert r.status_code == (200 if shown else 404), r.text
    if not shown:
        assert r.json()["code"] == "NotFound"
    # nor by its id, its extent or a filter on its keyword's category
    assert (items(c, ids=world["secret"]["uuid"])["numberMatched"] == 1) is shown
    inside = titles(items(c, q=TAG, bbox="5,45,11,48"))
    assert (world["secret"]["title"] in inside) is shown


@pytest.mark.parametrize("who", list(SEES_SECRET))
@pytest.mark.parametrize("search", [{}, {"q": TAG}, {"bbox": "5,45,11,48"}])
def test_facets_count_what_the_items_list(world, who, search):
    """Every count equals what paging through the same search finds, with no search too (where
    the counts come from another plan: what everyone lists, plus what the caller sees besides)."""
    c = world["clients"][who]
    body = items(c, facets="true", limit=1000, **search)
    assert body["numberReturned"] == body["numberMatched"]
    expected: dict[str, dict[str, int]] = {"type": {}, "keyword": {}, "category": {}, "owner": {}}
    usernames = {world[n]["pk"]: world[n]["username"] for n in ("alice", "bob", "carol")}
    for feature in body["features"]:
        p = feature["properties"]
        bump = lambda facet, value: expected[facet].__setitem__(value, expected[facet].get(value, 0) + 1)  # noqa: E731
        bump("type", p["type"])
        for k in p["keywords"]:
            bump("keyword", k)
        for theme in p["themes"]:
            if theme["scheme"].endswith("#MD_TopicCategoryCode"):  # (regions and thesauri are themes too)
                bump("category", theme["concepts"][0]["id"])
        owner_pk = int(p["contacts"][0]["links"][0]["href"].rsplit("/", 1)[1])
        bump("owner", usernames.get(owner_pk, "admin"))
    for facet, counted in expected.items():
        assert {b["value"]: b["count"] for b in body["facets"][facet]["buckets"]} == counted, facet
    assert (world["secret"]["uuid"] in [f["id"] for f in body["features"]]) is SEES_SECRET[who]


def test_facets_follow_the_search(world):
    c = world["clients"]["admin"]
    body = items(c, q=f"rhine {TAG}", facets="true")
    keywords = {b["value"]: b["count"] for b in body["facets"]["keyword"]["buckets"]}
    assert keywords == {"flood": 1, "water": 1}
    assert [b["value"] for b in body["facets"]["category"]["buckets"]] == ["inlandWaters"]
    assert body["facets"]["category"]["buckets"][0]["label"] == "Inland Waters"
    within = items(c, q=TAG, bbox="-80,-40,-30,10", facets="true")
    assert {b["value"] for b in within["facets"]["keyword"]["buckets"]} == {"forest"}
    assert "facets" not in items(c, q=TAG)


# -- one record ------------------------------------------------------------------------------------
def test_one_record_as_geojson_and_html(world):
    c = world["clients"]["anonymous"]
    uuid, pk = world["rhine"]["uuid"], world["rhine"]["pk"]
    r = c.get(f"{ITEMS}/{uuid}")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/geo+json")
    assert r.json()["properties"]["title"] == world["rhine"]["title"]
    for kwargs in ({"params": {"f": "html"}}, {"headers": {"Accept": "text/html,application/xhtml+xml"}}):
        page = c.get(f"{ITEMS}/{uuid}", **kwargs)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "Rhine river flood map" in page.text
        assert f'href="{world["srv"].url}/#/document/{pk}"' in page.text
        found = re.search(r'<script type="application/ld\+json">(.*?)</script>', page.text, re.S)
        if found:  # schema.org, when the linked data part gives one
            assert isinstance(json.loads(found.group(1)), dict)
    listing = c.get(ITEMS, params={"q": f"rhine {TAG}", "f": "html"})
    assert listing.status_code == 200 and f"{uuid}?f=html" in listing.text


def test_unknown_record_is_404(world):
    r = world["clients"]["admin"].get(f"{ITEMS}/no-such-record")
    assert r.status_code == 404
    assert set(r.json()) == {"code", "description"}


def test_queryables(world):
    r = world["clients"]["anonymous"].get("/ogcapi/collections/metadata:main/queryables")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/schema+json")
    props = r.json()["properties"]
    assert {"id", "type", "title", "description", "created", "updated", "geometry"} <= set(props)
    assert props["updated"]["format"] == "date-time"


# -- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, named", [
    ({"bbox": "1,2,3,4,5"}, "bbox"),
    ({"bbox": "a,b,c,d"}, "bbox"),
    ({"sortby": "colour"}, "sortby"),
    ({"datetime": "yesterday"}, "datetime"),
    ({"datetime": "2020-13-45"}, "datetime"),
    ({"filter": "title LIKE"}, "filter"),
    ({"filter": "colour = 'red'"}, "filter"),
    ({"filter-lang": "sql", "filter": "1=1"}, "filter-lang"),
    ({"f": "xml"}, "f"),
    ({"limit": "0"}, "limit"),
    ({"limit": "ten"}, "limit"),
    ({"offset": "-1"}, "offset"),
    ({"type": "spaceship"}, "type"),
    ({"facets": "maybe"}, "facets"),
    ({"bbox-crs": "EPSG:3857", "bbox": "0,0,1,1"}, "bbox-crs"),
])
def test_bad_parameters_are_400_naming_them(world, params, named):
    r = world["clients"]["anonymous"].get(ITEMS, params=params)
    assert r.status_code == 400, r.text
    body = r.json()
    assert set(body) == {"code", "description"}
    assert body["code"] == "InvalidParameterValue" and named in body["description"]


def test_filter_cql2(world):
    """CQL2 through filter= (cql2 text and JSON), once the CQL2 part is in."""
    from catalogue_app import cql2

    try:
        cql2.parse("title = 'x'", "cql2-text", {"title": cql2.Queryable("title", "string", "r.title")})
    except cql2.Cql2Error:
        pytest.skip("CQL2 is not available yet")
    c = world["clients"]["anonymous"]
    assert titles(items(c, filter=f"title LIKE 'Rhine%' AND title LIKE '%{TAG}'")) == [world["rhine"]["title"]]
    as_json = json.dumps({"op": "and", "args": [
        {"op": "like", "args": [{"property": "title"}, "Amazon%"]},
        {"op": "like", "args": [{"property": "title"}, f"%{TAG}"]}]})
    assert titles(items(c, filter=as_json, **{"filter-lang": "cql2-json"})) == [world["amazon"]["title"]]
    assert titles(items(c, filter=f"category = 'inlandWaters' AND title LIKE '%{TAG}'")) == [world["rhine"]["title"]]
    assert titles(items(c, filter=f"keywords = 'water' AND title LIKE '%{TAG}'")) == [world["rhine"]["title"]]
    assert titles(items(c, q=TAG, filter="S_INTERSECTS(geometry, BBOX(-80, -40, -30, 10))")) == [world["amazon"]["title"]]
    assert titles(items(c, q=f"rhine {TAG}", filter="created > TIMESTAMP('2000-01-01T00:00:00Z')")) == [
        world["rhine"]["title"]]
    # with the other parameters and with facets
    both = items(c, q=TAG, bbox="5,45,11,48", filter="type = 'document'", facets="true")
    assert titles(both) == [world["rhine"]["title"]]
    assert {b["value"] for b in both["facets"]["keyword"]["buckets"]} == {"water", "flood"}
    # the private record stays out of a filter that names it
    assert items(c, filter=f"title LIKE 'Secret%{TAG}'")["numberMatched"] == 0
    alice = world["clients"]["alice"]
    assert items(alice, filter=f"title LIKE 'Secret%{TAG}'")["numberMatched"] == 1


# -- OWSLib and QGIS MetaSearch --------------------------------------------------------------------
def test_owslib_records_client(world):
    from owslib.ogcapi.records import Records

    w = Records(world["srv"].url + "/ogcapi/")
    assert "metadata:main" == w.collection("metadata:main")["id"]
    found = w.collection_items("metadata:main", q=f"rhine {TAG}")
    assert found["numberMatched"] == 1 and found["features"][0]["properties"]["title"] == world["rhine"]["title"]
    inside = w.collection_items("metadata:main", bbox=[5, 45, 11, 48], q=TAG)
    assert world["rhine"]["title"] in titles(inside) and world["amazon"]["title"] not in titles(inside)
    seen = []
    for offset in range(0, PAGING, 5):
        page = w.collection_items("metadata:main", q=f"paging {TAG}", limit=5, offset=offset)
        seen += titles(page)
    assert sorted(seen) == sorted(n["title"] for n in world["notes"])
    one = w.collection_item("metadata:main", world["amazon"]["uuid"])
    assert one["id"] == world["amazon"]["uuid"] and one["properties"]["type"] == "document"


def test_requests_qgis_metasearch_sends(world):
    """MetaSearch is given the collection's address: it splits it at /collections/, opens the
    landing page with OWSLib's Records, reads the collection's id, then asks for items with q,
    bbox, limit and offset and reads numberMatched, numberReturned and each record's
    properties.type and properties.title."""
    from owslib.ogcapi.records import Records

    url = world["srv"].url + "/ogcapi/collections/metadata:main"
    base, collection = url.split("/collections/")
    conn = Records(base)
    collection_id = conn.collection(collection)["id"]
    answer = conn.collection_items(collection_id, q=f"flood {TAG}", bbox=["5", "45", "11", "48"], limit=10, offset=0)
    assert answer["numberMatched"] == 1 and answer["numberReturned"] == 1
    record = answer["features"][0]
    assert record["properties"]["type"] == "document" and record["properties"]["title"] == world["rhine"]["title"]
    query = parse_qs(urlparse(conn.request).query)
    assert query["q"] == [f"flood {TAG}"] and query["limit"] == ["10"]
    # the next page, as MetaSearch's "next" button asks
    page2 = conn.collection_items(collection_id, q=TAG, limit=10, offset=10)
    assert page2["numberMatched"] == 2 + PAGING and page2["numberReturned"] == 4


def test_the_facets_read_geonode_api_will_use(world):
    """reads/facets.py (for /api/v2/facets/): the same counts as the Records items, paged, on
    the server's own database file."""
    from catalogue_app.reads import facets as facet_reads
    from catalogue_app.store import db, resources
    from catalogue_app.store.filters import ListSpec
    from catalogue_app.store.resources import ResourceQuery

    shown = items(world["clients"]["bob"], q=TAG, facets="true")["facets"]
    owner = db.Database(world["srv"].data_dir / "catalogue.sqlite3")
    try:
        def read(conn):
            viewer = resources.viewer_of(conn, world["bob"]["pk"])
            query = ResourceQuery(spec=ListSpec(search_terms=[TAG], search_fields=["title", "abstract"]))
            return facet_reads.topics(conn, viewer, query, [], False, page_size=1)
        topics = owner.read_sync(read)
    finally:
        owner.close()
    for name in facet_reads.NAMES:
        assert topics[name].total == len(shown[name]["buckets"])
        assert [(t.key, t.count) for t in topics[name].items] == [
            (b["value"], b["count"]) for b in shown[name]["buckets"][:1]]
