"""/api/v2/tokens/: a signed-in user's own API tokens (list, make with a label, revoke), who may
see and revoke which, the token made there working as a Bearer token, its last use recorded,
every bad input refused; and /o/token/ logins that do not pile up."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

import pytest

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, assert_envelope, login, make_user

FIELDS = {"id", "label", "kind", "client", "scope", "created", "expires", "last_used", "link"}


def make_token(client, label: str = "QGIS on my laptop", **extra) -> dict:
    r = client.post("/api/v2/tokens/", json={"label": label, **extra})
    assert r.status_code == 201, r.text
    assert r.headers["cache-control"] == "no-store"
    return r.json()


def when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def mine(server, token: str):
    """The tokens list as seen with this Bearer token (401 when the token does not work)."""
    with server.client(token=token) as c:
        return c.get("/api/v2/tokens/")


@pytest.fixture
def alice(admin):
    return make_user(admin)


def test_anonymous_callers_are_asked_to_sign_in(anon):
    for method, path, body in [("GET", "/api/v2/tokens/", None), ("POST", "/api/v2/tokens/", {"label": "x"}),
                               ("GET", "/api/v2/tokens/1", None), ("DELETE", "/api/v2/tokens/1", None),
                               ("GET", "/api/v2/tokens", None), ("DELETE", "/api/v2/tokens/abc", None)]:
        assert_envelope(anon.request(method, path, json=body), 401, "not_authenticated")


def test_a_personal_token_is_shown_once_works_as_bearer_and_is_revoked(server, admin, alice):
    with login(server, alice) as c:
        made = make_token(c, "  QGIS   on my laptop ")
        secret = made["access_token"]
        assert made["token_type"] == "Bearer" and len(secret) >= 40
        token = made["token"]
        assert set(token) == FIELDS
        assert (token["label"], token["kind"], token["client"], token["expires"], token["last_used"]) == (
            "QGIS on my laptop", "personal", None, None, None)
        assert token["scope"] == "read write groups"
        assert abs(when(token["created"]) - datetime.now(timezone.utc)) < timedelta(minutes=1)
        assert token["link"].endswith(f"/api/v2/tokens/{token['id']}")

        # listed, never with the token or its digest
        listed = c.get("/api/v2/tokens/")
        assert listed.status_code == 200, listed.text
        page = listed.json()
        assert {"links", "total", "page", "page_size", "tokens"} <= set(page)
        assert [t["id"] for t in page["tokens"]] == [token["id"]] and page["total"] == 1
        digest = hashlib.sha256(secret.encode()).hexdigest()
        assert secret not in listed.text and digest not in listed.text
        one = c.get(f"/api/v2/tokens/{token['id']}/")
        assert one.status_code == 200 and one.json()["token"] == page["tokens"][0]
        assert secret not in one.text and digest not in one.text

    # the token, as a Bearer token: it is alice, and its use is recorded
    r = mine(server, secret)
    assert r.status_code == 200, r.text
    assert [t["id"] for t in r.json()["tokens"]] == [token["id"]]
    deadline = time.monotonic() + 10
    while (used := mine(server, secret).json()["tokens"][0]["last_used"]) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert used is not None and abs(when(used) - datetime.now(timezone.utc)) < timedelta(minutes=1)
    # at most once a minute: more requests leave it as it is
    for _ in range(5):
        assert mine(server, secret).status_code == 200
    time.sleep(0.3)
    assert mine(server, secret).json()["tokens"][0]["last_used"] == used

    # revoked: 204, then the token no longer works, and it is gone
    with login(server, alice) as c:
        assert c.delete(f"/api/v2/tokens/{token['id']}").status_code == 204
        assert_envelope(mine(server, secret), 401, "not_authenticated")
        assert c.get("/api/v2/tokens/").json()["tokens"] == []
        assert_envelope(c.delete(f"/api/v2/tokens/{token['id']}"), 404, "not_found")
        assert_envelope(c.get(f"/api/v2/tokens/{token['id']}"), 404, "not_found")


def test_another_user_and_a_superuser_find_no_such_token(server, admin, alice):
    bob = make_user(admin)
    staff = make_user(admin, is_staff=True)
    with login(server, alice) as c:
        made = make_token(c, "alice's script")
    tid, secret = made["token"]["id"], made["access_token"]
    for other in (login(server, bob), login(server, staff), admin):
        assert_envelope(other.get(f"/api/v2/tokens/{tid}"), 404, "not_found")
        assert_envelope(other.delete(f"/api/v2/tokens/{tid}"), 404, "not_found")
        assert tid not in [t["id"] for t in other.get("/api/v2/tokens/").json()["tokens"]]
    assert mine(server, secret).status_code == 200  # still alice's, still working
    # a token's own user may revoke it with the token itself
    with server.client(token=secret) as c:
        assert c.delete(f"/api/v2/tokens/{tid}").status_code == 204
    assert_envelope(mine(server, secret), 401, "not_authenticated")


def test_the_browser_session_needs_its_csrf_token(server, alice):
    with server.client() as c:
        r = c.post("/account/login/", json={"username": alice["username"], "password": USER_PASSWORD})
        assert r.status_code == 200, r.text
        csrf = r.json()["csrf_token"]
        assert c.get("/api/v2/tokens/").status_code == 200
        assert_envelope(c.post("/api/v2/tokens/", json={"label": "no csrf"}), 403, "permission_denied")
        r = c.post("/api/v2/tokens/", json={"label": "from the web page"}, headers={"X-CSRFToken": csrf})
        assert r.status_code == 201, r.text
        tid = r.json()["token"]["id"]
        assert_envelope(c.delete(f"/api/v2/tokens/{tid}"), 403, "permission_denied")
        assert c.delete(f"/api/v2/tokens/{tid}", headers={"X-CSRFToken": csrf}).status_code == 204


def test_a_lifetime_in_days_and_form_fields(server, alice):
    with login(server, alice) as c:
        token = make_token(c, "for a month", expires_in_days=30)["token"]
        assert abs(when(token["expires"]) - (datetime.now(timezone.utc) + timedelta(days=30))) < timedelta(minutes=1)
        r = c.post("/api/v2/tokens/", data={"label": "from a form", "expires_in_days": "7"})
        assert r.status_code == 201, r.text
        assert abs(when(r.json()["token"]["expires"]) - datetime.now(timezone.utc) - timedelta(days=7)) < timedelta(minutes=1)
        assert make_token(c, "kept", expires_in_days=None)["token"]["expires"] is None
        r = c.post("/api/v2/tokens/", json={"token": {"label": "wrapped"}})
        assert r.status_code == 201 and r.json()["token"]["label"] == "wrapped"


def test_revoke_token_at_o_revokes_a_personal_token(server, alice):
    with login(server, alice) as c:
        secret = make_token(c, "to revoke")["access_token"]
    assert mine(server, secret).status_code == 200
    with server.client() as c:
        assert c.post("/o/revoke_token/", data={"token": secret}).status_code == 200
    assert_envelope(mine(server, secret), 401, "not_authenticated")


@pytest.mark.parametrize("body", [
    [], "text", 12, None, {}, {"label": ""}, {"label": "   "}, {"label": "x" * 101}, {"label": 5}, {"label": None},
    {"label": ["a"]}, {"label": "a\x00b"}, {"label": "a\ud800"}, {"label": "a", "expires_in_days": 0},
    {"label": "a", "expires_in_days": -1}, {"label": "a", "expires_in_days": 3651}, {"label": "a", "expires_in_days": 1.5},
    {"label": "a", "expires_in_days": "soon"}, {"label": "a", "expires_in_days": True}, {"label": "a", "x": 1},
    {"label": "a", "access_token": "mine"}, {"token": "x"},
])
def test_bad_inputs_are_refused(server, alice, body):
    with login(server, alice) as c:
        if body is None:
            r = c.post("/api/v2/tokens/")
        elif isinstance(body, dict) and any(isinstance(v, str) and "\ud800" in v for v in body.values()):
            r = c.post("/api/v2/tokens/", content=b'{"label": "a\\ud800"}', headers={"content-type": "application/json"})
            assert_envelope(r, 400, "parse_error")  # (JSON that no text can hold)
        else:
            assert_envelope(c.post("/api/v2/tokens/", json=body), 400, "invalid")
        assert c.get("/api/v2/tokens/").json()["tokens"] == []  # nothing was made


def test_bad_requests_and_unknown_ids(server, alice):
    with login(server, alice) as c:
        r = c.post("/api/v2/tokens/", content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["success"] is False
        r = c.post("/api/v2/tokens/", content=b"label=x", headers={"content-type": "text/plain"})
        assert r.status_code == 415 and r.json()["success"] is False
        for path in ("abc", "0", "999999999", "1" * 30, "-1", "1.5"):
            assert_envelope(c.get(f"/api/v2/tokens/{path}"), 404, "not_found")
            assert_envelope(c.delete(f"/api/v2/tokens/{path}"), 404, "not_found")
        assert_envelope(c.get("/api/v2/tokens/", params={"page": 9}), 404, "not_found")
        assert c.put("/api/v2/tokens/1", json={"label": "x"}).status_code == 405


def test_a_user_holds_at_most_a_hundred_personal_tokens(server, admin):
    user = make_user(admin)
    with login(server, user) as c:
        for n in range(100):
            assert c.post("/api/v2/tokens/", json={"label": f"t{n}"}).status_code == 201
        r = c.post("/api/v2/tokens/", json={"label": "one too many"})
        assert_envelope(r, 400, "invalid")
        assert "revoke" in r.json()["errors"][0]
        listed = c.get("/api/v2/tokens/", params={"page_size": 200}).json()
        assert listed["total"] == 100 and listed["tokens"][0]["label"] == "t99"  # newest first


def oauth_login(server, user, client_id: str | None) -> str:
    form = {"grant_type": "password", "username": user["username"], "password": USER_PASSWORD}
    if client_id:
        form["client_id"] = client_id
    with server.client() as c:
        r = c.post("/o/token/", data=form)
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


def rows(server, sql: str, *args):
    with sqlite3.connect(server.data_dir / "catalogue.sqlite3") as conn:
        return conn.execute(sql, args).fetchall()


def test_logins_do_not_pile_up(server, admin):
    user = make_user(admin)
    first = oauth_login(server, user, "script")
    tokens = [first] + [oauth_login(server, user, "script") for _ in range(54)]
    # a client keeps its 50 newest: the first logins' tokens were revoked, the newest work
    assert_envelope(mine(server, first), 401, "not_authenticated")
    assert_envelope(mine(server, tokens[4]), 401, "not_authenticated")
    listed = mine(server, tokens[-1]).json()
    assert listed["total"] == 50 and {t["kind"] for t in listed["tokens"]} == {"login"}
    assert {t["client"] for t in listed["tokens"]} == {"script"}
    assert mine(server, tokens[5]).status_code == 200
    # a personal token is never taken by logins
    with login(server, user) as c:
        personal = make_token(c, "kept whatever happens")["access_token"]
    # a user keeps 100 logins in all, whatever clients they name
    for n in range(55):
        oauth_login(server, user, f"client {n}")
    assert rows(server, "SELECT count(*) FROM tokens WHERE user_id = ? AND kind = 'login'", user["pk"]) == [(100,)]
    assert mine(server, personal).status_code == 200
    assert mine(server, tokens[5]).status_code == 401  # the oldest of 'script' went first


def test_expired_tokens_are_removed(server, admin):
    user = make_user(admin)
    r = subprocess.run([sys.executable, "-m", "catalogue_app", "token", user["username"], "--days", "0.00002",
                        "--label", "short", "--data-dir", str(server.data_dir)], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD})
    assert r.returncode == 0, r.stderr
    secret = r.stdout.strip()
    assert rows(server, "SELECT kind, label FROM tokens WHERE user_id = ?", user["pk"]) == [("cli", "short")]
    time.sleep(2)
    assert_envelope(mine(server, secret), 401, "not_authenticated")
    oauth_login(server, user, None)  # any token issued removes the expired ones
    assert rows(server, "SELECT kind FROM tokens WHERE user_id = ?", user["pk"]) == [("login",)]


def test_the_command_lines_token_is_listed_as_such(server, admin):
    user = make_user(admin)
    r = subprocess.run([sys.executable, "-m", "catalogue_app", "token", user["username"], "--label", "backup script",
                        "--data-dir", str(server.data_dir)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD})
    assert r.returncode == 0, r.stderr
    token = mine(server, r.stdout.strip()).json()["tokens"][0]
    assert (token["kind"], token["label"]) == ("cli", "backup script")
    assert when(token["expires"]) - datetime.now(timezone.utc) > timedelta(days=364)


def test_the_openapi_document_declares_the_endpoints(anon):
    doc = anon.get("/api/v2/schema/", params={"format": "json"}).json()
    paths = {p.rstrip("/"): item for p, item in doc["paths"].items()}
    assert {"get", "post"} <= set(paths["/api/v2/tokens"])
    assert {"get", "delete"} <= set(paths["/api/v2/tokens/{token_id}"])
    body = paths["/api/v2/tokens"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    name = body["$ref"].rsplit("/", 1)[1]
    assert set(doc["components"]["schemas"][name]["properties"]) == {"label", "expires_in_days"}
    assert "201" in paths["/api/v2/tokens"]["post"]["responses"]
