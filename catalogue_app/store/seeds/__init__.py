"""Reference data every catalogue starts with: ISO 19115 topic categories, licences, regions."""

from __future__ import annotations

import json
from importlib import resources

# identifier, label, Font Awesome class, description (ISO 19115 MD_TopicCategoryCode)
CATEGORIES = [
    ("biota", "Biota", "fa-leaf", "Plants and animals in their natural setting: wildlife, vegetation, ecology, habitats."),
    ("boundaries", "Boundaries", "fa-ellipsis-h", "Legal land descriptions: political and administrative boundaries."),
    ("climatologyMeteorologyAtmosphere", "Climatology Meteorology Atmosphere", "fa-cloud",
     "The atmosphere and its processes: weather, climate, cloud cover, precipitation."),
    ("economy", "Economy", "fa-shopping-cart", "Economic activity and employment: production, labour, revenue, trade."),
    ("elevation", "Elevation", "fa-flag", "Height above or below sea level: altitude, bathymetry, terrain models, slope."),
    ("environment", "Environment", "fa-tree",
     "Environmental resources, protection and conservation: pollution, waste, protected areas."),
    ("farming", "Farming", "fa-lemon-o", "Raising animals and growing plants: agriculture, irrigation, livestock, crops."),
    ("geoscientificInformation", "Geoscientific Information", "fa-bullseye",
     "Earth sciences: geology, geophysics, soils, seismology, hydrogeology."),
    ("health", "Health", "fa-stethoscope", "Health, health services, human ecology and safety: disease, hospitals, hygiene."),
    ("imageryBaseMapsEarthCover", "Imagery Base Maps Earth Cover", "fa-globe",
     "Base maps and imagery: land cover, topographic maps, satellite and aerial images."),
    ("inlandWaters", "Inland Waters", "fa-tint", "Inland water features and drainage: rivers, lakes, watersheds, floods."),
    ("intelligenceMilitary", "Intelligence Military", "fa-fighter-jet", "Military bases, structures and activities."),
    ("location", "Location", "fa-map-marker", "Positional information and services: addresses, geodetic networks, place names."),
    ("oceans", "Oceans", "fa-anchor", "Salt water bodies and their features: tides, coastlines, reefs."),
    ("planningCadastre", "Planning Cadastre", "fa-home", "Land use planning and ownership: zoning, cadastral surveys, land value."),
    ("population", "Population", "fa-male", "People and where they live: census, demography, settlement."),
    ("society", "Society", "fa-comments", "Characteristics of society and culture: settlements, education, crime, heritage."),
    ("structure", "Structure", "fa-building", "Man-made construction: buildings, museums, factories, monuments."),
    ("transportation", "Transportation", "fa-truck", "Moving people and goods: roads, airports, railways, shipping routes."),
    ("utilitiesCommunication", "Utilities Communication", "fa-phone",
     "Energy, water and waste systems and communication networks."),
]

# identifier, name, abbreviation, url
LICENSES = [
    ("not_known", "Not Specified", "", ""),
    ("varied_original", "Varied / Original", "", ""),
    ("cc-by", "Creative Commons Attribution 4.0", "CC-BY-4.0", "https://creativecommons.org/licenses/by/4.0/"),
    ("cc-by-sa", "Creative Commons Attribution-ShareAlike 4.0", "CC-BY-SA-4.0", "https://creativecommons.org/licenses/by-sa/4.0/"),
    ("cc-by-nd", "Creative Commons Attribution-NoDerivatives 4.0", "CC-BY-ND-4.0", "https://creativecommons.org/licenses/by-nd/4.0/"),
    ("cc-by-nc", "Creative Commons Attribution-NonCommercial 4.0", "CC-BY-NC-4.0", "https://creativecommons.org/licenses/by-nc/4.0/"),
    ("cc-by-nc-sa", "Creative Commons Attribution-NonCommercial-ShareAlike 4.0", "CC-BY-NC-SA-4.0",
     "https://creativecommons.org/licenses/by-nc-sa/4.0/"),
    ("cc-by-nc-nd", "Creative Commons Attribution-NonCommercial-NoDerivatives 4.0", "CC-BY-NC-ND-4.0",
     "https://creativecommons.org/licenses/by-nc-nd/4.0/"),
    ("cc0", "Creative Commons Zero (public domain dedication)", "CC0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
    ("odbl", "Open Database License", "ODbL-1.0", "https://opendatacommons.org/licenses/odbl/1-0/"),
    ("odc-by", "Open Data Commons Attribution License", "ODC-By-1.0", "https://opendatacommons.org/licenses/by/1-0/"),
    ("pddl", "Open Data Commons Public Domain Dedication and License", "PDDL-1.0",
     "https://opendatacommons.org/licenses/pddl/1-0/"),
    ("public_domain", "Public Domain", "", ""),
]


def regions() -> dict:
    """Global, the continents and the countries (names, ISO 3166 alpha-3 codes, WGS84 boxes)."""
    return json.loads(resources.files(__package__).joinpath("regions.json").read_text(encoding="utf-8"))
