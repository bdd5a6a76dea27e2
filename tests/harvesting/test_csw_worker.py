"""The CSW harvester's worker against a running catalogue's own CSW (/catalogue/csw), holding an
uploaded Shapefile (public), a document with a file and a remote document."""

from __future__ import annotations

import httpx
import pytest

from catalogue_app.harvesting import http, registry
from catalogue_app.harvesting.csw import CSW, GMD, CswRefusal, CswWorker
from catalogue_app.harvesting.types import HarvestError, RemoteDocument, RemoteItem, RemoteLayer
from tests.api.test_uploads import COUNTRIES
from tests.conftest import ADMIN_PASSWORD, Server, free_port
from tests.ogc.conftest import upload_shapefile

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("csw-worker") / "data")
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as c:
        countries = upload_shapefile(c, COUNTRIES, dataset_title="Countries of the world",
                                     abstract="Boundaries of the countries.")
        r = c.patch(f"/api/v2/resources/{countries['pk']}",
                    json={"keywords": [{"name": "borders"}], "category": {"identifier": "boundaries"}})
        assert r.status_code == 200, r.text
        r = c.post("/api/v2/documents", files={"doc_file": ("report.pdf", PDF, "application/pdf")},
                   data={"title": "Annual report"})
        assert r.status_code == 201, r.text
        report = r.json()["document"]
        r = c.post("/api/v2/documents", data={"title": "A page elsewhere", "doc_url": "https://example.org/page.pdf"})
        assert r.status_code == 201, r.text
        elsewhere = r.json()["document"]
        for res in (report, elsewhere):
            r = c.put(f"/api/v2/resources/{res['pk']}/permissions",
                      json={"users": [], "groups": [], "organizations": [],
                            "everyone": ["view_resourcebase", "download_resourcebase"]})
    with http.client() as client:
        yield {"srv": srv, "csw": f"{srv.url}/catalogue/csw", "countries": countries, "report": report,
               "elsewhere": elsewhere, "http": client}
    srv.stop()


def worker(site, url: str | None = None, **config) -> CswWorker:
    return registry.worker(registry.CSW, url or site["csw"], registry.checked_config(registry.CSW, config),
                           site["http"])


def item(res: dict) -> RemoteItem:
    return RemoteItem(unique_identifier=res["uuid"], title=res["title"])


@pytest.mark.parametrize("schema", ["iso", "dc"])
def test_a_dataset_record_becomes_a_remote_layer(site, schema):
    w = worker(site, output_schema=schema)
    assert w.available() and w.schema() == (GMD if schema == "iso" else CSW)
    got = w.harvest(item(site["countries"]))
    countries = site["countries"]
    assert got.resource_type == "dataset"
    assert got.values["title"] == "Countries of the world"
    assert got.values["abstract"].strip() == "Boundaries of the countries."
    assert got.values["date"]
    assert "borders" in got.keywords and got.category == "boundaries"
    x0, y0, x1, y1 = got.ll_bbox
    assert x0 == pytest.approx(-180, abs=0.01) and x1 == pytest.approx(180, abs=0.01) and y0 < -80 and y1 > 80
    assert isinstance(got.data, RemoteLayer)
    assert got.data.service_url == f"{site['srv'].url}/geoserver/ows"
    assert got.data.layer_name == countries["alternate"]
    assert got.data.download_url == f"{site['srv'].url}/datasets/{countries['alternate']}/dataset_download"
    assert any(link.link_type == "OGC:WMS" for link in got.links)
    # its thumbnail, when it has one, is the catalogue's
    if got.thumbnail_url:
        assert httpx.get(got.thumbnail_url, timeout=30).status_code == 200


@pytest.mark.parametrize("schema", ["iso", "dc"])
def test_documents_become_remote_documents(site, schema):
    w = worker(site, output_schema=schema)
    report = w.harvest(item(site["report"]))
    assert report.resource_type == "document" and report.values["title"] == "Annual report"
    assert isinstance(report.data, RemoteDocument)
    assert report.data.doc_url == f"{site['srv'].url}/documents/{site['report']['pk']}/download"
    elsewhere = w.harvest(item(site["elsewhere"]))
    assert isinstance(elsewhere.data, RemoteDocument) and elsewhere.data.doc_url == "https://example.org/page.pdf"


