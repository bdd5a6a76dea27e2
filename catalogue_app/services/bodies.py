"""Bodies into typed Structs: a decoded JSON value in, the Struct out, or ``Invalid`` naming the
field. The Struct a write takes is both what the OpenAPI document declares and what checks the
body, so the two cannot disagree.

Conversion is msgspec's lax mode, as lenient as GeoNode's serializers: numbers may come as text
("5"), booleans as the words Django REST framework takes ("true", "on", "no", 0, 1). Keys a
Struct does not name are ignored, as GeoNode ignores fields it does not know.
"""

from __future__ import annotations

import functools
import re
from typing import Any, TypeVar

import msgspec
from msgspec import inspect

from catalogue_app.services.errors import Invalid

T = TypeVar("T")

# Django REST framework's BooleanField words (compared in lower case)
TRUE_WORDS = frozenset({"true", "t", "1", "yes", "y", "on"})
FALSE_WORDS = frozenset({"false", "f", "0", "no", "n", "off"})
_WHERE = re.compile(r"^(?P<text>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")


class FieldError(Invalid):
    """A body that does not fit its Struct (400); ``field`` is where, "" for the body itself."""

    def __init__(self, text: str):
        super().__init__(message(text))
        match = _WHERE.match(text)
        path = (match["path"] or "").lstrip(".")
        missing = _MISSING.match(match["text"])
        self.missing = missing is not None
        self.field = f"{path}.{missing['name']}".lstrip(".") if missing else path


def typed(value: Any, cls: type[T]) -> T:
    """``value`` (a decoded JSON value) as ``cls``; a wrong type or value answers 400 naming the
    field, or with the refusal the Struct names for that field in its ``refusals`` (a ClassVar
    {field: (kind of Invalid, message)}: where GeoNode answers a message of its own)."""
    try:
        return msgspec.convert(loosen(value, cls), cls, strict=False)
    except msgspec.ValidationError as exc:
        error = FieldError(str(exc))
        special = getattr(cls, "refusals", {}).get(error.field)
        if special is not None:
            kind, text = special
            raise kind(text) from None
        raise error from None


def fields_of(struct: msgspec.Struct) -> dict[str, Any]:
    """The fields a body set, as plain values (those left UNSET are left out)."""
    return msgspec.to_builtins(struct)


def message(text: str) -> str:
    """msgspec's explanation as the API's: the field first ("rating: Expected `int`, got `str`.")."""
    match = _WHERE.match(text)
    body, path = match["text"], (match["path"] or "").lstrip(".")
    missing = _MISSING.match(body)
    if missing:
        field = f"{path}.{missing['name']}" if path else missing["name"]
        return f"{field}: This field is required."
    body = body if body.endswith(".") else body + "."
    return f"{path}: {body}" if path else body


def loosen(value: Any, cls: Any) -> Any:
    """Boolean words turned into booleans in the fields of a Struct (or the items of a list of
    Structs) that take a boolean and no text."""
    if isinstance(value, list) and _item_struct(cls) is not None:
        return [loosen(item, _item_struct(cls)) for item in value]
    flags = boolean_fields(cls)
    if not flags or not isinstance(value, dict):
        return value
    out = dict(value)
    for name in flags & out.keys():
        word = out[name]
        if isinstance(word, str):
            lower = word.strip().lower()
            if lower in TRUE_WORDS:
                out[name] = True
            elif lower in FALSE_WORDS:
                out[name] = False
    return out


@functools.cache
def kinds(cls: Any) -> dict[str, frozenset[str]]:
    """The kinds of JSON value each field of a Struct takes, by name: {"rating": {"int"}}."""
    info = inspect.type_info(cls)
    if not isinstance(info, inspect.StructType):
        return {}
    return {f.encode_name: frozenset(_kinds_of(f.type)) for f in info.fields}


def boolean_fields(cls: Any) -> frozenset[str]:
    return frozenset(name for name, taken in kinds(cls).items() if "bool" in taken and "str" not in taken)


def _kinds_of(t: inspect.Type) -> set[str]:
    if isinstance(t, inspect.UnionType):
        return set().union(*(_kinds_of(member) for member in t.types))
    if isinstance(t, inspect.Metadata):
        return _kinds_of(t.type)
    names = {inspect.BoolType: "bool", inspect.IntType: "int", inspect.FloatType: "float",
             inspect.StrType: "str", inspect.NoneType: "null", inspect.AnyType: "any",
             inspect.ListType: "list", inspect.SetType: "list", inspect.FrozenSetType: "list",
             inspect.TupleType: "list", inspect.VarTupleType: "list", inspect.LiteralType: "str",
             inspect.DictType: "object", inspect.StructType: "object", inspect.TypedDictType: "object",
             inspect.DataclassType: "object", inspect.BytesType: "str", inspect.EnumType: "str"}
    return {next((name for kind, name in names.items() if isinstance(t, kind)), "any")}


@functools.cache
def _item_struct(cls: Any) -> Any:
    """The Struct class of a ``list[Struct]`` type, else None."""
    info = inspect.type_info(cls)
    if isinstance(info, inspect.ListType) and isinstance(info.item_type, inspect.StructType):
        return info.item_type.cls
    return None
