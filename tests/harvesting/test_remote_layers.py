"""Remote datasets: a dataset of one running catalogue whose data stay on another running
catalogue's WMS. The rows are made with store/remote_layers.py (as the harvester will), then
everything is checked over real HTTP: the API's fields and links, lists and search, the local
WMS drawing it from the remote, WFS, WCS and downloads refusing it, a dead remote, deletion."""

from __future__ import annotations

import io
import uuid

import httpx
import pytest
from PIL import Image

from catalogue_app.jobs import thumbnails
from catalogue_app.store import db, remote_layers, resources
from catalogue_app.store.db import Database
from tests.api.test_uploads import COUNTRIES
from tests.conftest import ADMIN_PASSWORD, Server, free_port
from tests.ogc.conftest import upload_shapefile

WORLD = [-180.0, -90.0, 180.0, 85.0]


def make_remote(srv: Server, name: str, service_url: str, layer_name: str, download_url: str | None = None,
                links: list[dict] = (), ll_bbox: list[float] | None = None, public: bool = True) -> dict:
    """A remote dataset written into the server's database, as the harvester's storing does."""
    ident = str(uuid.uuid4())
    with db.transaction(srv.data_dir / "catalogue.sqlite3") as conn:
        owner = conn.execute("SELECT id FROM users WHERE username = 'admin'").fetchone()[0]
        rid = remote_layers.create(conn, uuid=ident, owner_id=owner, name=name,
                                   values={"title": f"Remote {name}", "abstract": "Drawn by another catalogue.",
                                           "not_a_field": "left out"},
                                   ll_bbox=ll_bbox or WORLD, service_type="WMS", service_url=service_url,
                                   layer_name=layer_name, download_url=download_url)
        remote_layers.set_links(conn, rid, list(links))
        if public:
            resources.grant(conn, rid, ["view_resourcebase", "download_resourcebase"],
                            group_id=resources.ANONYMOUS_GROUP_ID)
        alternate = conn.execute("SELECT alternate FROM resources WHERE id = ?", (rid,)).fetchone()[0]
    return {"pk": rid, "uuid": ident, "alternate": alternate}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("remote-layers")
    remote = Server(root / "remote")
    local = Server(root / "local")
    with remote.client(auth=("admin", ADMIN_PASSWORD)) as c:
        countries = upload_shapefile(c, COUNTRIES, dataset_title="Countries over there")
    ows = f"{remote.url}/geoserver/ows"
    download = f"{remote.url}/datasets/{countries['alternate']}/dataset_download"
    page = {"url": f"{remote.url}/catalogue/#/dataset/{countries['pk']}", "name": "Page there", "mime": "text/html",
            "link_type": "html", "extension": "html"}
    found = make_remote(local, "countries", ows, countries["alternate"], download, links=[page])
    dead = make_remote(local, "gone", f"http://127.0.0.1:{free_port()}/wms", "nothing")
    yield {"remote": remote, "local": local, "countries": countries, "ows": ows, "download": download,
           "page": page, "found": found, "dead": dead}
    local.stop()
    remote.stop()


@pytest.fixture
def anon(site):
    with site["local"].client() as c:
        yield c


@pytest.fixture
def admin(site):
    with site["local"].client(auth=("admin", ADMIN_PASSWORD)) as c:
        yield c


def _image(response: httpx.Response) -> Image.Image:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("image/png"), response.text
    return Image.open(io.BytesIO(response.content)).convert("RGBA")


def _drawn(image: Image.Image) -> int:
    """The pixels that are not transparent."""
    histogram = image.getchannel("A").histogram()
    return sum(histogram) - histogram[0]


def test_the_resource_says_it_is_remote(site, anon):
    found = site["found"]
    r = anon.get(f"/api/v2/resources/{found['pk']}")
    assert r.status_code == 200, r.text
    res = r.json()["resource"]
    assert res["resource_type"] == "dataset" and res["subtype"] == "remote" and res["sourcetype"] == "REMOTE"
    assert res["title"] == "Remote countries" and res["alternate"] == found["alternate"] == "remote:countries"
    assert res["download_url"] == site["download"]
    assert res["download_urls"] == [{"url": site["download"], "ajax_safe": False, "default": True}]
    assert res["is_copyable"] is False
    kinds = {link["link_type"] for link in res["links"]}
    assert "OGC:WFS" not in kinds and "OGC:WCS" not in kinds
    wms = [link for link in res["links"] if link["link_type"] == "OGC:WMS"]
    assert [(w["url"], w["name"]) for w in wms] == [(site["ows"], site["countries"]["alternate"])]
    urls = {link["url"] for link in res["links"]}
    assert site["download"] in urls and site["page"]["url"] in urls
    png = next(link for link in res["links"] if link["name"] == "PNG")
    assert png["url"].startswith(site["ows"] + "?") and "request=GetMap" in png["url"]
    assert anon.get(png["url"]).status_code == 200  # the remote's own map of it
    assert res["ll_bbox_polygon"]["coordinates"][0][0] == [-180.0, -90.0]


