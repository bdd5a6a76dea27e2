"""Embed views, the embed_url of resources: a dataset's map preview drawn by the catalogue's own
WMS with its own script (no address outside the server), a document shown by the element that
fits it, maps by their title; hidden resources are a 404 page; pages may be framed."""

from __future__ import annotations

import re

import pytest

from tests.api.test_documents import pdf, png
from tests.api.test_links import build_site, close_site, wait_for
from tests.conftest import insert_resource, login

ANONYMOUS_GROUP, MEMBERS_GROUP = 1, 2
URL = re.compile(r"""(?i)\b(?:https?:)?//[^\s"'<>)]+""")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    built = build_site(tmp_path_factory, "embed")
    yield built
    close_site(built)


def html_page(response, status: int = 200) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers.get("x-frame-options", "").upper() not in ("DENY", "SAMEORIGIN")  # may be framed
    assert response.text.startswith("<!DOCTYPE html>")
    return response.text


def upload_document(client, name: str, content: bytes, **fields) -> dict:
    r = client.post("/api/v2/documents", files={"doc_file": (name, content, "application/octet-stream")}, data=fields)
    assert r.status_code == 201, r.text
    return r.json()["document"]


def test_a_dataset_preview_uses_only_the_server(site):
    srv, vector = site["srv"], site["vector"]
    assert vector["embed_url"] == f"{srv.url}/datasets/{vector['alternate']}/embed"
    with srv.client() as anon:
        page = html_page(anon.get(vector["embed_url"]))
        assert f'data-layer="{vector["alternate"]}"' in page and f'data-wms="{srv.url}/geoserver/ows"' in page
        assert vector["title"] in page and "admin" in page  # title and attribution (the owner, by default)
        addresses = URL.findall(page)
        assert addresses and all(a.startswith(f"{srv.url}/") for a in addresses), addresses
        assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css))"', page)
        assert len(assets) == 2
        for asset in assets:
            r = anon.get(asset)
            assert r.status_code == 200 and r.headers["content-type"].startswith(("text/javascript", "text/css",
                                                                                  "application/javascript"))
            assert "http" not in r.text and "//" not in r.text.replace("/*", "").replace("*/", "").replace(
                "// ", "")  # no address at all: everything comes from the page's own data
        assert "GetMap" in anon.get(assets[0] if assets[0].endswith(".js") else assets[1]).text


def test_the_start_view(site):
    with site["srv"].client() as anon:
        world = html_page(anon.get(site["vector"]["embed_url"]))
        utm = html_page(anon.get(site["raster"]["embed_url"]))
    # the countries reach the poles: Web Mercator cannot show them, EPSG:4326 can
    assert 'data-crs="EPSG:4326"' in world and 'data-crs="EPSG:3857"' in utm
    box = [float(v) for v in re.search(r'data-bbox="([^"]+)"', utm).group(1).split(",")]
    assert box == pytest.approx(site["raster"]["extent"]["coords"])


def test_who_may_see_a_private_dataset_preview(site):
    private = site["private"]
    url = private["embed_url"]
    statuses = {who: c.get(url).status_code for who, c in site["clients"].items()}
    assert statuses == {"anonymous": 404, "other": 404, "viewer": 200, "owner": 200, "admin": 200}
    page = html_page(site["clients"]["anonymous"].get(url), 404)
    assert "Not found" in page and private["title"] not in page
    page = html_page(site["clients"]["viewer"].get(url))
    assert "Private &lt;cities&gt; &amp; towns" in page and "<cities>" not in page


def test_unknown_and_odd_dataset_names(site):
    anon = site["clients"]["anonymous"]
    for name in ("catalogue:nothing", "nothing", "catalogue:%3Cscript%3Ealert(1)%3C%5Cscript%3E", "x" * 2000):
        page = html_page(anon.get(f"/datasets/{name}/embed"), 404)
        assert "<script>alert" not in page


def test_a_dataset_without_data(site):
    srv = site["srv"]
    rid = insert_resource(srv, site["owner"]["pk"], "Made up", [(None, ANONYMOUS_GROUP, "view_resourcebase")],
                          resource_type="dataset", subtype="vector", alternate="catalogue:made_up_embed",
                          ll_x0=0, ll_y0=0, ll_x1=1, ll_y1=1)
    with srv.client() as anon:
        made = anon.get(f"/api/v2/datasets/{rid}").json()["dataset"]
        page = html_page(anon.get(made["embed_url"]))
    assert "no data" in page and "<script" not in page and "data-wms" not in page


