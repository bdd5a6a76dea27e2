"""Maps with layers: the template geonodectl reads, maps created and changed with their layers
(all or nothing), the layer routes, one field of a typed resource, and who sees which layer's
dataset. Everything through HTTP on a real server holding uploaded datasets."""

from pathlib import Path

import httpx
import pytest

from tests.api.test_uploads import finished, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_user, poll, unique

DATA = Path(__file__).parent.parent / "data"
COUNTRIES, CITIES = DATA / "naturalearth_lowres", DATA / "naturalearth_cities"
PRIVATE = '{"users": {"AnonymousUser": []}}'


def upload(client: httpx.Client, folder: Path, title: str, **data) -> dict:
    status = finished(client, client.post("/api/v2/uploads/upload", files=shapefile_parts(folder),
                                          data={"dataset_title": title, **data}))
    assert status["status"] == "finished", status
    pk = status["output_params"]["resources"][0]["id"]
    return client.get(f"/api/v2/datasets/{pk}").json()["dataset"]


def share(client: httpx.Client, pk, body: dict) -> None:
    r = client.put(f"/api/v2/resources/{pk}/permissions", json=body)
    assert r.status_code == 200, r.text
    assert poll(client, r.json()["status_url"])["status"] == "finished"


@pytest.fixture(scope="module")
def mp(tmp_path_factory):
    """Alice owns two public datasets and a private one that Carol may view; Bob is anyone."""
    srv = in_process(tmp_path_factory.mktemp("maps") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    alice, bob, carol = make_user(admin), make_user(admin), make_user(admin)
    c = {"admin": admin, "anon": srv.client(), "alice": login(srv, alice), "bob": login(srv, bob),
         "carol": login(srv, carol)}
    countries = upload(c["alice"], COUNTRIES, "Countries")
    cities = upload(c["alice"], CITIES, "Cities")
    private = upload(c["alice"], CITIES, "Private cities", permissions=PRIVATE)
    share(c["alice"], private["pk"], {"users": [{"id": carol["pk"], "permissions": "view"}]})
    yield {"srv": srv, "c": c, "users": {"alice": alice, "bob": bob, "carol": carol}, "countries": countries,
           "cities": cities, "private": private}
    for client in c.values():
        client.close()
    srv.stop()


def layer(of: dict, order: int, **fields) -> dict:
    """A layer as geonodectl sends it: MapStore's layer id, the dataset's alternate as its name."""
    return {"extra_params": {"msId": f"{of['alternate']}__{order}"}, "current_style": None,
            "name": of["alternate"], "order": order, "visibility": True, "opacity": 1, **fields}


def make_map(client: httpx.Client, *layers: dict, title: str | None = None, **fields) -> dict:
    r = client.post("/api/v2/maps/", json={"title": title or unique("Map "), "maplayers": list(layers), **fields})
    assert r.status_code == 201, r.text
    return r.json()["map"]


def titled(client: httpx.Client, title: str) -> int:
    return client.get("/api/v2/maps/", params={"filter{title}": title}).json()["total"]


# -- the template ------------------------------------------------------------------------------
def test_the_map_template_has_the_apps_own_basemap(mp):
    srv, anon = mp["srv"], mp["c"]["anon"]
    r = anon.get("/static/mapstore/configs/map.json")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    template = r.json()
    assert template["version"] == 2
    m = template["map"]
    assert (m["projection"], m["units"], m["zoom"]) == ("EPSG:900913", "m", 2)
    assert m["center"] == {"x": 0, "y": 0, "crs": "EPSG:4326"} and len(m["maxExtent"]) == 4
    [basemap] = m["layers"]
    assert basemap == {"type": "wms", "url": f"{srv.url}/geoserver/ows", "name": "catalogue:basemap",
                       "title": "Basemap (Natural Earth countries)", "group": "background", "visibility": True,
                       "format": "image/png"}
    # the layer is drawn by this server, with no internet
    r = anon.get(basemap["url"], params={"service": "WMS", "version": "1.3.0", "request": "GetMap",
                                         "layers": basemap["name"], "styles": "", "crs": "EPSG:4326",
                                         "bbox": "-90,-180,90,180", "width": 64, "height": 32, "format": "image/png"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png" and r.content[:4] == b"\x89PNG"


# -- geonodectl's flow ---------------------------------------------------------------------------
def test_geonodectls_map_flow(mp):
    alice, anon = mp["c"]["alice"], mp["c"]["anon"]
    countries, cities, private = mp["countries"], mp["cities"], mp["private"]
    blob = anon.get("/static/mapstore/configs/map.json").json()
    body = {"ressource_type": "map", "title": "Two layers", "blob": blob,
            "maplayers": [layer(countries, 0), layer(cities, 1, opacity=0.5)]}
    r = alice.post("/api/v2/maps/", json=body)
    assert r.status_code == 201, r.text
    made = r.json()["map"]
    pk = made["pk"]
    assert made["resource_type"] == "map" and made["title"] == "Two layers"
    assert (made["featuredurl"], made["urlsuffix"]) == ("", "")
    first, second = made["maplayers"]
    assert set(first) == {"pk", "extra_params", "current_style", "name", "order", "visibility", "opacity", "dataset"}
    assert isinstance(first["pk"], int) and first["extra_params"] == {"msId": f"{countries['alternate']}__0"}
    assert (first["name"], first["order"], first["visibility"], first["opacity"]) == (countries["alternate"], 0, True, 1.0)
    assert (second["name"], second["order"], second["opacity"]) == (cities["alternate"], 1, 0.5)
    embedded = first["dataset"]
    assert set(embedded) == {"pk", "alternate", "title", "featureinfo_custom_template", "perms", "links", "has_time",
                             "default_style", "styles", "ptype"}
    assert embedded["pk"] == int(countries["pk"]) and embedded["alternate"] == countries["alternate"]
    assert embedded["title"] == "Countries" and embedded["ptype"] == "gxp_wmscsource" and embedded["has_time"] is False
    assert "view_resourcebase" in embedded["perms"] and embedded["default_style"]["name"]
    assert any(link["link_type"] == "OGC:WMS" for link in embedded["links"])
    assert second["dataset"]["pk"] == int(cities["pk"])
    # the map's extent covers its layers'
    assert made["extent"]["coords"] == pytest.approx(countries["extent"]["coords"], abs=1e-6)

    # read back, as geonodectl does
    r = alice.get(f"/api/v2/maps/{pk}/", params={"include[]": "data"})
    assert r.status_code == 200
    again = r.json()["map"]
    assert again["data"] == blob and again["maplayers"] == made["maplayers"]
    assert alice.get(f"/api/v2/maps/{pk}/maplayers").json() == made["maplayers"]
    assert [d["pk"] for d in alice.get(f"/api/v2/maps/{pk}/datasets").json()] == [int(countries["pk"]), int(cities["pk"])]
    assert alice.get(f"/api/v2/maps/{pk}/data").json() == {"data": blob}
    links = alice.get(f"/api/v2/resources/{pk}/linked_resources").json()["linked_to"]
    assert {(item["pk"], item["internal"]) for item in links} == {(int(countries["pk"]), True), (int(cities["pk"]), True)}
    assert [m["pk"] for m in anon.get(f"/api/v2/datasets/{cities['pk']}/maps").json()] == [int(pk)]
    assert [m["pk"] for m in anon.get(f"/api/v2/datasets/{cities['pk']}/maplayers").json()] == [second["pk"]]

    # patch: the first layer changed, the second removed, one added; the configuration replaced
    blob["map"]["zoom"] = 4
    r = alice.patch(f"/api/v2/maps/{pk}/", json={"data": blob, "maplayers": [
        {**first, "opacity": 0.25, "visibility": False, "current_style": "alt"},
        layer(private, 2)]})
    assert r.status_code == 200, r.text
    changed = r.json()["map"]["maplayers"]
    assert changed[0]["pk"] == first["pk"] and len(changed) == 2
    assert (changed[0]["opacity"], changed[0]["visibility"], changed[0]["current_style"]) == (0.25, False, "alt")
    assert changed[0]["dataset"]["pk"] == int(countries["pk"])
    added = changed[1]
    assert added["pk"] > second["pk"] and added["dataset"]["pk"] == int(private["pk"]) and added["order"] == 2
    assert alice.get(f"/api/v2/maps/{pk}", params={"include[]": "data"}).json()["map"]["data"]["map"]["zoom"] == 4
    assert anon.get(f"/api/v2/datasets/{cities['pk']}/maps").json() == []
    assert anon.get(f"/api/v2/datasets/{cities['pk']}/maplayers").json() == []
    links = alice.get(f"/api/v2/resources/{pk}/linked_resources").json()["linked_to"]
    assert {item["pk"] for item in links} == {int(countries["pk"]), int(private["pk"])}

    # delete, as geonodectl does
    r = alice.delete(f"/api/v2/resources/{pk}/delete")
    assert r.status_code == 200, r.text
    assert poll(alice, r.json()["status_url"])["status"] == "finished"
    assert_envelope(alice.get(f"/api/v2/maps/{pk}"), 404, "not_found")
    assert_envelope(alice.get(f"/api/v2/maps/{pk}/maplayers"), 404, "not_found")
    assert alice.get(f"/api/v2/datasets/{countries['pk']}/maplayers").json() == []


def test_geonodectls_earlier_body_names_datasets_by_pk(mp):
    """geonodectl sent ``"maplayers": [{"pk": <dataset pk>}]`` before it sent layer names."""
    alice, countries = mp["c"]["alice"], mp["countries"]
    made = make_map(alice, {"pk": int(countries["pk"])}, {"pk": str(mp["cities"]["pk"])})
    assert [(m["name"], m["order"], m["dataset"]["pk"]) for m in made["maplayers"]] == [
        (countries["alternate"], 0, int(countries["pk"])), (mp["cities"]["alternate"], 1, int(mp["cities"]["pk"]))]


def test_a_layer_from_elsewhere_has_no_dataset(mp):
    alice = mp["c"]["alice"]
    remote = {"name": "topp:states", "extra_params": {"url": "https://example.org/geoserver/wms", "type": "wms"},
              "order": 0}
    basemap = {"id": "background__basemap", "name": "catalogue:basemap", "order": 1, "visibility": True}
    made = make_map(alice, remote, basemap, layer(mp["countries"], 2, dataset={"pk": mp["countries"]["pk"]}))
    assert [m["dataset"] for m in made["maplayers"][:2]] == [None, None]
    assert made["maplayers"][0]["extra_params"] == remote["extra_params"]
    assert made["maplayers"][2]["dataset"]["pk"] == int(mp["countries"]["pk"])


# -- refused writes ------------------------------------------------------------------------------
def test_maplayers_must_be_a_list(mp):
    alice = mp["c"]["alice"]
    title = unique("Not a list ")
    for value in ({"name": "x"}, "catalogue:x", 3):
        assert_envelope(alice.post("/api/v2/maps/", json={"title": title, "maplayers": value}), 400, "parse_error",
                        "'maplayers' value must be a list")
    assert titled(alice, title) == 0
    made = make_map(alice, layer(mp["countries"], 0))
    assert_envelope(alice.patch(f"/api/v2/maps/{made['pk']}", json={"title": "Changed", "maplayers": {"pk": 1}}),
                    400, "parse_error", "'maplayers' value must be a list")
    assert_envelope(alice.put(f"/api/v2/maps/{made['pk']}", json={"maplayers": "x"}), 400, "parse_error")
    kept = alice.get(f"/api/v2/maps/{made['pk']}").json()["map"]
    assert kept["title"] == made["title"] and kept["maplayers"] == made["maplayers"]


def test_a_bad_layer_writes_nothing(mp):
    bob, alice = mp["c"]["bob"], mp["c"]["alice"]
    countries, private = mp["countries"], mp["private"]
    title = unique("Refused ")
    bad = [
        [layer(countries, 0), layer(private, 1)],                   # a dataset bob may not view, by name
        [layer(countries, 0), {"dataset": int(private["pk"])}],     # ... by pk
        [layer(countries, 0), {"dataset": {"pk": private["pk"]}}],  # ... as an object
        [{"dataset": 99999999}],                                    # no such dataset
        [{"name": "catalogue:no_such_layer"}],                      # no such layer in this catalogue
        [{"extra_params": {"msId": "x"}}],                          # neither name nor dataset
        [layer(countries, 0, opacity=2)],
        [layer(countries, 0, visibility="maybe")],
        [layer(countries, -1)],
        ["catalogue:x"],
    ]
    for layers in bad:
        assert_envelope(bob.post("/api/v2/maps/", json={"title": title, "maplayers": layers}), 400, "invalid")
    assert_envelope(bob.post("/api/v2/maps/", json=[{"title": title, "maplayers": [layer(countries, 0)]},
                                                    {"title": title, "maplayers": [layer(private, 0)]}]), 400, "invalid")
    assert titled(alice, title) == 0 and titled(mp["c"]["admin"], title) == 0

    made = make_map(bob, layer(countries, 0), layer(mp["cities"], 1))
    first, second = made["maplayers"]
    other = make_map(alice, layer(countries, 0))["maplayers"][0]
    for layers in ([{**first, "opacity": 0.1}, layer(private, 2)],
                   [{"pk": first["pk"], "dataset": int(private["pk"])}],
                   [{"pk": first["pk"], "name": private["alternate"]}],
                   [{"pk": other["pk"], "opacity": 0.1}],           # a layer of another map
                   [{"pk": first["pk"], "opacity": "opaque"}]):
        assert_envelope(bob.patch(f"/api/v2/maps/{made['pk']}", json={"title": "Changed", "maplayers": layers}),
                        400, "invalid")
    kept = bob.get(f"/api/v2/maps/{made['pk']}").json()["map"]
    assert kept["title"] == made["title"] and kept["maplayers"] == made["maplayers"]
    assert alice.get(f"/api/v2/maps/{made['pk']}/maplayers").json()[1]["pk"] == second["pk"]


# -- a deleted dataset ---------------------------------------------------------------------------
def test_deleting_a_dataset_leaves_the_map_readable(mp):
    alice, anon = mp["c"]["alice"], mp["c"]["anon"]
    doomed = upload(alice, COUNTRIES, "Doomed")
    made = make_map(alice, layer(mp["countries"], 0), layer(doomed, 1))
    assert alice.delete(f"/api/v2/resources/{doomed['pk']}").status_code == 204
    for client in (alice, anon):
        r = client.get(f"/api/v2/maps/{made['pk']}")
        assert r.status_code == 200, r.text
        layers = r.json()["map"]["maplayers"]
        assert [(m["pk"], m["name"]) for m in layers] == [(m["pk"], m["name"]) for m in made["maplayers"]]
        assert layers[0]["dataset"]["pk"] == int(mp["countries"]["pk"]) and layers[1]["dataset"] is None
        assert [d["pk"] for d in client.get(f"/api/v2/maps/{made['pk']}/datasets").json()] == [int(mp["countries"]["pk"])]
    links = alice.get(f"/api/v2/resources/{made['pk']}/linked_resources").json()["linked_to"]
    assert [item["pk"] for item in links] == [int(mp["countries"]["pk"])]
    # the map is still written as a whole: its layers sent back as read
    r = alice.patch(f"/api/v2/maps/{made['pk']}", json={"maplayers": layers})
    assert r.status_code == 200, r.text
    assert r.json()["map"]["maplayers"][1]["dataset"] is None


# -- lists ---------------------------------------------------------------------------------------
def test_lists_carry_layers_only_when_asked(mp):
    alice, anon = mp["c"]["alice"], mp["c"]["anon"]
    made = make_map(alice, layer(mp["countries"], 0))
    rows = anon.get("/api/v2/maps/", params={"page_size": 100}).json()["maps"]
    row = next(m for m in rows if m["pk"] == made["pk"])
    assert "maplayers" not in row and (row["featuredurl"], row["urlsuffix"]) == ("", "")
    rows = anon.get("/api/v2/maps/", params={"page_size": 100, "include[]": "maplayers"}).json()["maps"]
    row = next(m for m in rows if m["pk"] == made["pk"])
    assert row["maplayers"] == anon.get(f"/api/v2/maps/{made['pk']}").json()["map"]["maplayers"]
    assert [m["pk"] for m in row["maplayers"]] == [m["pk"] for m in made["maplayers"]]
    picked = anon.get("/api/v2/maps/", params=[("exclude[]", "*"), ("include[]", "pk"), ("include[]", "maplayers")])
    assert all(set(m) == {"pk", "maplayers"} for m in picked.json()["maps"])
    assert "maplayers" not in anon.get(f"/api/v2/maps/{made['pk']}", params={"exclude[]": "maplayers"}).json()["map"]
    assert_envelope(anon.get("/api/v2/resources/", params={"include[]": "maplayers"}), 400, "parse_error")


# -- who sees what -------------------------------------------------------------------------------
def test_a_private_datasets_layer_shows_its_dataset_only_to_who_may_view_it(mp):
    c, countries, private = mp["c"], mp["countries"], mp["private"]
    made = make_map(c["alice"], layer(countries, 0), layer(private, 1))
    pk = made["pk"]
    for who, sees in (("anon", False), ("bob", False), ("carol", True), ("alice", True), ("admin", True)):
        client = c[who]
        layers = client.get(f"/api/v2/maps/{pk}").json()["map"]["maplayers"]
        assert [m["pk"] for m in layers] == [m["pk"] for m in made["maplayers"]], who
        assert layers[0]["dataset"]["pk"] == int(countries["pk"]), who
        assert (layers[1]["dataset"] is not None) is sees, who
        assert layers[1]["name"] == private["alternate"]
        assert client.get(f"/api/v2/maps/{pk}/maplayers").json() == layers, who
        assert client.get(f"/api/v2/maps/{pk}/maplayers/").json() == layers, who
        listed = client.get("/api/v2/maps/", params={"include[]": "maplayers", "filter{pk}": pk}).json()["maps"]
        assert listed[0]["maplayers"] == layers, who
        expected = [int(countries["pk"]), int(private["pk"])] if sees else [int(countries["pk"])]
        assert [d["pk"] for d in client.get(f"/api/v2/maps/{pk}/datasets").json()] == expected, who
        linked = client.get(f"/api/v2/resources/{pk}/linked_resources").json()["linked_to"]
        assert {i["pk"] for i in linked} == set(expected), who
        if sees:
            assert [m["pk"] for m in client.get(f"/api/v2/datasets/{private['pk']}/maplayers").json()] == [
                layers[1]["pk"]], who
            assert int(pk) in [m["pk"] for m in client.get(f"/api/v2/datasets/{private['pk']}/maps").json()], who
        else:
            for what in ("maplayers", "maps"):
                assert_envelope(client.get(f"/api/v2/datasets/{private['pk']}/{what}"), 404, "not_found")
    # Carol may view the dataset: she may put it in a map; Bob may not
    assert make_map(c["carol"], layer(private, 0))["maplayers"][0]["dataset"]["pk"] == int(private["pk"])
    assert_envelope(c["bob"].post("/api/v2/maps/", json={"title": "x", "maplayers": [layer(private, 0)]}), 400, "invalid")
    # Bob keeps Alice's layer when he may change the map, without seeing its dataset
    share(c["alice"], pk, {"users": [{"id": mp["users"]["bob"]["pk"], "permissions": "edit"}]})
    seen = c["bob"].get(f"/api/v2/maps/{pk}").json()["map"]["maplayers"]
    r = c["bob"].patch(f"/api/v2/maps/{pk}", json={"maplayers": [{**seen[0], "opacity": 0.5}, seen[1]]})
    assert r.status_code == 200, r.text
    after = c["alice"].get(f"/api/v2/maps/{pk}").json()["map"]["maplayers"]
    assert after[0]["opacity"] == 0.5 and after[1]["dataset"]["pk"] == int(private["pk"])


def test_a_private_map_and_its_layers_are_hidden_alike(mp):
    c, countries = mp["c"], mp["countries"]
    made = make_map(c["alice"], layer(countries, 0))
    pk = made["pk"]
    share(c["alice"], pk, {"groups": [{"id": 1, "permissions": "none"}, {"id": 2, "permissions": "none"}]})
    paths = [f"/api/v2/maps/{pk}", f"/api/v2/maps/{pk}/maplayers", f"/api/v2/maps/{pk}/datasets",
             f"/api/v2/maps/{pk}/title", f"/api/v2/maps/{pk}/maplayers/", f"/api/v2/resources/{pk}/maplayers"]
    for who in ("anon", "bob", "carol"):
        for path in paths:
            assert_envelope(c[who].get(path), 404, "not_found")
        assert int(pk) not in [m["pk"] for m in c[who].get(f"/api/v2/datasets/{countries['pk']}/maps").json()], who
        assert made["maplayers"][0]["pk"] not in [
            m["pk"] for m in c[who].get(f"/api/v2/datasets/{countries['pk']}/maplayers").json()], who
    for who in ("alice", "admin"):
        assert c[who].get(f"/api/v2/maps/{pk}/maplayers").json() == c[who].get(f"/api/v2/maps/{pk}").json()["map"][
            "maplayers"], who
        assert [m["pk"] for m in c[who].get(f"/api/v2/maps/{pk}/maplayers").json()] == [made["maplayers"][0]["pk"]]
        assert c[who].get(f"/api/v2/maps/{pk}/title").json() == {"title": made["title"]}, who
        assert int(pk) in [m["pk"] for m in c[who].get(f"/api/v2/datasets/{countries['pk']}/maps").json()], who
        shown = c[who].get(f"/api/v2/datasets/{countries['pk']}/maplayers").json()
        mine = next(m for m in shown if m["pk"] == made["maplayers"][0]["pk"])
        assert set(mine) == {"pk", "name", "extra_params", "current_style", "order", "visibility", "opacity"}
        ref = next(m for m in c[who].get(f"/api/v2/datasets/{countries['pk']}/maps").json() if m["pk"] == int(pk))
        assert ref == {"pk": int(pk), "title": made["title"], "detail_url": f"{mp['srv'].url}/catalogue/#/map/{pk}",
                       "link": f"{mp['srv'].url}/api/v2/maps/{pk}"}


def test_who_may_write_a_maps_layers(mp):
    c, countries = mp["c"], mp["countries"]
    made = make_map(c["alice"], layer(countries, 0))
    body = {"maplayers": []}
    assert_envelope(c["anon"].post("/api/v2/maps/", json={"title": "x", **body}), 401, "not_authenticated")
    assert_envelope(c["anon"].patch(f"/api/v2/maps/{made['pk']}", json=body), 401, "not_authenticated")
    assert_envelope(c["bob"].patch(f"/api/v2/maps/{made['pk']}", json=body), 403, "permission_denied")
    assert_envelope(c["carol"].put(f"/api/v2/maps/{made['pk']}", json=body), 403, "permission_denied")
    assert c["alice"].get(f"/api/v2/maps/{made['pk']}/maplayers").json() == made["maplayers"]
    r = c["admin"].patch(f"/api/v2/maps/{made['pk']}", json=body)
    assert r.status_code == 200 and r.json()["map"]["maplayers"] == []


# -- one field of a typed resource ----------------------------------------------------------------
def test_one_field_of_each_typed_resource(mp):
    c, countries, private = mp["c"], mp["countries"], mp["private"]
    anon, alice = c["anon"], c["alice"]
    made = make_map(alice, layer(countries, 0), data={"version": 2})
    r = alice.post("/api/v2/documents", files={"doc_file": ("notes.txt", b"notes\n", "text/plain")},
                   data={"title": "Notes"})
    doc = r.json()["document"]
    r = alice.post("/api/v2/geoapps", json={"title": "Story", "name": unique("story"), "resource_type": "geostory"})
    assert r.status_code == 201, r.text
    app = r.json()["geoapp"]
    assert anon.get(f"/api/v2/maps/{made['pk']}/featuredurl").json() == {"featuredurl": ""}
    assert anon.get(f"/api/v2/maps/{made['pk']}/data").json() == {"data": {"version": 2}}
    assert anon.get(f"/api/v2/maps/{made['pk']}/owner").json()["owner"]["username"] == made["owner"]["username"]
    assert anon.get(f"/api/v2/datasets/{countries['pk']}/alternate").json() == {"alternate": countries["alternate"]}
    assert anon.get(f"/api/v2/datasets/{countries['pk']}/styles").json() == {"styles": countries["styles"]}
    assert anon.get(f"/api/v2/documents/{doc['pk']}/extension").json() == {"extension": "txt"}
    assert anon.get(f"/api/v2/geoapps/{app['pk']}/title").json() == {"title": "Story"}
    assert anon.get(f"/api/v2/maps/{made['pk']}/keywords").json() == {"keywords": []}
    assert "metadata" in alice.get(f"/api/v2/maps/{made['pk']}/metadata").json()
    # the family decides: a map is not a dataset, a dataset field is not a map's
    for path in (f"/api/v2/datasets/{made['pk']}/title", f"/api/v2/maps/{countries['pk']}/title",
                 f"/api/v2/maps/{made['pk']}/alternate_name", f"/api/v2/maps/{made['pk']}/attribute_set",
                 f"/api/v2/documents/{made['pk']}/title", f"/api/v2/geoapps/{doc['pk']}/title",
                 f"/api/v2/datasets/{private['pk']}/title", "/api/v2/maps/abc/title", "/api/v2/maps/99999999/title"):
        assert_envelope(anon.get(path), 404, "not_found")
    for who in ("carol", "alice", "admin"):
        assert c[who].get(f"/api/v2/datasets/{private['pk']}/title").json() == {"title": "Private cities"}, who
    assert_envelope(c["bob"].get(f"/api/v2/datasets/{private['pk']}/title"), 404, "not_found")


# -- ids ------------------------------------------------------------------------------------------
def test_a_deleted_layers_id_is_not_given_again(mp):
    alice, countries, cities = mp["c"]["alice"], mp["countries"], mp["cities"]
    made = make_map(alice, layer(countries, 0), layer(cities, 1))
    first, newest = made["maplayers"]
    r = alice.patch(f"/api/v2/maps/{made['pk']}", json={"maplayers": [first]})
    assert [m["pk"] for m in r.json()["map"]["maplayers"]] == [first["pk"]]
    r = alice.patch(f"/api/v2/maps/{made['pk']}", json={"maplayers": [first, layer(cities, 1)]})
    assert r.json()["map"]["maplayers"][1]["pk"] > newest["pk"]
    # a deleted map's layers go with it, and their ids stay used
    last = r.json()["map"]["maplayers"][1]["pk"]
    assert alice.delete(f"/api/v2/resources/{made['pk']}").status_code == 204
    assert make_map(alice, layer(cities, 0))["maplayers"][0]["pk"] > last
