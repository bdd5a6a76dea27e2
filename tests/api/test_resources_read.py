"""Reading the catalogue: row shape, visibility, the query language, search, extent, selection."""

import re

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, insert_resource, login, make_group, make_user

Z_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
PUBLIC = [(None, 1, "view_resourcebase"), (None, 1, "download_resourcebase")]


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    """A catalogue of its own, so totals are exact: owner, reader (granted), member (via group), stranger."""
    srv = in_process(tmp_path_factory.mktemp("catalogue") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, reader, member, stranger = (make_user(admin) for _ in range(4))
    team = make_group(admin)
    admin.post(f"/api/v2/groups/{team['pk']}/members", json={"users": [member["pk"]]})
    ids = {
        "zurich": insert_resource(srv, owner["pk"], "Zürich river survey", PUBLIC, resource_type="dataset",
                                  subtype="vector", alternate="catalogue:zurich", abstract="<p>Flood <b>lines</b></p>",
                                  ll_x0=8.4, ll_y0=47.3, ll_x1=8.6, ll_y1=47.4, bbox_x0=8.4, bbox_y0=47.3, bbox_x1=8.6,
                                  bbox_y1=47.4, date="2020-05-01T00:00:00.000000Z", featured=1,
                                  keywords=["Hydrology", "Rivers"], regions=["CHE"], category_id=1),
        "fiji": insert_resource(srv, owner["pk"], "Fiji reef map", PUBLIC, resource_type="map",
                                ll_x0=177.0, ll_y0=-19.0, ll_x1=-179.5, ll_y1=-16.0, abstract="Coral and river mouths",
                                date="2021-01-01T00:00:00.000000Z", keywords=["Oceans"]),
        "paulo": insert_resource(srv, owner["pk"], "SÃO PAULO ÉCOLE list", PUBLIC, abstract="Schools",
                                 date="2019-01-01T00:00:00.000000Z", is_published=0),
        "private": insert_resource(srv, owner["pk"], "Private river notes", [(reader["pk"], None, "view_resourcebase")],
                                   abstract="Only for reader"),
        "team": insert_resource(srv, owner["pk"], "Team budget", [(None, team["group"]["pk"], "view_resourcebase")],
                                keywords=["Secret"], regions=["CHE"], category_id=1),
        "hidden": insert_resource(srv, owner["pk"], "Unadvertised river", PUBLIC, advertised=0),
    }
    yield {"srv": srv, "admin": admin, "owner": owner, "reader": reader, "member": member, "stranger": stranger,
           "ids": ids}
    admin.close()
    srv.stop()


def pks(response) -> set[int]:
    assert response.status_code == 200, response.text
    body = response.json()
    key = [k for k in body if k not in ("links", "total", "page", "page_size")][0]
    assert body["total"] == len(body[key]), "the test lists fit on one page"
    return {int(r["pk"]) for r in body[key]}


def test_row_shape_for_qgis_and_geonodectl(cat):
    with cat["srv"].client() as c:
        body = c.get("/api/v2/datasets/").json()
    row = body["datasets"][0]
    assert isinstance(row["pk"], str) and int(row["pk"]) == cat["ids"]["zurich"]
    for key, kind in [("uuid", str), ("thumbnail_url", (str, type(None))), ("link", str), ("detail_url", str),
                      ("srid", str), ("date_type", str), ("title", str), ("abstract", str), ("raw_abstract", str),
                      ("alternate", str), ("subtype", str), ("perms", list), ("keywords", list), ("links", list),
                      ("owner", dict), ("metadata_author", list), ("popular_count", str), ("rating", str),
                      ("polymorphic_ctype_id", str), ("language", str), ("featured", bool), ("is_published", bool),
                      ("is_approved", bool), ("state", str), ("extent", dict), ("favorite", bool)]:
        assert isinstance(row[key], kind), key
    for key in ("category", "license", "temporal_extent_start", "temporal_extent_end", "raw_constraints_other",
                "default_style" if False else "group"):
        assert key in row
    assert row["owner"]["username"] == cat["owner"]["username"] and "email" not in row["owner"]
    ring = row["bbox_polygon"]["coordinates"][0]
    assert row["bbox_polygon"]["type"] == "Polygon" and all(len(p) == 2 for p in ring) and ring[0] == ring[-1]
    assert re.fullmatch(r"EPSG:\d+", row["srid"])
    assert Z_TIME.match(row["created"]) and Z_TIME.match(row["date"]) and Z_TIME.match(row["last_updated"])
    assert row["raw_abstract"] == "Flood lines"
    assert row["extent"] == {"coords": [8.4, 47.3, 8.6, 47.4], "srid": "EPSG:4326"}
    assert set(row["perms"]) == {"view_resourcebase", "download_resourcebase"}
    assert row["link"].endswith(f"/api/v2/datasets/{row['pk']}")
    assert row["download_url"].endswith("/datasets/catalogue:zurich/dataset_download")
    detail = cat["srv"].client().get(f"/api/v2/datasets/{row['pk']}/").json()["dataset"]
    # the detail adds what GeoNode leaves out of dataset lists
    extra = {"attribute_set", "capabilities_url", "dataset_ows_url", "ows_url"}
    assert set(detail) - set(row) == extra and {k: v for k, v in detail.items() if k not in extra} == row
    for key in ("name", "workspace", "store", "charset", "ptype", "styles", "default_style", "has_time", "is_mosaic"):
        assert key in row
    assert row["name"] == "zurich" and row["workspace"] == "catalogue" and row["ptype"] == "gxp_wmscsource"
    assert detail["attribute_set"] == [] and row["is_copyable"] is False  # a record without data


def test_visibility_matrix_on_list_detail_and_counts(cat):
    srv, ids = cat["srv"], cat["ids"]
    public = {ids["zurich"], ids["fiji"], ids["paulo"]}
    with srv.client() as c:
        assert pks(c.get("/api/v2/resources/")) == public
        assert_envelope(c.get(f"/api/v2/resources/{ids['private']}/"), 404, "not_found")
        types = {t["name"]: t["count"] for t in c.get("/api/v2/resources/resource_types/").json()["resource_types"]}
        assert types["dataset"] == 1 and types["map"] == 1 and types["document"] == 1
        assert pks(c.get("/api/v2/resources/", params={"advertised": "all"})) == public | {ids["hidden"]}
    with login(srv, cat["stranger"]) as c:
        assert pks(c.get("/api/v2/resources/")) == public
        assert c.get(f"/api/v2/resources/{ids['private']}").status_code == 404
    with login(srv, cat["reader"]) as c:
        assert pks(c.get("/api/v2/resources/")) == public | {ids["private"]}
        row = c.get(f"/api/v2/resources/{ids['private']}").json()["resource"]
        assert row["perms"] == ["view_resourcebase"]
    with login(srv, cat["member"]) as c:
        assert pks(c.get("/api/v2/resources/")) == public | {ids["team"]}
    with login(srv, cat["owner"]) as c:
        assert pks(c.get("/api/v2/resources/")) == set(ids.values())  # own unadvertised ones included
        perms = c.get(f"/api/v2/resources/{ids['team']}").json()["resource"]["perms"]
        assert "delete_resourcebase" in perms and "change_resourcebase_permissions" in perms
    assert pks(cat["admin"].get("/api/v2/resources/")) == set(ids.values())


def test_typed_lists_and_details(cat):
    ids = cat["ids"]
    with cat["srv"].client() as c:
        assert pks(c.get("/api/v2/datasets/")) == {ids["zurich"]}
        assert pks(c.get("/api/v2/maps/")) == {ids["fiji"]}
        assert pks(c.get("/api/v2/documents/")) == {ids["paulo"]}
        assert pks(c.get("/api/v2/geoapps/")) == set()
        assert_envelope(c.get(f"/api/v2/datasets/{ids['paulo']}"), 404, "not_found", "No Dataset matches the given query.")
        assert c.get(f"/api/v2/documents/{ids['paulo']}").json()["document"]["title"] == "SÃO PAULO ÉCOLE list"


@pytest.mark.parametrize("params, expected", [
    ({"filter{title}": "Fiji reef map"}, {"fiji"}),
    ({"filter{title}": "fiji reef map"}, set()),                       # exact is case sensitive
    ({"filter{title.iexact}": "fiji REEF map"}, {"fiji"}),
    ({"filter{title.icontains}": "zürich"}, {"zurich"}),
    ({"filter{title.icontains}": "ZÜRICH"}, {"zurich"}),               # non-ASCII case folding
    ({"filter{title.icontains}": "são paulo école"}, {"paulo"}),
    ({"filter{title.contains}": "reef"}, {"fiji"}),
    ({"filter{title.contains}": "Reef"}, set()),
    ({"filter{title.startswith}": "Fiji"}, {"fiji"}),
    ({"filter{title.istartswith}": "fiji"}, {"fiji"}),
    ({"filter{title.endswith}": "list"}, {"paulo"}),
    ({"filter{title.iendswith}": "SURVEY"}, {"zurich"}),
    ({"filter{title.regex}": "^(Fiji|Zürich)"}, {"fiji", "zurich"}),
    ({"filter{-title.icontains}": "fiji"}, {"zurich", "paulo"}),
    ({"filter{resource_type.in}": ["map", "dataset"]}, {"fiji", "zurich"}),
    ({"filter{date.gte}": "2020-01-01"}, {"zurich", "fiji"}),
    ({"filter{date.lt}": "2020-01-01T00:00:00Z"}, {"paulo"}),
    ({"filter{date.range}": ["2019-06-01", "2020-12-31"]}, {"zurich"}),
    ({"filter{date.year}": "2021"}, {"fiji"}),
    ({"filter{date.month}": "5"}, {"zurich"}),
    ({"filter{alternate.isnull}": "true"}, {"fiji", "paulo"}),
    ({"filter{alternate.isnull}": "false"}, {"zurich"}),
    ({"filter{featured}": "true"}, {"zurich"}),
    ({"filter{featured}": "no"}, {"zurich"}),                           # dynamic-rest: only 0/false/"" are false
    ({"filter{featured}": "0"}, {"fiji", "paulo"}),
    ({"filter{is_published}": "false"}, {"paulo"}),
    ({"filter{keywords.name}": "Hydrology"}, {"zurich"}),
    ({"filter{keywords.name.icontains}": "ocean"}, {"fiji"}),
    ({"filter{keywords.slug.in}": ["rivers", "oceans"]}, {"zurich", "fiji"}),
    ({"filter{-keywords.name}": "Oceans"}, {"zurich", "paulo"}),
    ({"filter{subtype}": "vector"}, {"zurich"}),
    ({"filter{title}[]": "Fiji reef map"}, {"fiji"}),
])
def test_filter_operators(cat, params, expected):
    with cat["srv"].client() as c:
        got = pks(c.get("/api/v2/resources/", params=params))
    assert got == {cat["ids"][name] for name in expected}


def test_relation_paths(cat):
    owner = cat["owner"]["username"]
    ids = cat["ids"]
    with login(cat["srv"], cat["owner"]) as c:
        assert pks(c.get("/api/v2/resources/", params={"filter{owner.username}": owner})) == set(ids.values())
        assert pks(c.get("/api/v2/resources/", params={"filter{owner.username}": "nobody"})) == set()
        assert pks(c.get("/api/v2/resources/", params={"filter{pk.in}": [ids["fiji"], ids["team"]]})) == {ids["fiji"], ids["team"]}
        assert pks(c.get("/api/v2/resources/", params={"filter{category.identifier}": "biota"})) == {ids["zurich"], ids["team"]}
        assert pks(c.get("/api/v2/resources/", params={"filter{regions.code}": "CHE"})) == {ids["zurich"], ids["team"]}
        assert pks(c.get("/api/v2/resources/", params={"filter{license.identifier}": "cc-by"})) == set()


@pytest.mark.parametrize("params, code, message", [
    ({"filter{nosuch}": "1"}, "invalid", "Invalid filter field: nosuch"),
    ({"filter{id}": "1"}, "invalid", "Invalid filter field: id"),
    ({"filter{owner.nosuch}": "x"}, "invalid", "Invalid filter field: nosuch"),
    ({"filter{title.nosuch}": "x"}, "invalid", "Invalid nested filter field: title"),
    ({"filter{title=x": "1"}, "parse_error", None),
    ({"filter{detail_url}": "x"}, "invalid", None),
    ({"filter{pk}": "abc"}, "invalid", None),
    ({"filter{date.gte}": "not-a-date"}, "invalid", None),
    ({"filter{title.regex}": "("}, "invalid", None),
    ({"sort[]": "nosuch"}, "invalid", "Invalid filter field: ['nosuch']"),
    ({"include[]": "nosuch"}, "parse_error", '"nosuch" is not a valid field name for "resource".'),
    ({"extent": "1,2,3"}, "invalid", None),
    ({"extent": "a,b,c,d"}, "invalid", None),
    ({"favorite": "maybe"}, "invalid", None),
    ({"search": "x", "search_fields": "password"}, "invalid", None),
])
def test_bad_queries_are_400(cat, params, code, message):
    with cat["srv"].client() as c:
        assert_envelope(c.get("/api/v2/resources/", params=params), 400, code, message)


@pytest.mark.parametrize("search, fields, expected", [
    ("river", ["title", "abstract"], {"zurich", "fiji"}),       # title of one, abstract of the other
    ("river", ["title"], {"zurich"}),
    ("RIVER survey", ["title", "abstract"], {"zurich"}),       # terms are AND-ed
    ("iver urve", ["title"], {"zurich"}),                      # substrings
    ("ri", ["title"], {"zurich"}),                             # short terms (no trigram)
    ("ef", ["title", "abstract"], {"fiji"}),
    ("zürich", ["title"], {"zurich"}),
    ("ÉCOLE", ["title"], {"paulo"}),
    ("são", ["title", "abstract"], {"paulo"}),
    ('"reef map"', ["title"], {"fiji"}),                       # a quoted phrase is one term
    ("coral lines", ["abstract"], set()),
    ("nothing-like-this", ["title", "abstract"], set()),
])
def test_search(cat, search, fields, expected):
    with cat["srv"].client() as c:
        got = pks(c.get("/api/v2/resources/", params={"search": search, "search_fields": fields}))
    assert got == {cat["ids"][name] for name in expected}


def test_search_without_fields_is_ignored(cat):
    with cat["srv"].client() as c:
        assert pks(c.get("/api/v2/resources/", params={"search": "fiji"})) == pks(c.get("/api/v2/resources/"))


@pytest.mark.parametrize("extent, expected", [
    ("8,47,9,48", {"zurich", "paulo"}),                     # paulo has no box: it counts as the whole world
    ("170,-20,-170,-10", {"fiji", "paulo"}),                 # crossing the antimeridian
    ("179,-20,180,-10", {"fiji", "paulo"}),
    ("-180,-17,-179.6,-16.5", {"fiji", "paulo"}),
    ("0,0,1,1,8.5,47.35,8.55,47.36", {"zurich", "paulo"}),  # several boxes
    ("-10,-10,-9,-9", {"paulo"}),
])
def test_extent(cat, extent, expected):
    with cat["srv"].client() as c:
        got = pks(c.get("/api/v2/resources/", params={"extent": extent}))
    assert got == {cat["ids"][name] for name in expected}


def test_sorting_and_selection(cat):
    with cat["srv"].client() as c:
        titles = [r["title"] for r in c.get("/api/v2/resources/", params={"sort[]": "title"}).json()["resources"]]
        assert titles == sorted(titles)
        by_date = c.get("/api/v2/resources/", params=[("sort[]", "-date"), ("ordering", "title")]).json()["resources"]
        assert [r["date"] for r in by_date] == sorted((r["date"] for r in by_date), reverse=True)
        bare = c.get("/api/v2/resources/", params={"api_preset": "bare"}).json()["resources"]
        assert all(set(r) == {"pk", "title"} for r in bare)
        picked = c.get("/api/v2/resources/", params=[("exclude[]", "*"), ("include[]", "pk"), ("include[]", "owner")])
        assert all(set(r) == {"pk", "owner"} for r in picked.json()["resources"])
        slim = c.get("/api/v2/resources/", params={"exclude[]": "owner.avatar"}).json()["resources"][0]
        assert "avatar" not in slim["owner"] and "title" in slim
        data = c.get(f"/api/v2/maps/{cat['ids']['fiji']}", params={"include[]": "data"}).json()["map"]
        assert data["data"] == {}


def test_fixed_lists(cat):
    ids = cat["ids"]
    with cat["srv"].client() as c:
        assert pks(c.get("/api/v2/resources/featured/")) == {ids["zurich"]}
        published = pks(c.get("/api/v2/resources/published/"))
        assert ids["paulo"] not in published and ids["zurich"] in published
        assert ids["fiji"] in pks(c.get("/api/v2/resources/approved"))
        assert_envelope(c.get("/api/v2/resources/favorites/"), 401, "not_authenticated")
        assert pks(c.get("/api/v2/resources/", params={"favorite": "true"})) == set()
    with login(cat["srv"], cat["stranger"]) as c:
        body = c.get("/api/v2/resources/favorites/").json()
        assert body["favorites"] == [] and body["total"] == 0


def test_accounts_lists_use_the_full_representation(cat):
    with login(cat["srv"], cat["member"]) as c:
        rows = c.get(f"/api/v2/users/{cat['owner']['pk']}/resources/").json()["resources"]
    assert {int(r["pk"]) for r in rows} == {cat["ids"][k] for k in ("zurich", "fiji", "paulo", "team", "hidden")}
    assert all("bbox_polygon" in r and isinstance(r["pk"], str) for r in rows)


def test_lookups_count_what_the_caller_sees(cat):
    srv = cat["srv"]
    with srv.client() as c:
        body = c.get("/api/v2/categories/", params={"page_size": 100}).json()
        assert body["total"] == 20 and list(body) == ["links", "total", "page", "page_size", "categories"]
        biota = next(x for x in body["categories"] if x["identifier"] == "biota")
        assert set(biota) == {"id", "identifier", "description", "gn_description", "is_choice", "fa_class", "link", "count"}
        assert biota["count"] == 1  # the team's private one is not counted for anonymous
        assert c.get(f"/api/v2/categories/{biota['id']}/").json()["categories"]["count"] == 1
        assert c.get(f"/api/v2/categories/{biota['id']}/", params={"type": "map"}).json()["categories"]["count"] == 0
        assert_envelope(c.get("/api/v2/categories/999/"), 404, "not_found", "No TopicCategory matches the given query.")
        names = {k["name"] for k in c.get("/api/v2/keywords/").json()["keywords"]}
        assert names == {"Hydrology", "Rivers", "Oceans"}  # "Secret" is only on a private resource
        che = c.get("/api/v2/regions/", params={"filter{code}": "CHE"}).json()["regions"][0]
        assert che["name"] == "Switzerland" and che["count"] == 1 and isinstance(che["bbox_x0"], str)
        assert c.get("/api/v2/regions/", params={"with_resources": "true"}).json()["total"] == 1
        owners = c.get("/api/v2/owners/").json()["owners"]
        # counted like GeoNode: every visible resource, advertised or not
        assert [(o["username"], o["count"]) for o in owners] == [(cat["owner"]["username"], 4)]
        assert_envelope(c.get("/api/v2/regions/", params={"with_resources": "perhaps"}), 400, "invalid")
        assert c.get("/api/v2/tkeywords/").json()["tkeywords"] == []
    with login(srv, cat["member"]) as c:
        names = {k["name"] for k in c.get("/api/v2/keywords/").json()["keywords"]}
        assert "Secret" in names
        biota = c.get("/api/v2/categories/", params={"filter{identifier}": "biota"}).json()["categories"][0]
        assert biota["count"] == 2


@pytest.mark.parametrize("expression, expected", [
    ('{"$or": [{"title.icontains": "fiji"}, {"abstract.icontains": "schools"}]}', {"fiji", "paulo"}),
    ('{".or": [{"title.icontains": "fiji"}, {"title.icontains": "zürich"}], "-resource_type": "map"}', {"zurich"}),
    ('{"$and": [{"featured": false}, {"$or": [{"date.year": 2019}, {"date.year": 2021}]}]}', {"fiji", "paulo"}),
    ('{"resource_type.in": ["map", "document"]}', {"fiji", "paulo"}),
])
def test_json_filter_form(cat, expression, expected):
    with cat["srv"].client() as c:
        got = pks(c.get("/api/v2/resources/", params={"filter{}": expression}))
    assert got == {cat["ids"][name] for name in expected}


@pytest.mark.parametrize("expression", ['{"title.icontains": ', '[1]', '{"nosuch": 1}', '{"$or": "x"}',
                                        '{"$or": [[]]}', '{"date.gte": "yesterday"}'])
def test_json_filter_errors(cat, expression):
    with cat["srv"].client() as c:
        r = c.get("/api/v2/resources/", params={"filter{}": expression})
    assert r.status_code == 400 and r.json()["code"] in ("invalid", "parse_error")


def test_thesaurus_keywords(cat):
    import sqlite3

    ids = cat["ids"]
    conn = sqlite3.connect(cat["srv"].data_dir / "catalogue.sqlite3")
    with conn:
        themes = conn.execute("INSERT INTO thesauri (identifier, title, uri) VALUES ('themes', 'Themes', 'http://t/themes')").lastrowid
        places = conn.execute("INSERT INTO thesauri (identifier, title, uri) VALUES ('places', 'Places', 'http://t/places')").lastrowid
        water, coast, alps = (conn.execute(
            "INSERT INTO thesaurus_keywords (thesaurus_id, alt_label, about, labels) VALUES (?, ?, ?, ?)",
            (t, label, f"http://t/{label}", '{"en": "%s"}' % label)).lastrowid
            for t, label in ((themes, "water"), (themes, "coast"), (places, "alps")))
        conn.executemany("INSERT INTO resource_tkeywords VALUES (?, ?)",
                         [(ids["zurich"], water), (ids["zurich"], alps), (ids["fiji"], coast)])
    conn.close()
    with cat["srv"].client() as c:
        get = lambda *pairs: pks(c.get("/api/v2/resources/", params=[("filter{tkeywords}", str(p)) for p in pairs]))  # noqa: E731
        assert get(water) == {ids["zurich"]}
        assert get(water, coast) == {ids["zurich"], ids["fiji"]}            # same thesaurus: OR
        assert get(coast, alps) == set()                                     # across thesauri: AND
        assert get(water, alps) == {ids["zurich"]}
        both = c.get("/api/v2/resources/", params=[("filter{tkeywords}", water), ("filter{tkeywords}", coast),
                                                   ("force_and", "1")])
        assert pks(both) == set()
        row = c.get(f"/api/v2/resources/{ids['zurich']}").json()["resource"]
        assert {t["name"] for t in row["tkeywords"]} == {"water", "alps"}
        tk = next(t for t in row["tkeywords"] if t["name"] == "water")
        assert tk["thesaurus"] == {"name": "Themes", "slug": "themes", "uri": "http://t/themes"} and tk["i18n"] == {"en": "water"}
        listed = c.get("/api/v2/tkeywords/").json()["tkeywords"]
        assert {t["name"] for t in listed} == {"water", "coast", "alps"}
        assert_envelope(c.get("/api/v2/resources/", params={"filter{tkeywords}": "x"}), 400, "invalid")