def test_the_dataset_detail_names_the_remote_service(site, anon):
    r = anon.get(f"/api/v2/datasets/{site['found']['pk']}")
    assert r.status_code == 200, r.text
    ds = r.json()["dataset"]
    assert ds["ows_url"] == site["ows"] and ds["dataset_ows_url"] == site["ows"]
    assert ds["capabilities_url"].startswith(site["ows"] + "?") and "GetCapabilities" in ds["capabilities_url"]
    assert ds["ptype"] == "gxp_wmscsource" and ds["attribute_set"] == [] and ds["is_copyable"] is False


def test_lists_and_search_find_it(site, anon):
    for path in ("/api/v2/resources", "/api/v2/datasets"):
        r = anon.get(path, params={"search": "Remote countries"})
        assert r.status_code == 200, r.text
        key = "resources" if path.endswith("resources") else "datasets"
        assert str(site["found"]["pk"]) in [x["pk"] for x in r.json()[key]]
    r = anon.get("/api/v2/resources", params={"filter{subtype}": "remote", "page_size": 50})
    assert {x["pk"] for x in r.json()["resources"]} == {str(site["found"]["pk"]), str(site["dead"]["pk"])}
    r = anon.get("/api/v2/resources", params={"filter{sourcetype}": "REMOTE"})
    assert r.status_code == 200 and r.json()["total"] == 2


def test_records_and_embed_answer(site, anon):
    found = site["found"]
    res = anon.get(f"/api/v2/resources/{found['pk']}").json()["resource"]
    for link in res["links"]:
        if link["link_type"] == "metadata":
            r = anon.get(link["url"])
            assert r.status_code == 200 and b"Remote countries" in r.content, link
    r = anon.get(f"/datasets/{found['alternate']}/embed")
    assert r.status_code == 200 and "data-layer=\"remote:countries\"" in r.text
    assert anon.get(f"/catalogue/#/dataset/{found['pk']}").status_code == 200


def test_the_local_wms_draws_it_from_the_remote(site, anon):
    alternate = site["found"]["alternate"]
    caps = anon.get("/geoserver/ows", params={"service": "WMS", "request": "GetCapabilities"})
    assert caps.status_code == 200 and f"<Name>{alternate}</Name>" in caps.text
    common = {"service": "WMS", "version": "1.3.0", "request": "GetMap", "styles": "", "crs": "EPSG:4326",
              "bbox": "-90,-180,90,180", "width": "256", "height": "128", "format": "image/png", "transparent": "true"}
    image = _image(anon.get("/geoserver/ows", params={**common, "layers": alternate}))
    assert image.size == (256, 128) and _drawn(image) > 256 * 128 // 10
    # the same as the remote draws it itself
    theirs = _image(httpx.get(site["ows"], params={**common, "layers": site["countries"]["alternate"]}))
    assert image.tobytes() == theirs.tobytes()
    # under the local basemap... over it, in one image; and in JPEG
    both = _image(anon.get("/geoserver/ows", params={**common, "layers": f"catalogue:basemap,{alternate}"}))
    assert _drawn(both) >= _drawn(image)
    jpeg = anon.get("/geoserver/ows", params={**common, "layers": alternate, "format": "image/jpeg"})
    assert jpeg.status_code == 200 and jpeg.content[:3] == b"\xff\xd8\xff"
    # Web Mercator, WMS 1.1.1
    merc = anon.get("/geoserver/ows", params={**common, "version": "1.1.1", "srs": "EPSG:3857", "crs": None,
                                              "bbox": "-2e7,-1e7,2e7,1e7", "layers": alternate})
    assert _drawn(_image(merc)) > 0


def test_feature_info_and_legend_come_from_the_remote(site, anon):
    alternate = site["found"]["alternate"]
    r = anon.get("/geoserver/ows", params={
        "service": "WMS", "version": "1.1.1", "request": "GetFeatureInfo", "layers": alternate,
        "query_layers": alternate, "styles": "", "srs": "EPSG:4326", "bbox": "-10,40,20,60", "width": "300",
        "height": "200", "x": "120", "y": "100", "info_format": "application/json"})
    assert r.status_code == 200, r.text
    features = r.json()["features"]
    assert features and "name" in features[0]["properties"]
    legend = anon.get("/geoserver/ows", params={"service": "WMS", "request": "GetLegendGraphic", "layer": alternate,
                                                "format": "image/png"})
    assert legend.status_code == 200 and legend.content.startswith(b"\x89PNG")


