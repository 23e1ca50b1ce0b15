"""Typed results as JSON text and back into the same types: dataclasses (nested), lists, tuples,
dicts, sets, optional fields and numpy arrays.

Decoding is driven by the type the caller asks for (``loads(text, list[BucketScore])``) and
by the dataclasses' own field annotations, never by type names written in the text: a
workspace file is data, and naming a class to build from it would let a crafted file call
any constructor. Fields annotated ``Any`` come back as plain JSON values.

Numpy arrays keep their dtype and shape (base64 of their bytes): per-example statistics are
arrays of a few thousand integers, and JSON numbers would triple their size.

>>> from dataclasses import dataclass
>>> @dataclass
... class Point:
...     x: int
...     tags: tuple[str, ...] = ()
>>> loads(dumps([Point(1, ("a",))]), list[Point])
[Point(x=1, tags=('a',))]
"""
from __future__ import annotations

import base64
import dataclasses
import functools
import json
import types
import typing
from typing import Any

import numpy as np

__all__ = ["TypedJsonError", "dumps", "loads"]

_ARRAY = "__ndarray__"      # the one key that marks an encoded array


class TypedJsonError(ValueError):
    """The text does not hold a value of the type asked for (the path says where)."""


def dumps(value: Any) -> str:
    """``value`` as compact JSON text (non-ASCII kept as it is)."""
    return json.dumps(_plain(value), ensure_ascii=False, separators=(",", ":"))


def loads(text: str, tp: Any) -> Any:
    """The value of type ``tp`` that :func:`dumps` wrote; raises :class:`TypedJsonError`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TypedJsonError(f"not JSON: {exc.msg} at character {exc.pos}") from None
    return _typed(data, tp, "$")


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, np.ndarray):
        arr = np.ascontiguousarray(value)
        return {_ARRAY: {"dtype": arr.dtype.str, "shape": list(arr.shape),
                         "data": base64.b64encode(arr.tobytes()).decode("ascii")}}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot write a {type(value).__name__} as typed JSON")


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _fail(path: str, expected: str, data: Any) -> TypedJsonError:
    return TypedJsonError(f"{path}: expected {expected}, found {type(data).__name__}")


def _typed(data: Any, tp: Any, path: str) -> Any:
    if tp is Any or tp is object:
        return data
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return _union(data, typing.get_args(tp), path)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass(data, tp, path)
    if tp is np.ndarray:
        return _array(data, path)
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set, frozenset):
        return _sequence(data, tp, origin or tp, path)
    if origin is dict or tp is dict:
        return _mapping(data, tp, path)
    return _scalar(data, tp, path)


def _union(data: Any, options: tuple[Any, ...], path: str) -> Any:
    if data is None and type(None) in options:
        return None
    errors = []
    for option in (o for o in options if o is not type(None)):
        try:
            return _typed(data, option, path)
        except TypedJsonError as exc:
            errors.append(str(exc))
    raise TypedJsonError("; ".join(errors) or f"{path}: expected a value, found null")


def _dataclass(data: Any, cls: type, path: str) -> Any:
    if not isinstance(data, dict):
        raise _fail(path, f"an object for {cls.__name__}", data)
    hints = _field_types(cls)
    kwargs: dict[str, Any] = {}
    later: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise TypedJsonError(f"{path}: {cls.__name__} lacks its field {f.name!r}")
            continue
        value = _typed(data[f.name], hints[f.name], f"{path}.{f.name}")
        (kwargs if f.init else later)[f.name] = value
    obj = cls(**kwargs)
    for name, value in later.items():       # fields the constructor does not take
        object.__setattr__(obj, name, value)
    return obj


def _array(data: Any, path: str) -> np.ndarray:
    spec = data.get(_ARRAY) if isinstance(data, dict) else None
    if not isinstance(spec, dict):
        raise _fail(path, "an encoded array", data)
    try:
        dtype = np.dtype(spec["dtype"])
    except (KeyError, TypeError) as exc:
        raise TypedJsonError(f"{path}: a broken array ({type(exc).__name__})") from None
    if dtype.hasobject:
        raise TypedJsonError(f"{path}: arrays of Python objects are not read")
    try:
        raw = base64.b64decode(spec["data"], validate=True)
        return np.frombuffer(raw, dtype=dtype).reshape(spec["shape"]).copy()
    except (KeyError, TypeError, ValueError) as exc:
        raise TypedJsonError(f"{path}: a broken array ({type(exc).__name__})") from None


def _sequence(data: Any, tp: Any, kind: type, path: str) -> Any:
    if not isinstance(data, list):
        raise _fail(path, "a list", data)
    args = typing.get_args(tp)
    if kind is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        if len(args) != len(data):
            raise TypedJsonError(f"{path}: expected {len(args)} items, found {len(data)}")
        return tuple(_typed(v, a, f"{path}[{i}]") for i, (v, a) in enumerate(zip(data, args)))
    item = args[0] if args else Any
    items = [_typed(v, item, f"{path}[{i}]") for i, v in enumerate(data)]
    return items if kind is list else kind(items)


def _mapping(data: Any, tp: Any, path: str) -> dict[Any, Any]:
    if not isinstance(data, dict):
        raise _fail(path, "an object", data)
    key_tp, value_tp = typing.get_args(tp) or (str, Any)
    out = {}
    for k, v in data.items():
        key: Any = k
        if key_tp in (int, float):
            try:
                key = key_tp(k)
            except ValueError:
                raise TypedJsonError(f"{path}: key {k!r} is not a {key_tp.__name__}") from None
        out[key] = _typed(v, value_tp, f"{path}[{k!r}]")
    return out


def _scalar(data: Any, tp: Any, path: str) -> Any:
    if tp is type(None):
        if data is not None:
            raise _fail(path, "null", data)
        return None
    if tp is float and isinstance(data, (int, float)) and not isinstance(data, bool):
        return float(data)
    if tp is int and isinstance(data, bool):
        raise _fail(path, "int", data)
    if isinstance(tp, type) and isinstance(data, tp):
        return data
    raise _fail(path, getattr(tp, "__name__", str(tp)), data)
