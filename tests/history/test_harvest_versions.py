"""A harvest's update of what it harvested before is a metadata version (via "harvest", made by
no user); a harvested record the remote withdrew leaves a tombstone. Two real servers: the
remote catalogue and the one that harvests it."""

from __future__ import annotations

import time

import pytest

from tests.conftest import ADMIN_PASSWORD, Server
from tests.harvesting.test_geonode_harvest import GEONODE, offered, run


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    base = tmp_path_factory.mktemp("harvest-history")
    remote = Server(base / "remote")
    local = Server(base / "local", env={"CATALOGUE_HARVEST_TICK": "0.2"})
    r_admin = remote.client(auth=("admin", ADMIN_PASSWORD))
    l_admin = local.client(auth=("admin", ADMIN_PASSWORD))
    yield {"remote": remote, "local": local, "r": r_admin, "l": l_admin}
    r_admin.close()
    l_admin.close()
    local.stop()
    remote.stop()


def test_a_harvest_that_changes_a_record_is_a_version_and_a_withdrawn_one_a_tombstone(pair):
    r, l = pair["r"], pair["l"]
    doc = r.post("/api/v2/documents", data={"title": "Well survey report", "abstract": "First survey"},
                 files={"doc_file": ("report.pdf", b"%PDF-1.4\n% report\n", "application/pdf")})
    assert doc.status_code == 201, doc.text
    doc = doc.json()["document"]
    h = l.post("/api/v2/harvesters/", json={
        "name": "wells", "remote_url": pair["remote"].url, "harvester_type": GEONODE, "scheduling_enabled": False,
        "harvest_new_resources_by_default": True, "delete_orphan_resources_automatically": True,
        "harvester_type_specific_configuration": {"harvest_datasets": False, "resource_title_filter": "well survey"}})
    assert h.status_code == 201, h.text
    hid = h.json()["harvester"]["id"]
    run(l, hid, "updating-harvestable-resources")
    assert run(l, hid, "harvesting-resources")["status"] == "finished-all-ok"
    pk = offered(l, hid)[doc["uuid"]]["resource"]
    assert l.get(f"/api/v2/resources/{pk}/versions").json()["total"] == 0  # made, not changed

    # harvested again, unchanged: no version
    assert run(l, hid, "harvesting-resources")["status"] == "finished-all-ok"
    assert l.get(f"/api/v2/resources/{pk}/versions").json()["total"] == 0

    # changed remotely: the update in place is a version
    assert r.patch(f"/api/v2/documents/{doc['pk']}", json={"abstract": "Second survey"}).status_code == 200
    assert run(l, hid, "harvesting-resources")["status"] == "finished-all-ok"
    listing = l.get(f"/api/v2/resources/{pk}/versions").json()
    assert listing["total"] == 1, listing
    v = listing["versions"][0]
    assert (v["kind"], v["via"], v["user"]) == ("metadata", "harvest", None)
    detail = l.get(f"/api/v2/resources/{pk}/versions/{v['number']}").json()["version"]
    assert detail["changes"]["fields"]["abstract"] == {"before": "First survey", "after": "Second survey"}

    # withdrawn remotely: the harvester removes its copy, which leaves a tombstone
    assert r.delete(f"/api/v2/resources/{doc['pk']}").status_code in (200, 204)
    deadline = time.monotonic() + 30
    while r.get(f"/api/v2/resources/{doc['pk']}").status_code != 404:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    run(l, hid, "harvesting-resources")
    assert l.get(f"/api/v2/resources/{pk}").status_code == 404
    stones = l.get("/api/v2/tombstones", params={"page_size": 100}).json()["tombstones"]
    stone = next(s for s in stones if s["pk"] == pk)
    assert stone["resource_type"] == "document" and stone["title"] == "Well survey report" and stone["user"] is None
