"""Every error class answers the envelope; both path forms work for every method; no input gives a 500."""

import itertools

import pytest

from tests.conftest import assert_envelope, make_user, unique


def test_unknown_path_is_json_404(anon):
    r = anon.get("/api/v2/no-such-thing/")
    assert_envelope(r, 404, "not_found")
    assert r.headers["content-type"].startswith("application/json")


def test_method_not_allowed(admin):
    r = admin.put("/api/v2/users/", json={})
    assert_envelope(r, 405, "method_not_allowed", 'Method "PUT" not allowed.')
    assert "GET" in r.headers["allow"]


def test_unsupported_media_type(admin):
    r = admin.post("/api/v2/users/", content=b"username=x", headers={"Content-Type": "text/plain"})
    assert_envelope(r, 415, "unsupported_media_type")


def test_malformed_json(admin):
    r = admin.post("/api/v2/users/", content=b"{not json", headers={"Content-Type": "application/json"})
    assert_envelope(r, 400, "parse_error")
    assert r.json()["errors"][0].startswith("JSON parse error - ")


def test_body_too_large(admin):
    r = admin.post("/api/v2/users/", content=b"[" + b"1," * (6 * 1024 * 1024) + b"1]",
                   headers={"Content-Type": "application/json"})
    assert_envelope(r, 413, "request_too_large")


def test_wrong_types_are_400(admin):
    for body in ({"username": ["a"], "email": "a@b.c"}, {"username": "ok", "email": 5}, [1, 2], {"users": "x"}, 7, None):
        r = admin.post("/api/v2/users/", json=body)
        assert r.status_code == 400, (body, r.text)


def test_both_path_forms_for_every_method(admin):
    for slash in ("", "/"):
        name = unique()
        r = admin.post("/api/v2/users" + slash, json={"username": name, "email": f"{name}@example.org"})
        assert r.status_code == 200, r.text
        pk = r.json()["user"]["pk"]
        r = admin.get(f"/api/v2/users/{pk}{slash}")
        assert r.status_code == 200
        r = admin.patch(f"/api/v2/users/{pk}{slash}", json={"first_name": "Slash" + slash})
        assert r.status_code == 200 and r.json()["user"]["first_name"] == "Slash" + slash
        r = admin.delete(f"/api/v2/users/{pk}{slash}")
        assert r.status_code == 200
        assert admin.get(f"/api/v2/users/{pk}/").status_code == 404
        assert admin.get("/api/v2/groups" + slash).status_code == 200


ODD_VALUES = ["", "'", '"', "%00", "\u0000", "😀", "-1", "1e9", "[]", "{}", "null", "true", "9" * 40,
              "../../etc/passwd", "a" * 5000, "%ZZ"]
ODD_KEYS = ["filter{}", "filter{", "filter{pk.in}", "filter{-username}", "filter{username.regex}",
            "filter{date_joined.year}", "filter{date_joined.gte}", "filter{is_staff}", "sort[]",
            "ordering", "page", "page_size", "search", "filter{username.range}", "filter{group.name.nope}",
            "filter{categories}", "include[]", "exclude[]", "api_preset", "extent", "favorite", "advertised",
            "filter{tkeywords}", "filter{keywords.name.icontains}", "filter{owner.username.in}", "type",
            "with_resources", "title__icontains", "filter{date.week_day}", "filter{extent}", "force_and"]


ODD_VALUES += ["1,2,3,4", "10,0,-10,5", "-180,-90,180,90,1", "1e400,0,1,1", "nan,0,1,1", "all", '{"$or": []}',
               '{"title": {"a": 1}}', '{"-pk.in": [1, "x"]}']
SEARCH_FIELD = {"users": "username", "groups": "title", "resources": "title", "datasets": "abstract", "uploads": "name",
                "categories": "identifier", "keywords": "name", "regions": "name", "owners": "username",
                "tkeywords": "name"}


@pytest.mark.parametrize("path", ["/api/v2/users/", "/api/v2/groups/", "/api/v2/resources/", "/api/v2/datasets/",
                                  "/api/v2/categories/", "/api/v2/keywords/", "/api/v2/regions/", "/api/v2/owners/",
                                  "/api/v2/tkeywords/", "/api/v2/resources/favorites/", "/api/v2/resources/resource_types/",
                                  "/api/v2/documents/", "/api/v2/uploads/"])
