"""The rule table: who may do what, read as data. The tests of this folder (API) and
tests/ui/test_rule_controls.py (web UI) check every cell of it against a running server.

Every resource is private (the anonymous and registered-members groups hold nothing on it), is
owned by `owner` and belongs to a group whose `group member` is a plain member and whose `group
manager` is a manager; that group holds the `download` level on it. `staff` is staff and not a
superuser. The rows named after permissions are users who hold exactly those permission names
on the resource (rows of resource_perms: the API gives levels only, so these are written into
the database file, as an older catalogue or another tool may have left them); `view+X` holds
view_resourcebase and X, since nothing can be done with a resource one cannot see.

The rules follow GeoNode 5 where its rule is known (see README, "Where the rules differ from
GeoNode"): staff hold nothing on resources; visibility is view_resourcebase or change_resourcebase;
metadata (and a thumbnail, attributes) is changed with change_resourcebase or
change_resourcebase_metadata, a map's layers (its content) with change_resourcebase only; the style with change_dataset_style, the data with
change_dataset_data; deleting with delete_resourcebase or change_resourcebase_permissions; a
manager of the resource's group who holds some permission on it also edits it and manages its
permissions (so deletes it); `featured` is set by superusers and managers of the group,
`is_published` also by the owner (and, as the manage level says, whoever holds
publish_resourcebase), `is_approved` by superusers and managers of the group only (approving is
someone else's word than the owner's); a copy
needs view (and download for a dataset or a document) and an account; WMS needs view, WFS
download. A permission on a resource one cannot see gives nothing (not even a download); whoever
may see a resource may do with it what view_resourcebase allows. `perms` shows every permission
name whose action the reader may take (delete_resourcebase to whoever may delete, and so on).
Executions and uploads: their owner, staff and superusers; groups: managers change them and add
members, staff and superusers also delete them; users: staff and superusers change and delete
others.

Marks: `Y` allowed, `-` refused, `.` the action does not exist for that type.
"""

from __future__ import annotations

# -- the people -------------------------------------------------------------------------------------

ROLES = ("anonymous", "registered", "owner", "group member", "group manager", "staff", "superuser")

# rows that hold permission names of their own on each resource (dataset-only names on datasets)
HOLDERS: dict[str, tuple[str, ...]] = {
    "view": ("view_resourcebase",),
    "view+download": ("view_resourcebase", "download_resourcebase"),
    "view+change": ("view_resourcebase", "change_resourcebase"),
    "view+metadata": ("view_resourcebase", "change_resourcebase_metadata"),
    "view+delete": ("view_resourcebase", "delete_resourcebase"),
    "view+permissions": ("view_resourcebase", "change_resourcebase_permissions"),
    "view+publish": ("view_resourcebase", "publish_resourcebase"),
    "view+data": ("view_resourcebase", "change_dataset_data"),
    "view+style": ("view_resourcebase", "change_dataset_style"),
    "change only": ("change_resourcebase",),
    "download only": ("download_resourcebase",),
}
DATASET_ONLY_ROWS = ("view+data", "view+style")
ROWS = ROLES + tuple(HOLDERS)
GROUP_LEVEL = "download"  # what the resource's group holds on every resource

# -- the actions on a resource ----------------------------------------------------------------------

# name: what is done (as that row's user, on the resource of the type)
RESOURCE_ACTIONS = {
    "view": "GET /api/v2/resources/{pk}",
    "list": "the resource is in GET /api/v2/resources/",
    "meta": "PATCH /api/v2/resources/{pk} (abstract)",
    "attrs": "PATCH /api/v2/datasets/{pk}/attribute_set",
    "thumb": "PUT /api/v2/resources/{pk}/set_thumbnail",
    "layers": "PATCH /api/v2/maps/{pk} (maplayers)",
    "del": "DELETE /api/v2/resources/{pk} (of a copy set up alike)",
    "pread": "GET /api/v2/resources/{pk}/permissions",
    "pwrite": "PUT /api/v2/resources/{pk}/permissions (and its job finishes)",
    "dl": "GET /datasets/{alternate}/dataset_download, /documents/{pk}/download",
    "style": "PUT the dataset's sld_url",
    "sldup": "POST /api/v2/uploads/upload action=resource_style_upload (and its job finishes)",
    "data": "POST /api/v2/uploads/upload action=replace (and its job finishes)",
    "copy": "PUT /api/v2/resources/{pk}/copy (and its job finishes)",
    "fav": "POST /api/v2/resources/{pk}/favorite",
    "feat": "PATCH featured (the value changes)",
    "appr": "PATCH is_approved (the value changes)",
    "pub": "PATCH is_published (the value changes)",
    "wms": "WMS GetMap of the dataset",
    "wfs": "WFS GetFeature of the dataset",
    "csw": "CSW GetRecordById of the resource",
    # the open standards (OGC API, DCAT): the grids below the first four
    "rec": "GET /ogcapi/collections/metadata:main/items/{uuid} (OGC API - Records)",
    "dcat": "GET /dcat/resources/{uuid} (DCAT-AP, JSON-LD)",
    "oapif": "GET /ogcapi/collections/{name}/items (OGC API - Features)",
    "oedit": "PATCH /ogcapi/collections/{name}/items/{fid} (OGC API - Features, Part 4)",
    "tile": "a PNG tile of /ogcapi/collections/{name or map-pk}/map/tiles (OGC API - Tiles)",
    "mvt": "a vector tile of /ogcapi/collections/{name}/tiles (OGC API - Tiles)",
}

