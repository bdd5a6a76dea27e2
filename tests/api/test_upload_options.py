"""The upload form's options: ISO XML and SLD files, time series, new data for an existing dataset,
skipping layers that exist, uploads onto a dataset, the forms QGIS and geonodectl send, and the
list of upload sessions."""

import io
import time
import zipfile
from pathlib import Path

import numpy as np
import pyogrio
import pyogrio.raw
import pytest

from tests.api.test_uploads import CITIES, COUNTRIES, DATA, finished, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_group, make_user, poll

METADATA = DATA / "metadata"
ISO_TITLE = "Wader counts on the Fenland washes, 2019-2023"


@pytest.fixture(scope="module")
def opt(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("options") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other = make_user(admin), make_user(admin)
    yield {"srv": srv, "admin": admin, "owner": owner, "other": other}
    admin.close()
    srv.stop()


def test_xml_and_sld_files_go_with_the_dataset(opt):
    srv = opt["srv"]
    xml, sld = (METADATA / "iso19139_full.xml").read_bytes(), (METADATA / "sld10_polygon.sld").read_bytes()
    with login(srv, opt["owner"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files={
            **shapefile_parts(COUNTRIES), "xml_file": ("meadows.xml", xml, "text/xml"),
            "sld_file": ("meadows.sld", sld, "application/vnd.ogc.sld+xml")}))
        assert dataset["title"] == ISO_TITLE and dataset["abstract"].startswith("Monthly counts of wading birds")
        assert {"waders", "wetlands"} <= {k["name"] for k in dataset["keywords"]}
        assert dataset["category"]["identifier"] == "biota" and dataset["date"] == "2024-03-01T13:30:00.000000Z"
        assert dataset["date_type"] == "creation" and dataset["temporal_extent_start"].startswith("2019-04-01")
        assert dataset["extent"]["coords"][0] < -170  # a dataset keeps the extent of its data, not the document's
        iso = [link for link in dataset["links"] if link["name"] == "ISO (uploaded)"]
        assert iso and iso[0]["link_type"] == "metadata" and iso[0]["url"].endswith("/iso_metadata_xml")
        r = c.get(iso[0]["url"])
        assert r.status_code == 200 and r.content == xml and r.headers["content-type"].startswith("application/xml")
        style = dataset["default_style"]
        assert style["name"] == dataset["name"] and style["workspace"] == "catalogue"
        assert style["sld_title"] == "Flood meadows by management status" and dataset["styles"] == [style]
        r = c.get(style["sld_url"])
        assert r.status_code == 200 and r.content == sld
        gs = style["sld_url"].replace("/geoserver/", "/gs/")  # where QGIS sends it
        assert c.get(gs).content == sld
    with srv.client() as anon:  # public dataset: anyone reads its style and metadata document
        assert anon.get(style["sld_url"]).status_code == 200
        assert anon.get(iso[0]["url"]).content == xml


def test_a_dataset_without_sld_gets_a_style_for_its_geometry(opt):
    srv = opt["srv"]
    with login(srv, opt["owner"]) as c:
        points = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                                    data={"permissions": '{"users": {"AnonymousUser": []}}'}))
        raster = imported(c, c.post("/api/v2/uploads/upload", files={
            "base_file": ("shade.tif", (DATA / "shade.tif").read_bytes(), "image/tiff")}))
        for dataset, symbolizer in ((points, b"PointSymbolizer"), (raster, b"RasterSymbolizer")):
            r = c.get(dataset["default_style"]["sld_url"])
            assert r.status_code == 200 and symbolizer in r.content and dataset["name"].encode() in r.content
            assert r.headers["content-type"].startswith("application/vnd.ogc.sld+xml")
        assert not [link for link in points["links"] if link["name"] == "ISO (uploaded)"]
        assert_envelope(c.get(f"/api/v2/resources/{points['pk']}/iso_metadata_xml"), 404, "not_found")
    with srv.client() as anon:  # a private dataset's style is as private as the dataset
        assert_envelope(anon.get(points["default_style"]["sld_url"]), 404, "not_found")
        assert_envelope(anon.get("/geoserver/rest/workspaces/catalogue/styles/nosuch.sld"), 404, "not_found")


