"""Direction isolation in the rendered HTML: a direction override (U+202E) or right-to-left
letters in any data string (a text, a type name, a label, a mention) never reorder what is
shown after that string. Checked by following the bidi algorithm's stack of explicit
embeddings and isolates (UAX #9, X1-X8) through the whole HTML."""
from __future__ import annotations

import unicodedata
from dataclasses import replace

import pytest

from cblue_core.render import comparison_html, example_html
from cblue_core.render.base import esc
from cblue_core.render.bidi import FSI, PDI, isolate
from cblue_core.tasks import TASKS, Label

from .helpers import make_example

HOSTILE = {
    "RLO": "\u202e反向",                       # reverses the rest of the line
    "RLE": "\u202b嵌入",
    "PDI-first": "\u2069\u202e关掉外层",        # closes an isolate around it, then overrides
    "open-isolate": "\u2067\u202e未关",        # leaves an isolate open
    "hebrew": "עברית",                        # strong right-to-left letters
    "multiline": "第一行\n\u202e第二行",
}


def leaks(html: str) -> list[int]:
    """Positions of characters outside every isolate while a data string's embedding or
    override is still open, of right-to-left letters outside every isolate, and of tags (never
    part of a data string) while any embedding or isolate is open."""
    stack: list[str] = []
    bad = []
    for i, ch in enumerate(html):
        kind = unicodedata.bidirectional(ch)
        if kind == "B":
            stack.clear()
        elif kind in ("LRE", "RLE", "LRO", "RLO"):
            stack.append("E")
        elif kind in ("LRI", "RLI", "FSI"):
            stack.append("I")
        elif kind == "PDF":
            if stack and stack[-1] == "E":
                stack.pop()
        elif kind == "PDI":
            if "I" in stack:
                while stack.pop() != "I":
                    pass
        elif (stack and (stack[0] == "E" or ch == "<")) or (kind in ("R", "AL") and "I" not in stack):
            bad.append(i)
    return bad


def hostile_task(task, s):
    return replace(task, labels=task.labels + (Label(s, s, s),))


@pytest.mark.parametrize("s", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_no_data_string_reorders_the_rest_of_the_html(task, s):
    bad_task = hostile_task(task, s)
    ex = make_example(bad_task, s)
    for out in (example_html(ex, bad_task), example_html(ex, bad_task, big=True),
                comparison_html(ex, make_example(bad_task), bad_task, marks={sp: s for sp in ex.spans})):
        where = leaks(out)
        assert not where, out[max(where[0] - 120, 0):where[0] + 40]


def test_isolate_keeps_ordinary_text_and_balances_hostile_text():
    assert esc("呼吸肌麻痹 <b>") == "呼吸肌麻痹 &lt;b&gt;"          # CBLUE's Chinese is unchanged
    assert isolate("a\u202eb") == f"{FSI}a\u202eb{PDI}"
    assert isolate("\u2069\u202ex") == f"{FSI}\u202ex{PDI}"         # its PDI would close ours
    assert isolate("\u2067x") == f"{FSI}\u2067x{PDI}{PDI}"          # its isolate is closed first
    assert isolate("x\n\u202ey") == f"{FSI}x{PDI}\n{FSI}\u202ey{PDI}"  # each line on its own
    assert not leaks(esc("\u202e" * 3 + "\u2069" * 3 + "\u2066" * 2))