# The permission name that `perms` must show exactly when the action is allowed (any one of
# several). None: not governed by a permission name (the rule is the row above).
PERM_OF: dict[str, tuple[str, ...] | None] = {
    "view": ("view_resourcebase",), "list": ("view_resourcebase",), "csw": ("view_resourcebase",),
    "wms": ("view_resourcebase",),
    "meta": ("change_resourcebase", "change_resourcebase_metadata"),
    "attrs": ("change_resourcebase", "change_resourcebase_metadata"),
    "thumb": ("change_resourcebase", "change_resourcebase_metadata"),
    "layers": ("change_resourcebase",),
    "del": ("delete_resourcebase",),
    "pread": ("change_resourcebase_permissions",), "pwrite": ("change_resourcebase_permissions",),
    "dl": ("download_resourcebase",), "wfs": ("download_resourcebase",),
    "style": ("change_dataset_style",), "sldup": ("change_dataset_style",),
    "data": ("change_dataset_data",),
    "feat": ("feature_resourcebase",), "appr": ("approve_resourcebase",), "pub": ("publish_resourcebase",),
    "copy": None, "fav": None,
    "rec": ("view_resourcebase",), "dcat": ("view_resourcebase",), "tile": ("view_resourcebase",),
    "oapif": ("download_resourcebase",), "mvt": ("download_resourcebase",), "oedit": ("change_dataset_data",),
}

TYPES = ("dataset", "document", "map", "geoapp")

# -- the table --------------------------------------------------------------------------------------

DATASET = """
                  view list meta attrs thumb layers del pread pwrite dl style sldup data copy fav feat appr pub wms wfs csw
anonymous          -    -    -    -     -     .     -    -     -    -    -     -    -    -    -    -    -    -   -   -   -
registered         -    -    -    -     -     .     -    -     -    -    -     -    -    -    -    -    -    -   -   -   -
owner              Y    Y    Y    Y     Y     .     Y    Y     Y    Y    Y     Y    Y    Y    Y    -    -    Y   Y   Y   Y
group member       Y    Y    -    -     -     .     -    -     -    Y    -     -    -    Y    Y    -    -    -   Y   Y   Y
group manager      Y    Y    Y    Y     Y     .     Y    Y     Y    Y    Y     Y    Y    Y    Y    Y    Y    Y   Y   Y   Y
staff              -    -    -    -     -     .     -    -     -    -    -     -    -    -    -    -    -    -   -   -   -
superuser          Y    Y    Y    Y     Y     .     Y    Y     Y    Y    Y     Y    Y    Y    Y    Y    Y    Y   Y   Y   Y
view               Y    Y    -    -     -     .     -    -     -    -    -     -    -    -    Y    -    -    -   Y   -   Y
view+download      Y    Y    -    -     -     .     -    -     -    Y    -     -    -    Y    Y    -    -    -   Y   Y   Y
view+change        Y    Y    Y    Y     Y     .     -    -     -    -    -     -    -    -    Y    -    -    -   Y   -   Y
view+metadata      Y    Y    Y    Y     Y     .     -    -     -    -    -     -    -    -    Y    -    -    -   Y   -   Y
view+delete        Y    Y    -    -     -     .     Y    -     -    -    -     -    -    -    Y    -    -    -   Y   -   Y
view+permissions   Y    Y    -    -     -     .     Y    Y     Y    -    -     -    -    -    Y    -    -    -   Y   -   Y
view+publish       Y    Y    -    -     -     .     -    -     -    -    -     -    -    -    Y    -    -    Y   Y   -   Y
view+data          Y    Y    -    -     -     .     -    -     -    -    -     -    Y    -    Y    -    -    -   Y   -   Y
view+style         Y    Y    -    -     -     .     -    -     -    -    Y     Y    -    -    Y    -    -    -   Y   -   Y
change only        Y    Y    Y    Y     Y     .     -    -     -    -    -     -    -    -    Y    -    -    -   Y   -   Y
download only      -    -    -    -     -     .     -    -     -    -    -     -    -    -    -    -    -    -   -   -   -
"""