def test_wfs_wcs_and_download_do_not_serve_it(site, anon):
    alternate = site["found"]["alternate"]
    wfs = anon.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                             "typeNames": alternate})
    assert 400 <= wfs.status_code < 500 and "remote" in wfs.text
    caps = anon.get("/geoserver/ows", params={"service": "WFS", "request": "GetCapabilities"})
    assert caps.status_code == 200 and alternate not in caps.text
    wcs = anon.get("/geoserver/ows", params={"service": "WCS", "version": "2.0.1", "request": "GetCoverage",
                                             "coverageId": alternate.replace(":", "__")})
    assert 400 <= wcs.status_code < 500
    download = anon.get(f"/datasets/{alternate}/dataset_download")
    assert download.status_code == 302 and download.headers["location"] == site["download"]
    none = anon.get(f"/datasets/{site['dead']['alternate']}/dataset_download")
    assert none.status_code == 404 and "remote" in none.json()["detail"]


def test_a_dead_remote_is_a_clear_error(site, anon):
    alternate = site["dead"]["alternate"]
    r = anon.get("/geoserver/ows", params={"service": "WMS", "version": "1.3.0", "request": "GetMap",
                                           "layers": alternate, "styles": "", "crs": "EPSG:4326",
                                           "bbox": "-90,-180,90,180", "width": "64", "height": "32",
                                           "format": "image/png"})
    assert r.status_code == 502 and "ServiceException" in r.text and "could not be reached" in r.text
    legend = anon.get("/geoserver/ows", params={"service": "WMS", "request": "GetLegendGraphic", "layer": alternate})
    assert legend.status_code == 502
    assert anon.get(f"/api/v2/resources/{site['dead']['pk']}").status_code == 200
    # a layer the remote does not have: its exception, passed on
    missing = make_remote(site["local"], "missing", site["ows"], "catalogue:no_such_layer")
    r = anon.get("/geoserver/ows", params={"service": "WMS", "version": "1.1.1", "request": "GetMap",
                                           "layers": missing["alternate"], "styles": "", "srs": "EPSG:4326",
                                           "bbox": "-180,-90,180,90", "width": "64", "height": "32",
                                           "format": "image/png"})
    assert r.status_code == 502 and "no_such_layer" in r.text


def test_it_is_not_copied(site, admin):
    r = admin.put(f"/api/v2/resources/{site['found']['pk']}/copy")
    assert r.status_code == 400 and "remote" in r.text


def test_a_thumbnail_from_the_remote(site, anon):
    local, found = site["local"], site["found"]
    database = Database(local.data_dir / "catalogue.sqlite3")
    try:
        with httpx.Client(timeout=30) as http:
            url = thumbnails.remote_thumbnail(database, thumbnails.folder(local.data_dir), found["pk"], found["uuid"],
                                              site["ows"], site["countries"]["alternate"], WORLD, http)
    finally:
        database.close()
    res = anon.get(f"/api/v2/resources/{found['pk']}").json()["resource"]
    assert res["thumbnail_url"].endswith(url)
    assert anon.get(res["thumbnail_url"]).content.startswith(b"\x89PNG")


def test_delete_removes_it_and_nothing_else(site, admin):
    local = site["local"]
    extra = make_remote(local, "to_delete", site["ows"], site["countries"]["alternate"])
    before = sorted(p.name for p in (local.data_dir / "files").iterdir()) if (local.data_dir / "files").is_dir() else []
    r = admin.delete(f"/api/v2/resources/{extra['pk']}")
    assert r.status_code == 204, r.text
    assert admin.get(f"/api/v2/resources/{extra['pk']}").status_code == 404
    after = sorted(p.name for p in (local.data_dir / "files").iterdir()) if (local.data_dir / "files").is_dir() else []
    assert after == before
    with db.transaction(local.data_dir / "catalogue.sqlite3") as conn:
        assert remote_layers.get(conn, extra["pk"]) is None
        assert remote_layers.links_of(conn, [extra["pk"]]) == {}
    # the remote's data are untouched
    with site["remote"].client() as c:
        assert c.get(f"/api/v2/datasets/{site['countries']['pk']}").status_code == 200
