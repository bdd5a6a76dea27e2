"""Every route that changes a resource's fields records one metadata version, saying who, through
what, and each field before and after; a write that changes nothing records nothing."""

from __future__ import annotations

import json

from tests.api.test_uploads import CITIES, DATA, shapefile_parts
from tests.conftest import make_group, make_user, unique
from tests.history.conftest import finish


def only_new(world, pk: int, before: int) -> dict:
    """The one version made since there were ``before``, with its changes."""
    listing = world.versions(pk)
    assert listing["total"] == before + 1, listing
    number = listing["versions"][0]["number"]
    r = world.client("admin").get(f"/api/v2/resources/{pk}/versions/{number}")
    assert r.status_code == 200, r.text
    return r.json()["version"]


def by(world, who: str) -> dict:
    user = world.users[who]
    return {"pk": user["pk"], "username": user["username"]}


def test_patch_of_a_resource_and_of_each_family(world):
    owner = world.client("owner")
    pk = world.new_map(abstract="first words")
    for path in ("resources", "maps"):
        before = world.count(pk)
        r = owner.patch(f"/api/v2/{path}/{pk}", json={"title": f"Renamed through {path}", "abstract": "second words"})
        assert r.status_code == 200, r.text
        v = only_new(world, pk, before)
        assert v["kind"] == "metadata" and v["via"] == "api" and v["user"] == by(world, "owner")
        assert v["changes"]["fields"]["title"]["after"] == f"Renamed through {path}"
        assert set(v["changes"]["fields"]) == ({"title", "abstract"} if path == "resources" else {"title"})
        assert v["summary"]["fields"] == sorted(v["changes"]["fields"])
        assert v["changes"]["features"] is None
    assert world.latest(pk)["number"] == 2
    # PUT too, and the keywords as names
    r = owner.put(f"/api/v2/resources/{pk}", json={"keywords": ["river", "survey"]})
    assert r.status_code == 200, r.text
    v = only_new(world, pk, 2)
    assert v["changes"]["fields"] == {"keywords": {"before": [], "after": ["river", "survey"]}}

    doc = world.new_document()
    r = owner.patch(f"/api/v2/documents/{doc}", json={"title": "Notes, read again"})
    assert r.status_code == 200, r.text
    assert only_new(world, doc, 0)["changes"]["fields"]["title"]["after"] == "Notes, read again"

    r = owner.post("/api/v2/geoapps", json={"name": "story-hist-1", "title": "A story", "resource_type": "geostory"})
    assert r.status_code == 201, r.text
    app = int(r.json()["geoapp"]["pk"])
    r = owner.patch(f"/api/v2/geoapps/{app}", json={"name": "story-hist-2", "data": {"chapters": [1]}})
    assert r.status_code == 200, r.text
    v = only_new(world, app, 0)
    assert v["changes"]["fields"] == {"name": {"before": "story-hist-1", "after": "story-hist-2"},
                                      "blob": {"before": None, "after": {"chapters": [1]}}}


def test_a_write_that_changes_nothing_records_nothing(world):
    owner = world.client("owner")
    pk = world.new_map(title="Same title")
    for body in ({"title": "Same title"}, {}, {"keywords": []}, {"title": "Same title", "featured": True}):  # featured: not theirs
        r = owner.patch(f"/api/v2/resources/{pk}", json=body)
        assert r.status_code == 200, r.text
    assert world.count(pk) == 0
    # a refused write records nothing either
    r = owner.patch(f"/api/v2/resources/{pk}", json={"title": "New", "category": "no-such-category"})
    assert r.status_code == 400
    r = world.client("other").patch(f"/api/v2/resources/{pk}", json={"title": "Not theirs"})
    assert r.status_code in (403, 404)
    assert world.count(pk) == 0


def test_bulk_patch_records_one_version_per_resource(world):
    owner, tag = world.client("owner"), "bulk-" + world.users["owner"]["username"]
    pks = [world.new_map(title=f"{tag} {i}") for i in range(3)]
    r = owner.patch("/api/v2/resources/", json=[{"pk": pks[0], "abstract": "one"}, {"pk": pks[1], "abstract": "two"}])
    assert r.status_code == 200, r.text
    assert [world.count(p) for p in pks] == [1, 1, 0]
    assert world.latest(pks[1])["summary"] == {"fields": ["abstract"]}
    # a change of every resource a query finds
    r = owner.patch("/api/v2/resources/", params={"patch-all": "true", "filter{title.icontains}": tag},
                    json={"abstract": "all"})
    assert r.status_code == 200 and r.json() == {"meta": {"updated": 3}}, r.text
    assert [world.count(p) for p in pks] == [2, 2, 1]
    v = world.client("admin").get(f"/api/v2/resources/{pks[2]}/versions/1").json()["version"]
    assert v["changes"]["fields"]["abstract"] == {"before": "", "after": "all"}


def test_the_asynchronous_update_says_who_asked(world):
    owner = world.client("owner")
    pk = world.new_map()
    r = owner.put(f"/api/v2/resources/{pk}/update", json={"vals": {"purpose": "to find the wells"}})
    assert r.status_code == 200, r.text
    assert finish(owner, r.json()["execution_id"])["status"] == "finished"
    v = only_new(world, pk, 0)
    assert (v["via"], v["user"]) == ("api", by(world, "owner"))
    assert v["changes"]["fields"] == {"purpose": {"before": None, "after": "to find the wells"}}


