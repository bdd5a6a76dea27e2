"""Where a resource came from (``source`` and ``origin``, fields beyond GeoNode's): an upload is
local, a copy made through the copy API names its original (and keeps its title once the original
is deleted), a document at a remote address is remote, and a client may say which resource of
another catalogue a resource is a copy of (``origin_url``). ``filter{source}`` selects by source in
SQL, with the right totals and visibility, on /resources and the typed lists; a bad value is 400.
(Harvested records and copies published from another catalogue: tests/harvesting/test_origins_across_catalogues.py.)"""

from __future__ import annotations

import json

import pytest

from tests.api.test_copies import copy_of, finish
from tests.api.test_uploads import CITIES, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_user

ELSEWHERE = "https://other.example.org/catalogue/#/dataset/7"


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    """An owner's public upload, a copier's copy of it (and a copy of that copy), a remote
    document, and a private upload of the owner's with a copy only the owner sees."""
    srv = in_process(tmp_path_factory.mktemp("origins") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, copier, stranger = (make_user(admin) for _ in range(3))
    with login(srv, owner) as c:
        upload = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                                    data={"dataset_title": "Places"}))
        private = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES), data={
            "dataset_title": "Private places", "permissions": '{"users": {"AnonymousUser": []}}'}))
        private_copy = copy_of(c, private["pk"])
        finish(c, c.put(f"/api/v2/resources/{private_copy['pk']}/permissions", json={"users": {"AnonymousUser": []}}))
        r = c.post("/api/v2/documents", data={"title": "Remote report", "doc_url": "https://example.org/report.pdf"})
        assert r.status_code == 201, r.text
        remote = r.json()["document"]
    with login(srv, copier) as c:
        copy = copy_of(c, upload["pk"], title="My places")
        second = copy_of(c, copy["pk"])
    yield {"srv": srv, "admin": admin, "owner": owner, "copier": copier, "stranger": stranger, "upload": upload,
           "private": private, "private_copy": private_copy, "remote": remote, "copy": copy, "second": second}
    admin.close()
    srv.stop()


def pks(answer) -> set[str]:
    assert answer.status_code == 200, answer.text
    body = answer.json()
    rows = next(v for k, v in body.items() if isinstance(v, list) and k != "links")
    return {r["pk"] for r in rows}


def test_an_upload_is_local_and_a_copy_names_its_original(ctx):
    srv, upload, copy, second = ctx["srv"], ctx["upload"], ctx["copy"], ctx["second"]
    with srv.client() as anon:
        original = anon.get(f"/api/v2/resources/{upload['pk']}").json()["resource"]
        assert (original["source"], original["origin"], original["sourcetype"]) == ("local", None, "LOCAL")
        mine = anon.get(f"/api/v2/resources/{copy['pk']}").json()["resource"]
        assert mine["title"] == "My places" and mine["owner"]["username"] == ctx["copier"]["username"]
        assert mine["source"] == "copy"
        assert mine["origin"] == {"kind": "copy", "title": "Places", "pk": upload["pk"], "harvester": None,
                                  "remote_url": None, "url": f"{srv.url}/catalogue/#/dataset/{upload['pk']}"}
        # a copy of a copy names the copy it was made from
        assert anon.get(f"/api/v2/resources/{second['pk']}").json()["resource"]["origin"]["pk"] == copy["pk"]
        # the same fields on every endpoint that shows the resource
        for path, key in ((f"/api/v2/datasets/{copy['pk']}", "dataset"), (f"/api/v2/resources/{copy['pk']}", "resource")):
            shown = anon.get(path).json()[key]
            assert (shown["source"], shown["origin"]) == ("copy", mine["origin"])
        listed = anon.get("/api/v2/datasets", params={"filter{pk}": copy["pk"]}).json()["datasets"][0]
        assert (listed["source"], listed["origin"]) == ("copy", mine["origin"])
        assert anon.get(f"/api/v2/datasets/{copy['pk']}/origin").json() == {"origin": mine["origin"]}
        # what the list pages ask for: only these fields
        few = anon.get("/api/v2/resources", params={"filter{pk}": copy["pk"], "exclude[]": "*",
                                                    "include[]": ["pk", "title", "owner", "source", "origin"]})
        assert few.json()["resources"] == [{"pk": copy["pk"], "title": "My places", "owner": mine["owner"],
                                            "source": "copy", "origin": mine["origin"]}]