def test_no_odd_query_gives_500(admin, path):
    for key, value in itertools.product(ODD_KEYS, ODD_VALUES):
        field = SEARCH_FIELD.get(path.split("/")[3], "title")
        r = admin.get(path, params={key: value, "search_fields": field})
        assert r.status_code < 500, (key, value, r.text)
        r.json()


def test_no_odd_path_or_body_gives_500(server, admin):
    user = make_user(admin)
    paths = ["/api/v2/users/{}", "/api/v2/groups/{}", "/api/v2/users/{}/groups", "/api/v2/users/{}/resources",
             "/api/v2/users/{}/transfer_resources", "/api/v2/users/{}/remove_from_group_manager",
             "/api/v2/groups/{}/members", "/api/v2/groups/{}/managers", "/api/v2/groups/{}/resources",
             "/api/v2/resources/{}", "/api/v2/documents/{}", "/api/v2/resources/{}/favorite",
             "/api/v2/resources/{}/ratings", "/api/v2/resources/{}/extra_metadata",
             "/api/v2/resources/{}/linked_resources", "/api/v2/resources/{}/keywords",
             "/api/v2/categories/{}", "/api/v2/regions/{}", "/api/v2/owners/{}", "/api/v2/datasets/{}",
             "/api/v2/datasets/{}/attribute_set", "/api/v2/datasets/{}/maplayers", "/api/v2/datasets/{}/maps",
             "/api/v2/datasets/{}/metadata", "/api/v2/resources/{}/iso_metadata_xml", "/api/v2/uploads/{}",
             "/documents/{}/download", "/documents/{}/link", "/datasets/{}/dataset_download",
             "/api/v2/upload-size-limits/{}"]
    ids = ["0", "-1", "abc", "9" * 30, "1.5", "%20", str(user["pk"])]
    bodies = [b"", b"{", b"[]", b"null", b'"x"', b'{"groups": {"a": 1}}', b'{"owner": [1]}',
              b'{"newOwner": "x"}', b'{"users": ["a"]}', b'{"users": [1], "role": "god"}', b"\xff\xfe",
              b'{"users": [99999999999999999999999]}', b'{"newOwner": 99999999999999999999}',
              b'{"owner": "99999999999999999999"}', b'{"groups": [-1, 99999999999999999999]}',
              b'[{"id": 99999999999999999999}]', b'{"user": {"username": "x", "is_staff": "maybe"}}',
              b'{"title": 5}', b'{"category": [1]}', b'{"keywords": {"a": 1}}', b'{"extent": {"coords": "x"}}',
              b'{"extent": {"coords": [1, 2, 3, 1e400]}}', b'{"poc": [{"pk": 99999999999999999999}]}',
              b'{"group": "99999999999999999999"}', b'{"target": [1, "a", null, 99999999999999999999]}',
              b'[{"filter_header": 1}]', b'{"rating": 99999999999999999999}', b'{"date": 5}',
              b'{"resource_type": "map", "title": "fuzz", "license": {"x": 1}}', b'{"regions": [99999999999999999999]}',
              b'{"attributes": [{"pk": 99999999999999999999, "visible": 1}]}', b'{"attribute_set": "x"}',
              b'[{"attribute": null, "display_order": 1e400}]', b'{"regions": [{"code": []}]}']
    with server.client(auth=("admin", "admin-secret-1"), retry_all=True) as c:
        for template, pk in itertools.product(paths, ids):
            url = template.format(pk)
            for method in ("GET", "PUT", "PATCH", "POST", "DELETE"):
                for body in (bodies if method != "GET" else [b""]):
                    r = c.request(method, url, content=body, headers={"Content-Type": "application/json"})
                    assert r.status_code < 500, (method, url, body, r.text)
    admin.delete(f"/api/v2/users/{user['pk']}")


def test_head_answers_like_get_without_body(anon):
    get, head = anon.get("/api/v2/groups/"), anon.head("/api/v2/groups/")
    assert head.status_code == get.status_code == 200
    assert head.content == b"" and head.headers["content-type"] == get.headers["content-type"]


@pytest.mark.parametrize("path", ["/api/v2/resources/%C2%B2", "/api/v2/datasets/%C2%B2", "/documents/%C2%B2/embed",
                                  "/maps/%C2%B2/embed", "/api/v2/resources/%C2%B2/permissions"])
def test_ids_in_other_digits_are_unknown_not_errors(admin, path):
    """"²" is a digit to Python's str.isdigit but no number: such ids are simply not found."""
    assert admin.get(path).status_code == 404
