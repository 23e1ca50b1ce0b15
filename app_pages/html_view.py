"""Showing the core renderer's HTML in a Streamlit page (the core itself never imports streamlit).

``st.html`` (Streamlit 1.67) inserts the HTML into the page itself, not an iframe: the text
stays selectable and searchable, the block sizes to its content, and there is no extra
document to load, which keeps pages fast. It sanitises with DOMPurify's HTML profile:
``<style>`` is kept (our rules are all scoped under ``.cbr``, so they cannot restyle the page),
JavaScript is dropped (``unsafe_allow_javascript`` stays off), and SVG is dropped, which is why
the renderer draws arcs and layers with plain HTML and CSS. ``st.components.v1.html`` (an
iframe of fixed height, not sized to content) is therefore not needed.
"""
from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from cblue_core.records import Example, Span
from cblue_core.render.example import comparison_html, example_html
from cblue_core.tasks import TaskSpec


def show_html(html: str, *, width: str | int = "stretch") -> None:
    """Render a self-contained HTML string from :mod:`cblue_core.render` in the page."""
    if not html or not html.strip():
        return  # st.html refuses empty content
    st.html(html, width=width)


def show_example(example: Example, task: TaskSpec, *, big: bool = False,
                 marks: Mapping[Span, str] | None = None) -> None:
    show_html(example_html(example, task, big=big, marks=marks))


def show_comparison(gold: Example, pred: Example, task: TaskSpec, *,
                    marks: Mapping[Span, str] | None = None, big: bool = False) -> None:
    show_html(comparison_html(gold, pred, task, marks=marks, big=big))