def test_a_png_document_shows_as_an_image(site):
    with login(site["srv"], site["owner"]) as c:
        doc = upload_document(c, "plan.png", png(), title="Site plan")
    assert doc["embed_url"] == f"{site['srv'].url}/documents/{doc['pk']}/embed"
    with site["srv"].client() as anon:
        page = html_page(anon.get(doc["embed_url"]))
        src = re.search(r'<img class="embed-content" src="([^"]+)"', page).group(1)
        assert src == f"{site['srv'].url}/documents/{doc['pk']}/link" and "Site plan" in page
        r = anon.get(src)
        assert r.status_code == 200 and r.headers["content-type"] == "image/png" and r.content == png()


@pytest.mark.parametrize("name, content, element", [
    ("report.pdf", pdf(), '<iframe class="embed-content"'),
    ("clip.mp4", b"\x00\x00\x00\x18ftypmp42", '<video class="embed-content" controls'),
    ("song.mp3", b"ID3\x03\x00", '<audio class="embed-content" controls'),
    ("data.zip", b"PK\x05\x06" + b"\x00" * 18, ">Download data.zip</a>"),
])
def test_other_documents(site, name, content, element):
    with login(site["srv"], site["owner"]) as c:
        doc = upload_document(c, name, content)
        page = html_page(c.get(doc["embed_url"]))
    assert element in page
    assert f"/documents/{doc['pk']}/" in page


def test_remote_and_empty_documents(site):
    with login(site["srv"], site["owner"]) as c:
        remote_url = "https://example.org/reports/annual.pdf"
        remote = c.post("/api/v2/documents", files={"doc_url": (None, remote_url)}).json()["document"]
        page = html_page(c.get(remote["embed_url"]))
        assert f'href="{remote_url}"' in page and "<iframe" not in page
        bare = c.post("/api/v2/resources/", json={"resource_type": "document", "title": "No file"}).json()["resource"]
        assert "has no file" in html_page(c.get(bare["embed_url"]))


def test_who_may_see_a_private_document(site):
    srv, viewer = site["srv"], site["viewer"]
    with login(srv, site["owner"]) as c:
        doc = upload_document(c, "secret.png", png(), title="Secret plan")
        wait_for(c, c.put(f"/api/v2/resources/{doc['pk']}/permissions", json={
            "users": [{"id": viewer["pk"], "permissions": "view"}],
            "groups": [{"id": ANONYMOUS_GROUP, "permissions": "none"}, {"id": MEMBERS_GROUP, "permissions": "none"}]}))
    url = doc["embed_url"]
    statuses = {who: c.get(url).status_code for who, c in site["clients"].items()}
    assert statuses == {"anonymous": 404, "other": 404, "viewer": 200, "owner": 200, "admin": 200}
    seen = html_page(site["clients"]["viewer"].get(url))  # may view, not download: no image
    assert "Secret plan" in seen and "<img" not in seen and "not its file" in seen
    for who in ("owner", "admin"):
        assert f'src="{srv.url}/documents/{doc["pk"]}/link"' in html_page(site["clients"][who].get(url))
    assert "Secret plan" not in html_page(site["clients"]["anonymous"].get(url), 404)


def test_maps_and_bad_ids(site):
    with login(site["srv"], site["owner"]) as c:
        made = c.post("/api/v2/resources/", json={"resource_type": "map", "title": "Rivers & lakes",
                                                   "abstract": "<p>All the <b>water</b></p>"}).json()["resource"]
        assert made["embed_url"] == f"{site['srv'].url}/maps/{made['pk']}/embed"
        page = html_page(c.get(made["embed_url"]))
        assert "Rivers &amp; lakes" in page and "All the water" in page
        app = c.post("/api/v2/resources/", json={"resource_type": "geostory", "title": "A story"}).json()["resource"]
        assert "A story" in html_page(c.get(app["embed_url"]))
        wait_for(c, c.put(f"/api/v2/resources/{made['pk']}/permissions", json={
            "groups": [{"id": ANONYMOUS_GROUP, "permissions": "none"}, {"id": MEMBERS_GROUP, "permissions": "none"}]}))
    anon = site["clients"]["anonymous"]
    html_page(anon.get(made["embed_url"]), 404)
    for path in ("/maps/abc/embed", "/maps/99999999/embed", "/maps/-1/embed", f"/maps/{'9' * 40}/embed",
                 "/documents/abc/embed", "/documents/99999999/embed", f"/documents/{made['pk']}/embed",
                 f"/apps/{made['pk']}/embed"):
        html_page(anon.get(path), 404)
    assert site["clients"]["owner"].get(f"/documents/{made['pk']}/embed").status_code == 404  # a map is no document


