"""Real headless Chromium: click a confusion-matrix cell and see its examples listed, download
them all as CSV; a row click redraws only the rows and the example, not the matrix."""
from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser


def test_click_confusion_cell_lists_examples(app_url, page, output_dir):
    page.set_viewport_size({"width": 1400, "height": 2200})
    page.goto(f"{app_url}/errors?run=1", timeout=60_000)
    page.get_by_role("tab", name="Confusion matrix").click(timeout=60_000)
    points = page.locator(".cbr-cm-c")
    points.first.wait_for(timeout=60_000)
    assert points.count() >= 4
    box = points.nth(1).bounding_box()   # any cell: each one lists the rows behind it
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.get_by_text("Filter: gold_label =").wait_for(timeout=60_000)
    caption = page.get_by_text("rows in").first.inner_text()
    rows = int(caption.split()[0])
    assert rows >= 1
    page.screenshot(path=str(output_dir / "errors_confusion_click.png"), full_page=True)
    with page.expect_download(timeout=60_000) as download:     # made on the click, every row
        page.get_by_text(f"Download all {caption.split()[0]} row").click()
    lines = Path(download.value.path()).read_text(encoding="utf-8-sig").splitlines()
    assert len(lines) == rows + 1 and lines[0].startswith("idx,turn,category,")

    # A row click shows its example and reruns only the rows' fragment: the matrix above is not
    # drawn again. The grid (in the component's shadow root) is marked, and a redraw, or a grid
    # mounted anew, has no mark.
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    page.wait_for_timeout(500)
    grid_js = ("([...document.querySelectorAll('*')].map(e => e.shadowRoot)"
               ".find(r => r && r.querySelector('.cbr-cm')) || {querySelector: () => null})"
               ".querySelector('.cbr-cm')")
    page.evaluate(f"() => {{ {grid_js}.dataset.drawn = 'before'; }}")
    grid = page.locator('.st-key-err_rows [data-testid="stDataFrame"]')
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)           # the first row's selection box
    page.get_by_text("gold above, run #1 below").wait_for(timeout=60_000)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    page.wait_for_timeout(500)
    assert page.evaluate(f"() => {grid_js}.dataset.drawn") == "before"
    # a control of the matrix (another view) draws another grid: the mark can tell
    page.get_by_text("Normalise each row").click()
    page.wait_for_function(f"() => {{ const grid = {grid_js}; return !!grid && !grid.dataset.drawn; }}",
                           timeout=60_000)
