"""Real headless Chromium: mark a span with the mouse in the span editor (a custom component in
an iframe), pick its type, save, reload the page and find the span again; an unsaved edit
survives a reload (a draft kept per browser id) and then saves."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from cblue_core.io.validate import load
from tests.conftest import SAMPLE_DATA

pytestmark = pytest.mark.browser

EDITOR = 'iframe[title*="span_editor"]'


def _example(index: int):
    return load(SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.json").examples[index]


def _open(page, app_url: str, index: int):
    page.goto(f"{app_url}/annotate?task=CMeEE&split=dev&example={index}", timeout=60_000)
    frame = page.frame_locator(EDITOR)
    frame.locator(".se-ch").first.wait_for(timeout=60_000)
    return frame


def _drag(page, frame, start: int, last: int) -> None:
    """Mouse down on character ``start``, move over the characters up to ``last``, mouse up
    (on the glyphs, above the span bars drawn under them)."""
    boxes = [frame.locator(f'.se-ch[data-i="{i}"]').bounding_box() for i in range(start, last + 1)]
    x0, y0 = boxes[0]["x"] + boxes[0]["width"] / 2, boxes[0]["y"] + 8
    page.mouse.move(x0, y0)
    page.mouse.down()
    for b in boxes[1:]:
        page.mouse.move(b["x"] + b["width"] / 2, b["y"] + 8, steps=3)
    page.mouse.up()


def _spans(frame) -> list[str]:
    return frame.locator(".se-list li").all_text_contents()


def test_mark_a_span_with_the_mouse_save_and_reload(app_url, page, output_dir):
    ex = _example(7)                       # 先天性心脏病患儿常需在心脏外科行手术治疗…
    start = ex.text.index("心脏外科")
    end = start + 2                        # 心脏, nested inside the department 心脏外科
    assert not any((s.start, s.end) == (start, end) for s in ex.spans)
    frame = _open(page, app_url, 7)
    assert "".join(frame.locator(".se-g").all_text_contents()) == ex.text
    assert len(_spans(frame)) == len(ex.spans)

    _drag(page, frame, start, end - 1)
    status = frame.locator("#status").text_content()
    # CMeEE declares inclusive ends: the editor shows offsets as the split writes them
    assert f"“{ex.text[start:end]}”" in status and f"[{start}, {end - 1}]" in status
    assert frame.locator(".se-ch.se-pending").count() == end - start
    frame.locator('.se-type[data-code="bod"]').click()         # the type picker
    page.get_by_text("Unsaved changes").wait_for(timeout=30_000)

    page.get_by_label("Reason for the edit (kept with it)").fill("heart: body part inside 心脏外科")
    page.get_by_label("Reason for the edit (kept with it)").press("Enter")
    page.wait_for_timeout(800)
    frame.locator("#status").click()                            # focus back in the editor
    page.keyboard.press("Control+s")
    page.get_by_text("Saved example 7").wait_for(timeout=30_000)
    # the editor's own status line says how the save ended, not "save requested"
    expect(frame.locator("#status")).to_contain_text("已保存 / saved: event #", timeout=30_000)

    page.reload()
    frame = page.frame_locator(EDITOR)
    frame.locator(".se-ch").first.wait_for(timeout=60_000)
    spans = _spans(frame)
    assert any(s.startswith(f"bod{ex.text[start:end]}[{start}, {end - 1}]") for s in spans), spans
    assert len(spans) == len(ex.spans) + 1
    # drawn as a stacked layer under the text: its bar and the department's sit on two levels
    bars = frame.locator(f'.se-ch[data-i="{start}"] .se-bar')
    titles = bars.evaluate_all("els => els.map(e => e.title)")
    assert any(t.endswith(f": {ex.text[start:end]}") and "(bod)" in t for t in titles), titles
    assert len(set(bars.evaluate_all("els => els.map(e => e.style.top)"))) == 2
    history = page.locator('[data-testid="stCaptionContainer"]', has_text="heart: body part inside 心脏外科")
    history.first.wait_for(timeout=30_000)                     # the event, with its reason
    assert page.get_by_label("Record number (0-based)").input_value() == "7"
    page.set_viewport_size({"width": 1400, "height": 2000})     # the page scrolls inside: show it all
    page.wait_for_timeout(500)
    page.screenshot(path=str(output_dir / "annotate_span_saved.png"), full_page=True)


def test_keyboard_retype_delete_undo_and_next(app_url, page, output_dir):
    ex = _example(8)
    frame = _open(page, app_url, 8)
    first = min(ex.spans, key=lambda s: (s.start, -s.end))
    frame.locator(f'.se-ch[data-i="{first.start}"] .se-bar').first.click()
    assert "已选中 / selected" in frame.locator("#status").text_content()
    page.keyboard.press("2")                                    # retype: sym
    page.wait_for_timeout(300)
    assert _spans(frame)[0].startswith(f"sym{first.text}")
    page.keyboard.press("Delete")
    page.wait_for_timeout(300)
    assert len(_spans(frame)) == len(ex.spans) - 1
    page.keyboard.press("Control+z")
    page.keyboard.press("Control+z")
    # Streamlit now and then mounts the frame again after a burst of values (seen before the
    # drafts too): wait for the list, which a new frame draws from the page's state, the same.
    expect(frame.locator(".se-list li").first).to_have_text(
        re.compile("^" + re.escape(f"{first.type}{first.text}")), timeout=30_000)
    page.wait_for_timeout(500)
    page.screenshot(path=str(output_dir / "annotate_keyboard.png"), full_page=True)
    page.keyboard.press("Alt+ArrowRight")
    page.wait_for_function("() => new URL(location.href).searchParams.get('example') === '9'",
                           timeout=30_000)
    frame.locator(".se-ch").first.wait_for(timeout=30_000)
    page.wait_for_timeout(500)
    assert "".join(frame.locator(".se-g").all_text_contents()) == _example(9).text


def test_an_unsaved_span_edit_survives_a_reload_then_saves(app_url, page, output_dir):
    ex = _example(11)                      # 幽门螺杆菌感染与慢性胃炎及消化性溃疡的发生密切相关…
    start = ex.text.index("发生")
    end = start + 2                        # no span covers 发生
    assert not any(s.start < end and start < s.end for s in ex.spans)
    frame = _open(page, app_url, 11)
    # the editor keeps one random id for this browser in its localStorage (same-origin frame)
    browser_id = frame.locator("body").evaluate(
        "() => localStorage.getItem('cblue-studio.span-editor.browser')")
    assert browser_id and len(browser_id) == 32 and set(browser_id) <= set("0123456789abcdef")

    _drag(page, frame, start, end - 1)
    frame.locator('.se-type[data-code="bod"]').click()
    page.get_by_text("Unsaved changes").wait_for(timeout=30_000)
    page.wait_for_timeout(500)

    page.reload()                          # a new Streamlit session: the edit comes back
    frame = page.frame_locator(EDITOR)
    frame.locator(".se-ch").first.wait_for(timeout=60_000)
    page.get_by_text("Restored your unsaved changes").wait_for(timeout=30_000)
    page.get_by_text("Unsaved changes:").wait_for(timeout=30_000)
    wanted = f"bod{ex.text[start:end]}[{start}, {end - 1}]"
    frame.locator(".se-list li", has_text=f"[{start}, {end - 1}]").first.wait_for(timeout=30_000)
    spans = _spans(frame)
    assert any(s.startswith(wanted) for s in spans), spans
    assert len(spans) == len(ex.spans) + 1
    assert frame.locator("body").evaluate(
        "() => localStorage.getItem('cblue-studio.span-editor.browser')") == browser_id
    page.screenshot(path=str(output_dir / "annotate_draft_restored.png"), full_page=True)

    page.get_by_label("Reason for the edit (kept with it)").fill("stomach, kept across a reload")
    page.get_by_label("Reason for the edit (kept with it)").press("Enter")
    page.wait_for_timeout(800)
    assert page.get_by_role("button", name="Save", exact=True).count() == 0   # one Save: the editor's
    frame.locator("#b-save").click()
    page.get_by_text("Saved example 11").wait_for(timeout=30_000)

    page.reload()                          # saved: the draft is gone, the span is gold now
    frame = page.frame_locator(EDITOR)
    frame.locator(".se-ch").first.wait_for(timeout=60_000)
    page.get_by_text("History of this example").wait_for(timeout=30_000)
    page.wait_for_timeout(1500)            # time for the editor's hello and the rerun after it
    assert page.get_by_text("Restored your unsaved changes").count() == 0
    assert page.get_by_text("Unsaved changes:").count() == 0
    assert any(s.startswith(wanted) for s in _spans(frame))
    page.locator('[data-testid="stCaptionContainer"]', has_text="stomach, kept across a reload").first.wait_for(
        timeout=30_000)
