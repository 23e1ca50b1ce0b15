"""Error-category styles for marked spans: a fixed table, never styles from data.

Each category has a bar style (solid / dashed / dotted / double / groove), a label style and a
symbol, so categories stay distinguishable without colour. Unknown categories fall back to
``other`` (their name is still shown, escaped, in the tooltip and the legend).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MarkStyle:
    key: str
    zh: str
    en: str
    symbol: str
    css: str          # declarations for the bar / swatch (element with a top border)
    label_css: str = ""  # declarations for the bar's label

    @property
    def css_class(self) -> str:
        return f"cbr-m-{self.key}"


MARK_STYLES: dict[str, MarkStyle] = {m.key: m for m in (
    MarkStyle("correct", "正确", "correct", "✓", "border-top-style:solid"),
    MarkStyle("wrong_type", "类型错误", "wrong type", "≠", "border-top-style:dashed"),
    MarkStyle("wrong_boundary", "边界错误", "wrong boundary", "↔", "border-top-style:dotted"),
    MarkStyle("wrong_both", "类型与边界均错", "wrong type and boundary", "✗",
              "border-top-style:double;border-top-width:.36em"),
    MarkStyle("missed", "漏检", "missed", "○", "border-top-style:solid;opacity:.5",
              "background:#fff;border-style:dashed;font-style:italic"),
    MarkStyle("spurious", "多检", "spurious", "+", "border-top-style:solid",
              "text-decoration:line-through"),
    MarkStyle("nesting", "嵌套错误", "nesting error", "⊂", "border-top-style:groove;border-top-width:.36em",
              "text-decoration:underline"),
    MarkStyle("other", "其他", "other", "?", "border-top-style:dotted;opacity:.7",
              "font-style:italic"),
)}

_ALIASES = {
    "tp": "correct", "ok": "correct", "exact": "correct",
    "type": "wrong_type", "wrong_label": "wrong_type",
    "boundary": "wrong_boundary", "partial": "wrong_boundary",
    "both": "wrong_both", "wrong_type_and_boundary": "wrong_both",
    "fn": "missed", "missing": "missed", "miss": "missed",
    "fp": "spurious", "extra": "spurious",
    "nested": "nesting", "nesting_error": "nesting", "wrong_nesting": "nesting",
    "nested_error": "nesting",
}


def normalise_category(category: str) -> str:
    return str(category).strip().lower().replace("-", "_").replace(" ", "_")


def mark_style(category: str) -> MarkStyle:
    """The style of an error category (case, hyphens and common aliases tolerated)."""
    key = normalise_category(category)
    key = _ALIASES.get(key, key)
    return MARK_STYLES.get(key, MARK_STYLES["other"])


def marks_css() -> str:
    out = []
    for m in MARK_STYLES.values():
        out.append(f".cbr .{m.css_class}{{{m.css}}}")
        if m.label_css:
            out.append(f".cbr .{m.css_class} .cbr-lbl{{{m.label_css}}}")
    return "".join(out)
