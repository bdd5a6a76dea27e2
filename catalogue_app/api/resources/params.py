"""Resource list parameters beyond the generic query language: extent, favorite, advertised,
thesaurus keywords, and field selection (include[], exclude[], api_preset)."""

from __future__ import annotations

import math
from typing import Any

import msgspec

from catalogue_app.api.errors import invalid, parse_error
from catalogue_app.api.query import list_spec
from catalogue_app.store import origins, resources
from catalogue_app.store.filters import Combined, Condition
from catalogue_app.store.resources import ResourceQuery

STRTOBOOL = {"y": True, "yes": True, "t": True, "true": True, "on": True, "1": True,
             "n": False, "no": False, "f": False, "false": False, "off": False, "0": False}
PRESETS = {"bare": ["pk", "title"], "basic": ["pk", "title", "abstract", "resource_type"]}


def strtobool(name: str, value: str) -> bool:
    try:
        return STRTOBOOL[value.strip().lower()]
    except KeyError:
        raise invalid(f"Invalid value for {name}: '{value}' is not a boolean.") from None


def parse_extent(values: list[str]) -> list[tuple[float, float, float, float]]:
    """extent=west,south,east,north (several boxes may follow); west > east crosses the antimeridian."""
    boxes = []
    for value in values:
        try:
            numbers = [float(v) for v in value.split(",")]
        except ValueError:
            raise invalid(f"Invalid extent '{value}': expected numbers west,south,east,north.") from None
        if not numbers or len(numbers) % 4 or not all(math.isfinite(n) for n in numbers):
            raise invalid(f"Invalid extent '{value}': expected groups of four numbers west,south,east,north.")
        for i in range(0, len(numbers), 4):
            x0, y0, x1, y1 = numbers[i:i + 4]
            if y0 > y1:
                raise invalid(f"Invalid extent '{value}': south is above north.")
            y0, y1 = max(y0, -90.0), min(y1, 90.0)
            if x1 - x0 >= 360:
                boxes.append((-180.0, y0, 180.0, y1))
            elif x0 > x1 or x0 < -180 or x1 > 180:
                # normalise into [-180, 180] and split where the box crosses the antimeridian
                x0 = ((x0 + 180) % 360) - 180
                x1 = ((x1 + 180) % 360) - 180
                if x0 > x1:
                    boxes += [(x0, y0, 180.0, y1), (-180.0, y0, x1, y1)]
                else:
                    boxes.append((x0, y0, x1, y1))
            else:
                boxes.append((x0, y0, x1, y1))
    return boxes


def resource_query(params: list[tuple[str, str]], caller_id: int | None,
                   types: tuple[str, ...] = ()) -> tuple[ResourceQuery, list[int], bool]:
    """The parsed query, the thesaurus keyword ids asked for, and whether they must all match."""
    tkeyword_ids: list[int] = []
    generic = []
    for key, value in params:
        name = key[7:-1].lstrip("-").split(".")[0] if key.startswith("filter{") and key.endswith("}") else ""
        if name == "tkeywords":
            try:
                tkeyword_ids.append(int(value))
            except ValueError:
                raise invalid(f"Invalid value for {key}: '{value}' is not a thesaurus keyword id.") from None
            continue
        if name in resources.COMPUTED:
            raise invalid(f"Invalid filter field: {name} is computed, not stored, and cannot be filtered on.")
        generic.append((key, value))
    query = ResourceQuery(spec=list_spec(generic, resources.fields_for(types), resources.SEARCH_FIELDS),
                          resource_types=types)
    _check_sources(query.spec.conditions)
    extents = [v for k, v in params if k == "extent"]
    if extents:
        query.extents = parse_extent(extents)
    for key, value in params:
        if key == "advertised":
            if value.strip().lower() == "all":
                query.advertised_all = True
            elif value.strip().lower() in STRTOBOOL:
                query.advertised = STRTOBOOL[value.strip().lower()]
        elif key == "favorite" and strtobool("favorite", value):
            query.favorites_of = caller_id if caller_id is not None else -1
    force_and = any(k == "force_and" for k, _ in params)
    return query, tkeyword_ids, force_and


def _check_sources(conditions: list[Condition | Combined]) -> None:
    """A ``source`` compared for equality names one of the sources (400 otherwise)."""
    for cond in conditions:
        if isinstance(cond, Combined):
            _check_sources(cond.parts)
        elif cond.path == "source" and cond.op in ("eq", "exact", "in", "any", "all"):
            bad = [v for v in cond.values if v not in origins.SOURCES]
            if bad:
                raise invalid(f"Invalid value for filter{{source}}: '{bad[0]}' is not one of "
                              f"{', '.join(origins.SOURCES)}.")


class Selection(msgspec.Struct):
    include: list[str]
    exclude: list[str]

    @property
    def active(self) -> bool:
        return bool(self.include or self.exclude)

    @property
    def wants_data(self) -> bool:
        return "data" in self.include




def selection(params: list[tuple[str, str]], serializer: str, names: set[str]) -> Selection:
    include: list[str] = []
    exclude: list[str] = []
    for key, value in params:
        if key == "api_preset":
            if value not in PRESETS:
                break  # GeoNode ignores an unknown preset and those after it
            exclude.append("*")
            include += PRESETS[value]
    include += [v for k, v in params if k in ("include[]", "include")]
    exclude += [v for k, v in params if k in ("exclude[]", "exclude")]
    for name in include + exclude:
        if name != "*" and name.split(".")[0] not in names:
            raise parse_error(f'"{name}" is not a valid field name for "{serializer}".')
    return Selection(include, exclude)


def apply_selection(item: Any, sel: Selection) -> dict[str, Any]:
    """One rendered item as a dict with the selected keys."""
    data = msgspec.to_builtins(item)
    top_include = {n for n in sel.include if "." not in n}
    if "*" in sel.exclude:
        data = {k: v for k, v in data.items() if k in top_include}
    for name in sel.exclude:
        head, _, rest = name.partition(".")
        if rest and isinstance(data.get(head), dict):
            data[head].pop(rest, None)
        elif not rest and name not in top_include:
            data.pop(name, None)
    return data
