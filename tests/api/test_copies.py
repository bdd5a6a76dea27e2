"""Copies through PUT /api/v2/resources/{pk}/copy: a copy of a vector or raster dataset is a
dataset of its own (files, alternate, style, metadata, thumbnail) that the WMS draws and that
downloads after the original is deleted, owned by the caller with the permissions of a new
resource; a document's copy has its own file; who may copy what; a failed copy leaves nothing."""

from __future__ import annotations

import io
import time
import zipfile

import pytest
from PIL import Image

from tests.api.test_uploads import CITIES, DATA, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, insert_resource, login, make_user, poll

WORLD = (-180, -90, 180, 90)


@pytest.fixture(scope="module")
def cp(tmp_path_factory):
    """An owner's public vector, raster and document, and a private dataset that one user may
    view (not download) and another may download; a stranger, who may see the public ones only."""
    srv = in_process(tmp_path_factory.mktemp("copies") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    people = {name: make_user(admin) for name in ("owner", "copier", "viewer", "downloader", "stranger")}
    with login(srv, people["owner"]) as c:
        vector = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                                    data={"dataset_title": "Cities"}))
        raster = imported(c, c.post("/api/v2/uploads/upload", files={
            "base_file": ("world.byte.tif", (DATA / "world.byte.tif").read_bytes(), "image/tiff")}))
        private = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES), data={
            "dataset_title": "Private cities", "permissions": '{"users": {"AnonymousUser": []}}'}))
        finish(c, c.put(f"/api/v2/resources/{private['pk']}/permissions", json={"users": [
            {"id": people["viewer"]["pk"], "permissions": "view"},
            {"id": people["downloader"]["pk"], "permissions": "download"}]}))
        r = c.post("/api/v2/documents", files={"doc_file": ("notes.txt", b"some notes\n", "text/plain")},
                   data={"title": "Notes"})
        assert r.status_code == 201, r.text
        document = r.json()["document"]
    yield {"srv": srv, "admin": admin, **people, "vector": vector, "raster": raster, "private": private,
           "document": document}
    admin.close()
    srv.stop()


def finish(client, response) -> dict:
    """The finished status of an asynchronous request."""
    assert response.status_code == 200, response.text
    status = poll(client, response.json()["status_url"], timeout=60)
    assert status["status"] == "finished", status
    return status


def copy_of(client, pk, **defaults) -> dict:
    """Copy the resource and return the copy as /api/v2/resources shows it."""
    body = {"defaults": defaults} if defaults else None
    out = finish(client, client.put(f"/api/v2/resources/{pk}/copy", json=body))["output_params"]["output"]
    return client.get(f"/api/v2/resources/{out['pk']}").json()["resource"]


