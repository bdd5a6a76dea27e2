"""What geonodectl, the QGIS GeoNode plugin and OWSLib read and send, as
../shared/reference/client-expectations.md states it: each test sends the requests a client sends
and reads what it reads."""

import json
from pathlib import Path

import pytest

from tests.api.test_uploads import finished, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_user, poll

DATA = Path(__file__).parent.parent / "data"
FAMILIES = ["assets", "categories", "datasets", "documents", "executionrequest", "geoapps", "groups", "keywords", "maps",
            "metadata", "owners", "regions", "resources", "tkeywords", "upload-parallelism-limits", "upload-size-limits",
            "users"]


@pytest.fixture(scope="module")
def cf(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("clients") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    alice, bob = make_user(admin), make_user(admin)
    c = {"admin": admin, "anon": srv.client(), "alice": login(srv, alice), "bob": login(srv, bob)}
    datasets = []
    for folder, title in ((DATA / "naturalearth_lowres", "Countries"), (DATA / "naturalearth_cities", "Cities")):
        r = c["alice"].post("/api/v2/uploads/upload", files=shapefile_parts(folder), data={"dataset_title": title})
        status = finished(c["alice"], r)
        assert status["status"] == "finished", status
        datasets.append(status["output_params"]["resources"][0]["id"])
    yield {"srv": srv, "c": c, "alice": alice, "bob": bob, "datasets": datasets}
    for client in c.values():
        client.close()
    srv.stop()


def document(client, title: str = "Notes", content: bytes = b"field notes\n") -> dict:
    r = client.post("/api/v2/documents", files={"doc_file": ("notes.txt", content, "text/plain")}, data={"title": title})
    assert r.status_code == 201, r.text
    return r.json()["document"]


@pytest.mark.parametrize("family", ["resources", "documents", "datasets", "maps", "geoapps"])
def test_the_asynchronous_delete_answers_the_receipt_geonodectl_reads(cf, family):
    alice = cf["c"]["alice"]
    if family == "datasets":
        pk = cf["datasets"].pop()
    elif family in ("maps", "geoapps"):
        r = alice.post(f"/api/v2/{family}", json={"title": "To go", **({"resource_type": "geostory", "name": "to-go"} if family == "geoapps" else {})})
        assert r.status_code in (200, 201), r.text
        pk = r.json()["map" if family == "maps" else "geoapp"]["pk"]
    else:
        pk = document(alice)["pk"]
    assert_envelope(cf["c"]["anon"].delete(f"/api/v2/{family}/{pk}/delete"), 401, "not_authenticated")
    assert_envelope(cf["c"]["bob"].delete(f"/api/v2/{family}/{pk}/delete"), 403, "permission_denied")
    r = alice.delete(f"/api/v2/{family}/{pk}/delete")
    assert r.status_code == 200, r.text
    receipt = r.json()
    assert set(receipt) == {"status", "execution_id", "status_url"} and receipt["status"] == "ready"
    assert poll(alice, receipt["status_url"])["status"] == "finished"
    assert alice.get(f"/api/v2/resources/{pk}").status_code == 404
    # the synchronous delete keeps its empty 204
    pk = document(alice)["pk"]
    r = alice.delete(f"/api/v2/resources/{pk}")
    assert r.status_code == 204 and not r.content


def test_transfer_with_an_empty_list_moves_every_resource(cf):
    admin = cf["c"]["admin"]
    giver, heir = make_user(admin), make_user(admin)
    with login(cf["srv"], giver) as c:
        pks = [int(document(c, f"Doc {i}")["pk"]) for i in range(3)]

    def owned(user) -> set:
        rows = admin.get("/api/v2/resources", params={"filter{owner.username}": user["username"], "page_size": 50})
        return {int(r["pk"]) for r in rows.json()["resources"]}

    # a non-empty list moves just those
    r = admin.post(f"/api/v2/users/{giver['pk']}/transfer_resources",
                   json={"currentOwner": giver["pk"], "newOwner": heir["pk"], "resources": [pks[0]]})
    assert r.status_code == 200, r.text
    assert owned(giver) == set(pks[1:]) and owned(heir) == {pks[0]}
    # geonodectl always sends []: everything goes
    r = admin.post(f"/api/v2/users/{giver['pk']}/transfer_resources",
                   json={"currentOwner": giver["pk"], "newOwner": heir["pk"], "resources": []})
    assert r.status_code == 200, r.text
    assert owned(giver) == set() and owned(heir) == set(pks)
    # and no list at all means the same
    r = admin.post(f"/api/v2/users/{heir['pk']}/transfer_resources", json={"currentOwner": heir["pk"], "newOwner": giver["pk"]})
    assert r.status_code == 200, r.text
    assert owned(heir) == set() and owned(giver) == set(pks)


def test_sort_takes_every_field_a_typed_endpoint_lists(cf):
    admin = cf["c"]["admin"]
    names = [d["name"] for d in admin.get("/api/v2/datasets", params={"page_size": 50}).json()["datasets"]]
    for field, key in (("name", "name"), ("alternate", "alternate"), ("subtype", "subtype"), ("workspace", "workspace"),
                       ("title", "title")):
        for sign, reverse in (("", False), ("-", True)):
            r = admin.get("/api/v2/datasets", params={"sort[]": f"{sign}{field}", "page_size": 50})
            assert r.status_code == 200, (field, r.text)
            got = [d[key] for d in r.json()["datasets"]]
            assert got == sorted(got, reverse=reverse), (field, got)
    assert sorted(names) == [d["name"] for d in admin.get("/api/v2/datasets", params={"sort[]": "name"}).json()["datasets"]]
    for i in range(3):
        document(admin, f"Sorted {i}", content=b"x" * (i + 1))
    r = admin.get("/api/v2/documents", params={"sort[]": ["extension", "-name"], "page_size": 50})
    assert r.status_code == 200, r.text
    got = [d["name"] for d in r.json()["documents"] if d["name"].startswith("Sorted")]
    assert got == ["Sorted 2", "Sorted 1", "Sorted 0"]
    for path, field in (("/api/v2/datasets", "nonsense"), ("/api/v2/resources", "name"), ("/api/v2/maps", "extension"),
                        ("/api/v2/documents", "ptype")):
        r = admin.get(path, params={"sort[]": field})
        assert_envelope(r, 400, "invalid")


@pytest.mark.parametrize("family, singular", [("datasets", "dataset"), ("documents", "document"), ("maps", "map"),
                                              ("geoapps", "geoapp"), ("resources", "resource")])
def test_a_rows_link_is_the_detail_url_of_the_endpoint_that_listed_it(cf, family, singular):
    alice = cf["c"]["alice"]
    document(alice, "Linked doc")
    alice.post("/api/v2/maps", json={"title": "Linked map"})
    alice.post("/api/v2/geoapps", json={"title": "Linked app", "resource_type": "geostory", "name": f"linked-{family}"})
    rows = alice.get(f"/api/v2/{family}", params={"page_size": 5}).json()[family]
    assert rows
    for row in rows:
        assert row["link"] == f"{cf['srv'].url}/api/v2/{family}/{row['pk']}"
        detail = alice.get(row["link"])
        assert detail.status_code == 200 and detail.json()[singular]["link"] == row["link"]
    # QGIS saves metadata by PATCHing the link it read, and needs a 200
    mine = next(r for r in rows if r["owner"]["username"] == cf["alice"]["username"])
    r = alice.patch(mine["link"], json={"title": "Saved from QGIS", "abstract": "Edited"})
    assert r.status_code == 200, r.text
    assert alice.get(mine["link"]).json()[singular]["title"] == "Saved from QGIS"


def test_the_api_root_lists_every_family_and_each_answers(cf):
    for who in ("anon", "admin"):
        client = cf["c"][who]
        r = client.get("/api/v2/")
        assert r.status_code == 200
        root = r.json()
        # GeoNode's families, and the way to the OGC APIs (Records, Features, Tiles)
        assert root.pop("ogcapi") == f"{cf['srv'].url}/ogcapi/"
        assert sorted(root) == FAMILIES
        for name, url in root.items():
            assert url == f"{cf['srv'].url}/api/v2/{name}"
            answer = client.get(url)
            assert answer.headers["content-type"].startswith("application/json"), (name, answer.text[:200])
            if who == "anon" and name in ("executionrequest", "users"):
                assert_envelope(answer, 401, "not_authenticated")
            else:
                assert answer.status_code == 200, (who, name, answer.text[:200])


def test_qgis_saves_metadata_through_the_metadata_api(cf):
    alice, bob, anon = cf["c"]["alice"], cf["c"]["bob"], cf["c"]["anon"]
    pk = cf["datasets"][0]
    root = anon.get("/api/v2/metadata").json()
    assert root["schema"].endswith("/api/v2/metadata/schema/") and root["instance"].endswith("/api/v2/metadata/instance/<pk>/")
    schema = anon.get(root["schema"]).json()
    assert schema["type"] == "object" and {"title", "abstract", "date", "category", "hkeywords"} <= set(schema["properties"])
    r = anon.get(f"/api/v2/metadata/instance/{pk}")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/schema-instance+json")
    instance = r.json()
    assert instance["title"] == alice.get(f"/api/v2/datasets/{pk}").json()["dataset"]["title"]
    r = alice.patch(f"/api/v2/metadata/instance/{pk}", json={"title": "Countries of the world", "abstract": "Natural Earth"})
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "The resource was updated successfully", "extraErrors": {}}
    dataset = anon.get(f"/api/v2/datasets/{pk}").json()["dataset"]
    assert (dataset["title"], dataset["abstract"]) == ("Countries of the world", "Natural Earth")
    r = alice.put(f"/api/v2/metadata/instance/{pk}", json={**instance, "title": "Countries", "hkeywords": ["borders"],
                                                          "category": {"id": "boundaries"}})
    assert r.status_code == 200, r.text
    dataset = anon.get(f"/api/v2/datasets/{pk}").json()["dataset"]
    assert dataset["title"] == "Countries" and dataset["category"]["identifier"] == "boundaries"
    assert [k["name"] for k in dataset["keywords"]] == ["borders"]
    r = alice.patch(f"/api/v2/metadata/instance/{pk}", json={"date": "not a date"})
    assert r.status_code == 422 and "date" in json.dumps(r.json()["extraErrors"])
    assert_envelope(anon.patch(f"/api/v2/metadata/instance/{pk}", json={"title": "x"}), 401, "not_authenticated")
    assert_envelope(bob.patch(f"/api/v2/metadata/instance/{pk}", json={"title": "x"}), 403, "permission_denied")
    r = alice.get("/api/v2/metadata/instance/999999")
    assert r.status_code == 404 and r.json()["message"] == "The dataset was not found"
    assert anon.get(f"/api/v2/datasets/{pk}").json()["dataset"]["title"] == "Countries"


