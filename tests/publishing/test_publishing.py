"""Publishing to a remote GeoNode API v2: two real servers ("local" and "central"), central
added to local as a remote, datasets and documents published from local and found on central
with the same metadata, data, and permissions (mapped by user name); published again, updated
in place; a network that drops half-way, resumed without a second copy."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pyogrio.raw
import pytest
import shapely

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, Server, assert_envelope, login, make_user, unique
from tests.publishing.proxy import Proxy

DATA = Path(__file__).parent.parent / "data"
COUNTRIES = DATA / "naturalearth_lowres"
CITIES = DATA / "naturalearth_cities"


def shapefile_parts(folder: Path) -> dict:
    shp = next(folder.glob("*.shp"))
    keys = {".shp": "base_file", ".dbf": "dbf_file", ".shx": "shx_file", ".prj": "prj_file"}
    return {key: (shp.with_suffix(ext).name, shp.with_suffix(ext).read_bytes(), "application/octet-stream")
            for ext, key in keys.items()}


def wait(client, status_url: str, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(status_url).json()
        if body["status"] in ("finished", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def upload(client, folder: Path, title: str) -> int:
    r = client.post("/api/v2/uploads/upload", files=shapefile_parts(folder), data={"dataset_title": title})
    assert r.status_code == 201, r.text
    status = wait(client, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")
    assert status["status"] == "finished", status
    return status["output_params"]["resources"][0]["id"]


def publish(client, pk: int, remote) -> dict:
    r = client.post(f"/api/v2/resources/{pk}/publish", json={"remote": remote})
    assert r.status_code == 200, r.text
    receipt = r.json()
    assert set(receipt) == {"status", "execution_id", "status_url"} and receipt["status"] == "ready"
    return wait(client, receipt["status_url"])


def central_titled(client, title: str) -> list[dict]:
    rows = client.get("/api/v2/resources/", params={"filter{title}": title, "page_size": 100}).json()["resources"]
    return [r for r in rows if r["title"] == title]


def cli(*args: str, data_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "catalogue_app", *args, "--data-dir", str(data_dir)],
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD})


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("publishing")
    local, central = Server(root / "local"), Server(root / "central")
    token = cli("token", "admin", data_dir=central.data_dir)
    assert token.returncode == 0, token.stderr
    admin = local.client(auth=("admin", ADMIN_PASSWORD))
    central_admin = central.client(auth=("admin", ADMIN_PASSWORD))
    r = admin.post("/api/v2/remotes/", json={"name": "central", "url": central.url, "token": token.stdout.strip()})
    assert r.status_code == 201, r.text
    remote = r.json()["remote"]
    yield {"local": local, "central": central, "admin": admin, "central_admin": central_admin, "remote": remote,
           "token": token.stdout.strip(), "root": root}
    admin.close()
    central_admin.close()
    local.stop()
    central.stop()


def test_a_dataset_is_published_with_its_metadata_and_data_then_updated_in_place(pair, tmp_path):
    admin, central = pair["admin"], pair["central_admin"]
    title = unique("Countries ")
    pk = upload(admin, COUNTRIES, title)
    r = admin.patch(f"/api/v2/datasets/{pk}", json={"abstract": "Natural Earth countries, 1:110m.",
                                                   "keywords": ["borders", "world"], "category": "boundaries",
                                                   "attribution": "Natural Earth"})
    assert r.status_code == 200, r.text

    status = publish(admin, pk, "central")
    assert status["status"] == "finished", status
    out = status["output_params"]
    remote_pk = out["resources"][0]["remote_pk"]
    assert out["data"] == "sent" and out["remote"] == "central"
    assert out["resources"][0]["remote_url"] == f"{pair['central'].url}/catalogue/#/dataset/{remote_pk}"

    dataset = central.get(f"/api/v2/datasets/{remote_pk}").json()["dataset"]
    assert dataset["title"] == title
    assert dataset["abstract"] == "Natural Earth countries, 1:110m."
    assert sorted(k["name"] for k in dataset["keywords"]) == ["borders", "world"]
    assert dataset["category"]["identifier"] == "boundaries"
    assert dataset["attribution"] == "Natural Earth"
    assert dataset["thumbnail_url"]
    # the data: the same features as the original shapefile
    download = central.get(f"/datasets/{dataset['alternate']}/dataset_download")
    assert download.status_code == 200 and download.headers["content-type"] == "application/zip", download.text[:200]
    with zipfile.ZipFile(io.BytesIO(download.content)) as z:
        z.extractall(tmp_path / "back")
    back = next((tmp_path / "back").glob("*.shp"))
    meta, _, got_geometry, got_fields = pyogrio.raw.read(back)
    want_meta, _, want_geometry, want_fields = pyogrio.raw.read(COUNTRIES / "naturalearth_lowres.shp")
    assert list(meta["fields"]) == list(want_meta["fields"])
    assert len(got_geometry) == len(want_geometry)
    assert shapely.equals(shapely.from_wkb(got_geometry), shapely.from_wkb(want_geometry)).all()
    for got, want in zip(got_fields, want_fields):
        assert list(got) == list(want)

    # where it was published, as local tells
    pubs = admin.get(f"/api/v2/resources/{pk}/publications").json()["publications"]
    assert [(p["remote"], p["remote_pk"], p["stage"]) for p in pubs] == [("central", remote_pk, "done")]
    assert pubs[0]["remote_url"].endswith(f"/catalogue/#/dataset/{remote_pk}") and pubs[0]["last_published"]

    # edited here, published again: the same copy there, changed; the data not sent again
    assert admin.patch(f"/api/v2/datasets/{pk}", json={"title": title + " (edited)"}).status_code == 200
    status = publish(admin, pk, pair["remote"]["id"])
    assert status["status"] == "finished", status
    assert status["output_params"]["resources"][0]["remote_pk"] == remote_pk
    assert status["output_params"]["data"] == "unchanged"
    assert central.get(f"/api/v2/datasets/{remote_pk}").json()["dataset"]["title"] == title + " (edited)"
    assert central_titled(central, title) == [] and len(central_titled(central, title + " (edited)")) == 1

    # new data here (an overwrite upload): the copy there gets it, in place
    r = admin.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                   data={"overwrite_existing_layer": "true", "resource_pk": str(pk)})
    assert r.status_code == 201, r.text
    assert wait(admin, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")["status"] == "finished"
    status = publish(admin, pk, "central")
    assert status["status"] == "finished", status
    assert status["output_params"]["data"] == "replaced"
    assert status["output_params"]["resources"][0]["remote_pk"] == remote_pk
    replaced = central.get(f"/api/v2/datasets/{remote_pk}").json()["dataset"]
    assert replaced["title"] == title + " (edited)"
    download = central.get(f"/datasets/{replaced['alternate']}/dataset_download")
    with zipfile.ZipFile(io.BytesIO(download.content)) as z:
        z.extractall(tmp_path / "cities")
    _, _, got_geometry, _ = pyogrio.raw.read(next((tmp_path / "cities").glob("*.shp")))
    _, _, want_geometry, _ = pyogrio.raw.read(CITIES / "naturalearth_cities.shp")
    assert shapely.equals(shapely.from_wkb(got_geometry), shapely.from_wkb(want_geometry)).all()

    # deleted on central: published anew
    assert central.delete(f"/api/v2/resources/{remote_pk}").status_code == 204
    status = publish(admin, pk, "central")
    assert status["status"] == "finished", status
    again = status["output_params"]["resources"][0]["remote_pk"]
    assert again != remote_pk and status["output_params"]["data"] == "sent"
    assert any("deleted on the remote" in n for n in status["output_params"]["notes"])
    assert len(central_titled(central, title + " (edited)")) == 1


def red_png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (120, 90), (200, 20, 30)).save(out, "PNG")
    return out.getvalue()


def test_the_thumbnail_chosen_here_is_the_one_there(pair):
    admin, central = pair["admin"], pair["central_admin"]
    from PIL import Image

    pk = upload(admin, CITIES, unique("Thumbnailed "))
    r = admin.put(f"/api/v2/resources/{pk}/set_thumbnail", files={"file": ("red.png", red_png(), "image/png")})
    assert r.status_code == 200, r.text
    status = publish(admin, pk, "central")
    assert status["status"] == "finished", status
    remote_pk = status["output_params"]["resources"][0]["remote_pk"]
    time.sleep(1)  # (a thumbnail drawn by central after ours would show now)
    url = central.get(f"/api/v2/datasets/{remote_pk}").json()["dataset"]["thumbnail_url"]
    image = Image.open(io.BytesIO(central.get(url).content)).convert("RGB")
    assert image.getpixel((image.width // 2, image.height // 2)) == (200, 20, 30)


def test_permissions_are_mapped_by_user_name(pair):
    admin, central, local = pair["admin"], pair["central_admin"], pair["local"]
    name = unique("carol")
    both = make_user(admin, username=name)
    remote_carol = make_user(central, username=name)
    only_here = make_user(admin)
    owner = make_user(admin)
    with login(local, owner) as c:
        pk = upload(c, CITIES, unique("Cities "))
        r = c.put(f"/api/v2/resources/{pk}/permissions", json={
            "users": [{"id": both["pk"], "permissions": "view"}, {"id": only_here["pk"], "permissions": "edit"}],
            "groups": [{"id": 1, "permissions": "none"}, {"id": 2, "permissions": "download"}]})
        assert r.status_code == 200, r.text
        assert wait(c, r.json()["status_url"])["status"] == "finished"
    status = publish(admin, pk, "central")
    assert status["status"] == "finished", status
    out = status["output_params"]
    assert set(out["skipped_users"]) == {only_here["username"], owner["username"]}
    assert only_here["username"] in status["output_params"]["message"]
    remote_pk = out["resources"][0]["remote_pk"]
    perms = central.get(f"/api/v2/resources/{remote_pk}/permissions").json()
    levels = {u["username"]: u["permissions"] for u in perms["users"]}
    assert levels[name] == "view"
    assert only_here["username"] not in levels
    groups = {g["name"]: g["permissions"] for g in perms["groups"]}
    assert groups == {"anonymous": "none", "registered-members": "download"}
    # carol sees it on central; anonymous does not
    with login(pair["central"], {**remote_carol, "password": USER_PASSWORD}) as c:
        assert c.get(f"/api/v2/datasets/{remote_pk}").status_code == 200
    with pair["central"].client() as anon:
        assert anon.get(f"/api/v2/datasets/{remote_pk}").status_code == 404
    # taken back here: taken back there on the next publish
    r = admin.put(f"/api/v2/resources/{pk}/permissions", json={"users": [{"id": both["pk"], "permissions": "none"}]})
    assert wait(admin, r.json()["status_url"])["status"] == "finished"
    assert publish(admin, pk, "central")["status"] == "finished"
    perms = central.get(f"/api/v2/resources/{remote_pk}/permissions").json()
    assert name not in {u["username"] for u in perms["users"]}


def test_a_document_is_published_once_and_updated_in_place(pair):
    admin, central = pair["admin"], pair["central_admin"]
    title = unique("Report ")
    r = admin.post("/api/v2/documents", files={"doc_file": ("report.pdf", b"%PDF-1.4\n% a tiny test\n", "application/pdf")},
                   data={"title": title})
    assert r.status_code == 201, r.text
    pk = r.json()["document"]["pk"]
    assert admin.patch(f"/api/v2/documents/{pk}", json={"abstract": "Yearly report", "keywords": ["report"]}).status_code == 200
    status = publish(admin, pk, "central")
    assert status["status"] == "finished", status
    remote_pk = status["output_params"]["resources"][0]["remote_pk"]
    doc = central.get(f"/api/v2/documents/{remote_pk}").json()["document"]
    assert (doc["title"], doc["abstract"], [k["name"] for k in doc["keywords"]]) == (title, "Yearly report", ["report"])
    assert central.get(f"/documents/{remote_pk}/download").content == b"%PDF-1.4\n% a tiny test\n"
    assert publish(admin, pk, "central")["output_params"]["resources"][0]["remote_pk"] == remote_pk
    assert len(central_titled(central, title)) == 1


@pytest.mark.parametrize("mode", ["cut_after_upload", "lose_upload_answer"])
def test_a_network_that_drops_half_way_is_resumed_without_a_second_copy(pair, mode):
    admin, central = pair["admin"], pair["central_admin"]
    proxy = Proxy(pair["central"].port)
    try:
        r = admin.post("/api/v2/remotes/", json={"name": unique("flaky"), "url": proxy.url, "token": pair["token"]})
        assert r.status_code == 201, r.text
        flaky = r.json()["remote"]
        title = unique("Flaky countries ")
        pk = upload(admin, COUNTRIES, title)
        proxy.set_mode(mode)
        status = publish(admin, pk, flaky["name"])
        assert status["status"] == "failed", status
        assert proxy.upload_passed and proxy.cuts >= 1
        message = status["log"]
        assert f"to {flaky['name']} failed at step 'data" in message, message
        assert "could not be reached" in message, message
        pub = admin.get(f"/api/v2/resources/{pk}/publications").json()["publications"]
        assert pub[0]["stage"] == ("uploading" if mode == "cut_after_upload" else "sending"), pub
        assert pub[0]["message"] == message
        uploads = sum(1 for line in proxy.requests if line.startswith(b"POST /api/v2/uploads/upload"))
        assert uploads == 1

        proxy.set_mode("pass")
        status = publish(admin, pk, flaky["name"])
        assert status["status"] == "finished", status
        assert sum(1 for line in proxy.requests if line.startswith(b"POST /api/v2/uploads/upload")) == 1
        remote_pk = status["output_params"]["resources"][0]["remote_pk"]
        assert [int(d["pk"]) for d in central_titled(central, title)] == [remote_pk]
        assert admin.get(f"/api/v2/resources/{pk}/publications").json()["publications"][0]["stage"] == "done"
    finally:
        proxy.close()


def central_token(pair) -> str:
    """A new token of central's admin (from central's own /api/v2/tokens/)."""
    r = pair["central_admin"].post("/api/v2/tokens/", json={"label": unique("for local ")})
    assert r.status_code == 201, r.text
    return r.json()["access_token"]


def test_a_remote_that_refuses_the_token_says_plainly_what_to_do(pair):
    admin = pair["admin"]
    token = central_token(pair)
    r = admin.post("/api/v2/remotes/", json={"name": unique("revoked"), "url": pair["central"].url, "token": token})
    assert r.status_code == 201, r.text
    remote = r.json()["remote"]
    # central's admin revokes the token: local's next publish is refused there
    with pair["central"].client() as c:
        assert c.post("/o/revoke_token/", data={"token": token}).status_code == 200
    pk = upload(admin, CITIES, unique("Refused "))
    status = publish(admin, pk, remote["id"])
    assert status["status"] == "failed"
    log = status["log"]
    assert log.startswith(f"{remote['name']} refused the token this catalogue sends"), log
    assert "Make a new token on" in log and "Administration › Remote catalogues" in log, log
    assert "failed at step" not in log and "answered 401" not in log, log
    out = status["output_params"]
    assert out["fix"] == "token" and "answered 401" in out["detail"] and out["remote"] == remote["name"]
    pub = admin.get(f"/api/v2/resources/{pk}/publications").json()["publications"]
    assert (pub[0]["stage"], pub[0]["message"]) == ("new", log)
    # a new token, saved: publishing works again
    r = admin.patch(f"/api/v2/remotes/{remote['id']}", json={"token": central_token(pair)})
    assert r.status_code == 200, r.text
    assert publish(admin, pk, remote["id"])["status"] == "finished"


def test_a_remote_that_cannot_be_reached_says_so(pair):
    admin = pair["admin"]
    proxy = Proxy(pair["central"].port)
    try:
        r = admin.post("/api/v2/remotes/", json={"name": unique("nowhere"), "url": proxy.url, "token": pair["token"]})
        assert r.status_code == 201, r.text
    finally:
        proxy.close()  # gone after it was saved
    pk = upload(admin, CITIES, unique("Unreachable "))
    status = publish(admin, pk, r.json()["remote"]["name"])
    assert status["status"] == "failed" and "could not be reached" in status["log"], status
    assert admin.get(f"/api/v2/datasets/{pk}").status_code == 200  # nothing local is lost


@pytest.fixture
def web_site(tmp_path):
    """A web server of plain pages: an HTML page at /api/v2/ too."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    (tmp_path / "api" / "v2").mkdir(parents=True)
    (tmp_path / "api" / "v2" / "index.html").write_text("<html><body>Not an API</body></html>")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    site = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{site.server_address[1]}"
    site.shutdown()
    site.server_close()


