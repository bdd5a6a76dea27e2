"""Linked data of the resources: schema.org for pages that search engines read, and DCAT-AP 3
for portals."""

from __future__ import annotations

from typing import Any


def schema_org(resource: dict[str, Any], base: str) -> dict[str, Any]:
    """The schema.org JSON-LD object (a Dataset, a DigitalDocument, a Map...) of one resource,
    given as the API renders it (the body's "resource"), with absolute addresses under ``base``;
    {} until it is written."""
    return {}
