"""The span editor's frame (app_pages/components/span_editor, served as Streamlit serves it) in
real Chromium with type names hundreds of characters long: every button, bar label, list chip
and status line stays inside the frame, ending in an ellipsis, the full name in its title."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

LONG_CODE = "VeryLongTypeCode" * 20                 # no break opportunity
LONG_ZH = "一个非常非常长的实体类型名称" * 12
UNLISTED = "unlisted_" + "x" * 300                    # a type the page does not list: shown by its code
WIDTH = 520


def render(page, url: str, big: bool) -> None:
    page.set_viewport_size({"width": WIDTH, "height": 900})
    page.goto(url)
    text = "患者出现高血压和头痛症状，" * 3
    args = {"text": text, "big": big, "doc": "d1",
            "types": [{"code": "dis", "zh": "疾病", "en": "disease"},
                      {"code": LONG_CODE, "zh": LONG_ZH, "en": "a very long type name " * 8},
                      {"code": "L" * 400, "zh": "", "en": ""}],
            "spans": [{"start": 4, "end": 7, "type": LONG_CODE}, {"start": 8, "end": 10, "type": UNLISTED},
                      {"start": len(text) - 4, "end": len(text) - 2, "type": "L" * 400},
                      {"start": 0, "end": 2, "type": "dis"}]}
    # as Streamlit does: the page (here the frame itself, its own parent) posts the arguments
    page.evaluate("a => window.postMessage({type: 'streamlit:render', args: a, disabled: false}, '*')", args)
    page.locator(".se-ch").first.wait_for(timeout=10_000)


@pytest.mark.parametrize("big", [False, True], ids=["normal", "big"])
def test_long_type_names_stay_inside_the_frame(browser, frontend_url, big):
    page = browser.new_page()
    try:
        render(page, frontend_url, big)
        page.locator(".se-bar").first.click()                       # status: the selected span's name
        width = page.evaluate("() => document.documentElement.clientWidth")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        for selector in (".se-types button", ".se-lbl", ".se-list .se-chip", "#status", ".se-list li"):
            boxes = page.locator(selector).evaluate_all(
                "els => els.map(e => e.getBoundingClientRect()).map(r => [r.left, r.right])")
            assert boxes, selector
            assert all(0 <= left and right <= width + 0.5 for left, right in boxes), (selector, boxes, width)
        long_button = page.locator(f'.se-type[data-code="{LONG_CODE}"]')
        assert LONG_ZH in long_button.get_attribute("title")
        assert long_button.evaluate("e => getComputedStyle(e).textOverflow") == "ellipsis"
        bar_titles = page.locator(".se-bar").evaluate_all("els => els.map(e => e.title)")
        assert any(UNLISTED in t for t in bar_titles) and any(LONG_CODE in t for t in bar_titles)
    finally:
        page.close()
