"""Where a resource came from, across two real catalogues ("central" and "local"): what local
harvests from central (its data copied, or shown through central's WMS) is ``harvested`` and names
its harvester, central's address and central's page of the record; what local publishes to
central is a ``copy`` there that names its original here. ``filter{source}`` finds each."""

from __future__ import annotations

import pytest

from tests.api.test_uploads import CITIES, COUNTRIES, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, assert_envelope
from tests.harvesting.test_geonode_harvest import GEONODE, offered, run, upload
from tests.publishing.test_publishing import cli, publish
from tests.publishing.test_publishing import upload as upload_titled


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("origins")
    central = Server(root / "central")
    local = Server(root / "local", env={"CATALOGUE_HARVEST_TICK": "0.2"})
    c_admin = central.client(auth=("admin", ADMIN_PASSWORD))
    l_admin = local.client(auth=("admin", ADMIN_PASSWORD))
    countries = upload(c_admin, shapefile_parts(COUNTRIES), "Countries")
    cities = upload(c_admin, shapefile_parts(CITIES), "Cities")
    yield {"central": central, "local": local, "c": c_admin, "l": l_admin, "countries": countries, "cities": cities}
    c_admin.close()
    l_admin.close()
    local.stop()
    central.stop()


def harvest(l, name: str, remote: Server, title: str, copy_data: bool) -> tuple[int, int]:
    """A harvester of the records of central titled ``title``; its id and the local resource."""
    h = l.post("/api/v2/harvesters/", json={
        "name": name, "remote_url": remote.url, "harvester_type": GEONODE, "scheduling_enabled": False,
        "harvest_new_resources_by_default": True,
        "harvester_type_specific_configuration": {"harvest_documents": False, "resource_title_filter": title,
                                                  "copy_data": copy_data}})
    assert h.status_code == 201, h.text
    hid = h.json()["harvester"]["id"]
    session = run(l, hid, "harvesting-resources")
    assert session["status"] == "finished-all-ok", session
    (item,) = offered(l, hid).values()
    return hid, item["resource"]


def test_harvested_records_name_their_harvester_and_remote(pair):
    l, central = pair["l"], pair["central"]
    copying, copied = harvest(l, "central copies", central, "Countries", True)
    showing, shown = harvest(l, "central maps", central, "Cities", False)
    mine = l.get(f"/api/v2/datasets/{copied}").json()["dataset"]
    assert (mine["sourcetype"], mine["source"]) == ("COPYREMOTE", "harvested")
    assert mine["origin"] == {"kind": "harvested", "title": "Countries", "pk": None, "harvester": "central copies",
                              "remote_url": central.url,
                              "url": f"{central.url}/catalogue/#/dataset/{pair['countries']['pk']}"}
    remote = l.get(f"/api/v2/resources/{shown}").json()["resource"]
    assert (remote["sourcetype"], remote["source"], remote["origin"]["harvester"]) == ("REMOTE", "harvested", "central maps")
    assert remote["origin"]["url"] == f"{central.url}/catalogue/#/dataset/{pair['cities']['pk']}"
    with pair["local"].client() as anon:
        found = anon.get("/api/v2/resources", params={"filter{source}": "harvested"}).json()
        assert found["total"] == 2 and {r["pk"] for r in found["resources"]} == {str(copied), str(shown)}
        assert anon.get("/api/v2/datasets", params={"filter{source}": "local"}).json()["total"] == 0
    # the origin of a harvested record is the catalogue's to say
    assert_envelope(l.patch(f"/api/v2/resources/{copied}", json={"origin_url": "https://example.org/x"}), 400, "invalid")
    # a harvested record harvested again keeps its origin; a harvester renamed, then removed
    assert l.patch(f"/api/v2/harvesters/{copying}/", json={"name": "central, copied"}).status_code == 200
    assert l.get(f"/api/v2/resources/{copied}").json()["resource"]["origin"]["harvester"] == "central, copied"
    assert run(l, copying, "harvesting-resources")["status"] == "finished-all-ok"
    assert l.get(f"/api/v2/resources/{copied}").json()["resource"]["origin"]["harvester"] == "central, copied"
    assert l.delete(f"/api/v2/harvesters/{showing}/").status_code == 204
    kept = l.get(f"/api/v2/resources/{shown}").json()["resource"]
    assert (kept["source"], kept["origin"]["harvester"], kept["origin"]["remote_url"]) == (
        "harvested", "central maps", central.url)


def test_a_published_copy_names_its_original(pair):
    l, c, local, central = pair["l"], pair["c"], pair["local"], pair["central"]
    token = cli("token", "admin", data_dir=central.data_dir)
    assert token.returncode == 0, token.stderr
    r = l.post("/api/v2/remotes/", json={"name": "central", "url": central.url, "token": token.stdout.strip()})
    assert r.status_code == 201, r.text
    pk = upload_titled(l, CITIES, "Places sent")
    status = publish(l, pk, "central")
    assert status["status"] == "finished", status
    there = status["output_params"]["resources"][0]["remote_pk"]
    copy = c.get(f"/api/v2/datasets/{there}").json()["dataset"]
    assert (copy["title"], copy["source"]) == ("Places sent", "copy")
    assert copy["origin"] == {"kind": "copy", "title": "Places sent", "pk": None, "harvester": None,
                              "remote_url": None, "url": f"{local.url}/catalogue/#/dataset/{pk}"}
    # the original here is local; published again (updated in place), the copy says the same
    assert l.get(f"/api/v2/resources/{pk}").json()["resource"]["source"] == "local"
    assert l.patch(f"/api/v2/datasets/{pk}", json={"title": "Places sent, edited"}).status_code == 200
    assert publish(l, pk, "central")["status"] == "finished"
    again = c.get(f"/api/v2/datasets/{there}").json()["dataset"]
    assert again["origin"]["title"] == "Places sent, edited" and again["origin"]["url"] == copy["origin"]["url"]
    with central.client() as anon:
        found = anon.get("/api/v2/resources", params={"filter{source}": "copy"}).json()
        assert found["total"] == 1 and found["resources"][0]["pk"] == str(there)
