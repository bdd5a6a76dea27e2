"""/api/v2/schema/ in both formats, valid OpenAPI 3.0, listing every route of the app."""

import functools
import json
import re

import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.validation.validators import OpenAPIV30SpecValidator

from catalogue_app.app import create_app
from catalogue_app.config import load_settings


# libyaml's loader where PyYAML has it: the same safe loading, a few times faster on this document
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _validate_text(text: str) -> None:
    validate(json.loads(text), cls=OpenAPIV30SpecValidator)


def validate_openapi(doc: dict) -> None:
    """``validate`` as OpenAPI 3.0; a document equal to one found valid already is not read again."""
    _validate_text(json.dumps(doc, sort_keys=True))


def app_routes() -> set[tuple[str, str]]:
    app = create_app(load_settings(environ={}, data_dir="/nonexistent"))
    found = set()
    for route in app.routes:
        for handler in getattr(route, "route_handlers", []):
            if not handler.resolve_include_in_schema():
                continue
            path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
            for method in handler.http_methods:
                if method not in ("HEAD", "OPTIONS"):
                    found.add((path.rstrip("/") or "/", method.lower()))
    return found


def test_yaml_by_default_and_valid(anon):
    r = anon.get("/api/v2/schema/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/vnd.oai.openapi")
    doc = yaml.load(r.text, Loader=YAML_LOADER)
    assert doc["openapi"].startswith("3.0")
    validate_openapi(doc)


def test_json_on_request_and_every_route_listed(anon):
    by_header = anon.get("/api/v2/schema/", headers={"Accept": "application/vnd.oai.openapi+json"})
    assert by_header.headers["content-type"].startswith("application/vnd.oai.openapi+json")
    by_param = anon.get("/api/v2/schema", params={"format": "json"})
    doc = by_param.json()
    assert by_header.json() == doc
    validate_openapi(doc)
    documented = {(p.rstrip("/") or "/", m) for p, ops in doc["paths"].items() for m in ops}
    missing = app_routes() - documented
    assert not missing, missing
    create = doc["paths"]["/api/v2/users/"]["post"]
    assert "application/json" in create["requestBody"]["content"]
    assert "UserWrite" in doc["components"]["schemas"]
    listing = doc["components"]["schemas"]["UserList"]
    assert set(listing["properties"]) == {"links", "total", "page", "page_size", "users"}


def test_docs_page_works_offline(anon):
    page = anon.get("/api/v2/docs/")
    assert page.status_code == 200 and "swagger-ui-bundle.js" in page.text
    assert "://" not in page.text.split("<body>")[0].replace("http://www.w3.org", "")  # no CDN
    for asset in re.findall(r'(?:src|href)="(/api/v2/docs/static/[^"]+)"', page.text):
        assert anon.get(asset).status_code == 200


DOCUMENT_BYTES = """
import hashlib, json, sys
from catalogue_app.app import create_app
from catalogue_app.config import load_settings
from catalogue_app.api.openapi import build_document
print(hashlib.sha256(json.dumps(build_document(create_app(load_settings(environ={}, data_dir=sys.argv[1])))).encode()).hexdigest())
"""


def test_the_same_document_on_every_start(tmp_path):
    """Clients that keep the document (and diffs of it) see the same bytes from one start to the
    next: Python's hash seed changes the order in which routes and schemas are met."""
    import os
    import subprocess
    import sys

    runs = [subprocess.Popen([sys.executable, "-c", DOCUMENT_BYTES, str(tmp_path / seed)], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONHASHSEED": seed}) for seed in ("1", "2")]
    digests = {run.communicate(timeout=120)[0].strip() for run in runs}
    assert all(run.returncode == 0 for run in runs) and len(digests) == 1
