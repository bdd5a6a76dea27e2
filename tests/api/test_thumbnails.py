"""Thumbnails: drawn after an import, served at /uploaded/thumbs/<file> to those who may see the
resource, set from an image (upload, base64, address) or drawn over a box, removed; who may do
what, and every bad input answered 4xx."""

import base64
import io
import os
import shutil
import time

import pytest
from PIL import Image

from tests.api.test_uploads import CITIES, COUNTRIES, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, assert_envelope, in_process, login, make_user, poll
from tests.ogc.conftest import PRIVATE, upload_shapefile, upload_tif

ONE_OF = "file is either a file upload, ASCII byte string or a valid image url string"
EUROPE_3857 = [-1_200_000, 3_500_000, 4_000_000, 8_500_000]  # x, x, y, y


@pytest.fixture(scope="module")
def t(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("thumbnails") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    people = {name: make_user(admin) for name in ("owner", "other", "editor")}
    clients = {name: login(srv, user) for name, user in people.items()}
    clients["admin"], clients["anon"] = admin, srv.client()
    owner = clients["owner"]
    countries = upload_shapefile(owner, COUNTRIES)
    private = upload_shapefile(owner, COUNTRIES, PRIVATE, dataset_title="Private countries")
    r = owner.put(f"/api/v2/resources/{countries['pk']}/permissions",
                  json={"users": [{"id": people["editor"]["pk"], "permissions": "edit"}]})
    assert r.status_code == 200, r.text
    poll(owner, r.json()["status_url"]) if "status_url" in r.json() else None
    r = owner.post("/api/v2/resources/", json={"resource_type": "document", "title": "A document"})
    assert r.status_code == 201, r.text
    document = r.json()["resource"]
    yield {"srv": srv, "c": clients, "people": people, "countries": countries, "private": private,
           "document": document}
    for c in clients.values():
        c.close()
    srv.stop()


def thumbnail_url(client, pk, timeout: float = 20, other_than: str | None = None) -> str:
    """The resource's thumbnail_url once it is set (and differs from ``other_than``)."""
    deadline = time.monotonic() + timeout
    while True:
        r = client.get(f"/api/v2/resources/{pk}")
        assert r.status_code == 200, r.text
        url = r.json()["resource"]["thumbnail_url"]
        if (url and url != other_than) or time.monotonic() > deadline:
            return url
        time.sleep(0.05)


def current_url(client, pk) -> str | None:
    return client.get(f"/api/v2/resources/{pk}").json()["resource"]["thumbnail_url"]


def image_at(client, url: str, media: str = "image/png") -> Image.Image:
    r = client.get(url)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == media
    assert r.headers["cache-control"] == "private, no-cache" and r.headers["etag"]
    return Image.open(io.BytesIO(r.content))


def colours(image: Image.Image) -> int:
    return len(image.convert("RGB").getcolors(maxcolors=1 << 20) or [])


def file_of(t, url: str):
    return t["srv"].data_dir / "thumbs" / url.rsplit("/", 1)[1]


def picture(width: int = 64, height: int = 32, fmt: str = "PNG") -> bytes:
    """An image with a red left half and a blue right half."""
    image = Image.new("RGB", (width, height), (255, 0, 0))
    image.paste((0, 0, 255), (width // 2, 0, width, height))
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def put_file(client, pk, content: bytes, name: str = "t.png", slash: str = ""):
    return client.put(f"/api/v2/resources/{pk}/set_thumbnail{slash}",
                      files={"file": (name, content, "application/octet-stream")})


def message_error(response, status: int, message: str | None = None) -> None:
    """GeoNode's action answer {"message", "success": false}, in the error envelope."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["success"] is False and body["errors"] == [body["message"]]
    if message is not None:
        assert body["message"] == message


# -- drawn after an import ------------------------------------------------------------------------
def test_an_import_draws_the_thumbnail(t):
    srv, anon = t["srv"], t["c"]["anon"]
    url = thumbnail_url(anon, t["countries"]["pk"])
    assert url and url.startswith(f"{srv.url}/uploaded/thumbs/{t['countries']['uuid']}-") and url.endswith(".png")
    assert anon.get("/api/v2/resources/", params={"filter{pk}": t["countries"]["pk"]}).json()["resources"][0][
        "thumbnail_url"] == url
    image = image_at(anon, url)
    assert image.size == (500, 200) and colours(image) > 2  # land, sea and borders
    assert anon.get(url).headers["cache-control"] == "private, no-cache"  # a resource made private stops at once
    assert file_of(t, url).is_file()
    # an unchanged image is not sent again
    etag = anon.get(url).headers["etag"]
    assert anon.get(url, headers={"If-None-Match": etag}).status_code == 304


def test_a_thumbnail_chosen_as_the_import_ends_is_kept(t):
    """A client that sees the import finished and sets a thumbnail at once (as publishing does)
    keeps it: the one drawn for the import afterwards does not replace it, and its file goes."""
    owner = t["c"]["owner"]
    for _ in range(3):
        r = owner.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES))
        assert r.status_code in (200, 201), r.text
        status = f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}"
        while (done := owner.get(status).json())["status"] not in ("finished", "failed"):
            pass  # asked without a pause: the thumbnail is set as soon as the import is seen finished
        pk = done["output_params"]["resources"][0]["id"]
        r = put_file(owner, pk, picture())
        assert r.status_code == 200, r.text
        chosen = r.json()["thumbnail_url"]
        time.sleep(1.5)  # long enough for the thumbnail of the import to be drawn
        assert current_url(owner, pk) == chosen
        assert image_at(owner, chosen).convert("RGB").getpixel((2, 2)) == (255, 0, 0)
        uuid = owner.get(f"/api/v2/resources/{pk}").json()["resource"]["uuid"]
        assert [f.name for f in (t["srv"].data_dir / "thumbs").glob(f"{uuid}-*")] == [chosen.rsplit("/", 1)[1]]


def test_rasters_and_points_get_thumbnails_too(t):
    owner = t["c"]["owner"]
    for dataset in (upload_tif(owner, "RGB.byte.tif"), upload_shapefile(owner, CITIES)):
        url = thumbnail_url(owner, dataset["pk"])
        assert url, dataset["alternate"]
        image = image_at(owner, url)
        assert image.size == (500, 200) and colours(image) > 1


def test_an_ingested_dataset_gets_one(t):
    admin = t["c"]["admin"]
    shutil.copytree(CITIES, t["srv"].data_dir / "import" / "cities")
    r = admin.post("/api/v2/resources/ingest/dataset", json={"path": "cities/naturalearth_cities.shp"})
    assert r.status_code == 200, r.text
    status = poll(admin, r.json()["status_url"], timeout=60)
    assert status["status"] == "finished", status
    url = thumbnail_url(admin, status["output_params"]["resources"][0]["id"])
    assert url and image_at(admin, url).size == (500, 200)


def test_new_data_draws_a_new_thumbnail(t):
    owner = t["c"]["owner"]
    first = upload_shapefile(owner, CITIES, dataset_title="Cities, later countries")
    old = thumbnail_url(owner, first["pk"])
    replaced = imported(owner, owner.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES), data={
        "overwrite_existing_layer": "true", "resource_pk": first["pk"]}))
    assert replaced["pk"] == first["pk"]
    new = thumbnail_url(owner, first["pk"], other_than=old)
    assert new != old and image_at(owner, new).size == (500, 200)
    assert not file_of(t, old).exists()
    # a page opened before still shows a thumbnail: the old address leads to the new one
    r = owner.get(old)
    assert r.status_code == 302 and r.headers["location"] == new.removeprefix(t["srv"].url)
    assert r.headers["cache-control"] == "private, no-cache"
    assert image_at(owner, r.headers["location"]).size == (500, 200)


def test_the_thumbnail_of_private_data_is_private(t):
    url = thumbnail_url(t["c"]["owner"], t["private"]["pk"])
    assert url
    for name in ("anon", "other", "editor"):
        assert_envelope(t["c"][name].get(url), 404, "not_found")
    for name in ("owner", "admin"):
        assert image_at(t["c"][name], url).size == (500, 200)
    assert t["c"]["owner"].get(url).headers["cache-control"].startswith("private")
    # names that are no thumbnail, or climb out of the folder
    anon = t["c"]["anon"]
    for name in ("nothing.png", "..%2Fcatalogue.sqlite3", f"{t['countries']['uuid']}-abc.gif",
                 f"{t['private']['uuid']}-000000000000.png", f"{t['document']['uuid']}-000000000000.png"):
        assert anon.get(f"/uploaded/thumbs/{name}").status_code == 404
    # an address the private dataset had leads nowhere for those who may not see it, and to its
    # thumbnail for those who may
    gone = f"/uploaded/thumbs/{t['private']['uuid']}-000000000000.png"
    for name in ("anon", "other", "editor"):
        assert_envelope(t["c"][name].get(gone), 404, "not_found")
    r = t["c"]["owner"].get(gone)
    assert r.status_code == 302 and r.headers["location"] == url.removeprefix(t["srv"].url)


# -- set_thumbnail ------------------------------------------------------------------------------
def test_set_thumbnail_from_an_uploaded_image(t):
    owner, pk = t["c"]["owner"], t["countries"]["pk"]
    before = thumbnail_url(owner, pk)
    r = put_file(owner, pk, picture())
    assert r.status_code == 200, r.text
    url = r.json()["thumbnail_url"]
    assert list(r.json()) == ["thumbnail_url"]
    assert url.startswith(f"{t['srv'].url}/uploaded/thumbs/{t['countries']['uuid']}-") and url != before
    assert current_url(t["c"]["anon"], pk) == url
    image = image_at(t["c"]["anon"], url).convert("RGB")
    assert image.size == (64, 32) and image.getpixel((2, 2)) == (255, 0, 0) and image.getpixel((60, 2)) == (0, 0, 255)
    assert not file_of(t, before).exists()  # the replaced file is gone
    # a JPEG stays a JPEG; the trailing slash is accepted
    r = put_file(owner, pk, picture(fmt="JPEG"), "t.jpg", slash="/")
    assert r.status_code == 200, r.text
    assert r.json()["thumbnail_url"].endswith(".jpg")
    image_at(owner, r.json()["thumbnail_url"], "image/jpeg")
    assert not file_of(t, url).exists()
    # a large image is made smaller; other formats become PNG
    r = put_file(owner, pk, picture(3000, 1500, "GIF"), "big.gif")
    assert r.status_code == 200, r.text
    assert image_at(owner, r.json()["thumbnail_url"]).size == (1024, 512)


def test_set_thumbnail_from_base64_and_from_an_address(t):
    owner, pk = t["c"]["owner"], t["countries"]["pk"]
    encoded = base64.b64encode(picture()).decode()
    for value in (f"data:image/png;base64,{encoded}", encoded):
        r = owner.put(f"/api/v2/resources/{pk}/set_thumbnail", json={"file": value})
        assert r.status_code == 200, r.text
        assert image_at(owner, r.json()["thumbnail_url"]).size == (64, 32)
    local = r.json()["thumbnail_url"]
    # a form field works as well as JSON
    r = owner.put(f"/api/v2/resources/{pk}/set_thumbnail", data={"file": encoded})
    assert r.status_code == 200, r.text
    assert not file_of(t, local).exists()
    local = r.json()["thumbnail_url"]
    address = "https://maps.example.org/previews/countries.JPG?v=2"
    r = owner.put(f"/api/v2/resources/{pk}/set_thumbnail", json={"file": address})
    assert r.status_code == 200 and r.json() == {"thumbnail_url": address}
    assert current_url(t["c"]["anon"], pk) == address
    assert not file_of(t, local).exists()


def test_set_thumbnail_refuses_what_is_no_image(t):
    owner, pk = t["c"]["owner"], t["countries"]["pk"]
    before = current_url(owner, pk)
    url = f"/api/v2/resources/{pk}/set_thumbnail"
    assert_envelope(put_file(owner, pk, b"just some text, no picture", "notes.png"), 400, "invalid",
                    "Invalid data provided")
    assert_envelope(put_file(owner, pk, picture()[:40], "cut.png"), 400, "invalid", "Invalid data provided")
    assert_envelope(put_file(owner, pk, os.urandom(1_200_000), "huge.png"), 400, "invalid", "File must not exceed 1MB")
    huge = Image.new("1", (10_000, 10_000))  # 100 million pixels in a small file
    out = io.BytesIO()
    huge.save(out, "PNG")
    assert len(out.getvalue()) < 1_000_000
    assert_envelope(put_file(owner, pk, out.getvalue(), "bomb.png"), 400, "invalid", "Invalid data provided")
    assert_envelope(owner.put(url, json={}), 400, "invalid", "Field file is required")
    assert_envelope(owner.put(url, json={"file": ""}), 400, "invalid", "Field file is required")
    assert_envelope(owner.put(url), 400, "invalid", "Field file is required")
    assert_envelope(owner.put(url, files={"other": ("a.png", picture())}), 400, "invalid", "Field file is required")
    assert_envelope(owner.put(url, json={"file": "https://example.org/image.gif"}), 400, "invalid",
                    "The url must be of an image with format (png, jpeg or jpg)")
    assert_envelope(owner.put(url, json={"file": "https://example.org/no-extension"}), 400, "invalid",
                    "The url must be of an image with format (png, jpeg or jpg)")
    for value in ("hello there", "ftp://example.org/a.png", "javascript:alert(1)//a.png", 42, ["a"], {"a": 1},
                  "http://[::1/x.png", "http://[/x.png"):
        assert_envelope(owner.put(url, json={"file": value}), 400, "invalid", ONE_OF)
    assert_envelope(owner.put(url, json={"file": "data:image/png;base64,@@@"}), 400, "invalid")
    not_png = base64.b64encode(b"plain words").decode()
    assert_envelope(owner.put(url, json={"file": f"data:image/png;base64,{not_png}"}), 400, "invalid")
    assert_envelope(owner.put(url, json={"file": not_png}), 400, "invalid", "Invalid data provided")
    assert_envelope(owner.put(url, content=b"{not json", headers={"content-type": "application/json"}),
                    400, "parse_error")
    assert current_url(owner, pk) == before
    # nothing left behind in tmp/
    tmp = t["srv"].data_dir / "tmp"
    assert not [p for p in tmp.iterdir() if p.name.startswith("thumbnail-")] if tmp.exists() else True


def test_who_may_set_a_thumbnail(t):
    c, pk = t["c"], t["countries"]["pk"]
    image = picture()
    assert_envelope(put_file(c["anon"], pk, image), 401, "not_authenticated")
    assert_envelope(put_file(c["other"], pk, image), 403, "permission_denied")
    assert_envelope(put_file(c["other"], t["private"]["pk"], image), 404, "not_found")
    assert_envelope(put_file(c["owner"], 999999, image), 404, "not_found")
    assert_envelope(put_file(c["owner"], "abc", image), 404, "not_found")
    for name in ("editor", "owner", "admin"):
        r = put_file(c[name], pk, image)
        assert r.status_code == 200, (name, r.text)
    # every kind of resource may have one
    r = put_file(c["owner"], t["document"]["pk"], image)
    assert r.status_code == 200, r.text
    assert image_at(c["anon"], current_url(c["anon"], t["document"]["pk"])).size == (64, 32)


# -- set_thumbnail_from_bbox --------------------------------------------------------------------
def test_a_thumbnail_drawn_over_a_box(t):
    owner, pk = t["c"]["owner"], t["countries"]["pk"]
    before = current_url(owner, pk)
    r = owner.post(f"/api/v2/resources/{pk}/set_thumbnail_from_bbox", json={"bbox": EUROPE_3857, "srid": "EPSG:3857"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["message"] == "Thumbnail correctly created." and body["success"] is True
    assert body["thumbnail_url"] != before and current_url(owner, pk) == body["thumbnail_url"]
    europe = image_at(owner, body["thumbnail_url"])
    assert europe.size == (500, 200) and colours(europe) > 2
    r = owner.post(f"/api/v2/resources/{pk}/set_thumbnail_from_bbox/", json={"bbox": [-180, 180, -60, 80],
                                                                          "srid": "EPSG:4326", "zoom": 3})
    assert r.status_code == 200, r.text
    world = image_at(owner, r.json()["thumbnail_url"])
    assert world.tobytes() != europe.tobytes()


def test_set_thumbnail_from_bbox_refusals(t):
    c, pk = t["c"], t["countries"]["pk"]
    url = f"/api/v2/resources/{pk}/set_thumbnail_from_bbox"
    good = {"bbox": EUROPE_3857, "srid": "EPSG:3857"}
    message_error(c["anon"].post(url, json=good), 401)
    message_error(c["other"].post(url, json=good), 403)
    message_error(c["other"].post(f"/api/v2/resources/{t['private']['pk']}/set_thumbnail_from_bbox", json=good), 404)
    message_error(c["owner"].post("/api/v2/resources/999999/set_thumbnail_from_bbox", json=good), 404,
                  "Resource selected with id 999999 does not exists")
    message_error(c["owner"].post(f"/api/v2/resources/{t['document']['pk']}/set_thumbnail_from_bbox", json=good),
                  405, "Not implemented: Endpoint available only for Dataset and Maps")
    r = c["owner"].post("/api/v2/resources/", json={"resource_type": "map", "title": "A map"})
    assert r.status_code == 201, r.text
    message_error(c["owner"].post(f"/api/v2/resources/{r.json()['resource']['pk']}/set_thumbnail_from_bbox",
                                  json=good), 405)
    before = current_url(c["owner"], pk)
    for body in ({}, {"bbox": [1, 2, 3]}, {"bbox": [3, 1, 0, 1]}, {"bbox": [0, 1, 5, 2]}, {"bbox": "0,1,0,1"},
                 {"bbox": ["a", 1, 0, 1]}, {"bbox": [0, 1, 0, None]}, {"bbox": [True, 1, 0, 1]},
                 {"bbox": [0, 1, 0, 1], "srid": "EPSG:999999"}, {"bbox": [0, 1, 0, 1], "srid": "WGS84"},
                 {"bbox": [0, 1, 0, 1], "srid": None}, {"bbox": [1e300, 2e300, 1e300, 2e300], "srid": "EPSG:3857"},
                 {"bbox": [-1e300, 1e300, -1e300, 1e300], "srid": "EPSG:3857"},
                 {"bbox": [1e9, 2e9, 0, 1], "srid": "EPSG:32618"}, [1, 2, 3, 4]):
        message_error(c["owner"].post(url, json=body), 400)
    for raw in (b"{bad", b'{"bbox": [0, 1e400, 0, 1]}', b'{"bbox": [NaN, 1, 0, 1]}'):
        r = c["owner"].post(url, content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["success"] is False, r.text
    assert current_url(c["owner"], pk) == before
    for name in ("editor", "admin"):
        r = c[name].post(url, json=good)
        assert r.status_code == 200 and r.json()["success"] is True, (name, r.text)


# -- delete_thumbnail ---------------------------------------------------------------------------
def test_delete_thumbnail(t):
    c = t["c"]
    dataset = upload_shapefile(c["owner"], CITIES, dataset_title="Cities to clear")
    pk = dataset["pk"]
    path = file_of(t, thumbnail_url(c["owner"], pk))
    assert path.is_file()
    url = f"/api/v2/resources/{pk}/delete_thumbnail"
    message_error(c["anon"].post(url), 401)
    message_error(c["other"].post(url), 403)
    message_error(c["owner"].post("/api/v2/resources/999999/delete_thumbnail"), 404, "Resource not found.")
    r = c["owner"].post(url)
    assert r.status_code == 200 and r.json() == {"message": "Thumbnail deleted successfully.", "success": True}
    assert current_url(c["owner"], pk) is None and not path.exists()
    r = c["owner"].post(url + "/")
    assert r.status_code == 200
    assert r.json() == {"message": "The thumbnail URL field is already empty.", "success": False}
    # an address of an outside image is cleared the same way
    assert c["admin"].put(f"/api/v2/resources/{pk}/set_thumbnail",
                          json={"file": "http://example.org/a.png"}).status_code == 200
    assert c["admin"].post(url).json()["success"] is True and current_url(c["owner"], pk) is None


# -- copies and removal -------------------------------------------------------------------------
def test_a_copy_shares_the_file_until_either_changes(t):
    owner = t["c"]["owner"]
    dataset = upload_shapefile(owner, CITIES, dataset_title="Cities to copy")
    shared = thumbnail_url(owner, dataset["pk"])
    r = owner.put(f"/api/v2/resources/{dataset['pk']}/copy")
    assert r.status_code == 200, r.text
    copy_pk = poll(owner, r.json()["status_url"])["output_params"]["output"]["pk"]
    assert current_url(owner, copy_pk) == shared
    assert put_file(owner, dataset["pk"], picture()).status_code == 200
    assert file_of(t, shared).is_file() and image_at(owner, shared).size == (500, 200)  # the copy still uses it
    assert owner.post(f"/api/v2/resources/{copy_pk}/delete_thumbnail").json()["success"] is True
    assert not file_of(t, shared).exists()


def test_start_up_removes_files_no_resource_uses(tmp_path_factory):
    data = tmp_path_factory.mktemp("thumbsweep") / "data"
    srv = Server(data)
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            kept = upload_shapefile(admin, CITIES, dataset_title="Kept")
            gone = upload_shapefile(admin, CITIES, dataset_title="Deleted")
            kept_file = file_of({"srv": srv}, thumbnail_url(admin, kept["pk"]))
            gone_file = file_of({"srv": srv}, thumbnail_url(admin, gone["pk"]))
            r = admin.delete(f"/api/v2/resources/{gone['pk']}/delete")
            assert poll(admin, r.json()["status_url"])["status"] == "finished"
            deadline = time.monotonic() + 10  # the delete removes the file just after it finishes
            while gone_file.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            assert not gone_file.exists()
        leftover = data / "thumbs" / ".part-0123456789abcdef"
        leftover.write_bytes(b"half")
        fresh = data / "thumbs" / f"{gone['uuid']}-0123456789ab.png"
        fresh.write_bytes(picture())
    finally:
        srv.stop()
    hour_ago = time.time() - 3600
    for path in (kept_file, gone_file, leftover):
        if path.exists():
            os.utime(path, (hour_ago, hour_ago))
    srv = Server(data)
    try:
        assert kept_file.is_file() and not gone_file.exists() and not leftover.exists()
        assert fresh.is_file()  # a file this young may be on its way to being recorded
        with srv.client() as anon:
            assert anon.get(f"{srv.url}/uploaded/thumbs/{kept_file.name}").status_code == 200
            assert anon.get(f"{srv.url}/uploaded/thumbs/{fresh.name}").status_code == 404
    finally:
        srv.stop()
