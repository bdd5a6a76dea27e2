"""Conflicts made the way the story makes them: the office's package imported in the field, the
same resources changed on both sides, the field's "since" package imported back at the office;
then each conflict resolved over HTTP (keep local, incoming, both) and what the resource, its
history and the files folder show after. Two catalogues in this process, nothing between them but
package files (tests/packages/conftest.py)."""

from __future__ import annotations

from tests.packages.conftest import upload_countries, upload_document
from tests.packages.test_import import back, features, out_and_back


def conflict_of(office, report: dict, uuid: str) -> dict:
    """The conflict the import reported for ``uuid``, as the office's owner lists it."""
    assert uuid in {i["uuid"] for i in report["conflicts"]}, report
    r = office["c"].get("/api/v2/packages/conflicts")
    assert r.status_code == 200, r.text
    found = [c for c in r.json()["conflicts"] if c["uuid"] == uuid]
    assert len(found) == 1, r.json()
    return found[0]


def aside_folder(office, conflict: dict):
    return office["dir"] / "files" / f"aside-{conflict['id']}"


def test_a_dataset_changed_on_both_sides(office, field):
    c = office["c"]
    countries = upload_countries(c, "Countries for a conflict")
    manifest, fc, pks = out_and_back(office, field, countries["uuid"])
    fpk = pks[countries["uuid"]]
    assert fc.patch(f"/api/v2/resources/{fpk}", json={"title": "Countries, from the field"}).status_code == 200
    r = fc.post(f"/api/v2/datasets/{fpk}/edits", json={"update": [{"id": 1, "properties": {"name": "Field name"}}]})
    assert r.status_code == 200, r.text
    assert c.patch(f"/api/v2/resources/{countries['pk']}", json={"title": "Countries, office"}).status_code == 200
    before = features(c, countries["alternate"])[1]["properties"]["name"]
    report = back(office, field, manifest["id"])
    conflict = conflict_of(office, report, countries["uuid"])
    assert conflict["kind"] == "changed_both" and conflict["state"] == "open" and conflict["pk"] == int(countries["pk"])
    assert conflict["local"]["title"] == "Countries, office"
    assert conflict["incoming"]["title"] == "Countries, from the field"
    assert conflict["incoming"]["data_version"] > conflict["local"]["data_version"]
    assert {"field": "title", "local": "Countries, office", "incoming": "Countries, from the field"} \
        in conflict["differences"]
    assert any(aside_folder(office, conflict).rglob("*")), "the incoming files are kept"
    # ours is kept as it was, and the history lists theirs, aside
    d = c.get(f"/api/v2/datasets/{countries['pk']}").json()["dataset"]
    assert d["title"] == "Countries, office"
    assert features(c, countries["alternate"])[1]["properties"]["name"] == before
    versions = c.get(f"/api/v2/resources/{countries['pk']}/versions").json()["versions"]
    assert versions[0]["kind"] == "incoming" and versions[0]["summary"]["state"] == "aside"
    assert versions[0]["number"] == conflict["version"]
    # keep theirs: the field's title and feature edit become the office's, as new versions
    # a copy beside ours would have no data: the package brought only the field's feature edits
    r = c.post(f"/api/v2/packages/conflicts/{conflict['id']}", json={"keep": "both"})
    assert r.status_code == 400 and "only the feature edits" in r.json()["errors"][0], r.text
    assert c.get(f"/api/v2/packages/conflicts/{conflict['id']}").json()["conflict"]["state"] == "open"
    r = c.post(f"/api/v2/packages/conflicts/{conflict['id']}", json={"keep": "incoming"})
    assert r.status_code == 200, r.text
    assert r.json()["conflict"]["state"] == "kept_incoming"
    d = c.get(f"/api/v2/datasets/{countries['pk']}").json()["dataset"]
    assert d["title"] == "Countries, from the field"
    assert features(c, countries["alternate"])[1]["properties"]["name"] == "Field name"
    versions = c.get(f"/api/v2/resources/{countries['pk']}/versions").json()["versions"]
    assert [v["summary"]["state"] for v in versions if v["kind"] == "incoming"] == ["applied"]
    assert any(v["via"] == "package" and v["kind"] == "metadata" for v in versions)
    assert not aside_folder(office, conflict).exists()
    assert countries["uuid"] not in {x["uuid"] for x in c.get("/api/v2/packages/conflicts").json()["conflicts"]}
    r = c.post(f"/api/v2/packages/conflicts/{conflict['id']}", json={"keep": "local"})
    assert r.status_code == 409, r.text
    # the catalogues agree again: the same changes brought once more are no conflict, nor an update
    again = back(office, field, manifest["id"])
    assert not again["conflicts"] and not again["updated"], again


