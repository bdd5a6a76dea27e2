"""/sitemap.xml and /robots.txt, for search engines: the sitemap lists the pages of the public
resources (their records' HTML, which needs no script to read) with the date of their last
change, the same for every caller, signed in or not, never a private or group-shared resource
nor an unadvertised one; past 50,000 addresses it is an index of /sitemaps/{n}.xml. robots.txt
keeps crawlers off the API and the OGC services and names the sitemap. The publisher that
DCAT-AP requires defaults to the catalogue's host."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, insert_resource, login, make_group, make_user

NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
EVERYONE = [(None, 1, "view_resourcebase")]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("sitemap") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other, member = make_user(admin), make_user(admin), make_user(admin)
    group = make_group(admin)
    assert admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]]}).status_code < 300
    ids = {"public": insert_resource(srv, owner["pk"], "Public", EVERYONE, resource_type="dataset",
                                     last_updated="2026-03-04T05:06:07.123456Z"),
           "public_map": insert_resource(srv, owner["pk"], "Public map", EVERYONE, resource_type="map"),
           "private": insert_resource(srv, owner["pk"], "Private"),
           "shared": insert_resource(srv, owner["pk"], "Shared", [(None, group["group"]["pk"], "view_resourcebase")]),
           "unadvertised": insert_resource(srv, owner["pk"], "Unlisted", EVERYONE, advertised=0)}
    uuid = {name: admin.get(f"/api/v2/resources/{rid}").json()["resource"]["uuid"] for name, rid in ids.items()}
    clients = {"anonymous": srv.client(), "other": login(srv, other), "member": login(srv, member),
               "owner": login(srv, owner), "admin": admin}
    yield {"srv": srv, "clients": clients, "uuid": uuid}
    for client in clients.values():
        client.close()
    srv.stop()


def locations(body: bytes) -> dict[str, str | None]:
    root = ET.fromstring(body)
    assert root.tag == f"{{{NS['s']}}}urlset"
    return {u.findtext("s:loc", namespaces=NS): u.findtext("s:lastmod", namespaces=NS)
            for u in root.findall("s:url", NS)}


def page_of(site, name: str) -> str:
    return f"{site['srv'].url}/ogcapi/collections/metadata:main/items/{site['uuid'][name]}?f=html"


def test_the_sitemap_lists_the_public_resources_alike_for_everyone(site):
    answers = {who: c.get("/sitemap.xml") for who, c in site["clients"].items()}
    for r in answers.values():
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/xml")
    assert len({r.content for r in answers.values()}) == 1  # the same bytes, whoever asks
    found = locations(answers["admin"].content)
    assert set(found) == {page_of(site, "public"), page_of(site, "public_map")}
    assert found[page_of(site, "public")] == "2026-03-04T05:06:07Z"
    for secret in ("private", "shared", "unadvertised"):
        assert site["uuid"][secret].encode() not in answers["owner"].content
    # the first file of the index is the same list
    assert locations(site["clients"]["anonymous"].get("/sitemaps/1.xml").content) == found


def test_robots_txt(site):
    r = site["clients"]["anonymous"].get("/robots.txt")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    lines = r.text.splitlines()
    assert lines[0] == "User-agent: *"
    for path in ("/api/", "/ogcapi/", "/geoserver/", "/catalogue/csw", "/dcat/"):
        assert f"Disallow: {path}" in lines
    assert "Allow: /ogcapi/collections/metadata:main/items/" in lines  # the pages the sitemap lists
    assert f"Sitemap: {site['srv'].url}/sitemap.xml" in lines
    assert len({c.get("/robots.txt").text for c in site["clients"].values()}) == 1
    assert not any(u in r.text for u in site["uuid"].values())


def test_unknown_sitemap_files(site):
    anon = site["clients"]["anonymous"]
    for name in ("0.xml", "2.xml", "abc", "1.txt", "01.xml", "9" * 40 + ".xml"):
        assert_envelope(anon.get(f"/sitemaps/{name}"), 404, "not_found")


def test_the_publisher_defaults_to_the_host(site):
    graph = site["clients"]["anonymous"].get("/dcat/catalog").json()["@graph"]
    url = site["srv"].url
    assert graph[0]["dct:publisher"] == {"@id": f"{url}/dcat/catalog#publisher", "@type": "foaf:Agent",
                                         "foaf:name": url.split("//")[1],
                                         "foaf:homepage": {"@id": f"{url}/", "@type": "foaf:Document"}}


def test_past_50000_addresses_the_sitemap_is_an_index(site, monkeypatch):
    """The last test of the module: it adds public resources. A sitemap file holds at most 50,000
    addresses (sitemaps.org); here the server, run in this process, is given files of 2, so that
    5 public resources make an index of 3 files (50,001 rows take the triggers 35 s to insert)."""
    from catalogue_app.reads import linked_data

    assert linked_data.PER_FILE == 50_000
    monkeypatch.setattr(linked_data, "PER_FILE", 2)
    srv, anon = site["srv"], site["clients"]["anonymous"]
    owner = site["clients"]["owner"].get("/api/v2/resources/", params={"page_size": 1}).json()["resources"][0]["owner"]
    for n in range(3):  # the data change: what was kept of the sitemap goes
        insert_resource(srv, owner["pk"], f"Page {n}", EVERYONE)
    answers = {who: c.get("/sitemap.xml") for who, c in site["clients"].items()}
    assert len({r.content for r in answers.values()}) == 1
    root = ET.fromstring(answers["anonymous"].content)
    assert root.tag == f"{{{NS['s']}}}sitemapindex"
    files = [s.findtext("s:loc", namespaces=NS) for s in root.findall("s:sitemap", NS)]
    assert files == [f"{srv.url}/sitemaps/{n}.xml" for n in (1, 2, 3)]
    parts = [locations(anon.get(f"/sitemaps/{n}.xml").content) for n in (1, 2, 3)]
    assert [len(p) for p in parts] == [2, 2, 1]
    listed = set().union(*parts)
    assert len(listed) == 5 and {page_of(site, "public"), page_of(site, "public_map")} <= listed
    assert not any(site["uuid"][s] in loc for loc in listed for s in ("private", "shared", "unadvertised"))
    assert_envelope(anon.get("/sitemaps/4.xml"), 404, "not_found")