def test_a_remote_document_is_remote(ctx):
    with ctx["srv"].client() as anon:
        doc = anon.get(f"/api/v2/documents/{ctx['remote']['pk']}").json()["document"]
    assert doc["source"] == "remote" and doc["origin"]["kind"] == "remote"
    assert doc["origin"]["url"] == "https://example.org/report.pdf" and doc["origin"]["pk"] is None


def test_the_source_filter_counts_what_the_caller_may_see(ctx):
    srv, upload, copy, second, remote = ctx["srv"], ctx["upload"], ctx["copy"], ctx["second"], ctx["remote"]
    private, private_copy = ctx["private"], ctx["private_copy"]
    with srv.client() as anon, login(srv, ctx["owner"]) as owner:
        assert pks(anon.get("/api/v2/resources", params={"filter{source}": "copy"})) == {copy["pk"], second["pk"]}
        assert anon.get("/api/v2/resources", params={"filter{source}": "copy"}).json()["total"] == 2
        # the owner sees their private copy too, and it is counted
        mine = owner.get("/api/v2/resources", params={"filter{source}": "copy", "page_size": 1}).json()
        assert mine["total"] == 3 and len(mine["resources"]) == 1
        assert pks(owner.get("/api/v2/resources", params={"filter{source}": "copy", "page_size": 10})) == {
            copy["pk"], second["pk"], private_copy["pk"]}
        assert pks(anon.get("/api/v2/resources", params={"filter{source}": "remote"})) == {remote["pk"]}
        assert pks(anon.get("/api/v2/resources", params={"filter{source}": "harvested"})) == set()
        local = pks(owner.get("/api/v2/resources", params={"filter{source}": "local", "page_size": 100}))
        assert {upload["pk"], private["pk"]} <= local and not local & {copy["pk"], private_copy["pk"], remote["pk"]}
        both = anon.get("/api/v2/resources", params=[("filter{source.in}", "copy"), ("filter{source.in}", "remote")])
        assert pks(both) == {copy["pk"], second["pk"], remote["pk"]} and both.json()["total"] == 3
        assert remote["pk"] not in pks(anon.get("/api/v2/resources", params={"filter{-source}": "remote",
                                                                            "page_size": 100}))
        either = json.dumps({"$or": [{"source": "remote"}, {"pk": int(upload["pk"])}]})
        assert pks(anon.get("/api/v2/resources", params={"filter{}": either})) == {remote["pk"], upload["pk"]}
        # the typed lists too
        assert pks(anon.get("/api/v2/datasets", params={"filter{source}": "copy"})) == {copy["pk"], second["pk"]}
        assert pks(anon.get("/api/v2/documents", params={"filter{source}": "copy"})) == set()
        assert pks(anon.get("/api/v2/documents", params={"filter{source}": "remote"})) == {remote["pk"]}
        sorted_ = anon.get("/api/v2/resources", params={"sort[]": "source", "page_size": 100}).json()["resources"]
        assert [r["source"] for r in sorted_] == sorted(r["source"] for r in sorted_)


@pytest.mark.parametrize("params", [
    {"filter{source}": "copies"},
    {"filter{source}": "COPY"},
    [("filter{source.in}", "copy"), ("filter{source.in}", "elsewhere")],
    {"filter{-source}": ""},
    {"filter{}": json.dumps({"$or": [{"source": "nowhere"}]})},
])
@pytest.mark.parametrize("path", ["/api/v2/resources", "/api/v2/datasets"])
def test_a_source_that_does_not_exist_is_refused(ctx, params, path):
    with ctx["srv"].client() as anon:
        r = anon.get(path, params=params)
    assert_envelope(r, 400, "invalid")
    assert "local, harvested, remote, copy" in r.json()["errors"][0]


def test_origin_is_not_a_filter(ctx):
    with ctx["srv"].client() as anon:
        assert_envelope(anon.get("/api/v2/resources", params={"filter{origin}": "x"}), 400, "invalid")


def test_a_copy_keeps_the_title_of_an_original_since_deleted(ctx):
    srv = ctx["srv"]
    with login(srv, ctx["owner"]) as owner, login(srv, ctx["copier"]) as copier:
        r = owner.post("/api/v2/documents", data={"title": "Short-lived"},
                       files={"doc_file": ("notes.txt", b"notes\n", "text/plain")})
        assert r.status_code == 201, r.text
        original = r.json()["document"]
        copy = copy_of(copier, original["pk"])
        assert copy["origin"]["pk"] == original["pk"]
        assert owner.delete(f"/api/v2/resources/{original['pk']}").status_code == 204
        after = copier.get(f"/api/v2/resources/{copy['pk']}").json()["resource"]
    assert after["source"] == "copy"
    assert after["origin"] == {"kind": "copy", "title": "Short-lived", "url": None, "pk": None, "harvester": None,
                               "remote_url": None}


