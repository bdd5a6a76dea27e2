"""Upload limits as resources: seeded values, reading by anyone, writes by administrators only."""

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_user

NBSP = "\u00a0"


@pytest.fixture(scope="module")
def lim(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("limits") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    user = make_user(admin)
    yield {"srv": srv, "admin": admin, "user": user}
    admin.close()
    srv.stop()


def test_seeded_limits_are_readable_by_anyone(lim):
    with lim["srv"].client() as anon:
        body = anon.get("/api/v2/upload-size-limits/").json()
        assert body["total"] == 3 and set(body) == {"links", "total", "page", "page_size", "upload-size-limits"}
        rows = {r["slug"]: r for r in body["upload-size-limits"]}
        assert set(rows) == {"dataset_upload_size", "document_upload_size", "asset_upload_size"}
        one = rows["dataset_upload_size"]
        assert one["max_size"] == 104857600 and one["max_size_label"] == f"100.0{NBSP}MB"
        assert one["description"] == "The sum of sizes for the files of a dataset upload."
        assert one["link"].endswith("/api/v2/upload-size-limits/dataset_upload_size")
        detail = anon.get("/api/v2/upload-size-limits/document_upload_size").json()
        assert detail["upload-size-limit"]["slug"] == "document_upload_size"
        body = anon.get("/api/v2/upload-parallelism-limits/").json()
        assert body["upload-parallelism-limits"] == [{
            "slug": "default_max_parallel_uploads", "description": "The default maximum parallel uploads per user.",
            "max_number": 5, "link": body["upload-parallelism-limits"][0]["link"]}]
        assert anon.get("/api/v2/upload-parallelism-limits/default_max_parallel_uploads/").json()[
            "upload-parallelism-limit"]["max_number"] == 5
        assert_envelope(anon.get("/api/v2/upload-size-limits/nosuch"), 404, "not_found")
        sizes = [r["max_size"] for r in anon.get("/api/v2/upload-size-limits/", params={"ordering": "-slug"})
                 .json()["upload-size-limits"]]
        assert len(sizes) == 3


def test_only_administrators_add_and_change_limits(lim):
    srv, admin = lim["srv"], lim["admin"]
    body = {"slug": "field_team_size", "description": "For the field team.", "max_size": 2048}
    with srv.client() as anon:
        assert_envelope(anon.post("/api/v2/upload-size-limits/", json=body), 401, "not_authenticated")
    with login(srv, lim["user"]) as c:
        assert_envelope(c.post("/api/v2/upload-size-limits/", json=body), 403, "permission_denied")
        assert_envelope(c.patch("/api/v2/upload-parallelism-limits/default_max_parallel_uploads",
                                json={"max_number": 50}), 403, "permission_denied")
    r = admin.post("/api/v2/upload-size-limits/", json=body)
    assert r.status_code == 201 and r.json()["upload-size-limit"]["max_size_label"] == f"2.0{NBSP}KB"
    assert_envelope(admin.post("/api/v2/upload-size-limits/", json=body), 409, "conflict")
    r = admin.post("/api/v2/upload-parallelism-limits/", json={"upload-parallelism-limits": [
        {"slug": "night_jobs", "max_number": 2}]})
    assert r.status_code == 201 and r.json()["upload-parallelism-limits"][0]["description"] == ""
    r = admin.patch("/api/v2/upload-size-limits/field_team_size", json={"max_size": 10})
    assert r.status_code == 200 and r.json()["upload-size-limit"]["max_size_label"] == f"10{NBSP}bytes"
    assert admin.put("/api/v2/upload-parallelism-limits/night_jobs/", json={"max_number": 3}).json()[
        "upload-parallelism-limit"]["max_number"] == 3
    for bad in ({"slug": "x y", "max_size": 1}, {"slug": "ok", "max_size": -1}, {"slug": "ok"},
                {"slug": "ok", "max_size": "big"}, {"slug": "ok", "max_size": True}, {"slug": "ok", "max_size": 2**70}):
        assert_envelope(admin.post("/api/v2/upload-size-limits/", json=bad), 400, "invalid")
    assert_envelope(admin.post("/api/v2/upload-parallelism-limits/", json={"slug": "many", "max_number": 40000}),
                    400, "invalid")
    assert_envelope(admin.patch("/api/v2/upload-size-limits/nosuch", json={"max_size": 1}), 404, "not_found")
    assert_envelope(admin.delete("/api/v2/upload-size-limits/dataset_upload_size"), 405, "method_not_allowed")
