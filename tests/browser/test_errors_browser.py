"""Real headless Chromium: click a confusion-matrix cell and see its examples listed."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_click_confusion_cell_lists_examples(app_url, page, output_dir):
    page.set_viewport_size({"width": 1400, "height": 2200})
    page.goto(f"{app_url}/errors?run=1", timeout=60_000)
    page.get_by_role("tab", name="Confusion matrix").click(timeout=60_000)
    points = page.locator(".js-plotly-plot .scatterlayer .point")
    points.first.wait_for(timeout=60_000)
    assert points.count() >= 4
    box = points.nth(1).bounding_box()   # any cell: each one lists the rows behind it
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.get_by_text("Filter: gold_label =").wait_for(timeout=60_000)
    caption = page.get_by_text("rows in").first.inner_text()
    rows = int(caption.split()[0])
    assert rows >= 1
    page.screenshot(path=str(output_dir / "errors_confusion_click.png"), full_page=True)