# The viewer script run by Node.js with a stand-in for the few browser objects it uses: the images
# it asks for show that it starts at the dataset's box and follows drags and the wheel.
FAKE_BROWSER = r"""
const fs = require("fs");
const asked = [];
function element(attrs) {
  const listeners = {};
  return {
    attrs: attrs || {}, children: [], style: {}, classList: {add() {}, remove() {}},
    clientWidth: 800, clientHeight: 400, firstChild: null,
    getAttribute(name) { return this.attrs[name] === undefined ? null : this.attrs[name]; },
    setAttribute(name, value) { this.attrs[name] = value; },
    appendChild(child) { this.children.push(child); return child; },
    insertBefore(child) { this.children.unshift(child); return child; },
    removeChild(child) { this.children = this.children.filter(c => c !== child); },
    addEventListener(type, fn) { listeners[type] = fn; },
    fire(type, event) { listeners[type](Object.assign({preventDefault() {}, stopPropagation() {},
      target: {closest() { return null; }}, button: 0, pointerId: 1}, event)); },
    getBoundingClientRect() { return {left: 0, top: 0}; },
    setPointerCapture() {},
  };
}
const map = element(JSON.parse(process.argv[2]));
global.window = {devicePixelRatio: 1, addEventListener() {}};
global.document = {readyState: "complete", querySelectorAll: () => [map], createElement: () => element()};
global.Image = function () { this.style = {}; asked.push(this); };
eval(fs.readFileSync(process.argv[3], "utf8"));
const settle = () => new Promise(done => setTimeout(done, 300));
(async () => {
  await settle();
  const urls = [];
  const last = () => { const img = asked[asked.length - 1]; urls.push(img.src); img.onload(); };
  last();
  map.fire("pointerdown", {clientX: 400, clientY: 200});
  map.fire("pointermove", {clientX: 300, clientY: 200});
  map.fire("pointerup", {clientX: 300, clientY: 200});
  await settle(); last();
  map.fire("wheel", {clientX: 400, clientY: 200, deltaY: -100, deltaMode: 0});
  await settle(); last();
  console.log(JSON.stringify(urls));
})();
"""


def test_the_viewer_asks_for_the_right_maps(site, tmp_path):
    import json
    import shutil
    import subprocess
    from urllib.parse import parse_qs, urlsplit

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("Node.js is not installed")
    srv, vector = site["srv"], site["vector"]
    with srv.client() as anon:
        page = html_page(anon.get(vector["embed_url"]))
        script = tmp_path / "viewer.js"
        script.write_bytes(anon.get(re.search(r'<script src="([^"]+)"', page).group(1)).content)
    attrs = dict(re.findall(r'(data-[a-z]+)="([^"]*)"', page))
    harness = tmp_path / "harness.js"
    harness.write_text(FAKE_BROWSER)
    out = subprocess.run([node, str(harness), json.dumps(attrs), str(script)], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    urls = json.loads(out.stdout)
    boxes = []
    for url in urls:
        assert url.startswith(f"{srv.url}/geoserver/ows?")
        q = {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}
        assert (q["service"], q["request"], q["layers"], q["srs"]) == ("WMS", "GetMap", vector["alternate"],
                                                                      "EPSG:4326")
        assert (q["width"], q["height"], q["format"]) == ("800", "400", "image/png")
        boxes.append([float(v) for v in q["bbox"].split(",")])
    first, dragged, zoomed = boxes
    west, south, east, north = vector["extent"]["coords"]
    assert first[0] <= west and first[1] <= south and first[2] >= east and first[3] >= north  # the whole dataset
    assert (first[2] - first[0]) / (first[3] - first[1]) == pytest.approx(2)  # the element's shape
    res = (first[2] - first[0]) / 800
    assert dragged[0] - first[0] == pytest.approx(100 * res) and dragged[1] == pytest.approx(first[1])
    assert (dragged[2] - dragged[0]) / (zoomed[2] - zoomed[0]) == pytest.approx(1.5)  # one wheel step in
    assert (zoomed[0] + zoomed[2]) / 2 == pytest.approx((dragged[0] + dragged[2]) / 2)  # about the cursor
