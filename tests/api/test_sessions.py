"""Browser sign-in: the session cookie, its CSRF token, the growing delay after failures."""

import sqlite3
import time
from datetime import datetime

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, Server, assert_envelope, insert_resource, login, make_user

COOKIE = "catalogue_session"
WRONG = "Wrong username or password."
CSRF_FAILED = "CSRF Failed: CSRF token missing or incorrect."


def sign_in(server, user) -> tuple[str, str, dict]:
    """Sign in with a fresh client; returns (cookie value, csrf token, body)."""
    with server.client() as c:
        r = c.post("/account/login/", json={"username": user["username"], "password": user["password"]})
    assert r.status_code == 200, r.text
    body = r.json()
    return cookie_of(r), body["csrf_token"], body


def cookie_of(response) -> str:
    header = next(h for h in response.headers.get_list("set-cookie") if h.startswith(f"{COOKIE}="))
    return header.split(";")[0].split("=", 1)[1]


def with_cookie(server, value, csrf=None):
    headers = {"Cookie": f"{COOKIE}={value}"}
    if csrf is not None:
        headers["X-CSRFToken"] = csrf
    client = server.client()
    client.headers.update(headers)
    return client


def private_document(server, owner_id: int, title: str) -> int:
    perms = ("view_resourcebase", "download_resourcebase", "change_resourcebase", "change_resourcebase_metadata",
             "delete_resourcebase", "change_resourcebase_permissions")
    return insert_resource(server, owner_id, title, [(owner_id, None, p) for p in perms])


def title_of(admin, pk: int) -> str:
    return admin.get(f"/api/v2/resources/{pk}").json()["resource"]["title"]


