"""Reading one field of a JSON record, with the field's path, what it is and what was expected in
the error when it is missing or of the wrong type."""
from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

from .base import Record, RecordError

T = TypeVar("T")
D = TypeVar("D")


def as_record(rec: object) -> Record:
    """``rec`` as a JSON object, or the structural error every codec reports for it."""
    if not isinstance(rec, dict):
        raise RecordError(None, f"record is a {type(rec).__name__}", "a JSON object")
    return rec


@overload
def get(rec: object, name: str, typ: type[T], path: str | None = None,
         required: Literal[True] = True) -> T: ...
@overload
def get(rec: object, name: str, typ: type[T], path: str | None = None, *,
         required: Literal[False], default: D) -> T | D: ...
@overload
def get(rec: object, name: str, typ: type[T], path: str | None = None, *,
         required: Literal[False]) -> T | None: ...
def get(rec: object, name: str, typ: type[T], path: str | None = None,
         required: bool = True, default: object = None) -> object:
    label = path or name
    obj = as_record(rec)
    if name not in obj or (obj[name] is None and not required):
        if required:
            raise RecordError(label, "missing required field", _typename(typ))
        return default
    value = obj[name]
    if isinstance(value, bool) and typ is int:
        raise RecordError(label, f"is a boolean ({value})", "an integer")
    if not isinstance(value, typ):
        raise RecordError(label, f"is {describe(value)}", _typename(typ))
    return value


def get_id(rec: object, name: str, path: str | None = None, required: bool = True,
            default: str | int | None = None) -> str | int | None:
    """An identifier: a string or an integer (booleans pass, as they always have)."""
    label = path or name
    obj = as_record(rec)
    if name not in obj or (obj[name] is None and not required):
        if required:
            raise RecordError(label, "missing required field", _ID_TYPES)
        return default
    value = obj[name]
    if not isinstance(value, (str, int)):
        raise RecordError(label, f"is {describe(value)}", _ID_TYPES)
    return value


_ID_TYPES = "a string or an integer"
_TYPE_NAMES: dict[type, str] = {str: "a string", int: "an integer", list: "a list", dict: "an object",
                                bool: "true or false"}


def _typename(typ: type) -> str:
    return _TYPE_NAMES.get(typ, typ.__name__)


def describe(value: object) -> str:
    if value is None:
        return "null"
    kind = {str: "a string", int: "an integer", float: "a number", list: "a list",
            dict: "an object", bool: "a boolean"}.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} {text[:40]}" if len(text) <= 40 else f"{kind}"


def label_str(rec: object, name: str, required: bool) -> str | None:
    value = get_id(rec, name, required=required)
    return None if value is None else str(value)


def list_of(value: object) -> list[Any]:
    """``value`` when it is a list, else no items (offset scans skip what decode will refuse)."""
    return value if isinstance(value, list) else []

