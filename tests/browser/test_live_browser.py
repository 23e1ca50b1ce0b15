"""Real headless Chromium: the clinician demo on a typed sentence and on curated CMeEE and
CMeIE cases (right and wrong marked against the gold), with screenshots to look at."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def open_demo(page, app_url, task):
    page.set_viewport_size({"width": 1400, "height": 1800})
    page.goto(f"{app_url}/live?task={task}&demo=1", timeout=60_000)
    page.get_by_text("Research prototype, not for clinical use").wait_for(timeout=60_000)


def predict(page):
    page.get_by_role("button", name="分析 / Predict").click(timeout=30_000)
    page.locator(".cbr").last.wait_for(timeout=60_000)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)


def test_demo_mode_prediction(app_url, page, output_dir):
    open_demo(page, app_url, "KUAKE-QIC")
    box = page.get_by_label("文本 / Text")
    box.fill("糖尿病人能喝牛奶吗？")
    box.press("Control+Enter")  # commit the text area
    predict(page)
    body = page.inner_text("body")
    assert "糖尿病人能喝牛奶吗" in page.content() and "Traceback" not in body
    assert "耗时" not in body and "Latency" not in body           # no developer figures in the demo
    assert page.locator('[data-testid="stSidebar"] input').count() == 0
    page.screenshot(path=str(output_dir / "live_demo.png"), full_page=True)


@pytest.mark.parametrize("task", ["CMeEE", "CMeIE"])
def test_demo_curated_case_with_marks(app_url, page, output_dir, task):
    open_demo(page, app_url, task)
    page.get_by_text("精选病例 / Curated case").click()
    page.get_by_text("chosen by rule").wait_for(timeout=60_000)
    predict(page)
    body = page.inner_text("body")
    assert "matches the gold" in body or "differs from the gold" in body
    assert "Traceback" not in body and "\"text\":" not in body          # no raw JSON shown
    page.screenshot(path=str(output_dir / f"live_demo_{task.lower()}.png"), full_page=True)
