"""The request bodies the OpenAPI document declares are the ones the API checks: for every
operation that declares a body, and every field of it that a wrong value can be found for, a
body holding that wrong value answers 400 in the error envelope (OAuth2's error at /o/) with a
message naming the field, and changes nothing. Where GeoNode answers a message of its own for a
field, that message is expected instead (GEONODE_MESSAGES).

Read from the document a client reads, so a body declared one way and checked another fails
here; a new body on a path with a parameter this test has no value for fails too, until one is
added to ``path_values``."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest

from tests.api.test_uploads import imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, make_group, make_user

DATA = Path(__file__).parent.parent / "data"
# wrong values to try, the first one a field's schema refuses is sent
CANDIDATES = ({"wrong": "type"}, ["wrong"], "wrong", 12345, True)
TEXT_CANDIDATES = ("wrong",)  # what a multipart form field can carry
# fields that take any JSON value: no wrong value to send
FREE_FORM = {"blob", "data", "field_label", "field_name", "field_value", "filter_header", "id", "links",
             "remote_available", "last_checked_availability", "last_checked_harvestable_resources",
             "last_check_harvestable_resources_message", "last_updated", "has_token", "created"}
# (path, field) -> what the answer says instead of the field's name: GeoNode's own messages
GEONODE_MESSAGES = {
    ("/api/v2/resources/{pk}/linked_resources/", "target"): "Payload is not valid",
    ("/api/v2/resources/{pk}/set_thumbnail/", "file"): "file is either a file upload",
    ("/o/token/", "grant_type"): "Only the password grant is supported.",
}


@pytest.fixture(scope="module")
def setting(flagged_server):
    """A server with bulk updates on, the document it serves, and one object of each kind that
    a body is sent to."""
    with flagged_server.client(auth=("admin", ADMIN_PASSWORD)) as admin:
        doc = admin.get("/api/v2/schema/", params={"format": "json"}).json()
        dataset_pk = int(imported(admin, admin.post("/api/v2/uploads/upload",
                                                    files=shapefile_parts(DATA / "naturalearth_cities")))["pk"])
        made = {
            "maps": admin.post("/api/v2/maps/", json={"title": "A map"}).json()["map"]["pk"],
            "geoapps": admin.post("/api/v2/geoapps/", json={"name": "An app", "resource_type": "geostory"}
                                  ).json()["geoapp"]["pk"],
            "documents": admin.post("/api/v2/documents/", json={"title": "A record"}).json()["document"]["pk"],
            "datasets": dataset_pk, "resources": dataset_pk,
            "users": make_user(admin)["pk"], "groups": make_group(admin)["pk"],
            # bodies read before the object is looked up: no object needed
            "harvesters": 999999, "remotes": 999999, "packages": 999999,
        }
        yield doc, made, admin, flagged_server


def resolve(node, doc):
    """The schema with every $ref replaced by what it names."""
    if isinstance(node, dict):
        if "$ref" in node:
            return resolve(doc["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]], doc)
        return {k: resolve(v, doc) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(v, doc) for v in node]
    return node


def accepts(schema: dict, value) -> bool:
    """Whether an OpenAPI 3.0 schema (JSON Schema draft 4 as to bounds) takes ``value``;
    nullable is left aside: no candidate is null."""
    return jsonschema.Draft4Validator(schema).is_valid(value)


def object_of(schema: dict) -> tuple[dict | None, bool]:
    """The object schema a body holds, and whether it is sent as a list of such objects."""
    for option in schema.get("anyOf", [schema]):  # a bulk PATCH: a list of records (or with patch-all one)
        if option.get("type") == "array" and option.get("items", {}).get("properties"):
            return option["items"], True
    for option in schema.get("anyOf", [schema]):
        if option.get("type") == "object" and option.get("properties"):
            return option, False
    return None, False


def path_values(path: str, made: dict) -> str:
    def value(match: re.Match) -> str:
        family = path.split("/")[3] if path.startswith("/api/v2/") else ""
        assert family in made, f"no value for {match[0]} in {path}: add one to the setting fixture"
        return str(made[family])

    return re.sub(r"\{[^}]+\}", value, path)


def cases(doc: dict):
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if not body:
                continue
            media = next(iter(body["content"]))
            schema = resolve(body["content"][media]["schema"], doc)
            shape, listed = object_of(schema)
            if shape is None:  # a list of ids: its item is the field
                yield path, method, media, None, {"type": "array", "items": schema.get("items", {})}, listed
                continue
            for field, field_schema in shape["properties"].items():
                yield path, method, media, field, field_schema, listed


def test_every_declared_body_field_is_checked_as_declared(setting):
    doc, made, admin, server = setting
    tried, skipped, wrong_answers = 0, [], []
    for path, method, media, field, schema, listed in cases(doc):
        multipart = media == "multipart/form-data"
        if multipart and (schema.get("format") == "binary" or accepts(schema, "text")):
            continue  # a file, or text: a form cannot carry a wrong value for it
        options = TEXT_CANDIDATES if multipart else CANDIDATES
        wrong = next((v for v in options if not accepts(schema, v)), None)
        if wrong is None:  # the field takes anything (a map's JSON document, say)
            skipped.append((method, path, field))
            continue
        url = path_values(path, made)
        if field is None:
            request = {"json": [wrong[0] if isinstance(wrong, list) else wrong]}
        elif multipart:
            request = {"files": {"unused": ("x.txt", b"x")}, "data": {field: wrong}}
        else:
            request = {"json": [{field: wrong}] if listed else {field: wrong}}
        r = admin.request(method.upper(), url, **request)
        tried += 1
        expected = GEONODE_MESSAGES.get((path, field), field or "[0]")
        if path.startswith("/o/"):
            said = r.json().get("error_description", "") if r.status_code == 400 else ""
        else:
            said = r.json()["errors"][0] if r.status_code == 400 and r.json().get("success") is False else ""
        if r.status_code != 400 or expected not in said:
            wrong_answers.append(f"{method.upper()} {path} {field}={wrong!r}: {r.status_code} {r.text[:300]}")
    assert not wrong_answers, "\n".join(wrong_answers)
    assert tried > 150, tried  # every declared body, field by field
    free = {field for _, _, field in skipped}
    assert free <= FREE_FORM, free - FREE_FORM


def test_nothing_a_refused_body_named_was_written(setting):
    doc, made, admin, server = setting
    before = admin.get(f"/api/v2/maps/{made['maps']}").json()["map"]
    r = admin.patch(f"/api/v2/maps/{made['maps']}", json={"title": "Changed", "featured": "sometimes"})
    assert r.status_code == 400 and r.json()["errors"][0].startswith("featured: ")
    after = admin.get(f"/api/v2/maps/{made['maps']}").json()["map"]
    assert (after["title"], after["featured"]) == (before["title"], before["featured"])


@pytest.mark.parametrize("body, said", [
    ({"featured": "yes", "is_published": "off"}, None),  # Django REST framework's words for booleans
    ({"featured": 1}, None),
    ({"title": 5}, "title: Expected `str | null`, got `int`."),
    ({"keywords": 5}, "keywords: "),
    ({"regions": [True]}, "regions[0]: "),
    ({"poc": [[1]]}, "poc"),
])
def test_loose_and_wrong_values_of_a_resource(setting, body, said):
    doc, made, admin, server = setting
    r = admin.patch(f"/api/v2/documents/{made['documents']}", json=body)
    if said is None:
        assert r.status_code == 200, r.text
    else:
        assert r.status_code == 400 and r.json()["code"] == "invalid" and r.json()["errors"][0].startswith(said), r.text


def test_form_posts_take_text_for_numbers_and_booleans(setting):
    """Form posts carry text: numbers and booleans are read from it, lists gather repeated fields."""
    doc, made, admin, server = setting
    resource = made["resources"]
    r = admin.post(f"/api/v2/resources/{resource}/ratings", data={"rating": "4"})
    assert r.status_code == 200 and r.json()["user_rating"] == 4
    r = admin.post(f"/api/v2/resources/{resource}/linked_resources",
                   data={"target": [str(made["maps"]), str(made["geoapps"])]})
    assert r.status_code == 200 and r.json()["success"] == [int(made["maps"]), int(made["geoapps"])], r.text
    r = admin.patch(f"/api/v2/documents/{made['documents']}", data={"featured": "on", "abstract": "From a form"})
    assert r.status_code == 200 and r.json()["document"]["featured"] is True
    r = admin.post("/api/v2/tokens/", data={"label": "A form", "expires_in_days": ""})
    assert r.status_code == 201 and r.json()["token"]["expires"] is None
    with server.client() as anon:
        r = anon.post("/o/token/", data={"grant_type": "password", "username": "admin", "password": ADMIN_PASSWORD})
        assert r.status_code == 200 and r.json()["token_type"] == "Bearer"
        assert anon.post("/o/revoke_token/", data={"token": r.json()["access_token"]}).status_code == 200


def test_oauth_refusals_are_oauth_errors(setting):
    doc, made, admin, server = setting
    with server.client() as anon:
        for path, body in (("/o/token/", None), ("/o/revoke_token/", None), ("/o/token/", b"{broken"),
                           ("/o/revoke_token/", b"{broken"), ("/o/revoke_token/", b'{"token": 5}')):
            r = anon.post(path, content=body or b"", headers={"content-type": "application/json"})
            assert r.status_code == 400 and r.json()["error"] == "invalid_request", (path, body, r.text)
        r = anon.post("/o/token/", data={"grant_type": "client_credentials"})
        assert r.status_code == 400 and r.json()["error"] == "unsupported_grant_type"
        for path in ("/o/token/", "/o/revoke_token/"):  # a multipart body cut short
            r = anon.post(path, content=b"--b\r\n-84--b--\r\n", headers={"content-type": "multipart/form-data; boundary=b"})
            assert r.status_code == 400 and r.json()["error"] == "invalid_request", (path, r.text)
