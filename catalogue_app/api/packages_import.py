"""HTTP of field packages: importing one (see catalogue_app/packages/)."""

from __future__ import annotations

ROUTES: list = []