def test_assets_are_the_files_of_what_the_caller_may_see(cf):
    alice, bob, anon = cf["c"]["alice"], cf["c"]["bob"], cf["c"]["anon"]
    doc = document(alice, "Private notes", b"secret field notes\n")
    r = alice.put(f"/api/v2/resources/{doc['pk']}/permissions", json={"groups": [{"id": 1, "permissions": "none"},
                                                                               {"id": 2, "permissions": "none"}]})
    assert poll(alice, r.json()["status_url"])["status"] == "finished"
    listing = alice.get("/api/v2/assets", params={"page_size": 100}).json()
    assert set(listing) == {"links", "total", "page", "page_size", "users", "assets"}
    mine = [a for a in listing["assets"] if a["title"] == "notes.txt" and a["owner"] == cf["alice"]["pk"]]
    assert mine and all(isinstance(a["pk"], int) for a in listing["assets"])
    asset = max(mine, key=lambda a: a["pk"])
    assert {"pk", "title", "description", "type", "owner", "created", "asset_type", "subinfo", "deletable"} <= set(asset)
    assert any(u["username"] == cf["alice"]["username"] for u in listing["users"])
    assert alice.get(f"/api/v2/assets/{asset['pk']}").json()["asset"]["pk"] == asset["pk"]
    r = alice.get(f"/api/v2/assets/{asset['pk']}/download")
    assert r.status_code == 200 and r.content == b"secret field notes\n" and "attachment" in r.headers["content-disposition"]
    assert alice.get(f"/api/v2/assets/{asset['pk']}/link").headers["content-disposition"].startswith("inline")
    # others do not see it, nor its file
    for client in (bob, anon):
        assert asset["pk"] not in {a["pk"] for a in client.get("/api/v2/assets", params={"page_size": 100}).json()["assets"]}
        assert client.get(f"/api/v2/assets/{asset['pk']}").status_code == 404
        assert client.get(f"/api/v2/assets/{asset['pk']}/download").status_code == 404
    # a dataset's originals are assets too; downloading one needs download permission
    pk = cf["datasets"][0]
    r = alice.put(f"/api/v2/resources/{pk}/permissions", json={"groups": [{"id": 1, "permissions": "view"}]})
    assert poll(alice, r.json()["status_url"])["status"] == "finished"
    shp = next(a for a in anon.get("/api/v2/assets", params={"page_size": 100}).json()["assets"]
               if a["title"] == "naturalearth_lowres.shp")
    assert_envelope(anon.get(f"/api/v2/assets/{shp['pk']}/download"), 401, "not_authenticated")
    assert alice.get(f"/api/v2/assets/{shp['pk']}/download").content == (DATA / "naturalearth_lowres" /
                                                                          "naturalearth_lowres.shp").read_bytes()