def test_an_unknown_record_is_a_harvest_error(site):
    with pytest.raises(HarvestError):
        worker(site).harvest(RemoteItem(unique_identifier="no-such-record"))


def test_offered_pages_through_every_record(site):
    w = worker(site)
    try:
        items = list(w.offered())
    except CswRefusal as exc:
        if exc.code == "OperationNotSupported":
            pytest.skip("this catalogue's CSW answers no GetRecords yet")
        raise
    kinds = {i.unique_identifier: i.resource_type for i in items}
    assert kinds[site["countries"]["uuid"]] == "dataset"
    assert kinds[site["report"]["uuid"]] == "document"
    filtered = list(worker(site, title_filter="ANNUAL").offered())
    assert [i.unique_identifier for i in filtered] == [site["report"]["uuid"]]
    assert len(list(worker(site, max_records=1).offered())) == 1
    dc = {i.unique_identifier for i in worker(site, output_schema="dc").offered()}
    assert dc == set(kinds)


def test_config_is_checked():
    with pytest.raises(registry.BadConfiguration):
        registry.checked_config(registry.CSW, {"output_schema": "marc"})
    with pytest.raises(registry.BadConfiguration):
        registry.checked_config(registry.CSW, {"dataset_title_filter": "x"})
    assert registry.checked_config(registry.CSW, {}) == {"title_filter": None, "output_schema": "iso",
                                                         "max_records": None}


def test_a_dead_address_is_a_clear_error(site):
    w = worker(site, f"http://127.0.0.1:{free_port()}/csw")
    assert w.available() is False
    with pytest.raises(HarvestError, match="could not be reached"):
        list(w.offered())
    not_csw = worker(site, f"{site['srv'].url}/geoserver/ows")
    assert not_csw.available() is False


class _Paging:
    """A CSW in front of the catalogue's: GetRecords answered here, a page of ``size`` of the
    catalogue's own records (read with GetRecordById) at a time; the rest passed on."""

    def __init__(self, csw: str, uuids: list[str], size: int):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import parse_qsl, urlsplit

        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                query = dict(parse_qsl(urlsplit(self.path).query))
                keys = {k.lower(): v for k, v in query.items()}
                if keys.get("request") == "GetRecords":
                    outer.asked.append(keys)
                    start = int(keys.get("startposition", "1"))
                    page = uuids[start - 1:start - 1 + size]
                    records = b""
                    if page:
                        r = httpx.get(csw, params={"service": "CSW", "version": "2.0.2", "request": "GetRecordById",
                                                   "id": ",".join(page), "elementsetname": "full",
                                                   "outputschema": keys.get("outputschema")})
                        records = r.content.split(b"?>", 1)[-1]
                        records = records[records.index(b">") + 1:records.rindex(b"</")]
                    following = start + len(page) if start - 1 + len(page) < len(uuids) else 0
                    body = (f'<?xml version="1.0"?><csw:GetRecordsResponse xmlns:csw="{CSW}"><csw:SearchResults '
                            f'numberOfRecordsMatched="{len(uuids)}" numberOfRecordsReturned="{len(page)}" '
                            f'nextRecord="{following}">').encode() + records + b"</csw:SearchResults></csw:GetRecordsResponse>"
                    status = 200
                else:
                    r = httpx.get(csw, params=query)
                    body, status = r.content, r.status_code
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.asked: list[dict] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/csw"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("schema", ["iso", "dc"])
def test_offered_follows_the_pages(site, schema):
    uuids = [site[k]["uuid"] for k in ("countries", "report", "elsewhere")]
    paging = _Paging(site["csw"], uuids, size=2)
    try:
        items = list(worker(site, paging.url, output_schema=schema).offered())
        assert [i.unique_identifier for i in items] == uuids
        assert [i.resource_type for i in items] == ["dataset", "document", "document"]
        assert items[0].title == "Countries of the world"
        assert [a["startposition"] for a in paging.asked] == ["1", "3"]
        assert {a["outputschema"] for a in paging.asked} == {GMD if schema == "iso" else CSW}
        assert [i.title for i in worker(site, paging.url, title_filter="report").offered()] == ["Annual report"]
        assert len(list(worker(site, paging.url, max_records=2).offered())) == 2
        got = worker(site, paging.url, output_schema=schema).harvest(items[0])
        assert isinstance(got.data, RemoteLayer)
    finally:
        paging.close()
