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
            def do_GET(self) -> None:  # noqa: N802
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
