"""Write the built-in basemap, catalogue_app/geo/data/basemap-countries.gpkg, from the Natural
Earth countries in tests/data (public domain): EPSG:4326 multipolygons with their name and ISO
code only. Run from the repository root: python scripts/make_basemap.py"""

from __future__ import annotations

import sys
from pathlib import Path

import pyogrio
import pyogrio.raw

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "naturalearth_lowres" / "naturalearth_lowres.shp"
TARGET = ROOT / "catalogue_app" / "geo" / "data" / "basemap-countries.gpkg"
FIELDS = ["name", "iso_a3"]
MAX_BYTES = 600 * 1024


def main() -> int:
    meta, _fids, geometry, values = pyogrio.raw.read(SOURCE, columns=FIELDS)
    if meta["crs"] != "EPSG:4326":
        raise SystemExit(f"{SOURCE} is in {meta['crs']}, not EPSG:4326")
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.unlink(missing_ok=True)
    pyogrio.raw.write(TARGET, geometry, list(values), list(meta["fields"]), layer="countries", driver="GPKG",
                      geometry_type="MultiPolygon", promote_to_multi=True, crs="EPSG:4326", encoding="UTF-8",
                      layer_options={"SPATIAL_INDEX": "NO"})
    size = TARGET.stat().st_size
    print(f"{TARGET.relative_to(ROOT)}: {len(geometry)} countries, {size} bytes")
    if size >= MAX_BYTES:
        print(f"too big: keep it under {MAX_BYTES} bytes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