DOCUMENT = """
                  view list meta attrs thumb layers del pread pwrite dl style sldup data copy fav feat appr pub wms wfs csw
anonymous          -    -    -    .     -     .     -    -     -    -    .     .    .    -    -    -    -    -   .   .   -
registered         -    -    -    .     -     .     -    -     -    -    .     .    .    -    -    -    -    -   .   .   -
owner              Y    Y    Y    .     Y     .     Y    Y     Y    Y    .     .    .    Y    Y    -    -    Y   .   .   Y
group member       Y    Y    -    .     -     .     -    -     -    Y    .     .    .    Y    Y    -    -    -   .   .   Y
group manager      Y    Y    Y    .     Y     .     Y    Y     Y    Y    .     .    .    Y    Y    Y    Y    Y   .   .   Y
staff              -    -    -    .     -     .     -    -     -    -    .     .    .    -    -    -    -    -   .   .   -
superuser          Y    Y    Y    .     Y     .     Y    Y     Y    Y    .     .    .    Y    Y    Y    Y    Y   .   .   Y
view               Y    Y    -    .     -     .     -    -     -    -    .     .    .    -    Y    -    -    -   .   .   Y
view+download      Y    Y    -    .     -     .     -    -     -    Y    .     .    .    Y    Y    -    -    -   .   .   Y
view+change        Y    Y    Y    .     Y     .     -    -     -    -    .     .    .    -    Y    -    -    -   .   .   Y
view+metadata      Y    Y    Y    .     Y     .     -    -     -    -    .     .    .    -    Y    -    -    -   .   .   Y
view+delete        Y    Y    -    .     -     .     Y    -     -    -    .     .    .    -    Y    -    -    -   .   .   Y
view+permissions   Y    Y    -    .     -     .     Y    Y     Y    -    .     .    .    -    Y    -    -    -   .   .   Y
view+publish       Y    Y    -    .     -     .     -    -     -    -    .     .    .    -    Y    -    -    Y   .   .   Y
change only        Y    Y    Y    .     Y     .     -    -     -    -    .     .    .    -    Y    -    -    -   .   .   Y
download only      -    -    -    .     -     .     -    -     -    -    .     .    .    -    -    -    -    -   .   .   -
"""

MAP = """
                  view list meta attrs thumb layers del pread pwrite dl style sldup data copy fav feat appr pub wms wfs csw
anonymous          -    -    -    .     -     -     -    -     -    .    .     .    .    -    -    -    -    -   .   .   -
registered         -    -    -    .     -     -     -    -     -    .    .     .    .    -    -    -    -    -   .   .   -
owner              Y    Y    Y    .     Y     Y     Y    Y     Y    .    .     .    .    Y    Y    -    -    Y   .   .   Y
group member       Y    Y    -    .     -     -     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
group manager      Y    Y    Y    .     Y     Y     Y    Y     Y    .    .     .    .    Y    Y    Y    Y    Y   .   .   Y
staff              -    -    -    .     -     -     -    -     -    .    .     .    .    -    -    -    -    -   .   .   -
superuser          Y    Y    Y    .     Y     Y     Y    Y     Y    .    .     .    .    Y    Y    Y    Y    Y   .   .   Y
view               Y    Y    -    .     -     -     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+download      Y    Y    -    .     -     -     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+change        Y    Y    Y    .     Y     Y     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+metadata      Y    Y    Y    .     Y     -     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+delete        Y    Y    -    .     -     -     Y    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+permissions   Y    Y    -    .     -     -     Y    Y     Y    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+publish       Y    Y    -    .     -     -     -    -     -    .    .     .    .    Y    Y    -    -    Y   .   .   Y
change only        Y    Y    Y    .     Y     Y     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
download only      -    -    -    .     -     -     -    -     -    .    .     .    .    -    -    -    -    -   .   .   -
"""