def test_put_metadata_writes_an_iso_document_into_the_dataset(opt):
    srv = opt["srv"]
    xml = (METADATA / "iso19139_full.xml").read_bytes()
    with login(srv, opt["owner"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                                     data={"dataset_title": "Cities", "abstract": "Before"}))
        pk = dataset["pk"]
        with login(srv, opt["other"]) as other:
            assert_envelope(other.put(f"/api/v2/datasets/{pk}/metadata", files={"metadata_file": ("m.xml", xml)}),
                            403, "permission_denied")
        with srv.client() as anon:
            assert_envelope(anon.put(f"/api/v2/datasets/{pk}/metadata", files={"metadata_file": ("m.xml", xml)}),
                            401, "not_authenticated")
        assert c.get(f"/api/v2/datasets/{pk}").json()["dataset"]["title"] == "Cities"
        r = c.put(f"/api/v2/datasets/{pk}/metadata", files={"metadata_file": ("m.xml", xml, "text/xml")})
        assert r.status_code == 200 and r.json() == {"success": True, "message": ["Metadata successfully updated"]}
        after = c.get(f"/api/v2/datasets/{pk}").json()["dataset"]
        assert after["title"] == ISO_TITLE and after["abstract"] != "Before"
        assert c.get(f"/api/v2/resources/{pk}/iso_metadata_xml").content == xml
        assert_envelope(c.put("/api/v2/datasets/999999/metadata", files={"metadata_file": ("m.xml", xml)}),
                        404, "not_found", "Dataset with ID 999999 is not available")
        assert_envelope(c.put(f"/api/v2/datasets/{pk}/metadata", files={"metadata_file": ("m.xml", b"<oops")}),
                        400, "invalid_metadata_exception")
        assert_envelope(c.put(f"/api/v2/datasets/{pk}/metadata", files={"other": ("m.xml", xml)}), 400, "invalid")
        assert_envelope(c.put(f"/api/v2/datasets/{pk}/metadata", json={"metadata_file": "x"}), 415,
                        "unsupported_media_type")
        assert c.get(f"/api/v2/datasets/{pk}").json()["dataset"]["title"] == ISO_TITLE  # the refused ones changed nothing


def _timed_points(folder: Path) -> Path:
    """A GeoPackage of the cities, each with a visit date and a text field."""
    meta, _, geometry, fields = pyogrio.raw.read(CITIES / "naturalearth_cities.shp")
    days = np.array(["2021-03-01T08:00:00", "2020-01-15T00:00:00", "2023-11-30T18:30:00"] * 81, dtype="datetime64[ms]")
    path = folder / "visits.gpkg"
    pyogrio.raw.write(path, geometry, [fields[0], days], ["name", "visited"], driver="GPKG", crs="EPSG:4326",
                      geometry_type="Point", layer="visits")
    return path


def test_time_on_layers_dated_by_fields_of_other_names(opt, tmp_path):
    """Each layer of a GeoPackage is dated by its own first date field."""
    meta, _, geometry, fields = pyogrio.raw.read(CITIES / "naturalearth_cities.shp")
    path = tmp_path / "two.gpkg"
    for layer, column, day in (("visits", "visited", "2021-03-01"), ("counts", "counted", "2019-06-30")):
        days = np.array([f"{day}T00:00:00"] * len(geometry), dtype="datetime64[ms]")
        pyogrio.raw.write(path, geometry, [days], [column], driver="GPKG", crs="EPSG:4326", geometry_type="Point",
                          layer=layer, append=path.exists())
    with login(opt["srv"], opt["owner"]) as c:
        status = finished(c, c.post("/api/v2/uploads/upload", data={"time": "true"},
                                    files={"base_file": (path.name, path.read_bytes())}))
        assert status["status"] == "finished", status
        starts = {c.get(f"/api/v2/datasets/{r['id']}").json()["dataset"]["temporal_extent_start"]
                  for r in status["output_params"]["resources"]}
        assert starts == {"2021-03-01T00:00:00.000000Z", "2019-06-30T00:00:00.000000Z"}


def test_time_makes_a_vector_time_series(opt, tmp_path):
    srv = opt["srv"]
    path = _timed_points(tmp_path)
    files = {"base_file": (path.name, path.read_bytes(), "application/octet-stream")}
    with login(srv, opt["owner"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=files, data={"time": "true"}))
        assert dataset["subtype"] == "vector_time" and dataset["has_time"] is True
        assert dataset["temporal_extent_start"] == "2020-01-15T00:00:00.000000Z"
        assert dataset["temporal_extent_end"] == "2023-11-30T18:30:00.000000Z"
        assert c.get(f"/datasets/{dataset['alternate']}/dataset_download").status_code == 200
        plain = imported(c, c.post("/api/v2/uploads/upload", files=files, data={"time": "False"}))
        assert plain["subtype"] == "vector" and plain["has_time"] is False and plain["temporal_extent_start"] is None
        r = c.post("/api/v2/uploads/upload", files=files, data={"time": "true", "time_attribute": "name"})
        assert_envelope(r, 400, "invalid")
        assert "visited" in r.json()["errors"][0]
        r = c.post("/api/v2/uploads/upload", data={"time": "true"},
                   files={"base_file": ("shade.tif", (DATA / "shade.tif").read_bytes(), "image/tiff")})
        assert_envelope(r, 400, "invalid")
        assert_envelope(c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES), data={"time": "true"}),
                        400, "invalid")


