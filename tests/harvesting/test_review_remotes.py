"""Harvesting against remotes that misbehave: a small fake GeoNode API v2 (and WMS) in a thread,
answering what each test puts in it (wrong types, loops, unsafe addresses, slow records), and
the catalogue run in this process with its harvesting runner."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.conftest import ADMIN_PASSWORD, free_port, in_process, unique

GEONODE = "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"


class FakeRemote:
    """An HTTP server whose answers are ``routes[path]``: (status, media type, body), or a
    function of the request's path and query giving one. Requests are kept in ``hits``."""

    def __init__(self) -> None:
        self.routes: dict[str, Any] = {}
        self.hits: list[tuple[str, dict[str, str]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                fake.hits.append((self.path, dict(self.headers)))
                route = fake.routes.get(path)
                if callable(route):
                    route = route(self.path)
                status, media, body = route or (404, "application/json", b'{"detail": "Not found."}')
                body = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def geonode(self, records: list[dict[str, Any]], next_url: str | None = None) -> None:
        """The remote's API v2 offering ``records`` (each a resource as its detail shows it)."""
        self.routes["/api/v2"] = (200, "application/json", {"resources": f"{self.url}/api/v2/resources"})
        listing = [{k: r.get(k) for k in ("pk", "uuid", "title", "resource_type", "last_updated")} for r in records]
        self.routes["/api/v2/resources"] = (200, "application/json", {
            "links": {"next": next_url, "previous": None}, "total": len(records), "page": 1,
            "page_size": 100, "resources": listing})
        for r in records:
            self.routes[f"/api/v2/resources/{r['pk']}"] = (200, "application/json", {"resource": r})
            if r["resource_type"] == "dataset":
                self.routes[f"/api/v2/datasets/{r['pk']}"] = (200, "application/json", {"dataset": r})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("review") / "catalogue", {"CATALOGUE_HARVEST_TICK": "0.2"})
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def admin(local):
    with local.client(auth=("admin", ADMIN_PASSWORD)) as c:
        yield c


@pytest.fixture
def anon(local):
    with local.client() as c:
        yield c


@pytest.fixture
def remote():
    fake = FakeRemote()
    yield fake
    fake.close()


def record(pk: int, kind: str = "document", **fields: Any) -> dict[str, Any]:
    base = {"pk": pk, "uuid": str(uuid.uuid4()), "title": f"Record {pk}", "resource_type": kind,
            "last_updated": "2024-01-01T00:00:00Z", "perms": ["view_resourcebase"]}
    if kind == "document":
        base["doc_url"] = f"http://127.0.0.1:{free_port()}/files/{pk}.pdf"
    else:
        base["links"] = [{"link_type": "OGC:WMS", "url": f"http://127.0.0.1:{free_port()}/ows", "name": "WMS"}]
        base["alternate"] = f"geonode:layer{pk}"
    return {**base, **fields}


def harvester(admin, remote_url: str, **config: Any) -> int:
    r = admin.post("/api/v2/harvesters/", json={
        "name": unique("review "), "remote_url": remote_url, "harvester_type": GEONODE,
        "scheduling_enabled": False, "harvest_new_resources_by_default": True,
        "harvester_type_specific_configuration": config})
    assert r.status_code == 201, r.text
    return r.json()["harvester"]["id"]


def wait_ready(admin, harvester_id: int, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        h = admin.get(f"/api/v2/harvesters/{harvester_id}/").json()["harvester"]
        if h["status"] == "ready":
            return h
        assert time.monotonic() < deadline, f"harvester still {h['status']}"
        time.sleep(0.1)


def run(admin, harvester_id: int, status: str, timeout: float = 60) -> dict:
    r = admin.patch(f"/api/v2/harvesters/{harvester_id}/", json={"status": status})
    assert r.status_code == 200, r.text
    wait_ready(admin, harvester_id, timeout)
    body = admin.get("/api/v2/harvesting-sessions/", params={"filter{harvester}": harvester_id, "page_size": 1}).json()
    return body["asynchronous_harvesting_sessions"][0]


def items(admin, harvester_id: int) -> dict[str, dict]:
    body = admin.get(f"/api/v2/harvesters/{harvester_id}/harvestable-resources/", params={"page_size": 100}).json()
    return {item["unique_identifier"]: item for item in body["harvestable_resources"]}


# -- the API ------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://[::1", "http://example.org:99999/", "http://exa mple.org/", "http://:80/"])
def test_a_remote_url_that_is_no_address_is_refused_not_a_server_error(admin, url):
    r = admin.post("/api/v2/harvesters/", json={"name": unique("bad url "), "remote_url": url})
    assert r.status_code == 400, r.text
    assert "remote_url" in r.json()["errors"][0]
    h = harvester(admin, f"http://127.0.0.1:{free_port()}/")
    r = admin.patch(f"/api/v2/harvesters/{h}/", json={"remote_url": url})
    assert r.status_code == 400, r.text


# -- a remote answering wrong types -------------------------------------------------------------


def test_records_with_fields_of_the_wrong_type_are_harvested_with_what_is_usable(admin, remote):
    odd = [record(1, keywords=5, links="x", extent={"coords": "a"}, title=None, category=5, perms=5,
                  download_urls=5, thumbnail_url=7, abstract=["x"]),
           record(2, "dataset", keywords=[5, None, {"name": 3}, "ok"], extent={"coords": [0, 0, "1", 1]},
                  download_urls=[5, "x"], perms=None, regions="y"),
           record(3, last_updated={"a": 1}, title={"t": 1})]
    remote.geonode(odd)
    hid = harvester(admin, remote.url)
    refresh = run(admin, hid, "updating-harvestable-resources")
    assert refresh["status"] == "finished-all-ok", refresh
    offered = items(admin, hid)
    assert set(offered) == {r["uuid"] for r in odd}
    session = run(admin, hid, "harvesting-resources")
    assert session["status"] == "finished-all-ok", session
    for item in items(admin, hid).values():
        assert item["last_harvesting_succeeded"] is True, item
    kept = admin.get(f"/api/v2/resources/{items(admin, hid)[odd[1]['uuid']]['resource']}").json()["resource"]
    assert [k["name"] for k in kept["keywords"]] == ["ok"]


def test_a_next_page_link_that_loops_ends_the_list(admin, remote):
    remote.geonode([record(1)], next_url=None)
    remote.routes["/api/v2/resources"][2]["links"]["next"] = f"{remote.url}/api/v2/resources?page=1"
    hid = harvester(admin, remote.url)
    session = run(admin, hid, "updating-harvestable-resources", timeout=30)
    listed = [p for p, _ in remote.hits if p.startswith("/api/v2/resources?") or p == "/api/v2/resources"]
    assert len(listed) <= 3, f"{len(listed)} pages read"
    assert session["status"] in ("finished-all-ok", "finished-all-failed")
    assert len(items(admin, hid)) == 1


# -- what a harvest makes here, and who sees it -------------------------------------------------


def test_what_a_token_reads_on_the_remote_is_not_made_public_here(admin, anon, remote):
    doc, dataset = record(1), record(2, "dataset")
    remote.geonode([doc, dataset])
    hid = harvester(admin, remote.url, token="remote-secret")
    assert run(admin, hid, "harvesting-resources")["status"] == "finished-all-ok"
    assert any(h.get("Authorization") == "Bearer remote-secret" for _, h in remote.hits)
    made = {u: i["resource"] for u, i in items(admin, hid).items()}
    for u in (doc["uuid"], dataset["uuid"]):
        assert admin.get(f"/api/v2/resources/{made[u]}").status_code == 200
        assert anon.get(f"/api/v2/resources/{made[u]}").status_code == 404, u
    assert not [r for r in anon.get("/api/v2/resources", params={"page_size": 100}).json()["resources"]
                if r["pk"] in made.values()]
    # without a token what the remote shows everyone is public here, as there
    public_doc, public_dataset = record(3), record(4, "dataset")
    remote.geonode([public_doc, public_dataset])
    hid = harvester(admin, remote.url)
    assert run(admin, hid, "harvesting-resources")["status"] == "finished-all-ok"
    for item in items(admin, hid).values():
        assert anon.get(f"/api/v2/resources/{item['resource']}").status_code == 200


@pytest.mark.parametrize("address", ["javascript:alert(document.cookie)", "file:///etc/passwd",
                                     "data:text/html,<script>alert(1)</script>"])
def test_a_record_pointing_at_an_address_that_is_not_the_web_is_not_kept_as_such(admin, remote, address):
    doc = record(1, doc_url=address)
    dataset = record(2, "dataset", links=[{"link_type": "OGC:WMS", "url": address}],
                     download_urls=[{"url": address, "default": True}], perms=["download_resourcebase"])
    linked = record(3, links=[{"link_type": "html", "url": address}], detail_url=address)
    remote.geonode([doc, dataset, linked])
    hid = harvester(admin, remote.url)
    run(admin, hid, "harvesting-resources")
    for item in items(admin, hid).values():
        if item["resource"] is None:
            assert item["last_harvesting_succeeded"] is False
            continue
        shown = admin.get(f"/api/v2/resources/{item['resource']}").json()["resource"]
        text = json.dumps(shown)
        assert address not in text, shown
        r = admin.get(f"/documents/{item['resource']}/download", follow_redirects=False)
        assert address not in r.headers.get("location", "")


# -- the runner -----------------------------------------------------------------------------------


def test_the_lease_is_kept_while_one_slow_record_is_harvested(local, admin, remote, monkeypatch):
    """A record that takes longer than the lease (a slow remote, a large download) must not let
    the lease run out: another process would take the harvester and run it a second time."""
    import os

    from catalogue_app.store import harvesters

    monkeypatch.setattr(harvesters, "LEASE_SECONDS", 1.0)
    slow = record(1)
    remote.geonode([slow])
    answer = remote.routes["/api/v2/resources/1"]
    remote.routes["/api/v2/resources/1"] = lambda path: (time.sleep(4), answer)[1]
    hid = harvester(admin, remote.url)
    assert admin.patch(f"/api/v2/harvesters/{hid}/", json={"status": "harvesting-resources"}).status_code == 200
    deadline = time.monotonic() + 20
    while not any(p.startswith("/api/v2/resources/1") for p, _ in remote.hits):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(2.5)  # the record is still being read, well past the lease's second
    with sqlite3.connect(local.data_dir / "catalogue.sqlite3") as conn:
        pid, until = conn.execute("SELECT lease_pid, lease_until FROM harvesters WHERE id = ?", (hid,)).fetchone()
    assert pid == os.getpid() and until is not None and until > time.time(), (pid, until, time.time())
    wait_ready(admin, hid)
    assert items(admin, hid)[slow["uuid"]]["last_harvesting_succeeded"] is True


# -- the local WMS drawing a remote layer ----------------------------------------------------------


def _remote_layer(local, remote, path: str) -> str:
    from tests.harvesting.test_remote_layers import make_remote

    return make_remote(local, unique("odd"), f"{remote.url}{path}", "layer")["alternate"]


WMS = {"service": "WMS", "version": "1.1.1", "styles": "", "srs": "EPSG:4326", "bbox": "-10,-10,10,10",
       "width": 64, "height": 64}


@pytest.mark.parametrize("body", [b"\x89PNG\r\n\x1a\n" + b"cut short" * 10, b"\xff\xd8\xff" + b"\x00" * 50])
def test_a_remote_image_that_cannot_be_read_is_a_502_exception(local, anon, remote, body):
    remote.routes["/wms"] = (200, "image/png", body)
    alternate = _remote_layer(local, remote, "/wms")
    for fmt in ("image/png", "image/jpeg"):
        r = anon.get("/geoserver/ows", params={**WMS, "request": "GetMap", "layers": alternate, "format": fmt})
        assert r.status_code in (200, 502), r.text
        if r.status_code == 200:  # the remote's own bytes, in the format asked
            assert r.content == body
        else:
            assert "ServiceException" in r.text
    # the legend: passed on as it is, or a 502 when it must be converted and cannot be read
    r = anon.get("/geoserver/ows", params={**WMS, "request": "GetLegendGraphic", "layer": alternate,
                                           "format": "image/png"})
    assert r.status_code in (200, 502), r.text


def test_a_remote_image_far_larger_than_asked_is_refused(local, anon, remote):
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("L", (9000, 9000)).save(out, format="PNG")
    remote.routes["/big"] = (200, "image/png", out.getvalue())
    alternate = _remote_layer(local, remote, "/big")
    r = anon.get("/geoserver/ows", params={**WMS, "request": "GetMap", "layers": alternate, "format": "image/jpeg"})
    assert r.status_code == 502 and "9000 x 9000" in r.text, r.text


def test_a_remote_feature_info_in_html_runs_no_script_here(local, anon, remote):
    remote.routes["/gfi"] = (200, "text/html", b"<script>fetch('/api/v2/users')</script><p>a feature</p>")
    alternate = _remote_layer(local, remote, "/gfi")
    r = anon.get("/geoserver/ows", params={**WMS, "request": "GetFeatureInfo", "layers": alternate,
                                           "query_layers": alternate, "x": 1, "y": 1, "info_format": "text/html"})
    assert r.status_code == 200 and "a feature" in r.text
    policy = r.headers.get("content-security-policy", "")
    assert "sandbox" in policy and "default-src 'none'" in policy, r.headers
    assert r.headers.get("x-content-type-options") == "nosniff"


def test_what_a_harvester_with_a_token_is_offered_is_listed_to_superusers_only(admin, anon, local):
    from tests.conftest import login, make_user

    with_token = harvester(admin, f"http://127.0.0.1:{free_port()}/", token="remote-secret")
    without = harvester(admin, f"http://127.0.0.1:{free_port()}/")
    url = "/api/v2/harvesters/{}/harvestable-resources/"
    assert anon.get(url.format(without)).status_code == 200
    assert anon.get(url.format(with_token)).status_code == 401
    with login(local, make_user(admin)) as user:
        assert user.get(url.format(with_token)).status_code == 403
    assert admin.get(url.format(with_token)).status_code == 200
    shown = admin.get(f"/api/v2/harvesters/{with_token}/").json()["harvester"]
    assert shown["harvester_type_specific_configuration"]["token"] == "********"
