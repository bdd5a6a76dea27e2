"""The datasets API on uploaded data: the dataset fields, metadata edits, attribute_set, maplayers and
maps, copies, and who may do what (anonymous, another user, a group member, the owner, an admin)."""

import pytest

from tests.api.test_uploads import CITIES, COUNTRIES, DATA, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_group, make_user, poll
from tests.row_shape import check_row

STYLE_KEYS = {"pk", "name", "workspace", "sld_title", "sld_url"}


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    """A public vector and raster dataset and a private one shared with a group for viewing."""
    srv = in_process(tmp_path_factory.mktemp("datasets") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other, member = make_user(admin), make_user(admin), make_user(admin)
    group = make_group(admin)
    admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]], "role": "member"})
    with login(srv, owner) as c:
        countries = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES),
                                       data={"dataset_title": "Countries"}))
        raster = imported(c, c.post("/api/v2/uploads/upload", files={
            "base_file": ("RGB.byte.tif", (DATA / "RGB.byte.tif").read_bytes(), "image/tiff")}))
        private = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES), data={
            "dataset_title": "Private cities", "permissions": '{"users": {"AnonymousUser": []}}'}))
        r = c.put(f"/api/v2/resources/{private['pk']}/permissions",
                  json={"organizations": [{"id": group["group"]["pk"], "permissions": "view"}]})
        assert poll(c, r.json()["status_url"])["status"] == "finished"
    yield {"srv": srv, "admin": admin, "owner": owner, "other": other, "member": member, "countries": countries,
           "raster": raster, "private": private}
    admin.close()
    srv.stop()


def test_dataset_rows_carry_geonodes_dataset_fields(ds):
    srv, countries = ds["srv"], ds["countries"]
    with srv.client() as anon:
        rows = anon.get("/api/v2/datasets/").json()["datasets"]
        detail = anon.get(f"/api/v2/datasets/{countries['pk']}").json()["dataset"]
        resource = anon.get(f"/api/v2/resources/{countries['pk']}").json()["resource"]
    row = next(r for r in rows if r["pk"] == countries["pk"])
    for item in (row, detail):
        check_row(item, srv.url)
        assert item["name"] == item["alternate"].split(":")[1] and item["workspace"] == "catalogue"
        assert item["ptype"] == "gxp_wmscsource" and item["store"] and item["charset"]
        assert item["is_mosaic"] is False and item["has_time"] is False and item["has_elevation"] is False
        assert item["time_regex"] is None and item["elevation_regex"] is None
        assert set(item["default_style"]) == STYLE_KEYS and item["styles"] == [item["default_style"]]
        assert item["featureinfo_custom_template"].startswith("<div") and "${properties" in item["featureinfo_custom_template"]
        assert item["is_copyable"] is True
    for key in ("attribute_set", "ows_url", "capabilities_url", "dataset_ows_url"):  # detail only, as GeoNode
        assert key not in row and key in detail
    assert detail["ows_url"] == f"{srv.url}/geoserver/ows"
    assert "request=GetCapabilities" in detail["capabilities_url"]
    assert [a["attribute"] for a in detail["attribute_set"]][:2] == ["geometry", "pop_est"]
    assert "name" not in resource and "default_style" not in resource  # /resources keeps the common fields
    assert ds["raster"]["featureinfo_custom_template"] is None and ds["raster"]["subtype"] == "raster"
    with srv.client() as anon:  # include[] and exclude[] know the dataset fields
        body = anon.get("/api/v2/datasets/", params={"include[]": "default_style", "exclude[]": "*"}).json()
        assert all(set(r) == {"default_style"} for r in body["datasets"])
        assert_envelope(anon.get("/api/v2/resources/", params={"include[]": "nosuch"}), 400, "parse_error")