def test_new_data_for_an_existing_dataset_keeps_its_record(opt):
    srv, owner, other = opt["srv"], opt["owner"], opt["other"]
    with login(srv, owner) as c:
        first = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES), data={
            "dataset_title": "Places", "permissions": '{"users": {"AnonymousUser": []}}'}))
        c.patch(f"/api/v2/datasets/{first['pk']}", json={"attribute_set": [{"attribute": "name", "label": "Place"}]})
        old_folder = srv.data_dir / "files" / first["uuid"]
        assert old_folder.is_dir()
        with login(srv, other) as o:  # another user may not replace it (and cannot see it)
            assert_envelope(o.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES), data={
                "overwrite_existing_layer": "true", "resource_pk": first["pk"]}), 404, "not_found")
        replaced = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES), data={
            "overwrite_existing_layer": "true", "resource_pk": first["pk"]}))
        assert (replaced["pk"], replaced["uuid"], replaced["alternate"]) == (first["pk"], first["uuid"], first["alternate"])
        assert replaced["title"] == "Places" and replaced["subtype"] == "vector"
        assert replaced["extent"]["coords"] != first["extent"]["coords"]
        names = [a["attribute"] for a in replaced["attribute_set"]]
        assert "pop_est" in names and names[0] == "geometry"
        assert c.get("/api/v2/datasets/").json()["total"] >= 1
        r = c.get(f"/datasets/{replaced['alternate']}/dataset_download")
        with zipfile.ZipFile(io.BytesIO(r.content)) as z:
            dbf = next(n for n in z.namelist() if n.endswith(".dbf"))
            assert len(z.read(dbf)) > 10_000  # 177 countries, not 243 cities' names
        assert not old_folder.exists() and list((srv.data_dir / "files").glob(f"{first['uuid']}-*"))
        again = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES), data={
            "action": "replace", "resource_pk": first["pk"]}))
        assert again["pk"] == first["pk"] and "pop_est" not in [a["attribute"] for a in again["attribute_set"]]
        label = next(a for a in again["attribute_set"] if a["attribute"] == "name")["attribute_label"]
        assert label == "Place"  # a field that came back kept its label
    with srv.client() as anon:  # the permissions stayed as they were: private
        assert_envelope(anon.get(f"/api/v2/datasets/{first['pk']}"), 404, "not_found")
    r = opt["admin"].delete(f"/api/v2/resources/{first['pk']}/delete")
    assert r.status_code == 200
    poll(opt["admin"], r.json()["status_url"])
    for _ in range(100):  # the files go just after the request is finished
        if not list((srv.data_dir / "files").glob(f"{first['uuid']}*")):
            break
        time.sleep(0.05)
    assert not list((srv.data_dir / "files").glob(f"{first['uuid']}*"))


def test_editors_replace_data_and_viewers_may_not(opt):
    srv, admin = opt["srv"], opt["admin"]
    owner, editor, viewer = opt["owner"], make_user(admin), make_user(admin)
    group = make_group(admin)
    admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [viewer["pk"]], "role": "member"})
    with login(srv, owner) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES)))
        r = c.put(f"/api/v2/resources/{dataset['pk']}/permissions", json={
            "users": [{"id": editor["pk"], "permissions": "edit"}],
            "organizations": [{"id": group["group"]["pk"], "permissions": "view"}]})
        assert poll(c, r.json()["status_url"])["status"] == "finished"
    files = {**shapefile_parts(CITIES)}
    with login(srv, viewer) as v:
        assert_envelope(v.post("/api/v2/uploads/upload", files=files, data={
            "overwrite_existing_layer": "true", "resource_pk": dataset["pk"]}), 403, "permission_denied")
    with login(srv, editor) as e:
        status = finished(e, e.post("/api/v2/uploads/upload", files=files, data={
            "overwrite_existing_layer": "true", "resource_pk": dataset["pk"]}))
        assert status["status"] == "finished" and status["output_params"]["resources"][0]["id"] == int(dataset["pk"])
    with srv.client() as anon:
        assert_envelope(anon.post("/api/v2/uploads/upload", files=files, data={
            "overwrite_existing_layer": "true", "resource_pk": dataset["pk"]}), 401, "not_authenticated")


