"""The resource query language beyond test_resources_read: the rest of facts §3.1's operators,
every relation path named in issue 3, the exact 400 messages, more search and extent cases, and
the row shape of every row of every resource list."""

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, insert_resource, login, make_group, make_user
from tests.row_shape import check_row

PUBLIC = [(None, 1, "view_resourcebase"), (None, 1, "download_resourcebase")]
WILD_TITLE = "Growth 100% under_score back\\slash"


@pytest.fixture(scope="module")
def q(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("query") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    alice, bob = make_user(admin, first_name="Alice"), make_user(admin)
    team = make_group(admin, title="Hydro Team Zürich")
    ids = {
        "zurich": insert_resource(
            srv, alice["pk"], "Zürich River Survey", PUBLIC, resource_type="dataset", subtype="vector",
            alternate="catalogue:zurich", abstract="<p>Flood lines of the Limmat</p>", keywords=["Hydrology", "Rivers", "École"],
            regions=["CHE"], date="2020-05-01T10:00:00.000000Z", popular_count=10, featured=1,
            temporal_extent_start="2010-01-01T00:00:00.000000Z", temporal_extent_end="2015-12-31T00:00:00.000000Z",
            ll_x0=8.4, ll_y0=47.3, ll_x1=8.6, ll_y1=47.4, bbox_x0=8.4, bbox_y0=47.3, bbox_x1=8.6, bbox_y1=47.4),
        "fiji": insert_resource(
            srv, bob["pk"], "Fiji reef map", PUBLIC, resource_type="map", abstract="Coral and river mouths",
            keywords=["Oceans"], regions=["FJI"], date="2021-01-03T00:00:00.000000Z", popular_count=5,
            ll_x0=177.0, ll_y0=-19.0, ll_x1=-179.5, ll_y1=-16.0),
        "paulo": insert_resource(
            srv, alice["pk"], "SÃO PAULO ÉCOLE list", PUBLIC, abstract="Schools", keywords=["Rivers"], regions=["BRA"],
            date="2019-01-01T00:00:00.000000Z", popular_count=0, ll_x0=-47.0, ll_y0=-24.0, ll_x1=-46.3, ll_y1=-23.3),
        "wild": insert_resource(srv, bob["pk"], WILD_TITLE, PUBLIC, abstract="Nothing to see",
                                date="2019-06-15T00:00:00.000000Z", popular_count=100),
        "raster": insert_resource(
            srv, alice["pk"], "Elevation raster", PUBLIC, resource_type="dataset", subtype="raster",
            alternate="catalogue:dem", regions=["AUT"], date="2022-02-02T00:00:00.000000Z", popular_count=7,
            temporal_extent_start="2016-01-01T00:00:00.000000Z", temporal_extent_end="2018-01-01T00:00:00.000000Z",
            ll_x0=9.5, ll_y0=46.4, ll_x1=17.2, ll_y1=49.0, bbox_x0=9.5, bbox_y0=46.4, bbox_x1=17.2, bbox_y1=49.0),
    }
    for name, body in {"zurich": {"category": "biota", "license": "cc-by", "group": team["group"]["pk"]},
                       "fiji": {"category": "oceans", "license": "odbl"},
                       "raster": {"category": "elevation", "license": "cc-by"}}.items():
        r = admin.patch(f"/api/v2/resources/{ids[name]}", json=body)
        assert r.status_code == 200, r.text
    anon = srv.client()
    yield {"srv": srv, "admin": admin, "alice": alice, "bob": bob, "team": team, "ids": ids, "anon": anon}
    anon.close()
    admin.close()
    srv.stop()


def names(q, params, path="/api/v2/resources/") -> set[str]:
    r = q["anon"].get(path, params=params)
    assert r.status_code == 200, r.text
    body = r.json()
    rows = body[[k for k in body if k not in ("links", "total", "page", "page_size")][0]]
    assert body["total"] == len(rows)
    by_id = {v: k for k, v in q["ids"].items()}
    return {by_id[int(row["pk"])] for row in rows}


@pytest.mark.parametrize("params, expected", [
    # explicit exact matches
    ({"filter{title.eq}": "Fiji reef map"}, {"fiji"}),
    ({"filter{title.exact}": "Fiji reef map"}, {"fiji"}),
    ({"filter{resource_type.eq}": "map"}, {"fiji"}),
    # comparisons on numbers and dates (QGIS sends offset-less ISO dates)
    ({"filter{popular_count.gt}": "7"}, {"zurich", "wild"}),
    ({"filter{popular_count.gte}": "7"}, {"zurich", "wild", "raster"}),
    ({"filter{popular_count.lt}": "5"}, {"paulo"}),
    ({"filter{popular_count.lte}": "5"}, {"paulo", "fiji"}),
    ({"filter{popular_count.range}": ["5", "10"]}, {"fiji", "zurich", "raster"}),
    ({"filter{popular_count.in}": ["0", "100"]}, {"paulo", "wild"}),
    ({"filter{date.gt}": "2021-01-03T00:00:00"}, {"raster"}),
    ({"filter{date.gte}": "2021-01-03T00:00:00"}, {"fiji", "raster"}),
    ({"filter{date.lte}": "2019-06-15"}, {"paulo", "wild"}),
    ({"filter{date.lte}": "2019-06-15T02:00:00+02:00"}, {"paulo", "wild"}),   # an offset is turned into UTC
    ({"filter{temporal_extent_start.gte}": "2012-01-01T00:00:00"}, {"raster"}),
    ({"filter{temporal_extent_end.lte}": "2016-01-01T00:00:00"}, {"zurich"}),
    # parts of dates
    ({"filter{date.day}": "1"}, {"zurich", "paulo"}),
    ({"filter{date.day}": "15"}, {"wild"}),
    ({"filter{date.week_day}": "6"}, {"zurich"}),            # 1 = Sunday ... 7 = Saturday, as Django
    ({"filter{date.week_day}": "1"}, {"fiji"}),
    ({"filter{date.week_day}": "7"}, {"wild"}),
    ({"filter{date.week_day}": "3"}, {"paulo"}),
    ({"filter{date.week_day}": "4"}, {"raster"}),
    ({"filter{date.year}": "2019", "filter{date.month}": "6"}, {"wild"}),
    # list operators
    ({"filter{resource_type.any}": ["map", "dataset"]}, {"fiji", "zurich", "raster"}),
    ({"filter{resource_type.in}": "map,dataset"}, set()),      # one value with a comma is one literal
    ({"filter{subtype.in}": ["vector", "raster"]}, {"zurich", "raster"}),   # QGIS's dataset query
    ({"filter{keywords.name.all}": ["Hydrology", "Rivers"]}, {"zurich"}),
    ({"filter{keywords.name.all}": ["Rivers"]}, {"zurich", "paulo"}),
    ({"filter{keywords.name.all}": ["Rivers", "Oceans"]}, set()),
    ({"filter{-keywords.name.all}": ["Hydrology", "Rivers"]}, {"fiji", "paulo", "wild", "raster"}),
    ({"filter{title.all}": ["Fiji reef map", "Elevation raster"]}, set()),
    # a repeated key uses its first value, except in and range
    ({"filter{title}": ["Fiji reef map", "Elevation raster"]}, {"fiji"}),
    # isnull on plain columns and through relations
    ({"filter{category.isnull}": "true"}, {"paulo", "wild"}),
    ({"filter{license.isnull}": "false"}, {"zurich", "fiji", "raster"}),
    ({"filter{keywords.isnull}": "true"}, {"wild", "raster"}),
    ({"filter{keywords.isnull}": "false"}, {"zurich", "fiji", "paulo"}),
    ({"filter{-keywords.isnull}": "true"}, {"zurich", "fiji", "paulo"}),
    ({"filter{regions.isnull}": "1"}, {"wild"}),
    ({"filter{temporal_extent_start.isnull}": "0"}, {"zurich", "raster"}),
    # LIKE's wildcards and escape are plain characters to every operator
    ({"filter{title.icontains}": "%"}, {"wild"}),
    ({"filter{title.icontains}": "_"}, {"wild"}),
    ({"filter{title.icontains}": "r_s"}, {"wild"}),
    ({"filter{title.icontains}": "\\"}, {"wild"}),
    ({"filter{title.icontains}": "100%"}, {"wild"}),
    ({"filter{title.istartswith}": "growth 100% UNDER_"}, {"wild"}),
    ({"filter{title.istartswith}": "%"}, set()),
    ({"filter{title.iendswith}": "BACK\\SLASH"}, {"wild"}),
    ({"filter{title.iexact}": WILD_TITLE.upper()}, {"wild"}),
    ({"filter{title.iexact}": WILD_TITLE.replace("_", "x")}, set()),
    ({"filter{title.iexact}": "fiji reef ma_"}, set()),
    ({"filter{title.contains}": "_"}, {"wild"}),
    # case: only the i-operators fold, and they fold non-ASCII letters too
    ({"filter{title.contains}": "zürich"}, set()),
    ({"filter{title.startswith}": "SÃO"}, {"paulo"}),
    ({"filter{title.istartswith}": "são paulo"}, {"paulo"}),
    ({"filter{title.iendswith}": "école LIST"}, {"paulo"}),
    ({"filter{title.iexact}": "ZÜRICH RIVER SURVEY"}, {"zurich"}),
    ({"filter{title.regex}": "zürich"}, set()),
    ({"filter{title.regex}": "^Zürich"}, {"zurich"}),
    ({"filter{abstract.icontains}": "LIMMAT"}, {"zurich"}),
    # dynamic-rest truthiness on boolean fields
    ({"filter{featured}": "off"}, {"zurich"}),
    ({"filter{featured}": "FALSE"}, {"fiji", "paulo", "wild", "raster"}),
    ({"filter{featured}": ""}, {"fiji", "paulo", "wild", "raster"}),
    ({"filter{featured}": "1"}, {"zurich"}),
    ({"filter{is_approved}": "true"}, {"zurich", "fiji", "paulo", "wild", "raster"}),
])
def test_operators(q, params, expected):
    assert names(q, params) == expected


def test_relation_paths(q):
    alice, bob = q["alice"]["username"], q["bob"]["username"]
    group = q["team"]["group"]["name"]
    cases = [
        ({"filter{owner.username}": alice}, {"zurich", "paulo", "raster"}),
        ({"filter{owner.username.in}": [alice, bob]}, {"zurich", "fiji", "paulo", "wild", "raster"}),
        ({"filter{owner.username.iexact}": bob.upper()}, {"fiji", "wild"}),
        ({"filter{-owner.username}": alice}, {"fiji", "wild"}),
        ({"filter{owner.first_name}": "Alice"}, {"zurich", "paulo", "raster"}),
        ({"filter{category.identifier}": "biota"}, {"zurich"}),
        ({"filter{category.identifier.in}": ["biota", "elevation"]}, {"zurich", "raster"}),
        ({"filter{-category.identifier}": "biota"}, {"fiji", "paulo", "wild", "raster"}),   # null categories too
        ({"filter{category.identifier.istartswith}": "OCEAN"}, {"fiji"}),
        ({"filter{keywords.name}": "Rivers"}, {"zurich", "paulo"}),
        ({"filter{keywords.name.icontains}": "écol"}, {"zurich"}),
        ({"filter{keywords.name.iexact}": "ÉCOLE"}, {"zurich"}),
        ({"filter{keywords.name.in}": ["Oceans", "Hydrology"]}, {"fiji", "zurich"}),
        ({"filter{-keywords.name}": "Rivers"}, {"fiji", "wild", "raster"}),
        ({"filter{keywords.slug}": "rivers"}, {"zurich", "paulo"}),
        ({"filter{keywords.slug.startswith}": "hydro"}, {"zurich"}),
        ({"filter{keywords.slug.in}": ["oceans", "nothing"]}, {"fiji"}),
        ({"filter{regions.name}": "Switzerland"}, {"zurich"}),
        ({"filter{regions.name.icontains}": "BRAZ"}, {"paulo"}),
        ({"filter{regions.name.in}": ["Fiji", "Austria"]}, {"fiji", "raster"}),
        ({"filter{-regions.name}": "Switzerland"}, {"fiji", "paulo", "wild", "raster"}),
        ({"filter{regions.code}": "FJI"}, {"fiji"}),
        ({"filter{regions.code.in}": ["CHE", "AUT"]}, {"zurich", "raster"}),
        ({"filter{license.identifier}": "cc-by"}, {"zurich", "raster"}),
        ({"filter{license.identifier.in}": ["odbl"]}, {"fiji"}),
        ({"filter{-license.identifier}": "cc-by"}, {"fiji", "paulo", "wild"}),
        ({"filter{group.name}": group}, {"zurich"}),
        ({"filter{group.name.icontains}": group[3:].upper()}, {"zurich"}),
        ({"filter{-group.name}": group}, {"fiji", "paulo", "wild", "raster"}),
        ({"filter{group.name.isnull}": "true"}, {"fiji", "paulo", "wild", "raster"}),
        # relations in the JSON form, and mixed with plain filters
        ({"filter{}": '{"$or": [{"regions.code": "FJI"}, {"keywords.slug": "hydrology"}]}'}, {"fiji", "zurich"}),
        ({"filter{}": '{"-keywords.name.all": ["Hydrology", "Rivers"], "owner.username": "%s"}' % alice},
         {"paulo", "raster"}),
        ({"filter{}": '{"keywords.isnull": true}'}, {"wild", "raster"}),
        ({"filter{keywords.name}": "Rivers", "filter{regions.code}": "BRA"}, {"paulo"}),
    ]
    for params, expected in cases:
        assert names(q, params) == expected, params


def test_sorting_through_relations_and_numbers(q):
    with q["srv"].client() as c:
        def order(*sort, key="sort[]"):
            rows = c.get("/api/v2/resources/", params=[(key, s) for s in sort]).json()["resources"]
            return rows
        rows = order("owner.username", "title")
        assert [r["owner"]["username"] for r in rows] == sorted(r["owner"]["username"] for r in rows)
        rows = order("-owner.username", "-title")
        users = [r["owner"]["username"] for r in rows]
        assert users == sorted(users, reverse=True)
        assert [r["popular_count"] for r in order("-popular_count")] == ["100", "10", "7", "5", "0"]   # numbers, not text
        assert [r["popular_count"] for r in order("popular_count", key="ordering")] == ["0", "5", "7", "10", "100"]
        cats = [(r["category"] or {}).get("identifier") for r in order("category.identifier", "title")]
        assert [c for c in cats if c] == ["biota", "elevation", "oceans"]


@pytest.mark.parametrize("path, params, code, message", [
    ("resources", {"filter{title=x": "1"}, "parse_error", '"filter{title=x" is not a well-formed filter key.'),
    ("resources", {"filter{.title}": "1"}, "parse_error", '"filter{.title}" is not a well-formed filter key.'),
    ("resources", {"filter{title.}": "1"}, "parse_error", '"filter{title.}" is not a well-formed filter key.'),
    ("resources", {"filter{title}x": "1"}, "parse_error", '"filter{title}x" is not a well-formed filter key.'),
    ("resources", {"filter{-}": "1"}, "parse_error", '"filter{-}" is not a well-formed filter key.'),
    ("resources", {"filter{nosuch.icontains}": "1"}, "invalid", "Invalid filter field: nosuch"),
    ("resources", {"filter{-nosuch}": "1"}, "invalid", "Invalid filter field: nosuch"),
    ("resources", {"filter{id.in}": "1"}, "invalid", "Invalid filter field: id"),
    ("resources", {"filter{owner.username.nosuch}": "1"}, "invalid", "Invalid nested filter field: username"),
    ("resources", {"filter{}": '{"nosuch.icontains": "x"}'}, "invalid", "Invalid filter field: nosuch"),
    ("resources", {"sort[]": ["nosuch", "-other", "title"]}, "invalid", "Invalid filter field: ['nosuch', '-other']"),
    ("resources", {"exclude[]": "nosuch"}, "parse_error", '"nosuch" is not a valid field name for "resource".'),
    ("datasets", {"include[]": "nosuch"}, "parse_error", '"nosuch" is not a valid field name for "dataset".'),
    ("maps", {"api_preset": "bare", "include[]": "nosuch"}, "parse_error", '"nosuch" is not a valid field name for "map".'),
    ("datasets", {"filter{nosuch}": "1"}, "invalid", "Invalid filter field: nosuch"),
    ("documents", {"sort[]": "-nosuch"}, "invalid", "Invalid filter field: ['-nosuch']"),
    ("keywords", {"filter{nosuch}": "1"}, "invalid", "Invalid filter field: nosuch"),
    ("categories", {"sort[]": "nosuch"}, "invalid", "Invalid filter field: ['nosuch']"),
    ("owners", {"filter{password}": "x"}, "invalid", "Invalid filter field: password"),
    # values that cannot be used: a 400 with a message, never a 500
    ("resources", {"filter{pk}": "abc"}, "invalid", None),
    ("resources", {"filter{pk}": "99999999999999999999999"}, "invalid", None),
    ("resources", {"filter{popular_count.gt}": "many"}, "invalid", None),
    ("resources", {"filter{date.year}": "last"}, "invalid", None),
    ("resources", {"filter{date.week_day}": "monday"}, "invalid", None),
    ("resources", {"filter{date.gte}": "2020-13-45"}, "invalid", None),
    ("resources", {"filter{date.range}": "2020-01-01"}, "invalid", None),
    ("resources", {"filter{raw_abstract}": "x"}, "invalid", None),
    ("resources", {"filter{tkeywords}": "water"}, "invalid", None),
    ("resources", {"extent": "0,10,1,1"}, "invalid", None),                  # south above north
    ("resources", {"extent": "nan,0,1,1"}, "invalid", None),
    ("resources", {"extent": "0,0,inf,1"}, "invalid", None),
    ("resources", {"extent": ""}, "invalid", None),
    ("resources", {"extent": "1,2,3,4,5"}, "invalid", None),
    ("maps", {"extent": "a,b,c,d"}, "invalid", None),
    ("resources", {"search": "x", "search_fields": "owner__password"}, "invalid", None),
    ("resources", {"favorite": "perhaps"}, "invalid", None),
])
def test_bad_queries_answer_400_with_their_message(q, path, params, code, message):
    assert_envelope(q["anon"].get(f"/api/v2/{path}/", params=params), 400, code, message)


@pytest.mark.parametrize("key, message", [
    ("filter{title.nosuch}", "Invalid nested filter field: title"),     # nested through a non-relation
    ("filter{title.iregex}", "Invalid nested filter field: title"),     # not an operator: a nested name
    ("filter{keywords.nosuch}", "Invalid filter field: nosuch"),         # an unknown field of a relation
    ("filter{owner.nosuch}", "Invalid filter field: nosuch"),
])
def test_nested_field_messages_as_dynamic_rest(q, key, message):
    assert_envelope(q["anon"].get("/api/v2/resources/", params={key: "x"}), 400, "invalid", message)


@pytest.mark.parametrize("search, fields, expected", [
    ("ZÜRICH", ["title"], {"zurich"}),                      # non-ASCII, upper case, through the trigram index
    ("école", ["title"], {"paulo"}),                        # stored upper case
    ("SÃO", ["title", "abstract"], {"paulo"}),
    ("zü", ["title"], {"zurich"}),                          # short non-ASCII term
    ("river,survey", ["title"], {"zurich"}),                # terms split on commas too
    ("ri SURVEY", ["title"], {"zurich"}),                   # a short and a long term together
    ("reef coral", ["title", "abstract"], {"fiji"}),        # each term in another field
    ("reef coral", ["title"], set()),
    ("limmat", ["abstract"], {"zurich"}),
    ("rivers", ["keywords__name"], {"zurich", "paulo"}),
    ("biota", ["category__identifier"], {"zurich"}),
    ("dem", ["alternate"], {"raster"}),
    ("100%", ["title"], {"wild"}),
    ("_", ["title"], {"wild"}),
    ("r_s", ["title"], {"wild"}),
    ("\\", ["title"], {"wild"}),
    ('"reef', ["title"], set()),                            # an unclosed quote is a plain character
    ("a(b", ["title", "abstract"], set()),
    ("NOT", ["title", "abstract"], {"wild"}),               # "Nothing": an FTS keyword is only text here
    ("AND", ["title"], set()),
    ("river*", ["title", "abstract"], set()),
    ("NEAR(river map)", ["title", "abstract"], set()),
    ("'", ["title"], set()),
    ("-", ["title"], set()),
])
def test_search(q, search, fields, expected):
    assert names(q, {"search": search, "search_fields": fields}) == expected


def test_search_owner_and_combined_with_filters(q):
    alice = q["alice"]["username"]
    assert names(q, {"search": alice.upper(), "search_fields": "owner__username"}) == {"zurich", "paulo", "raster"}
    assert names(q, {"search": "river", "search_fields": ["title", "abstract"], "filter{resource_type}": "map"}) == {"fiji"}
    assert names(q, {"search": "river", "search_fields": ["title", "abstract"], "extent": "8,47,9,48"}) == {"zurich"}
    assert names(q, {"search": "river", "search_fields": ["title", "abstract"]}, "/api/v2/maps/") == {"fiji"}


@pytest.mark.parametrize("extents, expected", [
    (["170,-20,190,-10"], {"fiji", "wild"}),                   # east beyond 180: across the antimeridian
    (["-190,-20,-170,-10"], {"fiji", "wild"}),                 # west beyond -180
    (["178,-18,179,-17"], {"fiji", "wild"}),                   # only the part east of the antimeridian
    (["-179.9,-18,-179.6,-17"], {"fiji", "wild"}),             # only the part west of it
    (["-179.4,-18,-170,-17"], {"wild"}),                       # just beyond the box's east edge
    (["-200,-90,200,90"], {"zurich", "fiji", "paulo", "wild", "raster"}),
    (["8.6,47.4,8.7,47.5"], {"zurich", "wild"}),               # touching a corner counts
    (["8.61,47.41,8.7,47.5"], {"wild"}),
    (["8,47,9,48", "-48,-25,-46,-23"], {"zurich", "paulo", "wild"}),  # the parameter repeated
    (["-48,-25,-46,-23,170,-20,-170,-10"], {"paulo", "fiji", "wild"}),         # several boxes in one
])
def test_extent(q, extents, expected):
    assert names(q, [("extent", e) for e in extents]) == expected


def test_extent_on_typed_lists(q):
    assert names(q, {"extent": "170,-20,-170,-10"}, "/api/v2/maps/") == {"fiji"}
    assert names(q, {"extent": "8,47,10,48"}, "/api/v2/datasets/") == {"zurich", "raster"}
    assert names(q, {"extent": "8,47,9,48"}, "/api/v2/documents/") == {"wild"}


def test_every_row_of_every_list_has_the_client_keys(q):
    """Rows of every kind and state, in every list and detail, carry the keys QGIS and geonodectl read."""
    srv = q["srv"]
    with login(srv, q["bob"]) as c:
        for kind in ("document", "map", "geostory", "dashboard"):
            r = c.post("/api/v2/resources/", json={"resource_type": kind, "title": f"Bare {kind}"})
            assert r.status_code == 201, r.text
            check_row(r.json()["resource"], srv.url)
        # a null date is dropped, not stored: QGIS parses the date of every "publication" row
        r = c.patch(f"/api/v2/resources/{r.json()['resource']['pk']}", json={"date": None, "temporal_extent_start": None})
        assert r.status_code == 200, r.text
        check_row(r.json()["resource"], srv.url)
        c.post(f"/api/v2/resources/{q['ids']['fiji']}/favorite")
    insert_resource(srv, q["alice"]["pk"], "A remote service", PUBLIC, resource_type="service", date_type="revision")
    insert_resource(srv, q["alice"]["pk"], "Hidden one", [], resource_type="dataset", subtype="vector",
                    alternate="catalogue:hidden", ll_x0=0, ll_y0=0, ll_x1=1, ll_y1=1, bbox_x0=0, bbox_y0=0, bbox_x1=1,
                    bbox_y1=1, date="2020-01-01T00:00:00.000000Z")
    lists = {"resources": "resources", "datasets": "datasets", "documents": "documents", "maps": "maps",
             "geoapps": "geoapps", "resources/featured": "resources", "resources/favorites": "favorites"}
    callers = [srv.client(), login(srv, q["bob"]), login(srv, q["alice"]), srv.client(auth=("admin", ADMIN_PASSWORD))]
    try:
        for c in callers:
            for path, key in lists.items():
                r = c.get(f"/api/v2/{path}/", params={"page_size": 100})
                if path == "resources/favorites" and c.auth is None:
                    assert r.status_code == 401
                    continue
                assert r.status_code == 200, (path, r.text)
                rows = r.json()[key]
                assert rows or path in ("resources/favorites", "resources/featured"), path
                for row in rows:
                    check_row(row, srv.url)
                    singular = {"resources": "resource", "datasets": "dataset", "documents": "document",
                                "maps": "map", "geoapps": "geoapp"}.get(path)
                    if singular:
                        detail = c.get(f"/api/v2/{path}/{row['pk']}").json()[singular]
                        check_row(detail, srv.url)
            rows = c.get("/api/v2/resources/", params={"page_size": 100}).json()["resources"]
            assert "service" in {r["resource_type"] for r in rows}
            assert {"geostory", "dashboard", "map", "document", "dataset"} <= {r["resource_type"] for r in rows}
    finally:
        for c in callers:
            c.close()


def test_dirty_resources_never_show_and_metadata_only_ones_are_not_counted(q):
    """Facts §3.1 and §14: a dirty resource is hidden from every list and detail, even its owner's
    and the admin's; a metadata-only one is listed but left out of the lookup counts."""
    srv, alice = q["srv"], q["alice"]
    dirty = insert_resource(srv, alice["pk"], "Half written zzdirtymark", PUBLIC, keywords=["kwdirty"], regions=["NZL"],
                            dirty=1)
    meta = insert_resource(srv, alice["pk"], "Metadata only zzmetamark", PUBLIC, keywords=["kwmeta"], regions=["NZL"],
                           metadata_only=1)
    for c in (srv.client(), login(srv, alice), srv.client(auth=("admin", ADMIN_PASSWORD))):
        with c:
            assert_envelope(c.get(f"/api/v2/resources/{dirty}"), 404, "not_found")
            assert_envelope(c.get(f"/api/v2/resources/{dirty}/linked_resources"), 404, "not_found")
            for url in ("/api/v2/resources/?page_size=100&advertised=all", "/api/v2/documents/?page_size=100",
                        "/api/v2/resources/?search=zzdirtymark&search_fields=title", "/api/v2/keywords/?page_size=100",
                        f"/api/v2/users/{alice['pk']}/resources?page_size=100"):
                r = c.get(url)
                assert r.status_code in (200, 401) and "zzdirtymark" not in r.text and "kwdirty" not in r.text, url
            assert c.get(f"/api/v2/resources/{meta}").status_code == 200
            assert c.get("/api/v2/resources/", params={"filter{metadata_only}": "true"}).json()["total"] == 1
            nzl = c.get("/api/v2/regions/", params={"filter{code}": "NZL"}).json()["regions"][0]
            assert nzl["count"] == 0
            assert "kwmeta" not in {k["name"] for k in c.get("/api/v2/keywords/", params={"page_size": 100}).json()["keywords"]}
            counts = {t["name"]: t["count"] for t in c.get("/api/v2/resources/resource_types").json()["resource_types"]}
            services = c.get("/api/v2/resources/", params={"filter{resource_type}": "service"}).json()["total"]
            assert sum(counts.values()) == c.get("/api/v2/resources/").json()["total"] - services  # no "service" type
