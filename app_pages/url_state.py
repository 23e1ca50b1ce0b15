"""Widgets that follow the URL: a deep link (``/errors?run=3&tab=matrix``) sets the start value
of a widget, and the page writes the widget's value back so that the address bar can be shared.

One pattern for every page: before the widget is drawn, :func:`seed` gives it the URL's value
when the session has no value for it yet (a value the widget cannot take is ignored); after it
is drawn, :func:`show` puts its value in the URL. Parameter names and widget keys are declared
in :mod:`app_pages.keys`.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

import streamlit as st

Parse = Callable[[str], Any]

# ASCII digits only: str.isdigit() also accepts "²", which int() refuses (the page crashed with
# Streamlit's generic error), and int() reads "١" as 1. At most 18 digits: the value fits a
# 64-bit widget, and int() never meets its 4,300-digit limit.
_INDEX = re.compile(r"[0-9]{1,18}")


def parse_index(raw: object) -> int | None:
    """A URL value as a non-negative integer, or None when it is not one: the one parser of
    every integer URL parameter (example, run, a, b)."""
    text = "" if raw is None else str(raw)
    return int(text) if _INDEX.fullmatch(text) else None


def one_of(options: Collection[Any]) -> Parse:
    """The URL value itself, when it is one of ``options``."""
    return lambda raw: raw if raw in options else None


def int_in(options: Collection[int] | None = None) -> Parse:
    """The URL value as a non-negative integer (one of ``options`` when given)."""
    def parse(raw: str) -> int | None:
        value = parse_index(raw)
        return value if value is not None and (options is None or value in options) else None
    return parse


def mapped(table: Mapping[str, Any]) -> Parse:
    """The value ``table`` gives the URL value (a slug for a label, say)."""
    return lambda raw: table.get(raw)


def seed(key: str, param: str, parse: Parse) -> bool:
    """Before widget ``key`` is drawn: the URL's ``param`` as its value when the session has none
    (``parse`` turns the text into a value the widget takes, or None to ignore it). True when
    the URL set it."""
    if key in st.session_state:
        return False
    raw = st.query_params.get(param)
    value = None if raw is None else parse(str(raw))
    if value is None:
        return False
    st.session_state[key] = value
    return True


def show(values: Mapping[str, object]) -> None:
    """The widgets' values in the URL (``show({Param.RUN: 3, Param.TAB: "matrix"})``)."""
    st.query_params.update({param: str(value) for param, value in values.items()})
