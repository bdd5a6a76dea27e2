"""POST /api/v2/packages/imports: who may import a package, and what a package that cannot be
trusted does (the execution fails with the message; the catalogue's rows and files are as they
were). Real servers, real package files (tests/packages/maker.py writes them from the format)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from tests.conftest import ADMIN_PASSWORD, in_process, login, make_user, poll
from tests.packages.conftest import counts, upload_document
from tests.packages.maker import make_package


@pytest.fixture(scope="module")
def pk(tmp_path_factory):
    root = tmp_path_factory.mktemp("pkimport")
    office = in_process(root / "office")
    admin_o = office.client(auth=("admin", ADMIN_PASSWORD))
    doc = upload_document(admin_o, "A note for the field")
    package = root / "office.zip"
    manifest = make_package(root / "office", package)
    here = in_process(root / "here")
    admin = here.client(auth=("admin", ADMIN_PASSWORD))
    user = make_user(admin)
    yield {"srv": here, "dir": root / "here", "admin": admin, "user": user, "package": package, "manifest": manifest,
           "doc": doc, "root": root}
    admin.close()
    admin_o.close()
    here.stop()
    office.stop()


def send(client, data: bytes, name: str = "package.zip", **fields):
    return client.post("/api/v2/packages/imports", files={"file": (name, data, "application/zip")},
                       data={k: str(v).lower() for k, v in fields.items()})


def failed_with(pk, client, data: bytes, words: str) -> None:
    before = counts(pk["dir"])
    r = send(client, data)
    assert r.status_code == 201, r.text
    status = poll(client, r.json()["status_url"])
    assert status["status"] == "failed", status
    request = client.get(f"/api/v2/executionrequest/{r.json()['execution_id']}").json()["request"]
    message = json.dumps(request.get("output_params")) + json.dumps(status)
    assert words in message, message
    assert counts(pk["dir"]) == before


def test_anonymous_callers_are_refused(pk):
    with pk["srv"].client() as anon:
        r = send(anon, pk["package"].read_bytes())
    assert r.status_code == 401, r.text
    assert r.json()["success"] is False


def test_a_missing_file_is_a_clear_400(pk):
    r = pk["admin"].post("/api/v2/packages/imports", files={"other": ("x.zip", b"zz", "application/zip")},
                         data={"dry_run": "false"})
    assert r.status_code == 400, r.text
    assert "file" in r.json()["errors"][0]
    r = pk["admin"].post("/api/v2/packages/imports", data={"dry_run": "maybe"}, files={"file": ("p.zip", b"PK", "x")})
    assert r.status_code == 400 and "dry_run" in r.json()["errors"][0], r.text


def test_any_signed_in_user_may_import_a_dry_run_writes_nothing(pk):
    with login(pk["srv"], pk["user"]) as c:
        r = send(c, pk["package"].read_bytes(), dry_run=True)
        assert r.status_code == 201, r.text
        status = poll(c, r.json()["status_url"])
        assert status["status"] == "finished", status
        report = status["output_params"]["report"]
        assert report["dry_run"] is True and [i["uuid"] for i in report["created"]] == [pk["doc"]["uuid"]]
        assert pk["admin"].get(f"/api/v2/resources?filter{{uuid}}={pk['doc']['uuid']}").json()["total"] == 0
    for key in ("package", "maker", "signed_by", "base", "dry_run", "created", "updated", "unchanged", "conflicts",
                "deleted", "kept", "left_out", "refused", "failed", "notes"):
        assert key in report


def test_a_superuser_imports(pk):
    path = pk["root"] / "again.zip"
    make_package(pk["root"] / "office", path)
    r = send(pk["admin"], path.read_bytes())
    status = poll(pk["admin"], r.json()["status_url"])
    assert status["status"] == "finished", status
    [item] = status["output_params"]["report"]["created"]
    got = pk["admin"].get(f"/api/v2/resources/{item['pk']}").json()["resource"]
    assert got["uuid"] == pk["doc"]["uuid"] and got["owner"]["username"] == "admin"
    # the owner (the importer here) sees the package's report in its execution too
    assert status["output_params"]["package_id"]


def test_a_truncated_zip_fails_and_changes_nothing(pk):
    data = pk["package"].read_bytes()
    failed_with(pk, pk["admin"], data[: len(data) // 2], "package")


def test_a_foreign_zip_fails_and_changes_nothing(pk):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("readme.txt", "not a package")
    failed_with(pk, pk["admin"], buffer.getvalue(), "not a catalogue package")
    failed_with(pk, pk["admin"], b"this is no zip at all", "package")


def test_a_member_whose_hash_does_not_match_fails_and_changes_nothing(pk):
    source = zipfile.ZipFile(pk["package"])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename.endswith("record.json"):
                body = body.replace(b"A note for the field", b"A note for the fielD")  # same size, other bytes
            z.writestr(info, body)
    failed_with(pk, pk["admin"], buffer.getvalue(), "SHA-256")


def test_an_unknown_base_fails_and_changes_nothing(pk):
    path = pk["root"] / "since.zip"
    source = zipfile.ZipFile(pk["package"])
    manifest = json.loads(source.read("manifest.json"))
    manifest["base"] = "00000000-0000-4000-8000-000000000000"
    with zipfile.ZipFile(path, "w") as z:
        for info in source.infolist():
            if info.filename != "manifest.json":
                z.writestr(info, source.read(info.filename))
        z.writestr("manifest.json", json.dumps(manifest))
    failed_with(pk, pk["admin"], path.read_bytes(), "never exported or imported")
