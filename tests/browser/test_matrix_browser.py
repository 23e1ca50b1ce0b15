"""Real headless Chromium: the CMeIE confusion matrix (many predicates) drawn at its own size in
a box that scrolls sideways, every label whole and apart from its neighbours, every cell and its
number readable, and the clicked cell outlined after the click."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

# Measured in the page: tick labels' boxes, the cells' drawn squares and the numbers' font sizes.
MEASURE = """() => {
  const plot = document.querySelector('.st-key-err_cm_box .js-plotly-plot');
  const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const overlaps = (boxes) => { let n = 0;
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a[0] < b[2] - 0.5 && b[0] < a[2] - 0.5 && a[1] < b[3] - 0.5 && b[1] < a[3] - 0.5) n++; }
    return n; };
  const xt = [...plot.querySelectorAll('.xtick text')].map(rect);
  const yt = [...plot.querySelectorAll('.ytick text')].map(rect);
  const svg = plot.querySelector('.main-svg').getBoundingClientRect();
  const box = document.querySelector('.st-key-err_cm_box');
  return {
    x_ticks: xt.length, y_ticks: yt.length, x_overlaps: overlaps(xt), y_overlaps: overlaps(yt),
    cut: [...plot.querySelectorAll('.xtick text, .ytick text')].filter(e => e.textContent.includes('…')).length,
    outside: [...xt, ...yt].filter(r => r[0] < svg.left - 1 || r[2] > svg.right + 1
                                      || r[1] < svg.top - 1 || r[3] > svg.bottom + 1).length,
    cell: Math.min(...[...plot.querySelectorAll('.scatterlayer .trace:first-child .point')]
                   .map(e => e.getBBox().width)),
    font: Math.min(...[...plot.querySelectorAll('.scatterlayer .textpoint text')]
                   .map(e => parseFloat(getComputedStyle(e).fontSize))),
    svg_width: svg.width, box_width: box.getBoundingClientRect().width, box_scroll: box.scrollWidth,
  };
}"""


RING = """() => {
  const points = [...document.querySelectorAll('.st-key-err_cm_box .scatterlayer .trace:last-child .point')];
  const shown = points.filter(e => parseFloat(getComputedStyle(e).opacity) > 0.5);
  if (shown.length === 0) return null;
  const r = shown[0].getBoundingClientRect();
  return {visible: shown.length, x: r.left + r.width / 2, y: r.top + r.height / 2};
}"""


def test_cmeie_matrix_is_readable_and_outlines_the_clicked_cell(app_url, page, output_dir):
    page.set_viewport_size({"width": 1400, "height": 2200})
    page.goto(f"{app_url}/errors?run=2&tab=matrix", timeout=60_000)
    cells = page.locator(".st-key-err_cm_box .js-plotly-plot .scatterlayer .trace:first-child .point")
    cells.first.wait_for(timeout=60_000)
    m = page.evaluate(MEASURE)
    assert m["x_ticks"] == m["y_ticks"] >= 30                # every predicate of the sample run, ∅, Σ
    assert m["x_overlaps"] == 0 and m["y_overlaps"] == 0, m
    assert m["cut"] == 0 and m["outside"] == 0, m              # whole, and inside the figure
    assert m["cell"] >= 18 and m["font"] >= 10, m
    # drawn at its own width: wider than the column, the box scrolls instead of squeezing it
    assert m["svg_width"] > m["box_width"] and m["box_scroll"] >= m["svg_width"] - 1, m
    page.screenshot(path=str(output_dir / "errors_matrix_cmeie.png"), full_page=True)

    cell = cells.nth(2)
    cell.scroll_into_view_if_needed()
    box = cell.bounding_box()
    # a mark on a drawn point: a chart drawn again (a changed figure is a new element) loses it
    page.evaluate("document.querySelector('.st-key-err_cm_box .scatterlayer .point').dataset.drawn = 'before'")
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.get_by_text("Filter: gold_label =").wait_for(timeout=60_000)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    # The ring: the one point of the clickable "targets" trace (the last) that Plotly made visible.
    # The page sent the figure unchanged, so the chart was not drawn again and the ring stayed.
    ring = page.wait_for_function(RING, timeout=60_000).json_value()
    assert ring["visible"] == 1, ring
    assert abs(ring["x"] - (box["x"] + box["width"] / 2)) < 3, (ring, box)
    assert abs(ring["y"] - (box["y"] + box["height"] / 2)) < 3, (ring, box)
    assert page.evaluate("document.querySelector('.st-key-err_cm_box .scatterlayer .point').dataset.drawn") == "before"
    page.screenshot(path=str(output_dir / "errors_matrix_cmeie_clicked.png"), full_page=True)