def getmap(client, alternate: str) -> Image.Image:
    r = client.get("/geoserver/ows", params={
        "SERVICE": "WMS", "VERSION": "1.1.1", "REQUEST": "GetMap", "LAYERS": alternate, "STYLES": "",
        "SRS": "EPSG:4326", "BBOX": ",".join(map(str, WORLD)), "WIDTH": "360", "HEIGHT": "180",
        "FORMAT": "image/png", "TRANSPARENT": "true"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png", r.text[:500]
    return Image.open(io.BytesIO(r.content)).convert("RGBA")


def drawn(img: Image.Image) -> int:
    """How many pixels are not transparent."""
    return sum(1 for alpha in img.getchannel("A").tobytes() if alpha)


def download_names(client, alternate: str) -> list[str]:
    """The files of the dataset's download (a zip of a vector's files, a raster's GeoTIFF), named
    after the dataset: the name shown as NAME."""
    r = client.get(f"/datasets/{alternate}/dataset_download")
    assert r.status_code == 200, r.text[:300]
    name = alternate.partition(":")[2]
    if r.headers["content-type"] == "image/tiff":
        assert r.content[:4] in (b"II*\x00", b"MM\x00*")
        disposition = r.headers.get("content-disposition", "")
        return [disposition.replace(name, "NAME"), f"{len(r.content) > 1000}"]
    assert r.headers["content-type"] == "application/zip", r.headers
    return sorted(n.replace(name, "NAME") for n in zipfile.ZipFile(io.BytesIO(r.content)).namelist())


def thumbnail_of(client, pk, seconds: float = 30) -> str:
    """The dataset's thumbnail address, once the import has drawn it."""
    deadline = time.monotonic() + seconds
    while True:
        url = client.get(f"/api/v2/resources/{pk}").json()["resource"]["thumbnail_url"]
        if url or time.monotonic() > deadline:
            return url
        time.sleep(0.1)


def permissions(client, pk) -> dict:
    r = client.get(f"/api/v2/resources/{pk}/permissions")
    assert r.status_code == 200, r.text
    body = r.json()
    return {"users": {u["id"]: u["permissions"] for u in body["users"]},
            "groups": {g["name"]: g["permissions"] for g in body["groups"]},
            "organizations": body["organizations"]}


def folders(cp) -> tuple[list[str], list[str]]:
    data = cp["srv"].data_dir
    listing = [sorted(p.name for p in (data / name).iterdir()) if (data / name).exists() else []
               for name in ("files", "tmp")]
    return listing[0], listing[1]


def wait_gone(path, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not path.exists()


def delete(client, pk) -> None:
    assert finish(client, client.delete(f"/api/v2/resources/{pk}/delete"))["output_params"]["output"] == 1


def own_dataset(cp, path, title: str) -> dict:
    """A new public dataset of the owner (shapefile parts or a GeoTIFF), to be copied and deleted."""
    with login(cp["srv"], cp["owner"]) as c:
        files = shapefile_parts(path) if path.is_dir() else {
            "base_file": (path.name, path.read_bytes(), "image/tiff")}
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=files, data={"dataset_title": title}))
        r = c.patch(f"/api/v2/datasets/{dataset['pk']}", json={
            "keywords": ["copied-keyword"], "category": {"identifier": "boundaries"}, "regions": ["FRA"],
            "abstract": "To be copied"})
        assert r.status_code == 200, r.text
        # a grant that the copy must not take over
        finish(c, c.put(f"/api/v2/resources/{dataset['pk']}/permissions", json={"users": [
            {"id": cp["stranger"]["pk"], "permissions": "edit"}]}))
        assert thumbnail_of(c, dataset["pk"]), "the import draws a thumbnail"
        return c.get(f"/api/v2/datasets/{dataset['pk']}").json()["dataset"]


@pytest.mark.parametrize("kind", ["vector", "raster"])
def test_a_dataset_copy_is_a_dataset_of_its_own(cp, kind):
    srv = cp["srv"]
    source = own_dataset(cp, CITIES if kind == "vector" else DATA / "world.byte.tif", f"Original {kind}")
    with login(srv, cp["copier"]) as c:
        before = getmap(c, source["alternate"])
        original_files = download_names(c, source["alternate"])
        made = copy_of(c, source["pk"], title=f"Copied {kind}")
        copy = c.get(f"/api/v2/datasets/{made['pk']}").json()["dataset"]
        assert copy["resource_type"] == "dataset" and copy["subtype"] == source["subtype"] == kind
        assert copy["uuid"] != source["uuid"] and copy["pk"] != source["pk"]
        assert copy["alternate"] != source["alternate"] and copy["name"] != source["name"]
        assert copy["alternate"] == f"{copy['workspace']}:{copy['name']}"
        assert copy["owner"]["pk"] == cp["copier"]["pk"] and copy["title"] == f"Copied {kind}"
        # the metadata comes along
        assert copy["abstract"] == "To be copied" and [k["name"] for k in copy["keywords"]] == ["copied-keyword"]
        assert copy["category"]["identifier"] == "boundaries" and [r["code"] for r in copy["regions"]] == ["FRA"]
        assert copy["extent"] == source["extent"] and copy["srid"] == source["srid"]
        assert [(a["attribute"], a["attribute_type"]) for a in copy["attribute_set"]] == \
            [(a["attribute"], a["attribute_type"]) for a in source["attribute_set"]]
        # its own style, named after it, and a thumbnail
        assert copy["default_style"]["name"] == copy["name"] != source["default_style"]["name"]
        assert c.get(copy["default_style"]["sld_url"]).status_code == 200
        assert copy["thumbnail_url"] and c.get(copy["thumbnail_url"]).status_code == 200
        # links name the copy, never the original
        links = [link["url"] for link in copy["links"]]
        assert links and any(copy["alternate"] in u or copy["name"] in u for u in links)
        assert not [u for u in links if source["alternate"] in u], links
        assert copy["is_copyable"] is True
        # the WMS draws it as it draws the original; its download holds the same files
        after = getmap(c, copy["alternate"])
        assert drawn(after) > 0 and after.tobytes() == before.tobytes()
        assert download_names(c, copy["alternate"]) == original_files
        # permissions: the new owner's defaults, nothing of the original's grants
        perms = permissions(c, copy["pk"])
        assert perms["users"].get(cp["copier"]["pk"]) == "owner"
        assert cp["stranger"]["pk"] not in perms["users"] and cp["owner"]["pk"] not in perms["users"]
        assert perms["groups"]["anonymous"] == "download" and perms["organizations"] == []
    data = srv.data_dir / "files"
    assert (data / copy["uuid"]).is_dir() and (data / source["uuid"]).is_dir()
    with login(srv, cp["stranger"]) as s:  # the grant on the original did not follow
        assert "change_resourcebase" in s.get(f"/api/v2/resources/{source['pk']}").json()["resource"]["perms"]
        assert "change_resourcebase" not in s.get(f"/api/v2/resources/{copy['pk']}").json()["resource"]["perms"]
    with login(srv, cp["owner"]) as o:
        delete(o, source["pk"])
    assert wait_gone(data / source["uuid"])
    with srv.client() as anon:  # the copy lives on, public as a new resource is
        assert drawn(getmap(anon, copy["alternate"])) > 0
        assert download_names(anon, copy["alternate"]) == original_files
        assert anon.get(copy["thumbnail_url"]).status_code == 200
        assert anon.get(f"/api/v2/datasets/{copy['pk']}").status_code == 200


def test_each_copy_gets_a_new_name(cp):
    with login(cp["srv"], cp["copier"]) as c:
        first, second = copy_of(c, cp["vector"]["pk"]), copy_of(c, cp["vector"]["pk"])
        names = {cp["vector"]["alternate"], first["alternate"], second["alternate"]}
        assert len(names) == 3
        assert first["title"] == cp["vector"]["title"]  # without defaults the title stays
        copy_of_copy = copy_of(c, first["pk"])
        assert copy_of_copy["alternate"] not in names and drawn(getmap(c, copy_of_copy["alternate"])) > 0


def test_who_may_copy_a_private_dataset(cp):
    srv, private = cp["srv"], cp["private"]
    url = f"/api/v2/resources/{private['pk']}/copy"
    before = folders(cp)[0], cp["admin"].get("/api/v2/datasets/").json()["total"]
    with srv.client() as anon:
        assert_envelope(anon.put(url), 401, "not_authenticated")
    with login(srv, cp["stranger"]) as s:  # cannot see it
        assert_envelope(s.put(url), 404, "not_found")
    with login(srv, cp["viewer"]) as v:  # sees it, may not download it
        assert_envelope(v.put(url), 403, "permission_denied")
        assert v.get("/api/v2/executionrequest/", params={"filter{action}": "copy"}).json()["total"] == 0
    assert (folders(cp)[0], cp["admin"].get("/api/v2/datasets/").json()["total"]) == before
    with login(srv, cp["downloader"]) as d:
        copy = copy_of(d, private["pk"])
        assert copy["owner"]["pk"] == cp["downloader"]["pk"]
        assert permissions(d, copy["pk"])["users"] == {cp["downloader"]["pk"]: "owner", 1: "manage"}
    with srv.client() as anon:  # a copy is public as any new dataset, whatever the original was
        assert anon.get(f"/api/v2/datasets/{copy['pk']}").status_code == 200
    admin_copy = copy_of(cp["admin"], private["pk"])
    assert admin_copy["owner"]["username"] == "admin"
    with login(srv, cp["owner"]) as o:
        own = copy_of(o, private["pk"])
        assert own["owner"]["pk"] == cp["owner"]["pk"] and own["alternate"] != private["alternate"]


def test_a_document_copy_has_its_own_file(cp):
    srv, doc = cp["srv"], cp["document"]
    with login(srv, cp["owner"]) as o:
        original = o.post("/api/v2/documents", files={"doc_file": ("report.txt", b"a report\n", "text/plain")},
                          data={"title": "Report"}).json()["document"]
    with login(srv, cp["copier"]) as c:
        made = copy_of(c, original["pk"], title="My report")
        copy = c.get(f"/api/v2/documents/{made['pk']}").json()["document"]
        assert copy["title"] == "My report" and copy["owner"]["pk"] == cp["copier"]["pk"]
        assert copy["extension"] == "txt" and copy["uuid"] != original["uuid"]
        r = c.get(f"/documents/{copy['pk']}/download")
        assert r.status_code == 200 and r.content == b"a report\n"
    assert (srv.data_dir / "files" / copy["uuid"]).is_dir()
    with login(srv, cp["owner"]) as o:
        delete(o, original["pk"])
    assert wait_gone(srv.data_dir / "files" / original["uuid"])
    with srv.client() as anon:
        r = anon.get(f"/documents/{copy['pk']}/download")
        assert r.status_code == 200 and r.content == b"a report\n"
    with login(srv, cp["stranger"]) as s:  # a public document: seeing and downloading it is enough
        assert copy_of(s, doc["pk"])["owner"]["pk"] == cp["stranger"]["pk"]


def test_a_copy_whose_data_is_gone_fails_and_leaves_nothing(cp):
    """Files removed behind the catalogue's back: the copy is refused or fails, and nothing of
    it is left (no record, no folder under files/, nothing under tmp/)."""
    srv = cp["srv"]
    source = own_dataset(cp, CITIES, "Damaged")
    (srv.data_dir / "files" / source["uuid"] / "working" / "data.gpkg").unlink()
    before = folders(cp)[0], cp["admin"].get("/api/v2/datasets/").json()["total"]
    with login(srv, cp["copier"]) as c:
        r = c.put(f"/api/v2/resources/{source['pk']}/copy")
        if r.status_code == 200:
            status = poll(c, r.json()["status_url"], timeout=60)
            assert status["status"] == "failed", status
            assert "copy" in status["output_params"]["error"]
        else:
            assert_envelope(r, 400, "invalid")
    files_now, tmp_now = folders(cp)
    assert (files_now, cp["admin"].get("/api/v2/datasets/").json()["total"]) == before
    assert [name for name in tmp_now if not name.startswith(".")] == []


def test_copy_defaults_are_checked(cp):
    with login(cp["srv"], cp["copier"]) as c:
        url = f"/api/v2/resources/{cp['vector']['pk']}/copy"
        assert_envelope(c.put(url, data={"defaults": "{"}), 400, "invalid")
        assert_envelope(c.put(url, json={"defaults": {"title": ""}}), 400, "invalid")
        assert_envelope(c.put("/api/v2/resources/999999/copy"), 404, "not_found")
        made = finish(c, c.put(url, data={"defaults": '{"title": "From a form"}'}))["output_params"]["output"]
        assert c.get(f"/api/v2/resources/{made['pk']}").json()["resource"]["title"] == "From a form"


def test_a_dataset_without_data_is_not_copyable(cp):
    """A dataset record with no data (made up, as `seed` makes them) cannot be cloned: 400 with
    GeoNode's message beside the envelope, and no request is queued."""
    srv = cp["srv"]
    pk = insert_resource(srv, cp["owner"]["pk"], "No data", [(None, 1, "view_resourcebase"),
                                                               (None, 1, "download_resourcebase")],
                         resource_type="dataset", subtype="vector", alternate="catalogue:no_data_here")
    with login(srv, cp["copier"]) as c:
        assert c.get(f"/api/v2/resources/{pk}").json()["resource"]["is_copyable"] is False
        before = c.get("/api/v2/executionrequest/").json()["total"]
        r = c.put(f"/api/v2/resources/{pk}/copy")
        assert_envelope(r, 400, "invalid")
        assert r.json()["message"] == "Resource can not be cloned."
        assert c.get("/api/v2/executionrequest/").json()["total"] == before


def test_a_map_copy_has_its_own_layers(cp):
    srv, vector, raster = cp["srv"], cp["vector"], cp["raster"]
    with login(srv, cp["owner"]) as o:
        r = o.post("/api/v2/maps", json={"resource_type": "map", "title": "Both", "data": {"map": {"layers": []}},
                                         "maplayers": [{"name": raster["alternate"], "order": 0, "opacity": 0.5},
                                                       {"name": vector["alternate"], "order": 1, "visibility": False}]})
        assert r.status_code in (200, 201), r.text
        original = r.json()["map"]
    with login(srv, cp["copier"]) as c:
        made = copy_of(c, original["pk"], title="My copy of both")
        copy = c.get(f"/api/v2/maps/{made['pk']}", params={"include[]": "data"}).json()["map"]
    assert copy["owner"]["pk"] == cp["copier"]["pk"] and copy["title"] == "My copy of both"
    assert copy["data"] == {"map": {"layers": []}}
    before = sorted(original["maplayers"], key=lambda layer: layer["order"])
    after = sorted(copy["maplayers"], key=lambda layer: layer["order"])
    assert [(a["name"], a["order"], a["opacity"], a["visibility"], a["dataset"]["pk"]) for a in after] == \
        [(b["name"], b["order"], b["opacity"], b["visibility"], b["dataset"]["pk"]) for b in before]
    assert not {a["pk"] for a in after} & {b["pk"] for b in before}
    with login(srv, cp["owner"]) as o:
        delete(o, original["pk"])
    with login(srv, cp["copier"]) as c:
        assert len(c.get(f"/api/v2/maps/{made['pk']}").json()["map"]["maplayers"]) == 2
