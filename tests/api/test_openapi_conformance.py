"""The OpenAPI document tells the truth: schemathesis generates requests for every operation it
declares, as an administrator and as an anonymous caller, against a real server holding seeded
resources, users, a group, an uploaded dataset and a document, and checks each answer: never a
500, a status the document declares, the media type it declares, a body that fits its schema.

Left out, because they would end or leave the run: writes to users (PATCH, PUT, DELETE of
``/users/{pk}`` and the bulk forms: the run's own admin could lose its password or its rights,
or be deleted), and ``set_thumbnail``, which fetches an image from any address a body names (a
generated address may name a host outside this machine). For the same reason the server runs
no harvesting (``CATALOGUE_HARVEST_TICK=0``): harvesters are created and changed, never run.
"""

import base64
import collections
import os
import subprocess
import sys
from pathlib import Path

import pytest
import schemathesis
from schemathesis import GenerationMode
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api.test_uploads import finished, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, make_group, make_user

DATA = Path(__file__).parent.parent / "data"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# per operation and caller: about 2,400 requests in all. The deeper run (not in the suite):
# CONFORMANCE_EXAMPLES=25, and CONFORMANCE_NEGATIVE=1 to send what the document forbids as well
EXAMPLES = int(os.environ.get("CONFORMANCE_EXAMPLES", "10"))
MODES = [GenerationMode.POSITIVE] + ([GenerationMode.NEGATIVE] if os.environ.get("CONFORMANCE_NEGATIVE") else [])
LEFT_OUT = {("PATCH", "/api/v2/users/{pk}/"), ("PUT", "/api/v2/users/{pk}/"), ("DELETE", "/api/v2/users/{pk}/"),
            ("PATCH", "/api/v2/users/"), ("DELETE", "/api/v2/users/"), ("PUT", "/api/v2/resources/{pk}/set_thumbnail/")}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    data = tmp_path_factory.mktemp("conformance") / "data"
    subprocess.run([sys.executable, "-m", "catalogue_app", "seed", "--data-dir", str(data), "--resources", "300"],
                   check=True, capture_output=True, env={**os.environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD})
    srv = Server(data, env={"CATALOGUE_HARVEST_TICK": "0"})
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    user = make_user(admin)
    group = make_group(admin)
    admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [user["pk"]], "role": "member"})
    assert finished(admin, admin.post("/api/v2/uploads/upload", files=shapefile_parts(DATA / "naturalearth_cities")))[
        "status"] == "finished"
    r = admin.post("/api/v2/documents", files={"doc_file": ("notes.txt", b"field notes\n", "text/plain")},
                   data={"title": "Notes"})
    assert r.status_code == 201, r.text
    yield srv
    admin.close()
    srv.stop()


def exercise(operation, base_url: str, who: str, headers: dict, sent: collections.Counter, failures: dict,
             mode: GenerationMode = GenerationMode.POSITIVE):
    """A hypothesis test of one operation as one caller; failures are collected, not raised."""
    key = (operation.method.upper(), operation.path, who if mode is GenerationMode.POSITIVE else f"{who}, {mode.value}")

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
    def run(case):
        sent[who] += 1
        try:
            case.call_and_validate(base_url=base_url, headers=headers, checks=CHECKS, timeout=60)
        except (Exception, BaseExceptionGroup) as exc:  # schemathesis reports a group of failures
            failures.setdefault(key, str(exc)[:2000])

    return run


def test_every_answer_is_what_the_document_declares(seeded):
    schema = schemathesis.openapi.from_url(f"{seeded.url}/api/v2/schema/?format=json")
    callers = {"admin": {"Authorization": "Basic " + base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()},
               "anonymous": {}}
    failures: dict[tuple[str, str, str], str] = {}
    sent = collections.Counter()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert all(operations) and len(operations) > 100
    for operation in operations:
        key = (operation.method.upper(), operation.path)
        if key in LEFT_OUT:
            continue
        for who, headers in callers.items():
            for mode in MODES:
                try:
                    exercise(operation, seeded.url, who, headers, sent, failures, mode)()
                except Unsatisfiable:  # nothing in this operation can be sent wrong
                    assert mode is GenerationMode.NEGATIVE
    report = "\n\n".join(f"{method} {path} as {who}:\n{text}" for (method, path, who), text in sorted(failures.items()))
    assert not failures, f"{len(failures)} operation(s) answered what the document does not declare:\n\n{report}"
    print(f"schemathesis: {sum(sent.values())} requests ({dict(sent)}) over {len(operations)} operations")
    assert sum(sent.values()) >= 2000, sent
    assert "unhandled error" not in seeded.output()  # nor did anything end in the server's log as a 500
