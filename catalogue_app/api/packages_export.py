"""HTTP of field packages: exporting one (see catalogue_app/packages/)."""

from __future__ import annotations

ROUTES: list = []
