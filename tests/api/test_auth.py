"""Authentication: Basic, Bearer, the token endpoint, and the 401/403 rules."""

import base64

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, assert_envelope, login, make_user


def test_root_is_public_and_names_endpoints(anon, server):
    r = anon.get("/api/v2/")
    assert r.status_code == 200
    body = r.json()
    assert body["users"] == f"{server.url}/api/v2/users"
    assert body["groups"] == f"{server.url}/api/v2/groups"
    # QGIS then saves metadata through GeoNode 5's metadata editor API, which is served
    assert body["metadata"] == f"{server.url}/api/v2/metadata"


def test_anonymous_refused_with_basic_challenge(anon):
    r = anon.get("/api/v2/users/")
    assert_envelope(r, 401, "not_authenticated", "Authentication credentials were not provided.")
    assert r.headers["www-authenticate"] == 'Basic realm="api"'


def test_basic_auth(admin):
    r = admin.get("/api/v2/users/")
    assert r.status_code == 200
    assert r.json()["users"][0]["username"] == "admin"


def test_wrong_password_is_401_even_on_public_endpoint(server):
    with server.client(auth=("admin", "wrong")) as c:
        r = c.get("/api/v2/groups/")
    assert_envelope(r, 401, "authentication_failed", "Invalid username/password.")
    assert r.headers["www-authenticate"] == 'Basic realm="api"'


def test_unknown_user_and_malformed_header(server):
    with server.client(auth=("nobody-here", "whatever")) as c:
        assert_envelope(c.get("/api/v2/groups/"), 401, "authentication_failed")
    for header in ("Basic !!!notbase64", "Basic " + base64.b64encode(b"no-colon").decode(), "Basic"):
        with server.client() as c:
            r = c.get("/api/v2/groups/", headers={"Authorization": header})
        assert_envelope(r, 401, "authentication_failed")


def test_token_endpoint_and_bearer(server, admin):
    user = make_user(admin)
    with server.client() as c:
        r = c.post("/o/token/", data={"grant_type": "password", "username": user["username"],
                                      "password": USER_PASSWORD})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["token_type"] == "Bearer"
    assert isinstance(body["access_token"], str) and len(body["access_token"]) > 20
    assert isinstance(body["expires_in"], int) and body["expires_in"] > 0
    assert isinstance(body["scope"], str)
    with server.client(token=body["access_token"]) as c:
        me = c.get(f"/api/v2/users/{user['pk']}/")
        assert me.status_code == 200
        assert me.json()["user"]["perms"] == ["add_resource"]
    with server.client() as c:
        assert c.post("/o/revoke_token/", data={"token": body["access_token"]}).status_code == 200
    with server.client(token=body["access_token"]) as c:
        assert_envelope(c.get("/api/v2/users/"), 401, "not_authenticated")


def test_token_endpoint_errors(server):
    with server.client() as c:
        r = c.post("/o/token/", data={"grant_type": "password", "username": "admin", "password": "bad"})
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
        r = c.post("/o/token/", data={"grant_type": "client_credentials"})
        assert r.status_code == 400 and r.json()["error"] == "unsupported_grant_type"
        r = c.post("/o/token/", content=b"{bad json", headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["error"] == "invalid_request"
        r = c.post("/o/token/", json={"grant_type": "password", "username": "admin", "password": ADMIN_PASSWORD})
        assert r.status_code == 200 and r.json()["token_type"] == "Bearer"


def test_invalid_bearer_is_anonymous(server):
    with server.client(token="not-a-token") as c:
        assert c.get("/api/v2/groups/").status_code == 200
        assert_envelope(c.get("/api/v2/users/"), 401, "not_authenticated")


def test_password_change_forgets_remembered_credentials(server, admin):
    user = make_user(admin)
    with login(server, user) as c:
        assert c.get("/api/v2/users/").status_code == 200  # verified and remembered
        r = c.patch(f"/api/v2/users/{user['pk']}/", json={"password": "another-secret-2"})
        assert r.status_code == 200, r.text
        assert_envelope(c.get("/api/v2/users/"), 401, "authentication_failed")
    with server.client(auth=(user["username"], "another-secret-2")) as c:
        assert c.get("/api/v2/users/").status_code == 200


def test_deactivated_user_cannot_log_in(server, admin):
    user = make_user(admin)
    with login(server, user) as c:
        assert c.get("/api/v2/users/").status_code == 200
        assert admin.patch(f"/api/v2/users/{user['pk']}", json={"is_active": False}).status_code == 200
        assert_envelope(c.get("/api/v2/users/"), 401, "authentication_failed")


def test_bearer_and_basic_see_the_same(server, admin):
    user = make_user(admin)
    with server.client() as c:
        token = c.post("/o/token/", data={"grant_type": "password", "username": user["username"],
                                          "password": USER_PASSWORD}).json()["access_token"]
    paths = ["/api/v2/users/", f"/api/v2/users/{user['pk']}/", f"/api/v2/users/{user['pk']}/groups/",
             f"/api/v2/users/{user['pk']}/resources/", "/api/v2/groups/"]
    with login(server, user) as basic, server.client(token=token) as bearer:
        for path in paths:
            a, b = basic.get(path), bearer.get(path)
            assert a.status_code == b.status_code == 200, path
            assert a.json() == b.json(), path
        r = bearer.patch(f"/api/v2/users/{user['pk']}/", json={"first_name": "Token"})
        assert r.status_code == 200 and r.json()["user"]["first_name"] == "Token"
        assert_envelope(bearer.post("/api/v2/groups/", json={"title": "nope"}), 403, "permission_denied")
