"""Real headless Chromium: predict a typed sentence in demo mode and keep a screenshot."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_demo_mode_prediction(app_url, page, output_dir):
    page.set_viewport_size({"width": 1400, "height": 1800})
    page.goto(f"{app_url}/live?task=KUAKE-QIC&demo=1", timeout=60_000)
    page.get_by_text("Research prototype, not for clinical use").wait_for(timeout=60_000)
    box = page.get_by_label("Text / 文本")
    box.fill("糖尿病人能喝牛奶吗？")
    box.press("Control+Enter")  # commit the text area
    page.get_by_role("button", name="Predict / 分析").click(timeout=30_000)
    page.get_by_text("Latency / 耗时").wait_for(timeout=60_000)
    page.locator(".cbr").first.wait_for(timeout=30_000)
    html = page.content()
    assert "糖尿病人能喝牛奶吗" in html
    assert "Traceback" not in html
    page.screenshot(path=str(output_dir / "live_demo.png"), full_page=True)