def test_a_remote_is_checked_before_it_is_saved(pair, web_site):
    admin, url = pair["admin"], pair["central"].url
    before = admin.get("/api/v2/remotes/", params={"page_size": 100}).json()["total"]
    cases = [
        ({"url": url, "token": "made-up"}, "The remote catalogue refused this token"),
        ({"url": url}, "token: a token of a user of the remote catalogue is needed"),
        ({"url": "http://127.0.0.1:9", "token": pair["token"]}, "Nothing answers at http://127.0.0.1:9"),
        ({"url": f"{url}/catalogue", "token": pair["token"]}, f"{url}/catalogue answers, but is not a GeoNode API v2"),
        ({"url": web_site, "token": pair["token"]}, f"{web_site} answers, but is not a GeoNode API v2"),
    ]
    for body, said in cases:
        r = admin.post("/api/v2/remotes/", json={"name": unique("checked"), **body})
        assert_envelope(r, 400, "invalid")
        assert r.json()["errors"][0].startswith(said), (body, r.json())
    r = admin.post("/api/v2/remotes/", json={"name": unique("checked"), "url": url, "token": "made-up"})
    assert "Make a new token there" in r.json()["errors"][0]
    assert admin.get("/api/v2/remotes/", params={"page_size": 100}).json()["total"] == before  # nothing saved

    # a change of token or address is checked too; a change of name alone is not
    rid = pair["remote"]["id"]
    for body, said in [({"token": "made-up"}, "The remote catalogue refused this token"),
                       ({"token": ""}, "token: a remote's token cannot be emptied"),
                       ({"url": "http://127.0.0.1:9"}, "Nothing answers at"),
                       ({"url": "http://127.0.0.1:9", "token": pair["token"]}, "Nothing answers at")]:
        r = admin.patch(f"/api/v2/remotes/{rid}", json=body)
        assert_envelope(r, 400, "invalid")
        assert r.json()["errors"][0].startswith(said), (body, r.json())
    row = admin.get(f"/api/v2/remotes/{rid}").json()["remote"]
    assert (row["name"], row["url"], row["has_token"]) == ("central", url, True)
    assert admin.patch(f"/api/v2/remotes/{rid}", json={"token": pair["token"], "url": url + "/api/v2/"}).status_code == 200


