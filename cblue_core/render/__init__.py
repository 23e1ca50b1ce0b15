"""Escaped, self-contained HTML for examples of every task kind (no Streamlit import here;
see :mod:`cblue_core.render.streamlit_view` to show the HTML in a page)."""
from .example import RENDERERS, comparison_html, example_html
from .marks import MARK_STYLES, mark_style
from .palette import PALETTE, Colour, color_for
from .relations import Mention, find_all, locate_mentions, relations_html
from .spans import assign_levels, legend_html, spans_html, valid_spans

__all__ = [
    "RENDERERS", "comparison_html", "example_html", "MARK_STYLES", "mark_style", "PALETTE",
    "Colour", "color_for", "Mention", "find_all", "locate_mentions", "relations_html",
    "assign_levels", "legend_html", "spans_html", "valid_spans",
]