def test_a_document_changed_on_both_sides_kept_twice(office, field):
    c = office["c"]
    doc = upload_document(c, "Notes for a conflict")
    manifest, fc, pks = out_and_back(office, field, doc["uuid"])
    assert fc.patch(f"/api/v2/resources/{pks[doc['uuid']]}", json={"abstract": "Written in the field."}).status_code == 200
    assert c.patch(f"/api/v2/resources/{doc['pk']}", json={"abstract": "Written at the office."}).status_code == 200
    report = back(office, field, manifest["id"])
    conflict = conflict_of(office, report, doc["uuid"])
    r = c.post(f"/api/v2/packages/conflicts/{conflict['id']}", json={"keep": "both"})
    assert r.status_code == 200, r.text
    resolved = r.json()["conflict"]
    assert resolved["state"] == "kept_both" and resolved["pk"] == int(doc["pk"]) and resolved["copy"]
    ours = c.get(f"/api/v2/resources/{doc['pk']}").json()["resource"]
    assert ours["abstract"] == "Written at the office." and ours["title"] == "Notes for a conflict"
    copy = c.get(f"/api/v2/documents/{resolved['copy']}").json()["document"]
    assert copy["title"] == "Notes for a conflict (from admin)"
    assert copy["abstract"] == "Written in the field."
    assert copy["uuid"] != doc["uuid"]
    versions = c.get(f"/api/v2/resources/{doc['pk']}/versions").json()["versions"]
    incoming = [v for v in versions if v["kind"] == "incoming"]
    assert [v["summary"]["state"] for v in incoming] == ["copied"] and incoming[0]["summary"]["copy"] == resolved["copy"]
    assert not aside_folder(office, conflict).exists()


def test_keep_local_after_an_import(office, field):
    c = office["c"]
    doc = upload_document(c, "Notes kept at the office")
    manifest, fc, pks = out_and_back(office, field, doc["uuid"])
    assert fc.patch(f"/api/v2/resources/{pks[doc['uuid']]}", json={"title": "Field notes, renamed"}).status_code == 200
    assert c.patch(f"/api/v2/resources/{doc['pk']}", json={"title": "Office notes, renamed"}).status_code == 200
    report = back(office, field, manifest["id"])
    conflict = conflict_of(office, report, doc["uuid"])
    r = c.post(f"/api/v2/packages/conflicts/{conflict['id']}", json={"keep": "local"})
    assert r.status_code == 200, r.text
    assert c.get(f"/api/v2/resources/{doc['pk']}").json()["resource"]["title"] == "Office notes, renamed"
    assert not aside_folder(office, conflict).exists()
    # the same package again: no second conflict
    again = back(office, field, manifest["id"])
    assert not again["conflicts"], again


def test_deleted_here_and_changed_there_brought_back(office, field):
    c, admin = office["c"], office["admin"]
    doc = upload_document(c, "Deleted at the office")
    manifest, fc, pks = out_and_back(office, field, doc["uuid"])
    assert fc.patch(f"/api/v2/resources/{pks[doc['uuid']]}", json={"title": "Still needed in the field"}).status_code == 200
    assert c.delete(f"/api/v2/resources/{doc['pk']}").status_code in (200, 204)
    report = back(office, field, manifest["id"])  # imported by the office's admin
    assert doc["uuid"] in {i["uuid"] for i in report["conflicts"]}, report
    # a conflict on a resource deleted here belongs to whoever imported the package (and superusers)
    assert doc["uuid"] not in {x["uuid"] for x in c.get("/api/v2/packages/conflicts").json()["conflicts"]}
    conflict = next(x for x in admin.get("/api/v2/packages/conflicts").json()["conflicts"] if x["uuid"] == doc["uuid"])
    assert (conflict["kind"], conflict["pk"], conflict["local"]) == ("deleted_here", None, None)
    assert conflict["incoming"]["title"] == "Still needed in the field"
    r = admin.post(f"/api/v2/packages/conflicts/{conflict['id']}", json={"keep": "incoming"})
    assert r.status_code == 200, r.text
    back_here = r.json()["conflict"]
    assert back_here["state"] == "kept_incoming" and back_here["pk"]
    again = c.get(f"/api/v2/resources/{back_here['pk']}").json()["resource"]
    assert (again["uuid"], again["title"]) == (doc["uuid"], "Still needed in the field")