def test_overwrite_by_name_and_skip_existing_layers(opt):
    srv = opt["srv"]
    user = make_user(opt["admin"])
    with login(srv, user) as c:
        first = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES)))
        total = c.get("/api/v2/datasets/", params={"filter{owner.username}": user["username"]}).json()["total"]
        status = finished(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                                    data={"skip_existing_layers": "true"}))
        assert status["status"] == "finished", status
        assert status["output_params"]["resources"] == [] and status["output_params"]["skipped_layers"] == [
            "naturalearth_cities"]
        same = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                                  data={"overwrite_existing_layer": "True"}))
        assert same["pk"] == first["pk"]
        assert c.get("/api/v2/datasets/", params={"filter{owner.username}": user["username"]}).json()["total"] == total
        assert_envelope(c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES), data={
            "overwrite_existing_layer": "true", "skip_existing_layers": "true"}), 400, "invalid")
    with login(srv, opt["other"]) as o:  # another user's layer of that name is not theirs to skip
        status = finished(o, o.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                                    data={"skip_existing_layers": "true"}))
        assert len(status["output_params"]["resources"]) == 1


def test_uploads_onto_a_dataset_set_its_metadata_and_style(opt):
    srv = opt["srv"]
    xml, sld = (METADATA / "iso19139_minimal.xml").read_bytes(), (METADATA / "sld11_qgis_polygon.sld").read_bytes()
    with login(srv, opt["owner"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES)))
        status = finished(c, c.post("/api/v2/uploads/upload", files={"base_file": ("m.xml", xml, "text/xml")},
                                    data={"action": "resource_metadata_upload", "resource_pk": dataset["pk"]}))
        assert status["status"] == "finished" and status["output_params"]["resources"][0]["id"] == int(dataset["pk"])
        after = c.get(f"/api/v2/datasets/{dataset['pk']}").json()["dataset"]
        assert after["title"] != dataset["title"] and c.get(f"/api/v2/resources/{dataset['pk']}/iso_metadata_xml").content == xml
        status = finished(c, c.post("/api/v2/uploads/upload", files={"base_file": ("s.sld", sld, "text/xml")},
                                    data={"action": "resource_style_upload", "resource_pk": dataset["pk"]}))
        assert status["status"] == "finished"
        assert c.get(after["default_style"]["sld_url"]).content == sld
        assert_envelope(c.post("/api/v2/uploads/upload", files={"base_file": ("s.sld", b"<x/>", "text/xml")},
                               data={"action": "resource_style_upload", "resource_pk": dataset["pk"]}), 400, "invalid")
    with login(srv, opt["other"]) as o:
        assert_envelope(o.post("/api/v2/uploads/upload", files={"base_file": ("m.xml", xml, "text/xml")},
                               data={"action": "resource_metadata_upload", "resource_pk": dataset["pk"]}),
                        403, "permission_denied")


def test_the_forms_qgis_and_geonodectl_send(opt):
    srv = opt["srv"]
    with login(srv, opt["owner"]) as c:
        qgis = {"dataset_title": "Roads from QGIS", "abstract": "", "time": "false", "mosaic": "false",
                "metadata_uploaded_preserve": "false", "metadata_upload_form": "false", "style_upload_form": "false",
                "action": "upload", "permissions": '{"users": {"AnonymousUser": ["view_resourcebase"]}, "groups": {}}'}
        parts = {k: (n, b, "application/qgis") for k, (n, b, _) in shapefile_parts(CITIES).items()}
        dataset = imported(c, c.post("/api/v2/uploads/upload/", files=parts, data=qgis))
        assert dataset["title"] == "Roads from QGIS"
        geonodectl = {"permissions": '{ "users": {"AnonymousUser": ["view_resourcebase"]} , "groups":{}}',
                      "mosaic": "False", "time": "False", "charset": "UTF-8", "non_interactive": "True",
                      "overwrite_existing_layer": "False", "skip_existing_layers": "False"}
        r = c.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES), data=geonodectl)
        request = c.get(f"/api/v2/executionrequest/{r.json()['execution_id']}").json()["request"]
        for key in ("exec_id", "status", "created", "name", "link"):  # what geonodectl prints
            assert request[key]
        assert imported(c, r)["title"] == "naturalearth_lowres"
    with srv.client() as anon:  # view only: listed, not downloadable
        assert anon.get(f"/api/v2/datasets/{dataset['pk']}").status_code == 200
        assert anon.get(f"/datasets/{dataset['alternate']}/dataset_download").status_code == 401