# -- the routes: who may, and bad inputs --------------------------------------------------------------
def test_only_superusers_use_the_routes(pair):
    admin, local = pair["admin"], pair["local"]
    owner = make_user(admin)
    staff = make_user(admin, is_staff=True)
    with login(local, owner) as c:
        pk = upload(c, CITIES, unique("Owned "))
    rid = pair["remote"]["id"]
    routes = [("GET", "/api/v2/remotes/", None), ("POST", "/api/v2/remotes/", {"name": "x", "url": "http://x.org"}),
              ("GET", f"/api/v2/remotes/{rid}", None), ("PATCH", f"/api/v2/remotes/{rid}", {"name": "y"}),
              ("DELETE", f"/api/v2/remotes/{rid}", None),
              ("POST", f"/api/v2/resources/{pk}/publish", {"remote": rid}),
              ("GET", f"/api/v2/resources/{pk}/publications", None)]
    with local.client() as anon, login(local, owner) as own, login(local, staff) as st:
        for method, path, body in routes:
            assert_envelope(anon.request(method, path, json=body), 401, "not_authenticated")
            assert_envelope(own.request(method, path, json=body), 403, "permission_denied")
            assert_envelope(st.request(method, path, json=body), 403, "permission_denied")
    # the admin: each works
    remotes = admin.get("/api/v2/remotes").json()
    assert remotes["total"] >= 1 and {"links", "page", "page_size"} <= set(remotes)
    row = next(r for r in remotes["remotes"] if r["id"] == rid)
    assert set(row) == {"id", "name", "url", "has_token", "created", "link"} and row["has_token"] is True
    assert "token" not in admin.get(f"/api/v2/remotes/{rid}/").json()["remote"]
    assert admin.get(f"/api/v2/resources/{pk}/publications").json() == {"publications": []}


