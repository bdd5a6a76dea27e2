"""Metadata for portals and search engines: DCAT-AP 3 of the catalogue and of each resource
(JSON-LD and Turtle), /sitemap.xml and /robots.txt."""

from __future__ import annotations

ROUTES: list = []