def test_metadata_edits_and_what_cannot_change(ds):
    srv, pk = ds["srv"], ds["countries"]["pk"]
    with login(srv, ds["owner"]) as c:
        before = c.get(f"/api/v2/datasets/{pk}").json()["dataset"]
        r = c.patch(f"/api/v2/datasets/{pk}", json={
            "title": "Countries of the world", "abstract": "Natural Earth, 1:110m", "license": {"identifier": "cc-by"},
            "category": {"identifier": "boundaries"}, "keywords": ["borders", "world"], "date_type": "revision",
            "temporal_extent_start": "2020-01-01T00:00:00Z",
            "bbox_polygon": {"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [0, 0]]]},
            "ll_bbox_polygon": None, "extent": {"coords": [0, 0, 1, 1], "srid": "EPSG:4326"}})
        assert r.status_code == 200, r.text
        after = r.json()["dataset"]
        assert after["title"] == "Countries of the world" and after["abstract"] == "Natural Earth, 1:110m"
        assert after["category"]["identifier"] == "boundaries" and {k["name"] for k in after["keywords"]} == {"borders", "world"}
        assert after["date_type"] == "revision" and after["temporal_extent_start"] == "2020-01-01T00:00:00.000000Z"
        for key in ("bbox_polygon", "ll_bbox_polygon", "extent", "alternate", "name", "srid"):  # derived from the data
            assert after[key] == before[key], key
        assert "attribute_set" in after  # the detail representation
        r = c.put(f"/api/v2/datasets/{pk}/", json={"title": "Countries"})
        assert r.status_code == 200 and r.json()["dataset"]["title"] == "Countries"
        r = c.patch(f"/api/v2/datasets/{pk}", json={"regions": ["CHE", "France", {"code": "ITA"}]})
        assert sorted(g["name"] for g in r.json()["dataset"]["regions"]) == ["France", "Italy", "Switzerland"]
        assert c.get("/api/v2/datasets/", params={"filter{regions.code}": "CHE"}).json()["total"] >= 1
        assert_envelope(c.patch(f"/api/v2/datasets/{pk}", json={"regions": ["Atlantis"]}), 400, "invalid")
        assert_envelope(c.patch(f"/api/v2/datasets/{pk}", json={"regions": "CHE"}), 400, "invalid")
        assert_envelope(c.patch(f"/api/v2/datasets/{pk}", json={"category": {"identifier": "nosuch"}}), 400, "invalid")
        assert_envelope(c.patch(f"/api/v2/datasets/{pk}", json={"title": ""}), 400, "invalid")
    with login(srv, ds["other"]) as o:
        assert_envelope(o.patch(f"/api/v2/datasets/{pk}", json={"title": "Mine"}), 403, "permission_denied")
    with srv.client() as anon:
        assert_envelope(anon.patch(f"/api/v2/datasets/{pk}", json={"title": "Mine"}), 401, "not_authenticated")
        assert anon.get(f"/api/v2/datasets/{pk}").json()["dataset"]["title"] == "Countries"


def test_attribute_set_changes(ds):
    srv, pk = ds["srv"], ds["countries"]["pk"]
    with login(srv, ds["owner"]) as c:
        attributes = c.get(f"/api/v2/datasets/{pk}/attribute_set").json()["attributes"]
        name = next(a for a in attributes if a["attribute"] == "name")
        for a in attributes:
            assert {"pk", "attribute", "attribute_label", "description", "attribute_type", "visible", "display_order",
                    "featureinfo_type", "count", "min", "max", "average", "median", "stddev", "sum", "unique_values",
                    "last_stats_updated"} == set(a)
        r = c.patch(f"/api/v2/datasets/{pk}/attribute_set", json={"attributes": [
            {"pk": name["pk"], "attribute_label": "Country", "description": "Its short name", "display_order": 1},
            {"attribute": "pop_est", "visible": False}]})
        assert r.status_code == 200, r.text
        changed = {a["attribute"]: a for a in r.json()["attributes"]}
        assert (changed["name"]["attribute_label"], changed["name"]["description"]) == ("Country", "Its short name")
        assert changed["pop_est"]["visible"] is False and changed["name"]["display_order"] == 1
        template = c.get(f"/api/v2/datasets/{pk}").json()["dataset"]["featureinfo_custom_template"]
        assert "Country:" in template and "pop_est" not in template  # hidden fields are left out of the info popup
        # geonodectl's form: PATCH the dataset with "attribute" items, "label" for the label
        r = c.patch(f"/api/v2/datasets/{pk}/", json={"attribute": [{"attribute": "name", "label": "State"}]})
        assert r.status_code == 200
        assert next(a for a in r.json()["dataset"]["attribute_set"] if a["attribute"] == "name")["attribute_label"] == "State"
        for bad in ({"attributes": [{"attribute": "nosuch", "visible": False}]}, {"attributes": "all"},
                    {"attributes": [{"pk": name["pk"], "visible": "sometimes"}]}, [{"pk": 10**9}],
                    {"attributes": [{"attribute": "name", "attribute_label": "X"}, {"attribute": "nosuch"}]}):
            assert_envelope(c.patch(f"/api/v2/datasets/{pk}/attribute_set", json=bad), 400, "invalid")
        after = {a["attribute"]: a for a in c.get(f"/api/v2/datasets/{pk}/attribute_set").json()["attributes"]}
        assert after["name"]["attribute_label"] == "State"  # a refused batch changed nothing
        other_pk = ds["raster"]["pk"]  # an attribute of another dataset is not this one's
        band = c.get(f"/api/v2/datasets/{other_pk}/attribute_set").json()["attributes"][0]["pk"]
        assert_envelope(c.patch(f"/api/v2/datasets/{pk}/attribute_set", json=[{"pk": band, "visible": False}]),
                        400, "invalid")
    with login(srv, ds["other"]) as o:
        assert_envelope(o.patch(f"/api/v2/datasets/{pk}/attribute_set", json=[{"attribute": "name", "label": "x"}]),
                        403, "permission_denied")
    with srv.client() as anon:
        assert_envelope(anon.patch(f"/api/v2/datasets/{pk}/attribute_set", json=[{"attribute": "name"}]),
                        401, "not_authenticated")


def test_maplayers_and_maps_are_empty_lists(ds):
    srv = ds["srv"]
    with srv.client() as anon:
        for what in ("maplayers", "maps"):
            r = anon.get(f"/api/v2/datasets/{ds['countries']['pk']}/{what}")
            assert r.status_code == 200 and r.json() == []
            assert_envelope(anon.get(f"/api/v2/datasets/{ds['private']['pk']}/{what}"), 404, "not_found")
            assert_envelope(anon.get(f"/api/v2/datasets/999999/{what}/"), 404, "not_found")


def test_a_copy_of_a_dataset_has_its_own_data_and_name(ds, tmp_path):
    srv = ds["srv"]
    source = ds["countries"]
    with login(srv, ds["other"]) as o:
        r = o.put(f"/api/v2/resources/{source['pk']}/copy", json={"defaults": {"title": "My countries"}})
        assert r.status_code == 200, r.text
        status = poll(o, r.json()["status_url"])
        assert status["status"] == "finished", status
        copy = o.get(f"/api/v2/datasets/{status['output_params']['output']['pk']}").json()["dataset"]
        assert copy["title"] == "My countries" and copy["owner"]["pk"] == ds["other"]["pk"]
        assert copy["alternate"] != source["alternate"] and copy["name"].startswith(source["name"].split("_")[0])
        assert copy["default_style"]["name"] == copy["name"] and copy["uuid"] != source["uuid"]
        original = o.get(f"/api/v2/datasets/{source['pk']}/attribute_set").json()["attributes"]
        assert [(a["attribute"], a["attribute_label"]) for a in copy["attribute_set"]] == \
            [(a["attribute"], a["attribute_label"]) for a in original]
        r = o.get(f"/datasets/{copy['alternate']}/dataset_download")
        assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
        assert (srv.data_dir / "files" / copy["uuid"] / "working" / "data.gpkg").is_file()
        assert o.get(copy["default_style"]["sld_url"]).status_code == 200
    with login(srv, ds["member"]) as m:  # view is not enough to copy a dataset: it takes download
        assert_envelope(m.put(f"/api/v2/resources/{ds['private']['pk']}/copy"), 403, "permission_denied")


def test_who_may_do_what_on_a_private_dataset(ds):
    """anonymous and another user see nothing; the group member views but may not download or
    change; the owner and an admin may do everything."""
    srv, private = ds["srv"], ds["private"]
    pk, alternate = private["pk"], private["alternate"]
    style = private["default_style"]["sld_url"].replace(srv.url, "")
    reads = {"detail": f"/api/v2/datasets/{pk}", "attributes": f"/api/v2/datasets/{pk}/attribute_set",
             "maps": f"/api/v2/datasets/{pk}/maps", "style": style}
    callers = {"owner": login(srv, ds["owner"]), "admin": srv.client(auth=("admin", ADMIN_PASSWORD)),
               "anonymous": srv.client(), "other": login(srv, ds["other"]), "member": login(srv, ds["member"])}
    try:
        for who, c in callers.items():
            sees = who in ("member", "owner", "admin")
            for what, path in reads.items():
                r = c.get(path)
                assert r.status_code == (200 if sees else 404), (who, what, r.text)
            listed = {d["pk"] for d in c.get("/api/v2/datasets/", params={"page_size": 100}).json()["datasets"]}
            assert (pk in listed) == sees, who
            r = c.get(f"/datasets/{alternate}/dataset_download")
            expected = {"anonymous": 404, "other": 404, "member": 403, "owner": 200, "admin": 200}[who]
            assert r.status_code == expected, (who, r.text)
            r = c.patch(f"/api/v2/datasets/{pk}/attribute_set", json=[{"attribute": "name", "description": who}])
            expected = {"anonymous": 401, "other": 404, "member": 403, "owner": 200, "admin": 200}[who]
            assert r.status_code == expected, (who, r.text)
            r = c.put(f"/api/v2/datasets/{pk}/metadata", files={
                "metadata_file": ("m.xml", (DATA / "metadata" / "iso19139_minimal.xml").read_bytes())})
            expected = {"anonymous": 401, "other": 404, "member": 403, "owner": 200, "admin": 200}[who]
            assert r.status_code == expected, (who, r.text)
            r = c.get(f"/api/v2/resources/{pk}/iso_metadata_xml")
            assert r.status_code == (200 if sees else 404), (who, r.text)
    finally:
        for c in callers.values():
            c.close()


def test_a_deleted_dataset_takes_its_files_and_waits_for_its_jobs(ds):
    import sqlite3
    import uuid

    srv = ds["srv"]
    with login(srv, ds["owner"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES)))
        folder = srv.data_dir / "files" / dataset["uuid"]
        assert folder.is_dir()
        with sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30) as db:  # a job on it, still running
            db.execute("INSERT INTO execution_requests (exec_id, user_id, func_name, action, status, resource_id,"
                       " runner_pid, created, last_updated) VALUES (?, ?, 'update', 'update', 'running', ?, ?,"
                       " '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                       (str(uuid.uuid4()), ds["owner"]["pk"], int(dataset["pk"]), srv.pid))
        assert_envelope(c.delete(f"/api/v2/resources/{dataset['pk']}"), 409, "conflict")
        with sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30) as db:
            db.execute("DELETE FROM execution_requests WHERE resource_id = ?", (int(dataset["pk"]),))
        assert c.delete(f"/api/v2/resources/{dataset['pk']}").status_code == 204
        assert not folder.exists() and not list((srv.data_dir / "files").glob(f"{dataset['uuid']}*"))
        assert_envelope(c.get(f"/api/v2/datasets/{dataset['pk']}"), 404, "not_found")
        assert_envelope(c.get(dataset["default_style"]["sld_url"]), 404, "not_found")
