"""The shared chart builders (app_pages.charts), checked on the figure spec they produce: every
label on the axes, sizes that grow with the labels, data escaped (the confusion matrix, HTML:
test_confusion_chart.py; the bucket panels: test_bucket_chart.py)."""
from __future__ import annotations

import json

import plotly.io as pio
import pytest

from app_pages.charts import bar_figure, grid, histogram_figure
from app_pages.common import plot_text
from cblue_core.tasks import get_task

HOSTILE = "<a href=http://x>y</a>"
CMEIE = get_task("CMeIE")
CMEEE = get_task("CMeEE")


# ---------------------------------------------------------------- hostile labels

def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(node, (list, tuple)):
        for v in node:
            yield from strings(v)


def assert_escaped(fig):
    spec = json.loads(pio.to_json(fig))
    every = list(strings(spec))
    assert not [s for s in every if "<a" in s or "</a>" in s], "raw markup reached the figure"
    assert any("&lt;a href=http://x&gt;y&lt;/a&gt;" in s for s in every)


def test_a_hostile_label_is_only_ever_escaped():
    assert_escaped(bar_figure({HOSTILE: 3, "dis": 4}, title=HOSTILE, x_title=HOSTILE, y_title="n"))
    assert_escaped(histogram_figure([1, 2], title=HOSTILE, x_title="x"))


# ---------------------------------------------------------------- bars

def test_bar_figure_shows_all_nine_cmeee_types_horizontally():
    values = {CMEEE.display_label(c): 100 * (i + 1) for i, c in enumerate(CMEEE.label_codes)}
    fig = bar_figure(values, title="Entity types", x_title="entity type", y_title="entities")
    spec = fig.to_dict()
    bar = spec["data"][0]
    assert bar["orientation"] == "h"
    ax = spec["layout"]["yaxis"]
    shown = [plot_text(k) for k in values]
    assert ax["tickmode"] == "array" and ax["tickvals"] == shown and len(ax["ticktext"]) == 9
    assert ax["categoryarray"] == shown and ax["autorange"] == "reversed"     # first at the top
    assert ax["title"]["text"] == "entity type"
    assert spec["layout"]["xaxis"]["title"]["text"] == "entities"
    assert spec["layout"]["height"] >= 9 * 24
    taller = bar_figure({f"label {i}": i for i in range(40)}, title="t", x_title="x", y_title="y")
    assert taller.layout.height > fig.layout.height
    assert len(taller.layout.yaxis.tickvals) == 40
    ordered = bar_figure(values, title="t", x_title="x", y_title="y", sort=True)
    assert ordered.data[0].y[0] == plot_text(CMEEE.display_label("dep"))     # the largest first
    pio.to_json(fig)


def test_bar_figure_is_vertical_for_a_few_short_labels():
    fig = bar_figure({0: 500, 1: 120, 2: 30}, title="Nesting depth per example",
                     x_title="nesting depth (levels)", y_title="examples")
    spec = fig.to_dict()
    assert spec["data"][0]["orientation"] == "v"
    assert spec["layout"]["xaxis"]["tickvals"] == ["0", "1", "2"]
    assert spec["layout"]["xaxis"]["title"]["text"] == "nesting depth (levels)"
    assert spec["layout"]["yaxis"]["title"]["text"] == "examples"
    codes = {c: 1 for c in CMEEE.label_codes}                      # 9 bars: horizontal
    assert bar_figure(codes, title="t", x_title="x", y_title="y").data[0].orientation == "h"
    forced = bar_figure(codes, title="t", x_title="x", y_title="y", horizontal=False)
    assert forced.data[0].orientation == "v" and len(forced.layout.xaxis.tickvals) == 9
    pio.to_json(fig)


# ---------------------------------------------------------------- histogram

def test_histogram_has_axis_titles():
    fig = histogram_figure([1, 2, 3, 50], title="Text length", x_title="text length (characters)")
    assert fig.layout.xaxis.title.text == "text length (characters)"
    assert fig.layout.yaxis.title.text == "examples"
    pio.to_json(fig)


# ---------------------------------------------------------------- layout

def test_grid_rows_are_full_and_balanced():
    assert grid(0) == []
    assert grid(1) == [[0]]
    assert grid(4) == [[0, 1], [2, 3]]
    assert grid(5) == [[0, 1], [2, 3], [4]]
    assert grid(7, per_row=3) == [[0, 1, 2], [3, 4], [5, 6]]
    for n in range(1, 30):
        for per_row in (1, 2, 3, 4):
            rows = grid(n, per_row)
            assert [i for r in rows for i in r] == list(range(n))
            sizes = [len(r) for r in rows]
            assert max(sizes) <= per_row and max(sizes) - min(sizes) <= 1
            assert len(rows) == -(-n // per_row)
    with pytest.raises(ValueError):
        grid(3, per_row=0)


