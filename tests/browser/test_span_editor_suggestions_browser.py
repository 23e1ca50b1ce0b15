"""Suggested spans in the span editor's frame (served as Streamlit serves it) in real Chromium:
drawn dashed with their score apart from the spans; one accepted with a click, one rejected
with a key, the rest accepted with Shift+A; each action's value lists the spans, the accepted
and the rejected suggestions."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

TEXT = "患者出现高血压和头痛症状，服用硝苯地平。"
GOLD = [{"start": 4, "end": 7, "type": "dis"}]
SUGGESTED = [{"start": 8, "end": 10, "type": "sym", "score": 0.87},
             {"start": 15, "end": 19, "type": "dru", "score": 0.5},
             {"start": 0, "end": 2, "type": "bod", "score": None},
             {"start": 4, "end": 7, "type": "dis", "score": 0.99}]        # equal to a span: not shown
TYPES = [{"code": c, "zh": c, "en": ""} for c in ("dis", "sym", "dru", "bod")]


@pytest.fixture
def editor(browser, frontend_url):
    page = browser.new_page()
    page.set_viewport_size({"width": 700, "height": 900})
    page.goto(frontend_url)
    # the frame is its own parent here: keep what it sends to the page
    page.evaluate("""() => { window.values = []; window.addEventListener('message', e => {
        if (e.data && e.data.type === 'streamlit:setComponentValue') window.values.push(e.data.value); }); }""")
    args = {"text": TEXT, "doc": "d1", "types": TYPES, "spans": GOLD, "suggestions": SUGGESTED}
    page.evaluate("a => window.postMessage({type: 'streamlit:render', args: a, disabled: false}, '*')", args)
    page.locator(".se-ch").first.wait_for(timeout=10_000)
    yield page
    page.close()


def last_value(page) -> dict:
    """The value the last action sent: waits for one the test has not read yet (a message
    arrives after the action that posts it returns; reading at once gave the previous value)."""
    seen = getattr(page, "values_read", 0)
    page.wait_for_function("n => window.values.length > n", arg=seen)
    page.values_read = page.evaluate("() => window.values.length")
    return page.evaluate("() => window.values[window.values.length - 1]")


def spans(value) -> set[tuple[int, int, str]]:
    return {(s["start"], s["end"], s["type"]) for s in value["spans"]}


def test_suggestions_are_drawn_dashed_with_their_score(editor):
    bars = editor.locator(".se-bar.se-sugg")
    labels = editor.locator(".se-bar.se-sugg .se-lbl").all_text_contents()
    assert sorted(labels) == ["bod ?", "dru 0.50", "sym 0.87"]          # the gold-equal one is not offered
    assert bars.first.evaluate("e => getComputedStyle(e, '::before').borderTopStyle") == "dashed"
    assert editor.locator(".se-bar:not(.se-sugg)").first.evaluate(
        "e => getComputedStyle(e, '::before').borderTopStyle") == "solid"
    assert editor.locator(".se-sugg-list li").count() == 3
    assert editor.locator(".se-list li").count() == 1                     # the spans list holds gold only


def test_accept_one_reject_one_then_accept_all(editor):
    sym = editor.locator('.se-sugg-list li[data-s="8:10:sym"] .se-ok')
    sym.click()
    v = last_value(editor)
    assert v["action"] == "accept" and spans(v) == {(4, 7, "dis"), (8, 10, "sym")}
    assert v["accepted"] == [{"start": 8, "end": 10, "type": "sym"}] and v["rejected"] == []
    assert editor.locator(".se-sugg-list li").count() == 2

    editor.locator('.se-bar.se-sugg[data-s="15:19:dru"]').first.click()   # focus a suggestion, X rejects it
    assert "建议 / suggestion" in editor.locator("#status").text_content()
    editor.keyboard.press("x")
    v = last_value(editor)
    assert v["action"] == "reject" and v["rejected"] == [{"start": 15, "end": 19, "type": "dru"}]
    assert spans(v) == {(4, 7, "dis"), (8, 10, "sym")}
    assert editor.locator('.se-bar[data-s="15:19:dru"]').count() == 0

    editor.keyboard.press("Shift+A")
    v = last_value(editor)
    assert v["action"] == "accept" and spans(v) == {(4, 7, "dis"), (8, 10, "sym"), (0, 2, "bod")}
    assert [s["type"] for s in v["accepted"]] == ["sym", "bod"]
    assert editor.locator(".se-bar.se-sugg").count() == 0 and editor.locator(".se-list li").count() == 3
    # an accepted suggestion is an ordinary edit: Ctrl+Z takes it back and the suggestion returns
    editor.keyboard.press("Control+z")
    v = last_value(editor)
    assert spans(v) == {(4, 7, "dis"), (8, 10, "sym")}
    assert editor.locator('.se-sugg-list li[data-s="0:2:bod"]').count() == 1


def test_enter_accepts_the_focused_suggestion_and_moves_to_the_next(editor):
    editor.locator('.se-sugg-list li[data-s="0:2:bod"]').click()
    editor.keyboard.press("Enter")
    assert spans(last_value(editor)) == {(4, 7, "dis"), (0, 2, "bod")}
    editor.keyboard.press("a")                                   # the focus moved on: sym
    assert spans(last_value(editor)) == {(4, 7, "dis"), (0, 2, "bod"), (8, 10, "sym")}
