"""GET /api/v2/admin/signing-key: the catalogue's package signing key, for administrators (the
fingerprint to give the other side), with the trust settings; declared in the OpenAPI document."""

from __future__ import annotations

import stat

from catalogue_app.packages import keys
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_user

URL = "/api/v2/admin/signing-key"


def test_anonymous_callers_are_asked_to_sign_in(anon):
    assert_envelope(anon.get(URL), 401, "not_authenticated")


def test_plain_users_may_not_see_it(server, admin):
    with login(server, make_user(admin)) as c:
        assert_envelope(c.get(URL), 403, "permission_denied")


def test_staff_and_superusers_see_the_key_of_the_data_folder(server, admin):
    with login(server, make_user(admin, is_staff=True)) as staff:
        r = staff.get(URL)
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"fingerprint", "public_key", "signs_packages", "trusted_keys"}
    signer = keys.signer(server.data_dir)  # the key the server made on first use
    assert body["fingerprint"] == signer.fingerprint == keys.fingerprint_of_pem(body["public_key"])
    assert body["public_key"] == signer.public_pem
    assert body["signs_packages"] is True and body["trusted_keys"] == []
    assert stat.S_IMODE(keys.key_path(server.data_dir).stat().st_mode) == 0o600
    assert admin.get(URL).json() == body  # a superuser sees the same; the key is made once
    assert admin.get(URL + "/").json() == body


def test_the_answer_shows_the_settings(tmp_path):
    trusted = "SHA256:mwzyfz7kaMokspG5j8GErSXpne3pFFo59PGhqj-Qo1A"
    srv = in_process(tmp_path / "catalogue", env={"CATALOGUE_TRUSTED_KEYS": trusted, "CATALOGUE_SIGN_PACKAGES": "no"})
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as c:
            body = c.get(URL).json()
    finally:
        srv.stop()
    assert body["signs_packages"] is False and body["trusted_keys"] == [trusted]
    assert body["fingerprint"] == keys.signer(tmp_path / "catalogue").fingerprint


def test_it_is_declared_in_the_openapi_document(anon):
    schema = anon.get("/api/v2/schema/", headers={"Accept": "application/json"}).json()
    operation = schema["paths"][URL + "/"]["get"]  # the document writes paths as GeoNode does
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(component["properties"]) == {"fingerprint", "public_key", "signs_packages", "trusted_keys"}


def test_a_damaged_key_file_is_a_clear_answer_not_a_server_error(tmp_path):
    srv = in_process(tmp_path / "catalogue")
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as c:
            assert c.get(URL).status_code == 200  # the key is made
            keys.key_path(tmp_path / "catalogue").write_text("not a key\n")
            r = c.get(URL)
    finally:
        srv.stop()
    assert_envelope(r, 409, "signing_key_unreadable")
    assert "backup" in r.json()["errors"][0]