def test_keys_clients_read_are_there(cf):
    alice = cf["c"]["alice"]
    doc = document(alice, "With keys")
    row = alice.get(f"/api/v2/documents/{doc['pk']}").json()["document"]
    assert row["links"] and all(isinstance(link["extras"], dict) for link in row["links"])
    assert row["download_urls"] and all(isinstance(d["default"], bool) for d in row["download_urls"])
    assert row["download_urls"][0]["default"] is True
    dataset = alice.get(f"/api/v2/datasets/{cf['datasets'][0]}").json()["dataset"]
    assert all(isinstance(link["extras"], dict) for link in dataset["links"])
    types = {t["name"]: t for t in alice.get("/api/v2/resources/resource_types").json()["resource_types"]}
    for name, t in types.items():
        allowed = t["allowed_perms"]
        assert set(allowed) == {"perms", "compact"}
        assert set(allowed["perms"]) == set(allowed["compact"]) == {"anonymous", "default", "registered-members"}
        # the groups that stand for everyone are offered reading only
        for group in ("anonymous", "registered-members"):
            assert set(allowed["perms"][group]) <= {"view_resourcebase", "download_resourcebase"}
            assert {c["name"] for c in allowed["compact"][group]} <= {"none", "view", "download"}
        assert "change_resourcebase_permissions" in allowed["perms"]["default"]
    assert "change_dataset_style" in types["dataset"]["allowed_perms"]["perms"]["default"]
    assert "download_resourcebase" not in types["map"]["allowed_perms"]["perms"]["anonymous"]


def test_only_one_schema_is_served(cf):
    anon = cf["c"]["anon"]
    for path in ("/api/v2/_litestar_schema", "/api/v2/_litestar_schema/openapi.json", "/api/v2/_litestar_schema/swagger"):
        assert anon.get(path).status_code == 404
    assert anon.get("/api/v2/schema/", params={"format": "json"}).json()["openapi"].startswith("3.0")
