"""GeoNode 5's metadata editor API over every field: the schema in each language, the instance,
writes that store every field (and show it in the resource API), 422s naming each refused field
with nothing stored, permissions, and fuzzed bodies (4xx only)."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest

from tests.conftest import ADMIN_PASSWORD, in_process, login, make_group, make_user

SAMPLE_FIELDS = ("uuid", "title", "abstract", "date", "date_type", "category", "tkeywords", "hkeywords", "language",
                 "license", "attribution", "regions", "data_quality_statement", "restriction_code_type",
                 "constraints_other", "edition", "doi", "purpose", "supplemental_information", "temporal_extent_start",
                 "temporal_extent_end", "maintenance_frequency", "spatial_representation_type", "linkedresources",
                 "contacts")


@pytest.fixture(scope="module")
def md(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("metadata") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    alice, bob, carol = make_user(admin), make_user(admin), make_user(admin)
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        th = conn.execute("INSERT INTO thesauri (identifier, title, uri) VALUES ('themes', 'Themes', 'http://t/themes')").lastrowid
        conn.execute("INSERT INTO thesaurus_keywords (thesaurus_id, alt_label, about, labels) VALUES"
                     " (?, 'Rivers', 'http://t/themes/rivers', '{\"fr\": \"Rivières\"}')", (th,))
    conn.close()
    c = {"admin": admin, "anon": srv.client(), "alice": login(srv, alice), "bob": login(srv, bob),
         "carol": login(srv, carol)}
    yield {"srv": srv, "c": c, "alice": alice, "bob": bob, "carol": carol}
    for client in c.values():
        client.close()
    srv.stop()


def document(client, title: str = "Notes") -> dict:
    r = client.post("/api/v2/documents", files={"doc_file": ("notes.txt", b"field notes\n", "text/plain")},
                    data={"title": title})
    assert r.status_code == 201, r.text
    return r.json()["document"]


def full_instance(md, other_pk: str) -> dict:
    return {
        "title": "Rivers of the delta", "abstract": "Surveyed channels.", "date": "2024-05-01T10:00:00Z",
        "date_type": "creation", "category": {"id": "inlandWaters"}, "language": "fra",
        "license": None,  # set by the test from the schema's choices
        "tkeywords": {"themes": [{"id": "http://t/themes/rivers", "label": "Rivers"}]},
        "hkeywords": ["delta", "channels"], "attribution": "Delta survey office", "regions": [{"id": "FRA"}],
        "data_quality_statement": "Surveyed by boat, 2 m accuracy.", "restriction_code_type": "license",
        "constraints_other": "Cite the survey office.", "edition": "2nd", "doi": "10.1234/delta.2024",
        "purpose": "Flood planning.", "supplemental_information": "Field notes kept on paper.",
        "temporal_extent_start": "2023-01-01T00:00:00Z", "temporal_extent_end": "2023-12-31T00:00:00Z",
        "maintenance_frequency": "annually", "spatial_representation_type": "vector",
        "linkedresources": [{"id": other_pk}],
        "contacts": {"owner": {"id": str(md["alice"]["pk"])},
                     "pointOfContact": [{"id": str(md["bob"]["pk"])},
                                        {"name": "Ana Field", "organization": "Delta Survey", "email": "ana@delta.example"}],
                     "author": [{"name": "Survey desk", "organization": "Delta Survey", "email": ""}],
                     "publisher": [{"id": str(md["carol"]["pk"])}]},
    }


def test_the_schema_has_every_field_required_marks_and_code_lists(md):
    anon = md["c"]["anon"]
    r = anon.get("/api/v2/metadata/schema/")
    assert r.status_code == 200 and r.headers["content-language"] == "en"
    assert "accept-language" in r.headers["vary"].lower()
    schema = r.json()
    props = schema["properties"]
    assert set(SAMPLE_FIELDS) <= set(props)
    assert set(schema["required"]) == {"title", "abstract", "date", "date_type", "category", "language", "license",
                                       "contacts"}
    for name in schema["required"]:
        assert props[name]["geonode:required"] is True
    assert all(props[name]["title"] for name in SAMPLE_FIELDS)
    consts = {name: {o["const"] for o in props[name]["oneOf"]} for name in
              ("date_type", "restriction_code_type", "maintenance_frequency", "spatial_representation_type", "language")}
    assert consts["date_type"] == {"creation", "publication", "revision"}
    assert {"copyright", "license", "otherRestrictions", "restricted", None} <= consts["restriction_code_type"]
    assert {"daily", "asNeeded", "notPlanned", None} <= consts["maintenance_frequency"]
    assert {"grid", "vector", "textTable", None} <= consts["spatial_representation_type"]
    assert {"eng", "fra", "ara", "spa", "por"} <= consts["language"]
    topics = {o["const"] for o in props["category"]["properties"]["id"]["oneOf"]}
    assert {"inlandWaters", "boundaries", "biota", "environment"} <= topics
    assert set(props["contacts"]["required"]) == {"owner", "author", "pointOfContact"}
    assert {"name", "organization", "email"} <= set(props["contacts"]["properties"]["pointOfContact"]["items"]["properties"])
    assert props["tkeywords"]["properties"]["themes"]["type"] == "array"


@pytest.mark.parametrize("lang", ["fr", "es", "pt", "ar"])
def test_the_schema_speaks_the_asked_language(md, lang):
    anon = md["c"]["anon"]
    english = anon.get("/api/v2/metadata/schema/").json()["properties"]
    for r in (anon.get(f"/api/v2/metadata/schema/?lang={lang}"),
              anon.get("/api/v2/metadata/schema/", headers={"Accept-Language": f"{lang}-XX,en;q=0.5"})):
        assert r.status_code == 200 and r.headers["content-language"] == lang
        props = r.json()["properties"]
        for name in ("title", "abstract", "purpose", "maintenance_frequency", "contacts"):
            assert props[name]["title"] != english[name]["title"], (lang, name)
        assert props["abstract"]["description"] != english["abstract"]["description"]
        daily = next(o for o in props["maintenance_frequency"]["oneOf"] if o["const"] == "daily")
        assert daily["title"] != "data is updated each day"
        assert props["contacts"]["properties"]["pointOfContact"]["title"] != "Point of Contact"


def test_every_field_is_stored_shown_and_read_back(md):
    alice, anon = md["c"]["alice"], md["c"]["anon"]
    other = document(alice, "Delta photos")
    doc = document(alice, "Delta rivers")
    body = full_instance(md, other["pk"])
    body["license"] = {"id": anon.get("/api/v2/metadata/schema/").json()["properties"]["license"]["properties"]["id"]
                       ["oneOf"][0]["const"]}
    r = alice.put(f"/api/v2/metadata/instance/{doc['pk']}/", json=body)
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "The resource was updated successfully", "extraErrors": {}}
    got = alice.get(f"/api/v2/metadata/instance/{doc['pk']}/").json()
    assert list(got) == list(SAMPLE_FIELDS)
    for name in ("title", "abstract", "date_type", "language", "attribution", "data_quality_statement",
                 "restriction_code_type", "constraints_other", "edition", "doi", "purpose",
                 "supplemental_information", "maintenance_frequency", "spatial_representation_type"):
        assert got[name] == body[name], name
    assert got["date"].startswith("2024-05-01T10:00:00") and got["temporal_extent_end"].startswith("2023-12-31")
    assert got["category"]["id"] == "inlandWaters" and got["license"]["id"] == body["license"]["id"]
    assert got["tkeywords"] == {"themes": [{"id": "http://t/themes/rivers", "label": "Rivers"}]}
    assert sorted(got["hkeywords"]) == ["channels", "delta"]
    assert [r["id"] for r in got["regions"]] == ["FRA"]
    assert got["linkedresources"] == [{"id": other["pk"], "label": "Delta photos"}]
    contacts = got["contacts"]
    assert contacts["owner"]["id"] == str(md["alice"]["pk"])
    assert contacts["pointOfContact"][0]["id"] == str(md["bob"]["pk"])
    assert contacts["pointOfContact"][1] == {"name": "Ana Field", "organization": "Delta Survey",
                                             "email": "ana@delta.example"}
    assert contacts["author"] == [{"name": "Survey desk", "organization": "Delta Survey", "email": ""}]
    assert contacts["publisher"][0]["id"] == str(md["carol"]["pk"])
    # the resource API shows the same values
    res = alice.get(f"/api/v2/resources/{doc['pk']}").json()["resource"]
    assert res["maintenance_frequency"] == "annually" and res["edition"] == "2nd" and res["doi"] == "10.1234/delta.2024"
    assert res["restriction_code_type"] == {"identifier": "license"}
    assert res["spatial_representation_type"] == {"identifier": "vector"}
    assert [p.get("username") for p in res["poc"]] == [md["bob"]["username"], None]
    assert res["poc"][1]["first_name"] == "Ana Field" and res["poc"][1]["organization"] == "Delta Survey"
    assert res["metadata_author"][0]["first_name"] == "Survey desk"
    assert res["publisher"][0]["username"] == md["carol"]["username"]
    # the label of a thesaurus keyword in the asked language
    fr = alice.get(f"/api/v2/metadata/instance/{doc['pk']}/?lang=fr").json()
    assert fr["tkeywords"]["themes"][0]["label"] == "Rivières"
    # a PATCH changes what it names, and nothing else
    r = alice.patch(f"/api/v2/metadata/instance/{doc['pk']}", json={"edition": "3rd", "contacts": {"author": []}})
    assert r.status_code == 422, r.text  # the author is required and cannot be emptied
    assert r.json()["extraErrors"] == {"contacts": {"author": {"__errors": ["This field is required."]}}}
    r = alice.patch(f"/api/v2/metadata/instance/{doc['pk']}", json={"edition": "3rd", "linkedresources": []})
    assert r.status_code == 200, r.text
    again = alice.get(f"/api/v2/metadata/instance/{doc['pk']}/").json()
    assert again["edition"] == "3rd" and again["linkedresources"] == [] and again["doi"] == body["doi"]


def test_a_refused_write_names_every_field_and_stores_nothing(md):
    alice = md["c"]["alice"]
    doc = document(alice, "Untouched")
    before = alice.get(f"/api/v2/metadata/instance/{doc['pk']}/").json()
    bad = {"title": "Changed", "date": "not a date", "maintenance_frequency": "hourly", "doi": "not-a-doi",
           "temporal_extent_start": "2024-01-01T00:00:00Z", "restriction_code_type": "secret",
           "spatial_representation_type": 5, "language": "english", "category": {"id": "nowhere"},
           "contacts": {"pointOfContact": [{"name": "X", "email": "not an email"}], "owner": {"id": "999999"},
                        "friend": []},
           "regions": [{"id": "ATLANTIS"}], "linkedresources": [{"id": "999999"}],
           "tkeywords": {"themes": [{"id": "http://t/nope"}]}, "colour": "blue", "edition": "x" * 300}
    r = alice.put(f"/api/v2/metadata/instance/{doc['pk']}/", json=bad)
    assert r.status_code == 422, r.text
    answer = r.json()
    assert answer["message"] == "Some errors were found while updating the resource"
    errors = answer["extraErrors"]
    assert set(errors) == {"date", "maintenance_frequency", "doi", "restriction_code_type",
                           "spatial_representation_type", "language", "category", "contacts", "regions",
                           "linkedresources", "tkeywords", "colour", "edition"}
    assert set(errors["contacts"]) == {"pointOfContact", "owner", "friend"}
    for messages in [errors[k] for k in errors if k not in ("contacts", "tkeywords")] + list(errors["contacts"].values()):
        assert messages["__errors"] and all(isinstance(m, str) and m for m in messages["__errors"])
    assert errors["tkeywords"]["themes"]["__errors"]
    assert alice.get(f"/api/v2/metadata/instance/{doc['pk']}/").json() == before
    # the end of the temporal extent before its start
    r = alice.patch(f"/api/v2/metadata/instance/{doc['pk']}/", json={"temporal_extent_start": "2024-01-01T00:00:00Z",
                                                                     "temporal_extent_end": "2023-01-01T00:00:00Z"})
    assert r.status_code == 422 and set(r.json()["extraErrors"]) == {"temporal_extent_end"}
    # a required field cannot be emptied
    r = alice.patch(f"/api/v2/metadata/instance/{doc['pk']}/", json={"title": " ", "date_type": None, "language": None})
    assert r.status_code == 422 and set(r.json()["extraErrors"]) == {"title", "date_type", "language"}
    assert alice.get(f"/api/v2/metadata/instance/{doc['pk']}/").json() == before


def test_who_may_read_and_change(md):
    c, admin = md["c"], md["c"]["admin"]
    doc = document(c["alice"], "Team notes")
    group = make_group(admin)
    admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [md["carol"]["pk"]]})
    url = f"/api/v2/metadata/instance/{doc['pk']}/"
    # private: only the owner and the admin see it
    r = c["alice"].put(f"/api/v2/resources/{doc['pk']}/permissions",
                       json={"users": [], "groups": [{"id": 1, "permissions": "none"}, {"id": 2, "permissions": "none"}]})
    assert r.status_code == 200, r.text
    import time
    for _ in range(100):
        if c["anon"].get(url).status_code == 404:
            break
        time.sleep(0.1)
    assert c["anon"].get(url).status_code == 404 and c["bob"].get(url).status_code == 404
    assert c["anon"].patch(url, json={"edition": "x"}).status_code in (401, 403)
    assert c["bob"].patch(url, json={"edition": "x"}).status_code == 404
    # a group member with view only may read, not change
    r = c["alice"].put(f"/api/v2/resources/{doc['pk']}/permissions",
                       json={"groups": [{"id": group["group"]["pk"] if "group" in group else group["pk"],
                                         "permissions": "view"}]})
    for _ in range(100):
        if c["carol"].get(url).status_code == 200:
            break
        time.sleep(0.1)
    assert c["carol"].get(url).status_code == 200
    assert c["carol"].patch(url, json={"edition": "carol"}).status_code == 403
    assert c["alice"].patch(url, json={"edition": "owner"}).status_code == 200
    assert admin.patch(url, json={"edition": "admin"}).status_code == 200
    assert c["alice"].get(url).json()["edition"] == "admin"


BAD_VALUES = [None, True, 0, -1, 2**70, 1.5, "", " ", "x" * 100_000, "\u0000", "😀" * 300, [], [None], [1, "a"],
              {}, {"id": None}, {"id": []}, {"id": "x" * 5000}, "2024-13-45", "9999-12-31T23:59:59-23:59",
              "0001-01-01T00:00:00+14:00", [{"id": "1"}], [{"name": 5}], {"__proto__": 1}]


def test_fuzzed_bodies_get_4xx_only(md):
    alice = md["c"]["alice"]
    doc = document(alice, "Fuzzed")
    url = f"/api/v2/metadata/instance/{doc['pk']}/"
    rng = random.Random(33)
    names = list(SAMPLE_FIELDS) + ["unknown", "contacts"]
    for _ in range(250):
        body = {rng.choice(names): rng.choice(BAD_VALUES) for _ in range(rng.randint(1, 4))}
        if rng.random() < 0.3:
            body["contacts"] = {rng.choice(["owner", "author", "pointOfContact", "nobody"]): rng.choice(BAD_VALUES)}
        r = (alice.put if rng.random() < 0.5 else alice.patch)(url, json=body)
        assert r.status_code in (200, 400, 422), (body, r.status_code, r.text[:300])
        assert r.status_code != 200 or r.json()["extraErrors"] == {}
    for raw in (b"[]", b"null", b"42", b"\"text\"", b"{", b"{\"title\": }", b"\xff\xfe"):
        r = alice.patch(url, content=raw, headers={"Content-Type": "application/json"})
        assert 400 <= r.status_code < 500, (raw, r.status_code, r.text[:200])
    assert alice.get(url).status_code == 200


def test_the_autocomplete_addresses_of_the_schema_answer(md):
    c = md["c"]
    alice, anon = c["alice"], c["anon"]
    schema = anon.get("/api/v2/metadata/schema/").json()["properties"]
    addresses = [schema[name]["ui:options"]["geonode-ui:autocomplete"] for name in ("category", "license", "regions",
                                                                                     "linkedresources")]
    addresses.append(schema["hkeywords"]["ui:options"]["geonode-ui:autocomplete"]["url"])
    addresses.append(schema["contacts"]["properties"]["pointOfContact"]["ui:options"]["geonode-ui:autocomplete"])
    addresses.append(schema["tkeywords"]["properties"]["themes"]["ui:options"]["geonode-ui:autocomplete"])
    for url in addresses:
        r = alice.get(url)
        assert r.status_code == 200 and isinstance(r.json()["results"], list), url
    assert {"id": "inlandWaters"}.items() <= next(
        x for x in alice.get("/api/v2/metadata/autocomplete/categories", params={"q": "inland"}).json()["results"]).items()
    assert [x["id"] for x in alice.get("/api/v2/metadata/autocomplete/regions", params={"q": "franc"}).json()["results"]
            ] == ["FRA"]
    rivers = alice.get("/api/v2/metadata/autocomplete/thesaurus/themes/keywords", params={"q": "riv", "lang": "fr"})
    assert rivers.json()["results"] == [{"id": "http://t/themes/rivers", "label": "Rivières"}]
    me = alice.get("/api/v2/metadata/autocomplete/users", params={"q": md["alice"]["username"]}).json()["results"]
    assert [u["id"] for u in me] == [str(md["alice"]["pk"])]
    assert anon.get("/api/v2/metadata/autocomplete/users", params={"q": md["alice"]["username"]}).json()["results"] == []
    # a private resource is offered to its owner only
    doc = document(alice, "Secret survey plan")
    alice.put(f"/api/v2/resources/{doc['pk']}/permissions",
              json={"users": [], "groups": [{"id": 1, "permissions": "none"}, {"id": 2, "permissions": "none"}]})
    import time
    for _ in range(100):
        if anon.get(f"/api/v2/resources/{doc['pk']}").status_code == 404:
            break
        time.sleep(0.1)
    for client, shown in ((alice, True), (c["bob"], False), (anon, False)):
        found = client.get("/api/v2/metadata/autocomplete/resources", params={"q": "Secret survey"}).json()["results"]
        assert (found == [{"id": doc["pk"], "label": "Secret survey plan"}]) is shown
        assert shown or found == []
    assert anon.get("/api/v2/metadata/autocomplete/nothing").status_code == 404
    assert alice.get("/api/v2/metadata/autocomplete/hkeywords", params={"q": "%_" * 300}).status_code == 200
