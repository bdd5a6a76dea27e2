"""Text the catalogue supplies comes in the asked language (``lang``, else Accept-Language), where
a translation exists, else as stored: category and region names (/api/v2/categories,
/api/v2/regions, the facets' labels), the facets' own names, and the messages jobs write
(/api/v2/executionrequest, the execution status, /api/v2/uploads). Such answers say so with
``Content-Language`` and ``Vary: Accept-Language``; an unknown language gets English."""

from __future__ import annotations

import json
import sqlite3
import uuid

import pytest

from tests.conftest import ADMIN_PASSWORD, in_process, login, make_user

STOPPED = "The server stopped while this was running; nothing of it was kept. Send the request again."
REFUSED = ("Refused when the job ran: {user} may no longer delete this resource (a permission was withdrawn after "
           "the request was sent). Nothing was done.")


@pytest.fixture(scope="module")
def w(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("languages") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    user = make_user(admin)
    c = login(srv, user)
    r = c.post("/api/v2/resources/", json={"resource_type": "document", "title": "Languages doc",
                                            "category": {"identifier": "inlandWaters"},
                                            "extent": {"coords": [8.4, 46.0, 8.9, 46.6], "srid": "EPSG:4326"}})
    assert r.status_code == 201, r.text
    jobs = {}
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:  # failed requests as the runner leaves them
        for key, log in (("stopped", STOPPED), ("refused", REFUSED.format(user=user["username"])),
                         ("other", "Something no catalogue translates.")):
            jobs[key] = str(uuid.uuid4())
            conn.execute("INSERT INTO execution_requests (exec_id, user_id, func_name, action, status, step, log,"
                         " input_params, output_params, created, last_updated, finished)"
                         " VALUES (?, ?, 'delete', 'delete', 'failed', 'failed', ?, '{}', ?, ?, ?, ?)",
                         (jobs[key], user["pk"], log, json.dumps({"exception": log}),
                          "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z"))
    conn.close()
    yield {"srv": srv, "admin": admin, "c": c, "user": user, "jobs": jobs}
    c.close()
    admin.close()
    srv.stop()


def get(client, path, lang=None, accept=None, **params):
    headers = {"Accept-Language": accept} if accept else {}
    r = client.get(path, params={**params, **({"lang": lang} if lang else {})}, headers=headers)
    assert r.status_code == 200, r.text
    assert "Accept-Language" in r.headers.get("vary", ""), r.headers
    return r


def category(w, **how):
    r = get(w["c"], "/api/v2/categories/", page_size=100, **how)
    return r, {c["identifier"]: c["gn_description"] for c in r.json()["categories"]}


def test_category_names(w):
    r, names = category(w, lang="fr")
    assert names["inlandWaters"] == "Eaux intérieures" and names["economy"] == "Économie"
    assert r.headers["content-language"] == "fr"
    r, names = category(w, accept="ar;q=0.9, de;q=1")  # German: none, Arabic: the best we have
    assert names["health"] == "الصحة" and r.headers["content-language"] == "ar"
    assert category(w, lang="es")[1]["farming"] == "Agricultura" and category(w, lang="pt")[1]["health"] == "Saúde"
    for how in ({"lang": "zz"}, {"accept": "de-CH, ja"}, {}):
        r, names = category(w, **how)
        assert names["inlandWaters"] == "Inland Waters" and r.headers["content-language"] == "en"
    # one category, and the lang parameter before Accept-Language
    pk = next(c["id"] for c in get(w["c"], "/api/v2/categories/", page_size=100).json()["categories"]
              if c["identifier"] == "oceans")
    one = get(w["c"], f"/api/v2/categories/{pk}", lang="es", accept="fr").json()["categories"]
    assert one["gn_description"] == "Océanos"


def test_region_names(w):
    def names(**how):
        body = get(w["c"], "/api/v2/regions/", page_size=300, **how).json()["regions"]
        return {g["code"]: g["name"] for g in body}
    assert names(lang="fr")["DEU"] == "Allemagne" and names(accept="es")["CHE"] == "Suiza"
    assert names(lang="ar")["GLO"] == "العالم" and names(lang="pt")["EUR"] == "Europa"
    assert names(lang="zz")["DEU"] == "Germany"


def test_facet_labels(w):
    body = get(w["c"], "/api/v2/facets/category", lang="fr").json()
    assert body["label"] == "Category" and body["localized_label"] == "Catégorie"
    assert [i["label"] for i in body["topics"]["items"]] == ["Eaux intérieures"]
    regions = get(w["c"], "/api/v2/facets/region", accept="ar").json()["topics"]["items"]
    assert "سويسرا" in {i["label"] for i in regions}
    listed = get(w["c"], "/api/v2/facets/", accept="es").json()["facets"]
    assert {f["name"]: f["localized_label"] for f in listed}["owner"] == "Propietario"
    # text_contains looks in the label the reader reads
    found = get(w["c"], "/api/v2/facets/category", lang="fr", topic_contains="intérieures").json()
    assert [i["key"] for i in found["topics"]["items"]] == ["inlandWaters"]
    english = get(w["c"], "/api/v2/facets/category", lang="zz").json()
    assert english["localized_label"] == "Category" and english["topics"]["items"][0]["label"] == "Inland Waters"


def test_job_messages(w):
    jobs, c = w["jobs"], w["c"]
    one = get(c, f"/api/v2/executionrequest/{jobs['stopped']}", lang="fr").json()["request"]
    assert one["log"].startswith("Le serveur s'est arrêté pendant l'exécution")
    status = get(c, f"/api/v2/resource-service/execution-status/{jobs['refused']}", accept="ar").json()
    assert status["log"].startswith("رُفضت المهمة عند تنفيذها") and w["user"]["username"] in status["log"]
    assert "حذف هذا المورد" in status["log"]  # the part in the middle, translated too
    listed = get(c, "/api/v2/executionrequest/", lang="es").json()["requests"]
    logs = {r["exec_id"]: r["log"] for r in listed}
    assert logs[jobs["refused"]].startswith(f"Rechazado al ejecutarse la tarea: {w['user']['username']} ya no puede "
                                            f"eliminar este recurso")
    assert logs[jobs["other"]] == "Something no catalogue translates."  # as written
    assert get(c, f"/api/v2/executionrequest/{jobs['stopped']}", lang="zz").json()["request"]["log"] == STOPPED
    assert get(c, f"/api/v2/executionrequest/{jobs['stopped']}").json()["request"]["log"] == STOPPED