def test_sign_in_sets_the_cookie_and_answers_the_user(server, admin):
    user = make_user(admin, first_name="Ada", last_name="Lovelace")
    with server.client() as c:
        r = c.post("/account/login/", json={"username": user["username"], "password": USER_PASSWORD})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["user"] == {"pk": user["pk"], "username": user["username"], "first_name": "Ada",
                            "last_name": "Lovelace", "is_superuser": False, "is_staff": False}
    assert isinstance(body["csrf_token"], str) and len(body["csrf_token"]) >= 32
    header = next(h for h in r.headers.get_list("set-cookie") if h.startswith(f"{COOKIE}="))
    attributes = {part.strip().split("=")[0].lower() for part in header.split(";")[1:]}
    assert {"httponly", "path"} <= attributes and "secure" not in attributes
    assert "SameSite=Lax" in header and "Path=/" in header
    assert len(cookie_of(r)) >= 43  # 32 random bytes, base64
    assert r.headers["cache-control"] == "no-store"
    # only a digest of the cookie is stored
    conn = sqlite3.connect(server.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        stored = [row[0] for row in conn.execute("SELECT digest FROM sessions WHERE user_id = ?", (user["pk"],))]
    finally:
        conn.close()
    assert stored and cookie_of(r) not in stored


def test_form_sign_in_and_missing_fields(server, admin):
    user = make_user(admin)
    with server.client() as c:
        r = c.post("/account/login/", data={"username": user["username"], "password": USER_PASSWORD})
        assert r.status_code == 200, r.text
        assert r.json()["user"]["username"] == user["username"]
        assert_envelope(c.post("/account/login/", json={"username": user["username"]}), 400, "invalid",
                        "password is required.")
        assert_envelope(c.post("/account/login/", json={}), 400, "invalid", "username and password are required.")
        assert_envelope(c.post("/account/login/"), 400, "invalid", "username and password are required.")


def test_the_cookie_alone_acts_as_the_user(server, admin, anon):
    user = make_user(admin)
    pk = private_document(server, user["pk"], "Owned by the cookie user")
    value, csrf, _ = sign_in(server, user)
    assert anon.get(f"/api/v2/resources/{pk}").status_code == 404
    assert anon.get(f"/api/v2/users/{user['pk']}").status_code == 401
    with with_cookie(server, value) as c:
        r = c.get(f"/api/v2/users/{user['pk']}")
        assert r.status_code == 200, r.text
        assert r.json()["user"]["username"] == user["username"]
        r = c.get(f"/api/v2/resources/{pk}")
        assert r.status_code == 200, r.text
        assert r.json()["resource"]["title"] == "Owned by the cookie user"
        r = c.get("/account/session/")
        assert r.json() == {"user": {"pk": user["pk"], "username": user["username"], "first_name": "",
                                     "last_name": "", "is_superuser": False, "is_staff": False},
                            "csrf_token": csrf}


def test_writes_with_the_cookie_need_the_csrf_token(server, admin):
    user = make_user(admin)
    pk = private_document(server, user["pk"], "Before")
    value, csrf, _ = sign_in(server, user)
    with with_cookie(server, value) as c:
        assert_envelope(c.patch(f"/api/v2/resources/{pk}", json={"title": "Without a token"}), 403,
                        "permission_denied", CSRF_FAILED)
        assert_envelope(c.patch(f"/api/v2/resources/{pk}", json={"title": "Wrong token"},
                                headers={"X-CSRFToken": csrf[:-1] + ("A" if csrf[-1] != "A" else "B")}),
                        403, "permission_denied", CSRF_FAILED)
        assert_envelope(c.delete(f"/api/v2/resources/{pk}"), 403, "permission_denied", CSRF_FAILED)
        assert_envelope(c.post("/account/logout/"), 403, "permission_denied", CSRF_FAILED)
    assert title_of(admin, pk) == "Before"
    with with_cookie(server, value, csrf) as c:
        r = c.patch(f"/api/v2/resources/{pk}", json={"title": "With the token"})
        assert r.status_code == 200, r.text
    assert title_of(admin, pk) == "With the token"


def test_basic_and_bearer_need_no_csrf_token(server, admin):
    user = make_user(admin)
    pk = private_document(server, user["pk"], "Basic")
    value, _, _ = sign_in(server, user)
    with login(server, user) as c:
        assert c.patch(f"/api/v2/resources/{pk}", json={"title": "By Basic"}).status_code == 200
        # an Authorization header wins over the cookie, and needs no token
        r = c.patch(f"/api/v2/resources/{pk}", json={"title": "By Basic with a cookie"},
                    headers={"Cookie": f"{COOKIE}={value}"})
        assert r.status_code == 200, r.text
    assert title_of(admin, pk) == "By Basic with a cookie"
    with server.client() as c:
        token = c.post("/o/token/", data={"grant_type": "password", "username": user["username"],
                                          "password": USER_PASSWORD}).json()["access_token"]
    with server.client(token=token) as c:
        assert c.patch(f"/api/v2/resources/{pk}", json={"title": "By Bearer"}).status_code == 200


def test_wrong_password_unknown_user_and_inactive_user_get_one_answer(server, admin):
    user = make_user(admin)
    inactive = make_user(admin)
    assert admin.patch(f"/api/v2/users/{inactive['pk']}", json={"is_active": False}).status_code == 200
    with server.client() as c:
        for name, password in ((user["username"], "not-the-password"), ("nobody-by-this-name", USER_PASSWORD),
                               (inactive["username"], USER_PASSWORD)):
            r = c.post("/account/login/", json={"username": name, "password": password})
            assert_envelope(r, 400, "invalid", WRONG)
            assert not r.headers.get_list("set-cookie")


def test_failures_slow_down_further_attempts(server, admin):
    user = make_user(admin)
    took = []
    with server.client() as c:
        for _ in range(3):
            start = time.monotonic()
            r = c.post("/account/login/", json={"username": user["username"], "password": "not-the-password"})
            took.append(time.monotonic() - start)
            assert_envelope(r, 400, "invalid", WRONG)
        assert took[1] >= 0.45 and took[2] >= 0.95, took
        # the right password still signs in, and resets the count
        start = time.monotonic()
        assert c.post("/account/login/", json={"username": user["username"], "password": USER_PASSWORD}).status_code == 200
        assert time.monotonic() - start >= 1.9  # waited as a fourth attempt would
        c.cookies.clear()
        assert_envelope(c.post("/account/login/", json={"username": user["username"], "password": "nope-nope"}),
                        400, "invalid", WRONG)
        start = time.monotonic()
        assert_envelope(c.post("/account/login/", json={"username": user["username"], "password": "nope-nope"}),
                        400, "invalid", WRONG)
        assert time.monotonic() - start >= 0.45


def test_worker_processes_share_sessions_and_failures(tmp_path):
    srv = Server(tmp_path / "data", workers=2, env={"CATALOGUE_SESSION_SECONDS": "3600"})
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            user = make_user(admin)
        took = []
        for _ in range(3):  # a new connection each time, so the workers take turns
            with srv.client() as c:
                start = time.monotonic()
                r = c.post("/account/login/", json={"username": user["username"], "password": "not-the-password"})
                took.append(time.monotonic() - start)
                assert_envelope(r, 400, "invalid", WRONG)
        assert took[1] >= 0.45 and took[2] >= 0.95, took
        with srv.client() as c:
            r = c.post("/account/login/", json={"username": user["username"], "password": USER_PASSWORD})
        assert r.status_code == 200, r.text
        assert "Max-Age=3600" in r.headers["set-cookie"]  # CATALOGUE_SESSION_SECONDS
        for _ in range(6):
            with with_cookie(srv, cookie_of(r)) as c:
                assert c.get("/account/session/").json()["user"]["pk"] == user["pk"]
        conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
        try:
            created, expires = conn.execute("SELECT created, expires FROM sessions").fetchone()
        finally:
            conn.close()
        lifetime = datetime.fromisoformat(expires.rstrip("Z")) - datetime.fromisoformat(created.rstrip("Z"))
        assert abs(lifetime.total_seconds() - 3600) < 5
    finally:
        srv.stop()


def test_logout_ends_the_session(server, admin):
    user = make_user(admin)
    value, csrf, _ = sign_in(server, user)
    with with_cookie(server, value, csrf) as c:
        r = c.post("/account/logout/")
        assert r.status_code == 200, r.text
        assert r.json() == {"detail": "Signed out."}
        header = next(h for h in r.headers.get_list("set-cookie") if h.startswith(f"{COOKIE}="))
        assert "max-age=0" in header.lower()
        assert c.get("/account/session/").json() == {"user": None, "csrf_token": None}
        assert c.get(f"/api/v2/users/{user['pk']}").status_code == 401
        # signing out again, or without a session, is harmless
        assert c.post("/account/logout/").status_code == 200


def test_password_change_deactivation_and_deletion_end_sessions(server, admin):
    user = make_user(admin)
    value, _, _ = sign_in(server, user)
    other, _, _ = sign_in(server, user)
    r = admin.patch(f"/api/v2/users/{user['pk']}", json={"password": "a-new-secret-2"})
    assert r.status_code == 200, r.text
    for cookie in (value, other):
        with with_cookie(server, cookie) as c:
            assert c.get("/account/session/").json()["user"] is None
            assert c.get(f"/api/v2/users/{user['pk']}").status_code == 401
    user["password"] = "a-new-secret-2"
    value, _, _ = sign_in(server, user)
    assert admin.patch(f"/api/v2/users/{user['pk']}", json={"first_name": "Still"}).status_code == 200
    with with_cookie(server, value) as c:  # other changes keep the session
        assert c.get("/account/session/").json()["user"]["first_name"] == "Still"
    assert admin.patch(f"/api/v2/users/{user['pk']}", json={"is_active": False}).status_code == 200
    with with_cookie(server, value) as c:
        assert c.get("/account/session/").json()["user"] is None
    # the API lists no inactive user to reactivate: do it in the database, as another tool would
    conn = sqlite3.connect(server.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        with conn:
            conn.execute("UPDATE users SET is_active = 1 WHERE id = ?", (user["pk"],))
    finally:
        conn.close()
    with with_cookie(server, value) as c:  # reactivating does not bring the session back
        assert c.get("/account/session/").json()["user"] is None
    value, _, _ = sign_in(server, user)
    assert admin.delete(f"/api/v2/users/{user['pk']}").status_code == 200
    with with_cookie(server, value) as c:
        assert c.get("/account/session/").json()["user"] is None
    conn = sqlite3.connect(server.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        assert conn.execute("SELECT count(*) FROM sessions WHERE user_id = ?", (user["pk"],)).fetchone()[0] == 0
    finally:
        conn.close()


def test_a_forged_or_expired_cookie_is_anonymous(server, admin):
    user = make_user(admin)
    with with_cookie(server, "forged-" + "x" * 40) as c:
        assert c.get("/account/session/").json() == {"user": None, "csrf_token": None}
        assert_envelope(c.get(f"/api/v2/users/{user['pk']}"), 401, "not_authenticated")
        # anonymous, so a write is refused as anonymous, not for CSRF
        assert_envelope(c.post("/api/v2/resources/", json={"resource_type": "map", "title": "x"}), 401,
                        "not_authenticated")
    value, _, _ = sign_in(server, user)
    conn = sqlite3.connect(server.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        with conn:
            conn.execute("UPDATE sessions SET expires = '2020-01-01T00:00:00.000000Z' WHERE user_id = ?", (user["pk"],))
    finally:
        conn.close()
    with with_cookie(server, value) as c:  # an expired session is anonymous too
        assert c.get("/account/session/").json() == {"user": None, "csrf_token": None}
        assert_envelope(c.get(f"/api/v2/users/{user['pk']}"), 401, "not_authenticated")


def test_secure_flag_behind_https_proxy(server, admin):
    user = make_user(admin)
    with server.client() as c:
        r = c.post("/account/login/", json={"username": user["username"], "password": USER_PASSWORD},
                   headers={"X-Forwarded-Proto": "https"})
        assert r.status_code == 200, r.text
        header = next(h for h in r.headers.get_list("set-cookie") if h.startswith(f"{COOKIE}="))
        assert "secure" in {part.strip().lower() for part in header.split(";")}
        assert "HttpOnly" in header and "SameSite=Lax" in header


def test_sign_in_from_another_site_is_refused(server, admin):
    user = make_user(admin)
    with server.client() as c:
        r = c.post("/account/login/", data={"username": user["username"], "password": USER_PASSWORD},
                   headers={"Sec-Fetch-Site": "cross-site"})
        assert_envelope(r, 403, "permission_denied", CSRF_FAILED)
        r = c.post("/account/login/", json={"username": user["username"], "password": USER_PASSWORD},
                   headers={"Sec-Fetch-Site": "same-origin"})
        assert r.status_code == 200, r.text


def test_the_routes_stay_out_of_the_openapi_document(admin):
    paths = admin.get("/api/v2/schema/", params={"format": "json"}).json()["paths"]
    assert not [p for p in paths if p.startswith("/account/")]
