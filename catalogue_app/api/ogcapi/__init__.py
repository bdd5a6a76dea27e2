"""The OGC APIs, all under /ogcapi/: Records, Features (with Part 4, editing), Tiles. Each part
is a module with its ROUTES, its CONFORMANCE classes and its OPENAPI paths; common.py holds what
they share."""

from __future__ import annotations

from catalogue_app.api.ogcapi import features, features_edit, landing, records, tiles

PARTS = (landing, records, features, features_edit, tiles)
ROUTES = [route for part in PARTS for route in part.ROUTES]
