"""Escaped, self-contained HTML for examples of every task kind; the pages put it on the page
(:mod:`app_pages.html_view`)."""
from .example import RENDERERS, comparison_html, example_html
from .marks import MARK_STYLES, mark_style
from .mentions import Mention, find_all, locate_mentions
from .palette import PALETTE, Colour, color_for
from .relations import relations_html
from .spans import assign_levels, legend_html, spans_html, valid_spans

__all__ = [
    "MARK_STYLES",
    "PALETTE",
    "RENDERERS",
    "Colour",
    "Mention",
    "assign_levels",
    "color_for",
    "comparison_html",
    "example_html",
    "find_all",
    "legend_html",
    "locate_mentions",
    "mark_style",
    "relations_html",
    "spans_html",
    "valid_spans",
]