GEOAPP = """
                  view list meta attrs thumb layers del pread pwrite dl style sldup data copy fav feat appr pub wms wfs csw
anonymous          -    -    -    .     -     .     -    -     -    .    .     .    .    -    -    -    -    -   .   .   -
registered         -    -    -    .     -     .     -    -     -    .    .     .    .    -    -    -    -    -   .   .   -
owner              Y    Y    Y    .     Y     .     Y    Y     Y    .    .     .    .    Y    Y    -    -    Y   .   .   Y
group member       Y    Y    -    .     -     .     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
group manager      Y    Y    Y    .     Y     .     Y    Y     Y    .    .     .    .    Y    Y    Y    Y    Y   .   .   Y
staff              -    -    -    .     -     .     -    -     -    .    .     .    .    -    -    -    -    -   .   .   -
superuser          Y    Y    Y    .     Y     .     Y    Y     Y    .    .     .    .    Y    Y    Y    Y    Y   .   .   Y
view               Y    Y    -    .     -     .     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+download      Y    Y    -    .     -     .     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+change        Y    Y    Y    .     Y     .     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+metadata      Y    Y    Y    .     Y     .     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+delete        Y    Y    -    .     -     .     Y    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+permissions   Y    Y    -    .     -     .     Y    Y     Y    .    .     .    .    Y    Y    -    -    -   .   .   Y
view+publish       Y    Y    -    .     -     .     -    -     -    .    .     .    .    Y    Y    -    -    Y   .   .   Y
change only        Y    Y    Y    .     Y     .     -    -     -    .    .     .    .    Y    Y    -    -    -   .   .   Y
download only      -    -    -    .     -     .     -    -     -    .    .     .    .    -    -    -    -    -   .   .   -
"""

# The open standards, with the same rows: a Records item and a DCAT record follow view; the
# features and vector tiles of OGC API follow WFS (download); editing them follows the data
# (change_dataset_data); a map tile follows WMS (view).

DATASET_OPEN = """
                  rec dcat oapif oedit tile mvt
anonymous           -    -    -     -    -   -
registered          -    -    -     -    -   -
owner               Y    Y    Y     Y    Y   Y
group member        Y    Y    Y     -    Y   Y
group manager       Y    Y    Y     Y    Y   Y
staff               -    -    -     -    -   -
superuser           Y    Y    Y     Y    Y   Y
view                Y    Y    -     -    Y   -
view+download       Y    Y    Y     -    Y   Y
view+change         Y    Y    -     -    Y   -
view+metadata       Y    Y    -     -    Y   -
view+delete         Y    Y    -     -    Y   -
view+permissions    Y    Y    -     -    Y   -
view+publish        Y    Y    -     -    Y   -
view+data           Y    Y    -     Y    Y   -
view+style          Y    Y    -     -    Y   -
change only         Y    Y    -     -    Y   -
download only       -    -    -     -    -   -
"""

DOCUMENT_OPEN = """
                  rec dcat oapif oedit tile mvt
anonymous           -    -    .     .    .   .
registered          -    -    .     .    .   .
owner               Y    Y    .     .    .   .
group member        Y    Y    .     .    .   .
group manager       Y    Y    .     .    .   .
staff               -    -    .     .    .   .
superuser           Y    Y    .     .    .   .
view                Y    Y    .     .    .   .
view+download       Y    Y    .     .    .   .
view+change         Y    Y    .     .    .   .
view+metadata       Y    Y    .     .    .   .
view+delete         Y    Y    .     .    .   .
view+permissions    Y    Y    .     .    .   .
view+publish        Y    Y    .     .    .   .
change only         Y    Y    .     .    .   .
download only       -    -    .     .    .   .
"""

MAP_OPEN = """
                  rec dcat oapif oedit tile mvt
anonymous           -    -    .     .    -   .
registered          -    -    .     .    -   .
owner               Y    Y    .     .    Y   .
group member        Y    Y    .     .    Y   .
group manager       Y    Y    .     .    Y   .
staff               -    -    .     .    -   .
superuser           Y    Y    .     .    Y   .
view                Y    Y    .     .    Y   .
view+download       Y    Y    .     .    Y   .
view+change         Y    Y    .     .    Y   .
view+metadata       Y    Y    .     .    Y   .
view+delete         Y    Y    .     .    Y   .
view+permissions    Y    Y    .     .    Y   .
view+publish        Y    Y    .     .    Y   .
change only         Y    Y    .     .    Y   .
download only       -    -    .     .    -   .
"""

