"""The list query language (dynamic-rest as GeoNode uses it), parsed and checked once.

``filter{path[.op]}=value`` (``filter{-path}`` excludes), ``sort[]=[-]path`` (``ordering`` is an
alias), ``search`` with repeated ``search_fields``, ``page`` and ``page_size``. Names are checked
against the field map of the listed table; bad names and values answer 400.
"""

from __future__ import annotations

import re
from typing import Any

from catalogue_app import json_text
from catalogue_app.api.errors import ApiError, invalid, parse_error
from catalogue_app.services.values import parse_datetime, truthy
from catalogue_app.store.filters import Combined, Condition, Field, ListSpec, Ordering

OPERATORS = {
    "in", "any", "all", "icontains", "contains", "startswith", "istartswith", "endswith",
    "iendswith", "year", "month", "day", "week_day", "regex", "range", "gt", "lt", "gte", "lte",
    "isnull", "eq", "iexact", "exact",
}
FILTER_KEY = re.compile(r"^filter\{(?P<body>[^{}]*)\}(\[\])?$")
SEARCH_SPLIT = re.compile(r'"([^"]*)"|[^\s,]+')
# control characters other than the whitespace that separates words (NUL would end the text index's query)
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _coerce(field: Field, op: str, value: str, key: str) -> Any:
    if CONTROL.search(value):  # a NUL would cut the text the database compares
        raise invalid(f"Invalid value for {key}: control characters are not allowed.")
    if op == "isnull":
        return truthy(value)
    if op in ("year", "month", "day", "week_day"):
        kind = "int"
    elif op in ("icontains", "contains", "startswith", "istartswith", "endswith", "iendswith",
                "iexact", "regex"):
        kind = "text"
    else:
        kind = field.kind
    try:
        if kind == "int":
            number = int(value)
            if not -(2**63) <= number < 2**63:
                raise ValueError("out of range")
            return number
        if kind == "float":
            number = float(value)
            if number != number or number in (float("inf"), float("-inf")):
                raise ValueError("not finite")
            return number
        if kind == "bool":
            return 1 if truthy(value) else 0
        if kind == "datetime":
            return parse_datetime(value)
    except ValueError:
        raise invalid(f"Invalid value for {key}: '{value}' is not a valid {kind}.") from None
    if op == "regex":
        try:
            re.compile(value)
        except re.error as exc:
            raise invalid(f"Invalid value for {key}: not a valid regular expression ({exc}).") from None
    return value


def _split_path(body: str, fields: dict[str, Field], key: str) -> tuple[str, str]:
    """'owner.username.icontains' -> ('owner.username', 'icontains')."""
    segments = body.split(".")
    if not body or any(not s for s in segments):
        raise parse_error(f'"{key}" is not a well-formed filter key.')
    op = "eq"
    if len(segments) > 1 and segments[-1] in OPERATORS:
        op = segments.pop()
    path = ".".join(segments)
    if path in fields:
        return path, op
    # walk the path as dynamic-rest does: through relations, naming the segment that fails
    for i, name in enumerate(segments[:-1]):
        here = ".".join(segments[:i + 1])
        if not any(f.startswith(here + ".") for f in fields):
            if here in fields:  # a plain field has nothing inside
                raise invalid(f"Invalid nested filter field: {name}")
            raise invalid(f"Invalid filter field: {name}")
    raise invalid(f"Invalid filter field: {segments[-1]}")


def parse_filters(params: list[tuple[str, str]], fields: dict[str, Field]) -> list[Condition | Combined]:
    grouped: dict[str, list[str]] = {}
    json_forms: list[str] = []
    for key, value in params:
        if not key.startswith("filter{"):
            continue
        if key == "filter{}":
            json_forms.append(value)
            continue
        grouped.setdefault(key, []).append(value)
    conditions: list[Condition | Combined] = [_json_filter(v, fields) for v in json_forms[:1]]
    for key, values in grouped.items():
        match = FILTER_KEY.match(key)
        if not match:
            raise parse_error(f'"{key}" is not a well-formed filter key.')
        body = match.group("body")
        negate = body.startswith("-")
        path, op = _split_path(body.lstrip("-"), fields, key)
        field = fields[path]
        if op in ("in", "any", "all"):
            chosen = values
        elif op == "range":
            if len(values) < 2:
                raise invalid(f"{key} needs two values: repeat the parameter.")
            chosen = values[:2]
        else:
            chosen = values[:1]
        coerced = [_coerce(field, op, v, key) for v in chosen]
        conditions.append(_condition(field, path, op, coerced, negate))
    return conditions