def test_iso_metadata_upload_and_attributes_of_a_dataset(world):
    pk = world.new_dataset()
    owner = world.client("owner")
    assert world.count(pk) == 0  # a new upload is not a version
    r = owner.put(f"/api/v2/datasets/{pk}/metadata", files={
        "metadata_file": ("m.xml", (DATA / "metadata" / "iso19139_full.xml").read_bytes())})
    assert r.status_code == 200, r.text
    v = only_new(world, pk, 0)
    assert (v["kind"], v["via"], v["user"]) == ("metadata", "iso", by(world, "owner"))
    assert "title" in v["changes"]["fields"] and "abstract" in v["changes"]["fields"]
    # the same document again changes nothing
    r = owner.put(f"/api/v2/datasets/{pk}/metadata", files={
        "metadata_file": ("m.xml", (DATA / "metadata" / "iso19139_full.xml").read_bytes())})
    assert r.status_code == 200 and world.count(pk) == 1
    # the upload action resource_metadata_upload, through a job
    r = owner.post("/api/v2/uploads/upload", data={"action": "resource_metadata_upload", "resource_pk": str(pk)},
                   files={"base_file": ("m.xml", (DATA / "metadata" / "iso19139_minimal.xml").read_bytes())})
    assert r.status_code == 201, r.text
    assert finish(owner, r.json()["execution_id"])["status"] == "finished"
    v = only_new(world, pk, 1)
    assert (v["via"], v["user"]) == ("iso", by(world, "owner"))
    # attributes: their labels are fields of the dataset
    r = owner.patch(f"/api/v2/datasets/{pk}", json={"attribute_set": [{"attribute": "name", "attribute_label": "City"}]})
    assert r.status_code == 200, r.text
    v = only_new(world, pk, 2)
    change = v["changes"]["fields"]["attribute_set"]
    assert change["before"]["name"]["attribute_label"] != "City" and change["after"]["name"]["attribute_label"] == "City"
    r = owner.patch(f"/api/v2/datasets/{pk}/attribute_set", json=[{"attribute": "name", "description": "Its name"}])
    assert r.status_code == 200, r.text
    assert only_new(world, pk, 3)["changes"]["fields"]["attribute_set"]["after"]["name"]["description"] == "Its name"


def test_ownership_transfer_and_a_deleted_users_resources(world):
    admin = world.client("admin")
    giver = make_user(admin)
    with world.srv.client(auth=(giver["username"], giver["password"])) as c:
        r = c.post("/api/v2/maps", json={"title": "Giver's map", "maplayers": []})
        assert r.status_code == 201, r.text
        pk = int(r.json()["map"]["pk"])
    heir = world.users["heir"]
    r = admin.post(f"/api/v2/users/{giver['pk']}/transfer_resources",
                   json={"currentOwner": giver["pk"], "newOwner": heir["pk"], "resources": [pk]})
    assert r.status_code == 200, r.text
    v = only_new(world, pk, 0)
    assert (v["via"], v["user"]["username"]) == ("owner", "admin")
    assert v["changes"]["fields"]["owner"] == {"before": giver["username"], "after": heir["username"]}
    # a transfer of nothing (to the same owner's other resources) records nothing here
    r = admin.post(f"/api/v2/users/{heir['pk']}/transfer_resources",
                   json={"currentOwner": heir["pk"], "newOwner": giver["pk"], "resources": [pk]})
    assert r.status_code == 200, r.text
    assert world.count(pk) == 2
    # deleting a user gives what they own to the principal superuser: a version too
    r = admin.delete(f"/api/v2/users/{giver['pk']}")
    assert r.status_code in (200, 204), r.text
    v = only_new(world, pk, 2)
    assert v["via"] == "owner" and v["changes"]["fields"]["owner"]["before"] == giver["username"]
    assert v["changes"]["fields"]["owner"]["after"] == "admin"


def test_a_replacing_upload_is_a_replace_version(world):
    pk = world.new_dataset()
    owner = world.client("owner")
    r = owner.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                   data={"action": "replace", "resource_pk": str(pk), "overwrite_existing_layer": "true"})
    assert r.status_code == 201, r.text
    assert finish(owner, r.json()["execution_id"])["status"] == "finished"
    listing = world.versions(pk)
    kinds = [(v["kind"], v["via"]) for v in listing["versions"]]
    assert kinds[-1] == ("replace", "upload"), kinds
    replace = listing["versions"][-1]
    assert replace["user"] == by(world, "owner") and replace["summary"]["feature_count"] > 0
    assert all(k == "metadata" for k, _ in kinds[:-1])
    detail = world.client("admin").get(f"/api/v2/datasets/{pk}").json()["dataset"]
    assert json.dumps(detail)  # the dataset still reads


def test_deleting_a_user_or_a_group_named_in_a_resource_is_a_version_of_it(world):
    admin, owner = world.client("admin"), world.client("owner")
    contact = make_user(admin)
    group = make_group(admin, title=unique("Short-lived "))
    r = admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [world.users["owner"]["pk"]], "role": "member"})
    assert r.status_code == 200, r.text
    pk = world.new_map()
    r = owner.patch(f"/api/v2/resources/{pk}", json={"poc": [{"username": contact["username"]}], "group": group["group"]["pk"]})
    assert r.status_code == 200, r.text
    assert world.count(pk) == 1
    assert admin.delete(f"/api/v2/users/{contact['pk']}").status_code in (200, 204)
    v = only_new(world, pk, 1)
    assert (v["via"], v["user"]["username"]) == ("owner", "admin")
    assert v["changes"]["fields"] == {"poc": {"before": [contact["username"]], "after": []}}
    assert admin.delete(f"/api/v2/groups/{group['pk']}").status_code in (200, 204)
    v = only_new(world, pk, 2)
    assert v["changes"]["fields"]["group"]["after"] is None and v["changes"]["fields"]["group"]["before"]