def test_remotes_are_created_changed_and_removed(pair):
    admin = pair["admin"]
    name = unique("other")
    r = admin.post("/api/v2/remotes/", json={"name": name, "url": pair["central"].url + "/api/v2/", "token": pair["token"]})
    assert r.status_code == 201, r.text
    made = r.json()["remote"]
    assert (made["url"], made["has_token"]) == (pair["central"].url, True)
    r = admin.patch(f"/api/v2/remotes/{made['id']}/", json={"token": central_token(pair), "name": name + " (2)"})
    assert r.status_code == 200, r.text
    assert (r.json()["remote"]["has_token"], r.json()["remote"]["name"]) == (True, name + " (2)")
    assert admin.delete(f"/api/v2/remotes/{made['id']}").status_code == 204
    assert_envelope(admin.get(f"/api/v2/remotes/{made['id']}"), 404, "not_found")
    assert_envelope(admin.delete(f"/api/v2/remotes/{made['id']}"), 404, "not_found")
    assert_envelope(admin.patch(f"/api/v2/remotes/{made['id']}", json={"token": "x"}), 404, "not_found")


@pytest.mark.parametrize("body", [
    {"name": "bad", "url": "ftp://example.org"}, {"name": "bad", "url": "example.org"}, {"name": "bad", "url": "http://"},
    {"name": "bad", "url": "http://example.org:notaport"}, {"name": "bad", "url": 12}, {"name": "", "url": "http://a.org"},
    {"name": 5, "url": "http://a.org"}, {"name": "123", "url": "http://a.org"}, {"url": "http://a.org"},
    {"name": "bad"}, {"name": "bad", "url": "http://a.org", "token": 7}, {"name": "bad", "url": "http://a.org", "x": 1},
    [], "text", {"name": "central", "url": "http://a.org"},
])
def test_bad_remotes_are_refused(pair, body):
    assert_envelope(pair["admin"].post("/api/v2/remotes/", json=body), 400, "invalid")


