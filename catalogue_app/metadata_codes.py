"""The code lists of ISO 19115 metadata that the catalogue's metadata fields take, with the
English titles and descriptions shown by the metadata schema (translated through
translations.py, kind ``metadata``). Pure data: the metadata editor's schema, the checks of
services/resource_changes.py and the ISO 19139 writer read them."""

from __future__ import annotations

# MD_RestrictionCode: (code, description)
RESTRICTIONS = (
    ("copyright", "exclusive right to the publication, production, or sale of the rights to a literary, dramatic, "
                  "musical, or artistic work, or to the use of a commercial print or label, granted by law for a "
                  "specified period of time to an author, composer, artist, distributor"),
    ("intellectualPropertyRights", "rights to financial benefit from and control of distribution of non-tangible "
                                   "property that is a result of creativity"),
    ("license", "formal permission to do something"),
    ("otherRestrictions", "limitation not listed"),
    ("patent", "government has granted exclusive right to make, sell, use or license an invention or discovery"),
    ("patentPending", "produced or sold information awaiting a patent"),
    ("restricted", "withheld from general circulation or disclosure"),
    ("trademark", "a name, symbol, or other device identifying a product, officially registered and legally "
                  "restricted to the use of the owner or manufacturer"),
)

# MD_MaintenanceFrequencyCode: (code, title)
FREQUENCIES = (
    ("unknown", "frequency of maintenance for the data is not known"),
    ("continual", "data is repeatedly and frequently updated"),
    ("notPlanned", "there are no plans to update the data"),
    ("daily", "data is updated each day"),
    ("annually", "data is updated every year"),
    ("asNeeded", "data is updated as deemed necessary"),
    ("monthly", "data is updated each month"),
    ("fortnightly", "data is updated every two weeks"),
    ("irregular", "data is updated in intervals that are uneven in duration"),
    ("weekly", "data is updated on a weekly basis"),
    ("biannually", "data is updated twice each year"),
    ("quarterly", "data is updated every three months"),
)

# MD_SpatialRepresentationTypeCode: (code, description)
REPRESENTATIONS = (
    ("grid", "grid data is used to represent geographic data"),
    ("stereoModel", "three-dimensional view formed by the intersecting homologous rays of an overlapping pair of "
                    "images"),
    ("textTable", "textual or tabular data is used to represent geographic data"),
    ("tin", "triangulated irregular network"),
    ("vector", "vector data is used to represent geographic data"),
    ("video", "scene from a video recording"),
)

# CI_DateTypeCode of the resource's date: (code, title)
DATE_TYPES = (("creation", "Creation"), ("publication", "Publication"), ("revision", "Revision"))

# CI_RoleCode of each contact role: the resource API's field, the metadata schema's key, ISO's role
# code, and the English title (required roles: the owner, the metadata author, the point of contact)
ROLES = (
    ("metadata_author", "author", "author", "Metadata Author"),
    ("processor", "processor", "processor", "Processor"),
    ("publisher", "publisher", "publisher", "Publisher"),
    ("custodian", "custodian", "custodian", "Custodian"),
    ("poc", "pointOfContact", "pointOfContact", "Point of Contact"),
    ("distributor", "distributor", "distributor", "Distributor"),
    ("resource_user", "resource_user", "user", "Resource User"),
    ("resource_provider", "resource_provider", "resourceProvider", "Resource Provider"),
    ("originator", "originator", "originator", "Originator"),
    ("principal_investigator", "principal_investigator", "principalInvestigator", "Principal Investigator"),
)
REQUIRED_ROLES = ("owner", "author", "pointOfContact")