def test_a_client_says_what_a_resource_is_a_copy_of(ctx):
    srv, admin = ctx["srv"], ctx["admin"]
    with login(srv, ctx["owner"]) as owner:
        made = imported(owner, owner.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                                          data={"dataset_title": "Received"}))
        pk = made["pk"]
        r = owner.patch(f"/api/v2/datasets/{pk}", json={"origin_url": ELSEWHERE, "origin_title": "Places there"})
        assert r.status_code == 200, r.text
        shown = r.json()["dataset"]
        assert shown["source"] == "copy"
        assert shown["origin"] == {"kind": "copy", "title": "Places there", "url": ELSEWHERE, "pk": None,
                                   "harvester": None, "remote_url": None}
        assert "origin_url" not in shown  # write-only: read back in origin
        assert pk in pks(owner.get("/api/v2/resources", params={"filter{source}": "copy", "page_size": 100}))
        # a client sending back what it read changes nothing
        assert owner.put(f"/api/v2/resources/{pk}", json=shown).json()["resource"]["origin"] == shown["origin"]
        # changed, then forgotten: local again
        r = owner.patch(f"/api/v2/resources/{pk}", json={"origin_url": ELSEWHERE + "8"})
        assert r.json()["resource"]["origin"]["url"] == ELSEWHERE + "8" and r.json()["resource"]["origin"]["title"] is None
        r = owner.patch(f"/api/v2/resources/{pk}", json={"origin_url": None})
        assert (r.json()["resource"]["source"], r.json()["resource"]["origin"]) == ("local", None)
        # bad addresses and titles: 400, nothing changed
        for body in ({"origin_url": "javascript:alert(1)"}, {"origin_url": "ftp://example.org/x"},
                     {"origin_url": "https://"}, {"origin_url": 12}, {"origin_url": "https://x.org/" + "a" * 2000},
                     {"origin_url": "https://x.org/a b"}, {"origin_url": ELSEWHERE, "origin_title": ["x"]},
                     {"origin_title": "alone"}, {"title": "Renamed", "origin_url": "mailto:someone@example.org"}):
            assert_envelope(owner.patch(f"/api/v2/resources/{pk}", json=body), 400, "invalid")
        again = owner.get(f"/api/v2/resources/{pk}").json()["resource"]
        assert (again["title"], again["source"]) == ("Received", "local")
        # the origin of a copy made here is the catalogue's to say
        r = owner.patch(f"/api/v2/resources/{ctx['private_copy']['pk']}", json={"origin_url": ELSEWHERE})
        assert_envelope(r, 400, "invalid")
        assert "copy made here" in r.json()["errors"][0]
        assert_envelope(owner.patch(f"/api/v2/resources/{ctx['private_copy']['pk']}", json={"origin_url": None}),
                        400, "invalid")
    # only those who may change the metadata may say it
    with login(srv, ctx["stranger"]) as stranger:
        assert stranger.patch(f"/api/v2/resources/{pk}", json={"origin_url": ELSEWHERE}).status_code == 403
    with srv.client() as anon:
        assert anon.patch(f"/api/v2/resources/{pk}", json={"origin_url": ELSEWHERE}).status_code in (401, 403)
    assert admin.patch(f"/api/v2/resources/{pk}", json={"origin_url": ELSEWHERE}).status_code == 200
    with srv.client() as anon:
        assert anon.get(f"/api/v2/resources/{pk}").json()["resource"]["origin"]["url"] == ELSEWHERE


def test_a_new_document_may_name_its_original_elsewhere(ctx):
    with login(ctx["srv"], ctx["owner"]) as owner:
        r = owner.post("/api/v2/documents", data={"title": "Copied report", "origin_url": ELSEWHERE},
                       files={"doc_file": ("notes.txt", b"notes\n", "text/plain")})
        assert r.status_code == 201, r.text
        assert r.json()["document"]["source"] == "copy"
        assert r.json()["document"]["origin"]["url"] == ELSEWHERE