def test_bad_publish_requests_are_refused(pair):
    admin = pair["admin"]
    pk = upload(admin, CITIES, unique("Target "))
    rid = pair["remote"]["id"]
    assert_envelope(admin.post(f"/api/v2/resources/{pk}/publish", json={"remote": "nosuch"}), 404, "not_found")
    assert_envelope(admin.post(f"/api/v2/resources/{pk}/publish", json={"remote": 999999}), 404, "not_found")
    for body in ({}, {"remote": None}, {"remote": True}, {"remote": [1]}, {"remote": {"id": 1}}, {"remote": ""}, [1]):
        assert_envelope(admin.post(f"/api/v2/resources/{pk}/publish", json=body), 400, "invalid")
    r = admin.post(f"/api/v2/resources/{pk}/publish", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["success"] is False
    for missing in ("999999", "abc", "0"):
        assert_envelope(admin.post(f"/api/v2/resources/{missing}/publish", json={"remote": rid}), 404, "not_found")
        assert_envelope(admin.get(f"/api/v2/resources/{missing}/publications"), 404, "not_found")
    r = admin.post("/api/v2/maps", json={"title": unique("A map")})
    assert r.status_code == 201, r.text
    map_pk = r.json()["map"]["pk"]
    r = admin.post(f"/api/v2/resources/{map_pk}/publish", json={"remote": rid})
    assert_envelope(r, 400, "invalid")
    assert "Only datasets and documents" in r.json()["errors"][0]
    for path in ("abc", "0", "999999"):
        assert_envelope(admin.get(f"/api/v2/remotes/{path}"), 404, "not_found")
        assert_envelope(admin.patch(f"/api/v2/remotes/{path}", json={"name": "z"}), 404, "not_found")
    for body in ({"url": "gopher://x"}, {"name": ""}, {"token": ["x"]}, "x", {"name": "central2", "bogus": 1}):
        assert_envelope(admin.patch(f"/api/v2/remotes/{rid}", json=body), 400, "invalid")


# -- the command line -------------------------------------------------------------------------------------
def test_the_commands(pair, tmp_path):
    data = tmp_path / "cli"
    r = cli("remote", "add", "central", pair["central"].url, f"--token={pair['token']}", data_dir=data)
    assert r.returncode == 0, r.stderr
    assert "Remote central added" in r.stdout
    assert cli("remote", "add", "central", pair["central"].url, data_dir=data).returncode != 0
    r = cli("remote", "add", "broken", "ftp://x.org", data_dir=data)
    assert r.returncode != 0 and "http://" in r.stderr
    r = cli("remote", "add", "bogus", pair["central"].url, "--token=made-up", data_dir=data)
    assert r.returncode != 0 and "The remote catalogue refused this token" in r.stderr, r.stderr
    r = cli("remote", "list", data_dir=data)
    assert r.returncode == 0 and "central" in r.stdout and "token" in r.stdout and pair["token"] not in r.stdout

    # a dataset in that data folder, by a server that is then stopped
    srv = Server(data)
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as c:
            title = unique("From the command line ")
            pk = upload(c, CITIES, title)
    finally:
        srv.stop()
    r = cli("publish", "--remote", "central", str(pk), data_dir=data)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"dataset {pk} -> central: published as" in r.stdout and "data sent" in r.stdout
    assert len(central_titled(pair["central_admin"], title)) == 1
    r = cli("publish", "--remote", "central", str(pk), "999999", data_dir=data)
    assert r.returncode == 1, r.stdout
    assert "data unchanged" in r.stdout and "resource 999999" in r.stdout
    assert len(central_titled(pair["central_admin"], title)) == 1
    assert cli("publish", "--remote", "nosuch", str(pk), data_dir=data).returncode == 1
    r = cli("remote", "remove", "central", data_dir=data)
    assert r.returncode == 0 and "removed" in r.stdout
    assert cli("remote", "remove", "central", data_dir=data).returncode != 0
    assert "central" not in cli("remote", "list", data_dir=data).stdout


def test_an_edited_geopackage_is_published_with_its_edits(pair, tmp_path):
    """The working copy of a GeoPackage upload is sent as committed, its log included (an edit
    in WAL mode is still in data.gpkg-wal), without the catalogue's history tables."""
    from tests.management.test_edited_working_copies import Editor, working_copy

    admin, central = pair["admin"], pair["central_admin"]
    gpkg = tmp_path / "countries.gpkg"
    subprocess.run(["ogr2ogr", "-f", "GPKG", "-nlt", "PROMOTE_TO_MULTI", str(gpkg),
                    str(COUNTRIES / "naturalearth_lowres.shp")], check=True, capture_output=True)
    r = admin.post("/api/v2/uploads/upload", files={"base_file": ("countries.gpkg", gpkg.read_bytes(),
                                                                  "application/geopackage+sqlite3")},
                   data={"dataset_title": unique("Edited countries ")})
    assert r.status_code == 201, r.text
    status = wait(admin, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")
    assert status["status"] == "finished", status
    pk = status["output_params"]["resources"][0]["id"]
    editor = Editor(working_copy(pair["local"].data_dir, pk))
    try:
        editor.conn.execute('CREATE TABLE "gpkgext_catalogue_versions" (number INTEGER PRIMARY KEY)')
        editor.delete("France")
        status = publish(admin, pk, "central")
    finally:
        editor.close()
    assert status["status"] == "finished", status
    remote_pk = status["output_params"]["resources"][0]["remote_pk"]
    alternate = central.get(f"/api/v2/datasets/{remote_pk}").json()["dataset"]["alternate"]
    download = central.get(f"/datasets/{alternate}/dataset_download")
    assert download.status_code == 200, download.text[:200]
    with zipfile.ZipFile(io.BytesIO(download.content)) as z:
        z.extractall(tmp_path / "back")
    _, _, _, fields = pyogrio.raw.read(next((tmp_path / "back").glob("*.shp")), columns=["name"])
    sent = set(fields[0])
    assert "France" not in sent and "Spain" in sent and len(sent) == 176
