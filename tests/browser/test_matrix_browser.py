"""Real headless Chromium: the CMeIE confusion matrix (many predicates) drawn as an HTML grid at
its own size in a box that scrolls sideways, every label whole and apart from its neighbours,
every cell and its number readable, and the clicked cell ringed at once, without the grid being
drawn again."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

# The grid lives in the component's shadow root.
ROOT = """(() => [...document.querySelectorAll('*')].map(e => e.shadowRoot)
                   .find(r => r && r.querySelector('.cbr-cm')))()"""

# Measured in the page: the labels' boxes, the cells' boxes and the numbers' font sizes.
MEASURE = """() => {
  const root = ROOT_JS;
  const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const overlaps = (boxes) => { let n = 0;
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a[0] < b[2] - 0.5 && b[0] < a[2] - 0.5 && a[1] < b[3] - 0.5 && b[1] < a[3] - 0.5) n++; }
    return n; };
  const cols = [...root.querySelectorAll('.cbr-cm-col')], rows = [...root.querySelectorAll('.cbr-cm-row')];
  const cells = [...root.querySelectorAll('.cbr-cm-c')];
  const grid = root.querySelector('.cbr-cm').getBoundingClientRect();
  const wrap = root.querySelector('.cbr-cm-wrap');
  const clipped = (e) => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1;
  return {
    x_ticks: cols.length, y_ticks: rows.length,
    x_overlaps: overlaps(cols.map(rect)), y_overlaps: overlaps(rows.map(rect)),
    cut: [...cols, ...rows].filter(e => e.textContent.includes('…') || clipped(e)).length,
    cell: Math.min(...cells.map(e => Math.min(e.getBoundingClientRect().width, e.getBoundingClientRect().height))),
    font: Math.min(...cells.map(e => parseFloat(getComputedStyle(e).fontSize))),
    numbers_fit: cells.filter(clipped).length === 0,
    grid_width: grid.width, wrap_width: wrap.clientWidth, wrap_scroll: wrap.scrollWidth,
  };
}""".replace("ROOT_JS", ROOT)

RING = """() => {
  const root = ROOT_JS;
  const shown = [...root.querySelectorAll('.cbr-cm-picked')];
  if (shown.length === 0) return null;
  const r = shown[0].getBoundingClientRect();
  return {visible: shown.length, x: r.left + r.width / 2, y: r.top + r.height / 2,
          ring: getComputedStyle(shown[0]).boxShadow, drawn: root.querySelector('.cbr-cm').dataset.drawn || null};
}""".replace("ROOT_JS", ROOT)


def test_cmeie_matrix_is_readable_and_rings_the_clicked_cell(app_url, page, output_dir):
    page.set_viewport_size({"width": 1400, "height": 2200})
    page.goto(f"{app_url}/errors?run=2&tab=matrix", timeout=60_000)
    cells = page.locator(".cbr-cm-c")
    cells.first.wait_for(timeout=60_000)
    m = page.evaluate(MEASURE)
    assert m["x_ticks"] == m["y_ticks"] >= 30                # every predicate of the sample run, ∅, Σ
    assert m["x_overlaps"] == 0 and m["y_overlaps"] == 0, m
    assert m["cut"] == 0, m                                    # whole, nothing clipped
    assert m["cell"] >= 18 and m["font"] >= 10 and m["numbers_fit"], m
    # drawn at its own width: wider than the column, the box scrolls instead of squeezing it
    assert m["grid_width"] > m["wrap_width"] and m["wrap_scroll"] >= m["grid_width"] - 1, m
    page.screenshot(path=str(output_dir / "errors_matrix_cmeie.png"), full_page=True)

    cell = cells.nth(2)
    cell.scroll_into_view_if_needed()
    box = cell.bounding_box()
    # a mark on the drawn grid: a grid drawn again would lose it
    page.evaluate(f"() => {{ {ROOT}.querySelector('.cbr-cm').dataset.drawn = 'before'; }}")
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.get_by_text("Filter: gold_label =").wait_for(timeout=60_000)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    ring = page.wait_for_function(RING, timeout=60_000).json_value()
    assert ring["visible"] == 1 and "17, 17, 17" in ring["ring"], ring      # one black ring
    assert abs(ring["x"] - (box["x"] + box["width"] / 2)) < 3, (ring, box)
    assert abs(ring["y"] - (box["y"] + box["height"] / 2)) < 3, (ring, box)
    assert ring["drawn"] == "before"
    page.screenshot(path=str(output_dir / "errors_matrix_cmeie_clicked.png"), full_page=True)
