"""Regenerate catalogue_app/store/seeds/regions.json from Natural Earth's low-resolution countries.

Natural Earth data is in the public domain (https://www.naturalearthdata.com/about/terms-of-use/).
Usage: .venv/bin/python scripts/make_regions.py path/to/naturalearth_lowres.shp
"""

import json
import sys
from pathlib import Path

import pyogrio
import shapely

CONTINENT_CODES = {"Africa": "AFR", "Antarctica": "ANT", "Asia": "ASI", "Europe": "EUR",
                   "North America": "NOA", "Oceania": "OCE", "South America": "SAM",
                   "Seven seas (open ocean)": "SEV"}

CODES_MISSING_IN_SOURCE = {"Kosovo": "XKX"}


def main(shapefile: str) -> None:
    meta, _, geometry, fields = pyogrio.raw.read(shapefile, columns=["name", "iso_a3", "continent"])
    by_name = dict(zip(meta["fields"], fields))
    names, codes, continents = by_name["name"], by_name["iso_a3"], by_name["continent"]
    shapes = shapely.from_wkb(geometry)
    countries = []
    for name, code, continent, shape in zip(names, codes, continents, shapes):
        x0, y0, x1, y1 = (round(v, 6) for v in shape.bounds)
        countries.append({"name": str(name), "code": str(code) if code != "-99" else CODES_MISSING_IN_SOURCE[str(name)],
                          "continent": str(continent), "bbox": [x0, y0, x1, y1]})
    countries.sort(key=lambda c: c["name"])
    out = Path(__file__).resolve().parents[1] / "catalogue_app" / "store" / "seeds" / "regions.json"
    lines = ",\n".join(json.dumps(c, ensure_ascii=False) for c in countries)
    out.write_text('{"source": "Natural Earth 1:110m countries (public domain)",\n'
                   f'"continents": {json.dumps(CONTINENT_CODES)},\n"countries": [\n{lines}\n]}}\n')
    print(f"{len(countries)} countries written to {out}")


if __name__ == "__main__":
    main(sys.argv[1])
