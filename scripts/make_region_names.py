"""Write the region names in French, Spanish, Portuguese and Arabic
(catalogue_app/locale/<lang>/region.json) from the Unicode CLDR's territory names.

Run at development time only, after changing catalogue_app/store/seeds/regions.json:

    python -m venv /tmp/cldr && /tmp/cldr/bin/pip install babel pycountry
    /tmp/cldr/bin/python scripts/make_region_names.py

Babel carries the CLDR data (its territory names, keyed by ISO 3166 alpha-2 code or UN M49
area code); pycountry maps the regions' alpha-3 codes to alpha-2. Neither is a dependency of
the catalogue: the JSON files it writes are. The CLDR data are under the Unicode License v3
(https://www.unicode.org/license.txt), which allows this use with the notice kept: see
catalogue_app/locale/README.md. Names CLDR has no entry for (a few of Natural Earth's
regions) are written here by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from babel import Locale
import pycountry

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "catalogue_app" / "store" / "seeds" / "regions.json"
LOCALE = ROOT / "catalogue_app" / "locale"
LANGUAGES = {"fr": "fr", "es": "es", "pt": "pt", "ar": "ar"}

# The world and the continents: their codes in the catalogue and in CLDR (UN M49 areas;
# Antarctica is a territory).
AREAS = {"GLO": "001", "AFR": "002", "ANT": "AQ", "ASI": "142", "EUR": "150", "NOA": "003", "OCE": "009",
         "SAM": "005"}
# Natural Earth codes that are not ISO 3166 alpha-3, and the CLDR code of the same place.
ALPHA2 = {"XKX": "XK"}
# Places CLDR has no name for.
BY_HAND = {
    "SEV": {"fr": "Haute mer", "es": "Alta mar", "pt": "Alto-mar", "ar": "أعالي البحار"},
    "CYN": {"fr": "Chypre du Nord", "es": "Chipre del Norte", "pt": "Chipre do Norte", "ar": "شمال قبرص"},
    "SOL": {"fr": "Somaliland", "es": "Somalilandia", "pt": "Somalilândia", "ar": "أرض الصومال"},
}


def cldr_code(code: str) -> str | None:
    if code in AREAS:
        return AREAS[code]
    if code in ALPHA2:
        return ALPHA2[code]
    country = pycountry.countries.get(alpha_3=code)
    return country.alpha_2 if country else None


def main() -> None:
    seeds = json.loads(SEEDS.read_text(encoding="utf-8"))
    codes = ["GLO", *seeds["continents"].values(), *(c["code"] for c in seeds["countries"])]
    for lang, tag in LANGUAGES.items():
        names = Locale.parse(tag).territories
        out = {}
        for code in codes:
            if code in BY_HAND:
                out[code] = BY_HAND[code][lang]
                continue
            found = names.get(cldr_code(code) or "")
            if not found:
                raise SystemExit(f"no CLDR name for {code} in {lang}: add it to BY_HAND")
            out[code] = found
        target = LOCALE / lang / "region.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(dict(sorted(out.items())), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{target.relative_to(ROOT)}: {len(out)} names")


if __name__ == "__main__":
    main()