def _condition(field: Field, path: str, op: str, values: list[Any], negate: bool) -> Condition | Combined:
    if op == "all":
        # every value must match: for a to-many path, a related row for each value
        return Combined([Condition(path, "eq", [v]) for v in values], negate=negate)
    if op == "isnull" and field.exists:
        # on a to-many path, "is null" means no related row has a value: the negation of "one
        # has", not a related row with a null value (which the join never yields)
        return Condition(path, "isnull", [False], negate != bool(values[0]))
    return Condition(path, op, values, negate)


MAX_JSON_FILTER_DEPTH = 8


def _json_filter(text: str, fields: dict[str, Field]) -> Combined:
    """``filter{}={"$or": [{"title.icontains": "x"}, {"-abstract.icontains": "y"}]}`` (``.or``/``.and``
    may stand for ``$or``/``$and``; clauses nest)."""
    try:
        tree = json_text.loads(text)
    except ValueError:
        raise parse_error('"filter{}" must hold a JSON object.') from None
    return _json_clause(tree, fields, 0)


def _json_clause(node: Any, fields: dict[str, Field], depth: int) -> Combined:
    if depth > MAX_JSON_FILTER_DEPTH:
        raise invalid("The filter{} expression nests too deeply.")
    if not isinstance(node, dict):
        raise parse_error('Each clause of "filter{}" must be a JSON object.')
    parts: list[Condition | Combined] = []
    for key, value in node.items():
        if key in ("$or", ".or", "$and", ".and"):
            if not isinstance(value, list):
                raise parse_error(f'"{key}" in filter{{}} takes a list of clauses.')
            parts.append(Combined([_json_clause(v, fields, depth + 1) for v in value], any_of=key.endswith("or")))
            continue
        negate = key.startswith("-")
        path, op = _split_path(key.lstrip("-"), fields, f"filter{{{key}}}")
        values = value if isinstance(value, list) and op in ("in", "any", "all", "range") else [value]
        if op == "range" and len(values) < 2:
            raise invalid(f"{key} needs two values.")
        coerced = [_coerce(fields[path], op, "" if v is None else str(v).lower() if isinstance(v, bool) else str(v), key)
                   for v in values]
        parts.append(_condition(fields[path], path, op, coerced, negate))
    return Combined(parts)


def parse_ordering(params: list[tuple[str, str]], fields: dict[str, Field]) -> list[Ordering]:
    names = [v for k, v in params if k in ("sort[]", "sort", "ordering")]
    wanted: list[str] = []
    for value in names:
        wanted.extend(part.strip() for part in value.split(",") if part.strip())
    bad = [n for n in wanted if n.lstrip("-") not in fields or not fields[n.lstrip("-")].sortable]
    if bad:
        raise invalid(f"Invalid filter field: {bad}")
    return [Ordering(n.lstrip("-"), n.startswith("-")) for n in wanted]


def parse_search(params: list[tuple[str, str]], search_fields: dict[str, Field]) -> tuple[list[str], list[str]]:
    text = next((v for k, v in params if k == "search"), "")
    names = [v for k, v in params if k in ("search_fields", "search_fields[]")]
    bad = [n for n in names if n not in search_fields]
    if bad:
        raise invalid(f"Invalid search field: {bad[0]}. Allowed: {', '.join(sorted(search_fields))}.")
    if not text.strip() or not names:
        return [], []
    if CONTROL.search(text):
        raise invalid("Invalid search: control characters are not allowed in search terms.")
    terms = [m.group(1) if m.group(1) is not None else m.group(0) for m in SEARCH_SPLIT.finditer(text)]
    return [t for t in terms if t], list(dict.fromkeys(names))


def list_spec(params: list[tuple[str, str]], fields: dict[str, Field],
              search_fields: dict[str, Field]) -> ListSpec:
    terms, names = parse_search(params, search_fields)
    return ListSpec(
        conditions=parse_filters(params, fields),
        search_terms=terms,
        search_fields=names,
        ordering=parse_ordering(params, fields),
    )


def positive_int(params: list[tuple[str, str]], name: str, default: int) -> int:
    raw = next((v for k, v in params if k == name), None)
    if raw is None or raw == "":
        return default
    try:
        number = int(raw)
    except ValueError:
        raise ApiError(400, f"Invalid {name}: '{raw}' is not a whole number.", "invalid") from None
    if number < 1:
        raise ApiError(400, f"Invalid {name}: {number} is less than 1.", "invalid")
    return number
