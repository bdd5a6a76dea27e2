"""The pagination envelope, its links and its edge cases."""

import pytest

from tests.conftest import assert_envelope, unique

PREFIX = unique("pg")


@pytest.fixture(scope="module")
def users25(admin):
    records = [{"username": f"{PREFIX}-{i:02d}", "email": f"{PREFIX}-{i:02d}@example.org"} for i in range(25)]
    assert admin.post("/api/v2/users/", json=records).status_code == 200
    return {"filter{username.startswith}": PREFIX}


def test_first_middle_last_pages(server, admin, users25):
    base = f"{server.url}/api/v2/users/"
    key = "filter{username.startswith}=" + PREFIX
    first = admin.get("/api/v2/users/", params=users25).json()
    assert list(first) == ["links", "total", "page", "page_size", "users"]
    assert (first["total"], first["page"], first["page_size"], len(first["users"])) == (25, 1, 10, 10)
    assert first["links"] == {"next": f"{base}?{key}&page=2", "previous": None}
    second = admin.get("/api/v2/users/", params={**users25, "page": 2}).json()
    assert second["links"] == {"next": f"{base}?{key}&page=3", "previous": f"{base}?{key}"}
    third = admin.get(second["links"]["next"]).json()
    assert third["page"] == 3 and len(third["users"]) == 5
    assert third["links"] == {"next": None, "previous": f"{base}?{key}&page=2"}
    names = [u["username"] for p in (first, second, third) for u in p["users"]]
    assert names == sorted(names) and len(set(names)) == 25


def test_links_without_trailing_slash_keep_the_path(server, admin, users25):
    r = admin.get("/api/v2/users", params={**users25, "page_size": 5}).json()
    assert r["links"]["next"].startswith(f"{server.url}/api/v2/users?")
    assert "page_size=5" in r["links"]["next"]


def test_page_past_end_is_404(admin, users25):
    assert_envelope(admin.get("/api/v2/users/", params={**users25, "page": 4}), 404, "not_found", "Invalid page.")
    assert_envelope(admin.get("/api/v2/users/", params={**users25, "page": 10**30}), 404, "not_found", "Invalid page.")


@pytest.mark.parametrize("params", [{"page": "abc"}, {"page": "0"}, {"page": "-1"}, {"page_size": "abc"},
                                    {"page_size": "0"}, {"page_size": "-5"}, {"page": "1.5"}, {"page": "9" * 5000}])
def test_bad_numbers_are_400(admin, params):
    assert_envelope(admin.get("/api/v2/users/", params=params), 400, "invalid")


def test_large_page_size_is_clamped_and_echoed(admin, users25):
    r = admin.get("/api/v2/users/", params={**users25, "page_size": 10_000})
    assert r.json()["page_size"] == 10_000 and len(r.json()["users"]) == 25
    r = admin.get("/api/v2/users/", params={**users25, "page_size": 10**12})
    assert r.status_code == 200 and r.json()["page_size"] == 10_000


def test_empty_list_has_a_first_page(anon, admin):
    r = admin.get("/api/v2/users/", params={"filter{username}": "nobody-at-all"})
    assert r.json() == {"links": {"next": None, "previous": None}, "total": 0, "page": 1, "page_size": 10, "users": []}
    r = anon.get("/api/v2/groups/", params={"filter{slug}": "no-such-group"})
    assert r.json()["total"] == 0 and r.json()["group_profiles"] == []
