"""A direction override in a record's text, drawn by the core renderer in real Chromium: the
entity boxes after it keep their reading order (old: U+202E reversed the rest of the line, the
later entity drawn left of the earlier one)."""
from __future__ import annotations

import pytest

from cblue_core.records import Example, Span
from cblue_core.render import example_html
from cblue_core.tasks import get_task

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("override", ["\u202e", "\u2069\u202e", "\u2067\u202e"], ids=["RLO", "PDI-RLO", "RLI-RLO"])
def test_an_override_in_the_text_reverses_nothing_after_it(browser, override):
    text = f"患者{override}出现头痛和发热。"
    head, fever = text.index("头痛"), text.index("发热")
    ex = Example(key=text, index=0, text=text, spans=[Span(head, head + 2, "sym", "头痛"),
                                                      Span(fever, fever + 2, "sym", "发热")])
    page = browser.new_page(viewport={"width": 900, "height": 400})
    try:
        page.set_content(f"<!DOCTYPE html><html><body>{example_html(ex, get_task('CMeEE'))}</body></html>")
        x = {word: page.locator(".cbr-seg", has_text=word).first.bounding_box()["x"] for word in ("头痛", "发热")}
        assert x["头痛"] < x["发热"], x
    finally:
        page.close()
