"""How the web UI is served: its page at / and at GeoNode's /catalogue/, the headers that keep
it safe, its files compressed and cached, nothing outside ui/ reachable."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("path", ["/", "/catalogue/", "/catalogue"])
def test_the_page_is_served_with_its_protections(anon, path):
    r = anon.get(path)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/ui/js/main.js">' in r.text
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-content-type-options"] == "nosniff"


def test_files_are_compressed_and_revalidated(anon):
    r = anon.get("/ui/vendor/leaflet/leaflet.js", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200
    assert r.headers["content-encoding"] == "gzip"
    assert int(r.headers["content-length"]) < 60_000  # 148 KB of JavaScript, sent as about 42 KB
    assert r.headers["content-type"].startswith("text/javascript")
    again = anon.get("/ui/vendor/leaflet/leaflet.js", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    plain = anon.get("/ui/app.css", headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    assert b"--accent" in plain.content


@pytest.mark.parametrize("path", ["/ui/__init__.py", "/ui/../catalogue_app/app.py", "/ui/%2e%2e/setup.py",
                                  "/ui/nothing.js", "/ui/js/", "/ui/vendor/leaflet/LICENSE/x", "/ui/%00",
                                  "/ui/a%00b.js", "/ui/" + "a" * 300 + ".js", "/ui/" + "a/" * 3000 + "x",
                                  "/ui/" + "b" * 250 + ".js"])
def test_nothing_outside_the_ui_files(anon, path):
    r = anon.get(path)
    assert r.status_code == 404
    assert r.json()["code"] == "not_found"


def test_the_map_library_ships_with_its_licence(anon):
    r = anon.get("/ui/vendor/leaflet/LICENSE")
    assert r.status_code == 200 and "BSD 2-Clause" in r.text


def test_embeds_may_still_be_framed(admin, anon):
    doc = admin.post("/api/v2/documents", files={"doc_file": ("e.txt", b"e", "text/plain")},
                     data={"title": "Embedded"}).json()["document"]
    r = anon.get(f"/documents/{doc['pk']}/embed")
    assert r.status_code == 200
    assert "x-frame-options" not in r.headers
    assert "frame-ancestors 'none'" not in r.headers.get("content-security-policy", "")
