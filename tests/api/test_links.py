"""The ``links`` of resources, as QGIS and geonodectl read them: metadata records (the "ISO" one
answers an ISO document), the page, the thumbnail, the OGC services of datasets with data
(OGC:WMS and OGC:WFS for vectors, OGC:WCS for rasters, all at {base}/geoserver/ows), map images,
legend and data links, a document's file or remote address. Every URL is absolute.

``site`` (also used by test_record_formats.py and test_embed.py) starts a server with a public
vector and raster dataset, and a private vector dataset that one user may view."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.api.test_documents import png
from tests.api.test_uploads import CITIES, COUNTRIES, DATA, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, in_process, insert_resource, login, make_user, wait_finished
from tests.ogc.conftest import PRIVATE, upload_shapefile, upload_tif

METADATA = DATA / "metadata"
GEONODE_LINK_TYPES = {"original", "uploaded", "data", "image", "metadata", "html", "OGC:WMS", "OGC:WFS", "OGC:WCS"}


def wait_for(client, receipt) -> None:
    """Wait until an asynchronous request (a permission change) has finished."""
    assert receipt.status_code == 200, receipt.text
    wait_finished(client, receipt.json()["status_url"])


def build_site(tmp_path_factory, name: str, *, real_server: bool = False) -> dict:
    """``real_server`` for clients that open their own connections (OWSLib)."""
    folder = tmp_path_factory.mktemp(name) / "data"
    srv = Server(folder) if real_server else in_process(folder)
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other, viewer = make_user(admin), make_user(admin), make_user(admin)
    site = {"srv": srv, "admin": admin, "owner": owner, "other": other, "viewer": viewer}
    site["vector"] = upload_shapefile(admin, COUNTRIES)
    site["raster"] = upload_tif(admin, "RGB.byte.tif")
    with login(srv, owner) as c:
        site["private"] = upload_shapefile(c, CITIES, PRIVATE, dataset_title="Private <cities> & towns")
        wait_for(c, c.put(f"/api/v2/resources/{site['private']['pk']}/permissions",
                          json={"users": [{"id": viewer["pk"], "permissions": "view"}]}))
    site["clients"] = {"anonymous": srv.client(), "other": login(srv, other), "viewer": login(srv, viewer),
                       "owner": login(srv, owner), "admin": admin}
    return site


def close_site(site: dict) -> None:
    for client in site["clients"].values():
        client.close()
    site["srv"].stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    built = build_site(tmp_path_factory, "links")
    yield built
    close_site(built)


def by_name(resource: dict) -> dict[str, dict]:
    """Links by name, service links left out (each service link is named by the layer, as GeoNode's)."""
    named = [link for link in resource["links"] if not link["link_type"].startswith("OGC:")]
    names = [link["name"] for link in named]
    assert len(names) == len(set(names)), names  # clients look links up by name
    return {link["name"]: link for link in named}


def by_type(resource: dict, link_type: str) -> list[dict]:
    return [link for link in resource["links"] if link["link_type"] == link_type]


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


def check_shapes(resource: dict, base: str) -> None:
    for link in resource["links"]:
        assert set(link) == {"extension", "link_type", "name", "mime", "url", "extras"}, link
        assert all(isinstance(v, str) for k, v in link.items() if k != "extras") and isinstance(link["extras"], dict), link
        assert link["link_type"] in GEONODE_LINK_TYPES, link
        assert link["url"].startswith(f"{base}/"), link


def test_a_vector_dataset_has_wms_and_wfs_links(site):
    base, vector = site["srv"].url, site["vector"]
    check_shapes(vector, base)
    links = by_name(vector)
    wms, wfs = by_type(vector, "OGC:WMS"), by_type(vector, "OGC:WFS")
    assert len(wms) == len(wfs) == 1 and not by_type(vector, "OGC:WCS")
    for link, kind in ((wms[0], "OGC:WMS"), (wfs[0], "OGC:WFS")):
        assert link == {"extension": "html", "link_type": kind, "name": vector["alternate"], "mime": kind,
                        "url": f"{base}/geoserver/ows", "extras": {}}
    # the map images: a GetMap of the dataset's whole extent in its own CRS
    x0, y0 = vector["bbox_polygon"]["coordinates"][0][0]
    x1, y1 = vector["bbox_polygon"]["coordinates"][0][2]
    for name, mime in (("PNG", "image/png"), ("JPEG", "image/jpeg")):
        link = links[name]
        assert (link["link_type"], link["mime"]) == ("image", mime)
        q = query(link["url"])
        assert link["url"].startswith(f"{base}/geoserver/ows?")
        assert (q["service"], q["request"], q["version"]) == ("WMS", "GetMap", "1.1.1")
        assert q["layers"] == vector["alternate"] and q["styles"] == "" and q["format"] == mime
        assert q["srs"] == vector["srid"] == "EPSG:4326"
        assert [float(v) for v in q["bbox"].split(",")] == pytest.approx([x0, y0, x1, y1])
        width, height = int(q["width"]), int(q["height"])
        assert max(width, height) == 1024 and width / height == pytest.approx((x1 - x0) / (y1 - y0), rel=0.01)
    legend = query(links["Legend"]["url"])
    assert (legend["request"], legend["layer"], links["Legend"]["link_type"]) == (
        "GetLegendGraphic", vector["alternate"], "image")
    # the data: the download, and WFS GetFeature in GeoJSON and GML 3.2
    assert links["Zipped Shapefile"] == {"extension": "zip", "link_type": "data", "name": "Zipped Shapefile",
                                         "mime": "application/zip", "url": vector["download_url"], "extras": {}}
    for name, output in (("GeoJSON", "application/json"), ("GML 3.2", "application/gml+xml; version=3.2")):
        q = query(links[name]["url"])
        assert links[name]["link_type"] == "data" and links[name]["mime"] == output
        assert (q["service"], q["request"], q["typeNames"], q["outputFormat"]) == (
            "WFS", "GetFeature", vector["alternate"], output)
    assert by_type(vector, "html") == [{"extension": "html", "link_type": "html", "name": vector["alternate"],
                                        "mime": "text/html", "url": vector["detail_url"], "extras": {}}]
    with site["srv"].client() as anon:  # the download link answers the data
        r = anon.get(links["Zipped Shapefile"]["url"])
        assert r.status_code == 200 and r.headers["content-type"] == "application/zip"


def test_a_raster_dataset_has_wms_and_wcs_links(site):
    base, raster = site["srv"].url, site["raster"]
    check_shapes(raster, base)
    links = by_name(raster)
    assert [link["url"] for link in by_type(raster, "OGC:WCS")] == [f"{base}/geoserver/ows"]
    assert [link["url"] for link in by_type(raster, "OGC:WMS")] == [f"{base}/geoserver/ows"]
    assert not by_type(raster, "OGC:WFS") and "GeoJSON" not in links and "Zipped Shapefile" not in links
    assert by_type(raster, "OGC:WCS")[0]["name"] == raster["alternate"]
    png_link = query(links["PNG"]["url"])
    assert png_link["srs"] == raster["srid"] == "EPSG:32618"  # drawn in the dataset's own CRS
    assert links["GeoTIFF"] == {"extension": "tif", "link_type": "data", "name": "GeoTIFF", "mime": "image/tiff",
                                "url": raster["download_url"], "extras": {}}
    wcs = query(links["GeoTIFF (WCS)"]["url"])
    assert (wcs["service"], wcs["request"], wcs["version"]) == ("WCS", "GetCoverage", "2.0.1")
    assert wcs["coverageId"] == raster["alternate"].replace(":", "__")  # WCS 2.0 ids have no ":"


def test_every_resource_has_metadata_links(site):
    base, vector = site["srv"].url, site["vector"]
    links = by_name(vector)
    schemas = {"ISO": "http://www.isotc211.org/2005/gmd", "Dublin Core": "http://www.opengis.net/cat/csw/2.0.2",
               "Atom": "http://www.w3.org/2005/Atom"}
    for name, schema in schemas.items():
        link = links[name]
        assert (link["link_type"], link["mime"], link["extension"]) == ("metadata", "text/xml", "xml")
        assert link["url"].startswith(f"{base}/catalogue/csw?")
        q = query(link["url"])
        assert q == {"service": "CSW", "version": "2.0.2", "request": "GetRecordById", "id": vector["uuid"],
                     "elementsetname": "full", "outputschema": schema}
    with site["srv"].client() as anon:  # geonodectl: GET the "ISO" link
        r = anon.get(links["ISO"]["url"])
        assert r.status_code == 200 and r.headers["content-type"].startswith(("application/xml", "text/xml"))
        assert b"MD_Metadata" in r.content and vector["uuid"].encode() in r.content
        # DCAT-AP as JSON-LD, named by its format as the records above are
        dcat = links["DCAT"]
        assert (dcat["link_type"], dcat["mime"], dcat["extension"]) == ("metadata", "application/ld+json", "jsonld")
        assert dcat["url"] == f"{base}/dcat/resources/{vector['uuid']}"
        r = anon.get(dcat["url"])
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/ld+json")
        assert any(node.get("dct:identifier") == vector["uuid"] for node in r.json()["@graph"])
    # maps and documents too
    with login(site["srv"], site["owner"]) as c:
        r = c.post("/api/v2/resources/", json={"resource_type": "map", "title": "A map"})
        made = r.json()["resource"]
        assert {"ISO", "Dublin Core", "Atom", "DCAT", "Detail page"} == set(by_name(made))
        assert by_type(made, "html")[0]["url"] == made["detail_url"]
        assert [link["name"] for link in by_type(made, "OGC:WMS")] == [f"catalogue:map_{made['pk']}"]  # drawn by the WMS


def test_the_same_links_on_every_list_and_detail(site):
    admin, vector = site["admin"], site["vector"]
    pk = vector["pk"]
    found = [admin.get(f"/api/v2/resources/{pk}").json()["resource"],
             admin.get(f"/api/v2/datasets/{pk}").json()["dataset"],
             next(r for r in admin.get("/api/v2/datasets/", params={"page_size": 100}).json()["datasets"]
                  if r["pk"] == pk),
             next(r for r in admin.get("/api/v2/resources/", params={"page_size": 100}).json()["resources"]
                  if r["pk"] == pk)]
    with site["srv"].client(auth=(site["owner"]["username"], site["owner"]["password"])) as c:
        found.append(c.get(f"/api/v2/datasets/{pk}/").json()["dataset"])  # QGIS sends Basic auth

    def without_thumbnail(item):  # made after the upload: it may appear between two requests
        return [link for link in item["links"] if link["name"] != "Thumbnail"]

    for item in found:
        assert without_thumbnail(item) == without_thumbnail(vector)


def test_the_private_dataset_links_and_the_iso_answer_by_caller(site):
    private = site["private"]
    iso = by_name(private)["ISO"]["url"]
    assert {link["name"] for link in by_type(private, "OGC:WMS")} == {private["alternate"]}
    statuses = {who: c.get(iso).status_code for who, c in site["clients"].items()}
    assert statuses == {"anonymous": 404, "other": 404, "viewer": 200, "owner": 200, "admin": 200}
    # the owner reads the record with Basic auth, as geonodectl does
    with site["srv"].client(auth=(site["owner"]["username"], site["owner"]["password"])) as c:
        r = c.get(iso)
        assert r.status_code == 200 and "Private &lt;cities&gt; &amp; towns" in r.text


def test_an_uploaded_iso_document_keeps_its_own_link(site):
    xml = (METADATA / "iso19139_full.xml").read_bytes()
    with login(site["srv"], site["owner"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files={
            **shapefile_parts(COUNTRIES), "xml_file": ("meadows.xml", xml, "text/xml")}))
        links = by_name(dataset)
        assert links["ISO"]["url"].startswith(f"{site['srv'].url}/catalogue/csw?")
        uploaded = links["ISO (uploaded)"]
        assert uploaded["link_type"] == "metadata" and uploaded["url"].endswith(
            f"/api/v2/resources/{dataset['pk']}/iso_metadata_xml")
        assert c.get(uploaded["url"]).content == xml
        assert c.get(links["ISO"]["url"]).status_code == 200
    assert "ISO (uploaded)" not in by_name(site["vector"])


def test_datasets_without_data_have_no_service_links(site):
    srv = site["srv"]
    rid = insert_resource(srv, site["owner"]["pk"], "Made up", [(None, 1, "view_resourcebase")],
                          resource_type="dataset", subtype="vector", alternate="catalogue:made_up",
                          srid="EPSG:4326", bbox_x0=0, bbox_y0=0, bbox_x1=10, bbox_y1=10, ll_x0=0, ll_y0=0, ll_x1=10,
                          ll_y1=10)
    with srv.client() as anon:
        for item in (anon.get(f"/api/v2/resources/{rid}").json()["resource"],
                     anon.get(f"/api/v2/datasets/{rid}").json()["dataset"]):
            assert item["is_copyable"] is False
            assert {link["link_type"] for link in item["links"]} == {"metadata", "html"}
            assert {"ISO", "Dublin Core", "Atom"} <= set(by_name(item))
    assert site["vector"]["is_copyable"] is True


def test_thumbnails_are_absolute(site):
    srv, owner = site["srv"], site["owner"]["pk"]
    everyone = [(None, 1, "view_resourcebase")]
    relative = insert_resource(srv, owner, "Relative thumbnail", everyone, thumbnail_url="/uploaded/thumbs/a.png")
    remote = insert_resource(srv, owner, "Remote thumbnail", everyone, thumbnail_url="https://example.org/t.jpg")
    bare = insert_resource(srv, owner, "No thumbnail", everyone)
    with srv.client() as anon:
        def get(rid):
            return anon.get(f"/api/v2/resources/{rid}").json()["resource"]
        item = get(relative)
        assert item["thumbnail_url"] == f"{srv.url}/uploaded/thumbs/a.png"
        assert by_name(item)["Thumbnail"] == {"extension": "png", "link_type": "image", "name": "Thumbnail",
                                              "mime": "image/png", "url": f"{srv.url}/uploaded/thumbs/a.png", "extras": {}}
        item = get(remote)
        assert item["thumbnail_url"] == "https://example.org/t.jpg"
        assert by_name(item)["Thumbnail"]["mime"] == "image/jpeg"
        assert "Thumbnail" not in by_name(get(bare))
        listed = anon.get("/api/v2/resources/", params={"page_size": 100}).json()["resources"]
        assert next(r for r in listed if r["pk"] == str(relative))["thumbnail_url"] == f"{srv.url}/uploaded/thumbs/a.png"


def test_document_links(site):
    with login(site["srv"], site["owner"]) as c:
        r = c.post("/api/v2/documents", files={"doc_file": ("plan.png", png(), "application/octet-stream")})
        doc = r.json()["document"]
        original = by_type(doc, "original")
        assert original == [{"extension": "png", "link_type": "original", "name": "plan.png", "mime": "image/png",
                             "url": doc["download_url"], "extras": {}}]
        assert c.get(original[0]["url"]).content == png()
        assert not by_type(doc, "OGC:WMS") and {"ISO", "Dublin Core", "Atom"} <= set(by_name(doc))
        remote_url = "https://example.org/reports/annual.pdf"
        remote = c.post("/api/v2/documents", files={"doc_url": (None, remote_url)}).json()["document"]
        assert by_type(remote, "original") == [{"extension": "pdf", "link_type": "original", "name": "Remote document",
                                                "mime": "application/pdf", "url": remote_url, "extras": {}}]
        bare = c.post("/api/v2/resources/", json={"resource_type": "document", "title": "No file"}).json()["resource"]
        assert not by_type(bare, "original")


def test_links_follow_the_public_base_url(tmp_path_factory):
    """Behind a proxy the configured public address starts every link."""
    srv = in_process(tmp_path_factory.mktemp("public") / "data", env={"CATALOGUE_PUBLIC_URL": "https://maps.example.org"})
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            dataset = upload_shapefile(admin, CITIES)
            check_shapes(dataset, "https://maps.example.org")
            assert by_type(dataset, "OGC:WFS")[0]["url"] == "https://maps.example.org/geoserver/ows"
    finally:
        srv.stop()