# ISO 639-2 (bibliographic) codes of the languages a resource may be in, with their English names
LANGUAGES = (
    ("abk", "Abkhazian"), ("aar", "Afar"), ("afr", "Afrikaans"), ("amh", "Amharic"), ("ara", "Arabic"),
    ("asm", "Assamese"), ("aym", "Aymara"), ("aze", "Azerbaijani"), ("bak", "Bashkir"), ("ben", "Bengali"),
    ("bih", "Bihari"), ("bis", "Bislama"), ("bre", "Breton"), ("bul", "Bulgarian"), ("bel", "Byelorussian"),
    ("cat", "Catalan"), ("chi", "Chinese"), ("cos", "Corsican"), ("dan", "Danish"), ("dzo", "Dzongkha"),
    ("eng", "English"), ("fra", "French"), ("epo", "Esperanto"), ("est", "Estonian"), ("fao", "Faroese"),
    ("fij", "Fijian"), ("fin", "Finnish"), ("fry", "Frisian"), ("glg", "Gallegan"), ("ger", "German"),
    ("gre", "Greek"), ("kal", "Greenlandic"), ("grn", "Guarani"), ("guj", "Gujarati"), ("hau", "Hausa"),
    ("heb", "Hebrew"), ("hin", "Hindi"), ("hun", "Hungarian"), ("ind", "Indonesian"),
    ("ina", "Interlingua (International Auxiliary language Association)"), ("iku", "Inuktitut"), ("ipk", "Inupiak"),
    ("ita", "Italian"), ("jpn", "Japanese"), ("kan", "Kannada"), ("kas", "Kashmiri"), ("kaz", "Kazakh"),
    ("khm", "Khmer"), ("kin", "Kinyarwanda"), ("kir", "Kirghiz"), ("kor", "Korean"), ("kur", "Kurdish"),
    ("oci", "Langue d 'Oc (post 1500)"), ("lao", "Lao"), ("lat", "Latin"), ("lav", "Latvian"), ("lin", "Lingala"),
    ("lit", "Lithuanian"), ("mlg", "Malagasy"), ("mlt", "Maltese"), ("mar", "Marathi"), ("mol", "Moldavian"),
    ("mon", "Mongolian"), ("nau", "Nauru"), ("nep", "Nepali"), ("nor", "Norwegian"), ("ori", "Oriya"),
    ("orm", "Oromo"), ("pan", "Panjabi"), ("pol", "Polish"), ("por", "Portuguese"), ("pus", "Pushto"),
    ("que", "Quechua"), ("roh", "Rhaeto-Romance"), ("run", "Rundi"), ("rus", "Russian"), ("smo", "Samoan"),
    ("sag", "Sango"), ("san", "Sanskrit"), ("scr", "Serbo-Croatian"), ("sna", "Shona"), ("snd", "Sindhi"),
    ("sin", "Singhalese"), ("ssw", "Siswant"), ("slv", "Slovenian"), ("som", "Somali"), ("sot", "Sotho"),
    ("spa", "Spanish"), ("sun", "Sudanese"), ("swa", "Swahili"), ("tgl", "Tagalog"), ("tgk", "Tajik"),
    ("tam", "Tamil"), ("tat", "Tatar"), ("tel", "Telugu"), ("tha", "Thai"), ("tir", "Tigrinya"),
    ("tog", "Tonga (Nyasa)"), ("tso", "Tsonga"), ("tsn", "Tswana"), ("tur", "Turkish"), ("tuk", "Turkmen"),
    ("twi", "Twi"), ("uig", "Uighur"), ("ukr", "Ukrainian"), ("urd", "Urdu"), ("uzb", "Uzbek"),
    ("vie", "Vietnamese"), ("vol", "Volapük"), ("wol", "Wolof"), ("xho", "Xhosa"), ("yid", "Yiddish"),
    ("yor", "Yoruba"), ("zha", "Zhuang"), ("zul", "Zulu"),
)

# MD_TopicCategoryCode: the ISO topic categories (GeoNode adds "population", which ISO lacks)
TOPIC_CATEGORIES = frozenset((
    "farming", "biota", "boundaries", "climatologyMeteorologyAtmosphere", "economy", "elevation", "environment",
    "geoscientificInformation", "health", "imageryBaseMapsEarthCover", "intelligenceMilitary", "inlandWaters",
    "location", "oceans", "planningCadastre", "society", "structure", "transportation", "utilitiesCommunication"))

CODES = {
    "restriction_code_type": frozenset(c for c, _ in RESTRICTIONS),
    "maintenance_frequency": frozenset(c for c, _ in FREQUENCIES),
    "spatial_representation_type": frozenset(c for c, _ in REPRESENTATIONS),
    "date_type": frozenset(c for c, _ in DATE_TYPES),
    "language": frozenset(c for c, _ in LANGUAGES),
}