GEOAPP_OPEN = """
                  rec dcat oapif oedit tile mvt
anonymous           -    -    .     .    .   .
registered          -    -    .     .    .   .
owner               Y    Y    .     .    .   .
group member        Y    Y    .     .    .   .
group manager       Y    Y    .     .    .   .
staff               -    -    .     .    .   .
superuser           Y    Y    .     .    .   .
view                Y    Y    .     .    .   .
view+download       Y    Y    .     .    .   .
view+change         Y    Y    .     .    .   .
view+metadata       Y    Y    .     .    .   .
view+delete         Y    Y    .     .    .   .
view+permissions    Y    Y    .     .    .   .
view+publish        Y    Y    .     .    .   .
change only         Y    Y    .     .    .   .
download only       -    -    .     .    .   .
"""

# -- executions, uploads, groups, users (rows: the roles; the execution and the upload are the
# owner's, the group is the resources' group, the user is another plain user) ---------------------

THINGS_ACTIONS = {
    "exec_read": "GET /api/v2/executionrequest/{id} of the owner's request",
    "exec_status": "GET /api/v2/resource-service/execution-status/{id} of the owner's request",
    "exec_delete": "DELETE /api/v2/executionrequest/{id} of a finished request of the owner's",
    "upload_list": "the owner's upload is in GET /api/v2/uploads/",
    "upload_read": "GET /api/v2/uploads/{id} of the owner's upload",
    "group_change": "PATCH /api/v2/groups/{id} (description)",
    "group_add": "POST /api/v2/groups/{id}/members (another user, as a member)",
    "group_delete": "DELETE /api/v2/groups/{id} (of a group set up alike)",
    "user_change": "PATCH /api/v2/users/{id} of another user",
    "user_delete": "DELETE /api/v2/users/{id} of another user (without resources)",
}

THINGS = """
              exec_read exec_status exec_delete upload_list upload_read group_change group_add group_delete user_change user_delete
anonymous         -          -           -           -           -            -           -          -            -           -
registered        -          -           -           -           -            -           -          -            -           -
owner             Y          Y           Y           Y           Y            -           -          -            -           -
group member      -          -           -           -           -            -           -          -            -           -
group manager     -          -           -           -           -            Y           Y          -            -           -
staff             Y          Y           Y           Y           Y            Y           Y          Y            Y           Y
superuser         Y          Y           Y           Y           Y            Y           Y          Y            Y           Y
"""


def parse(grid: str) -> dict[tuple[str, str], bool | None]:
    """{(row, action): True (allowed) | False (refused) | None (no such action)} of a grid."""
    lines = [line for line in grid.strip("\n").splitlines() if line.strip()]
    actions = lines[0].split()
    out: dict[tuple[str, str], bool | None] = {}
    for line in lines[1:]:
        words = line.split()
        row, marks = " ".join(words[:-len(actions)]), words[-len(actions):]
        for action, mark in zip(actions, marks):
            assert mark in ("Y", "-", "."), line
            out[(row, action)] = {"Y": True, "-": False, ".": None}[mark]
    return out


TABLES = {"dataset": {**parse(DATASET), **parse(DATASET_OPEN)}, "document": {**parse(DOCUMENT), **parse(DOCUMENT_OPEN)},
          "map": {**parse(MAP), **parse(MAP_OPEN)}, "geoapp": {**parse(GEOAPP), **parse(GEOAPP_OPEN)}}
THINGS_TABLE = parse(THINGS)


def rows_of(kind: str) -> tuple[str, ...]:
    return ROWS if kind == "dataset" else tuple(r for r in ROWS if r not in DATASET_ONLY_ROWS)


def resource_cells() -> list[tuple[str, str, str, bool]]:
    """(type, row, action, allowed) of every cell where the action exists."""
    return [(kind, row, action, TABLES[kind][(row, action)])
            for kind in TYPES for row in rows_of(kind) for action in RESOURCE_ACTIONS
            if TABLES[kind][(row, action)] is not None]


def thing_cells() -> list[tuple[str, str, bool]]:
    return [(row, action, THINGS_TABLE[(row, action)]) for row in ROLES for action in THINGS_ACTIONS]


# every row of every grid is there, with one mark for each action
for _kind, _table in TABLES.items():
    assert {r for r, _ in _table} == set(rows_of(_kind)), _kind
    assert {a for _, a in _table} == set(RESOURCE_ACTIONS), _kind
assert {r for r, _ in THINGS_TABLE} == set(ROLES) and {a for _, a in THINGS_TABLE} == set(THINGS_ACTIONS)