def test_upload_sessions_list_the_callers_uploads(opt):
    srv, admin = opt["srv"], opt["admin"]
    user = make_user(admin)
    with login(srv, user) as c:
        r = c.post("/api/v2/uploads", files=shapefile_parts(CITIES))  # the list URL takes uploads too
        assert r.status_code == 201
        status = finished(c, r)
        body = c.get("/api/v2/uploads/").json()
        assert set(body) == {"links", "total", "page", "page_size", "uploads"} and body["total"] == 1
        row = body["uploads"][0]
        for key, kind in (("id", int), ("name", str), ("create_date", str), ("state", str), ("link", str)):
            assert isinstance(row[key], kind), key
        assert row["state"] == "PROCESSED" and row["complete"] is True and row["execution_id"] == status["exec_id"]
        assert row["resource"]["pk"] == status["output_params"]["resources"][0]["id"]
        detail = c.get(row["link"]).json()["upload"]
        assert detail == row
        assert c.get(f"/api/v2/uploads/{row['id']}/").json()["upload"]["id"] == row["id"]
        assert_envelope(c.get("/api/v2/uploads/upload"), 405, "method_not_allowed")
    with login(srv, opt["other"]) as o:
        assert all(u["id"] != row["id"] for u in o.get("/api/v2/uploads/", params={"page_size": 100}).json()["uploads"])
        assert_envelope(o.get(f"/api/v2/uploads/{row['id']}"), 404, "not_found")
    assert any(u["id"] == row["id"] for u in admin.get("/api/v2/uploads/", params={"page_size": 1000}).json()["uploads"])
    with srv.client() as anon:
        assert_envelope(anon.get("/api/v2/uploads/"), 401, "not_authenticated")
    assert_envelope(admin.get("/api/v2/uploads/nosuch"), 404, "not_found")


def test_a_style_is_saved_at_its_sld_url_as_qgis_does(opt):
    srv, admin = opt["srv"], opt["admin"]
    viewer = make_user(admin)
    with login(srv, opt["owner"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES), data={
            "permissions": '{"users": {"AnonymousUser": []}}'}))
        r = c.put(f"/api/v2/resources/{dataset['pk']}/permissions", json={"users": [{"id": viewer["pk"], "permissions": "view"}]})
        assert poll(c, r.json()["status_url"])["status"] == "finished"
        url = dataset["default_style"]["sld_url"].replace("/geoserver/", "/gs/")  # QGIS's rewrite
        qgis = (METADATA / "sld11_qgis_polygon.sld").read_bytes()
        r = c.put(url, content=qgis, headers={"content-type": "application/vnd.ogc.se+xml"})
        assert r.status_code == 200, r.text  # exactly 200: QGIS checks for it
        assert c.get(dataset["default_style"]["sld_url"]).content == qgis
        after = c.get(f"/api/v2/datasets/{dataset['pk']}").json()["dataset"]
        assert after["default_style"]["sld_title"] != dataset["default_style"]["sld_title"]
        latin = (METADATA / "sld10_polygon.sld").read_text(encoding="utf-8").replace(
            'encoding="UTF-8"', 'encoding="ISO-8859-1"').replace("Flood meadows", "Prés inondés").encode("iso-8859-1")
        assert c.put(url, content=latin, headers={"content-type": "application/vnd.ogc.sld+xml"}).status_code == 200
        assert c.get(url).content == latin  # kept as its bytes, in its own encoding
        assert_envelope(c.put(url, content=b"<html/>"), 400, "invalid")
        assert_envelope(c.put(url.replace(dataset["name"], "nosuch"), content=qgis), 404, "not_found")
    with login(srv, viewer) as v:
        assert v.get(url).status_code == 200
        assert_envelope(v.put(url, content=qgis), 403, "permission_denied")
    with login(srv, opt["other"]) as o:
        assert_envelope(o.put(url, content=qgis), 404, "not_found")
    with srv.client() as anon:
        assert_envelope(anon.put(url, content=qgis), 401, "not_authenticated")
    with login(srv, opt["owner"]) as c:
        assert c.get(url).content == latin
