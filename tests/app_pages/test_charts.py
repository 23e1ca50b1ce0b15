"""The shared chart builders (app_pages.charts), checked on the figure spec they produce: every
label on the axes, sizes that grow with the labels, readable numbers on every cell (WCAG contrast
recomputed here from the figure's own colours), clicks that map back, data escaped."""
from __future__ import annotations

import json
import random

import pandas as pd
import plotly.io as pio
import pytest
from plotly.colors import sample_colorscale, unlabel_rgb

from app_pages.charts import (
    ALL,
    CELL_FLOOR,
    MAX_FIGURE_WIDTH,
    CellPick,
    bar_figure,
    bucket_figure,
    confusion_figure,
    contrast_ratio,
    grid,
    group_buckets,
    histogram_figure,
    text_color_on,
)
from app_pages.common import plot_text
from cblue_core.analysis.buckets import CONS_EDGES, LENGTH_EDGES, BucketScore
from cblue_core.tasks import get_task

HOSTILE = "<a href=http://x>y</a>"
CMEIE = get_task("CMeIE")
CMEEE = get_task("CMeEE")


def counts_for(labels, seed=0, off=0.12, diag=(40, 3000)) -> pd.DataFrame:
    rnd = random.Random(seed)
    rows = []
    for g in labels:
        for p in labels:
            if g == p:
                rows.append((g, p, rnd.randint(*diag)))
            elif rnd.random() < off:
                rows.append((g, p, rnd.randint(1, 60)))
    return pd.DataFrame(rows, columns=["gold_label", "pred_label", "n"])


def trace(fig, name):
    found = [t for t in fig.to_dict()["data"] if t.get("name") == name]
    return found[0] if found else None


# ---------------------------------------------------------------- WCAG, recomputed independently

def luminance(rgb) -> float:
    def lin(c):
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def rgb_of(color: str):
    color = color.strip()
    if color.startswith("#"):
        return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))
    return unlabel_rgb(color)


def backgrounds(fig) -> dict[tuple[int, int], tuple]:
    """Every marker's RGB by (x, y), from the figure's own marker colours: a numeric colour through
    the trace's colorscale (cmin..cmax, sampled by Plotly's own sample_colorscale), else the colour."""
    out = {}
    for name in ("cells", "totals"):
        t = trace(fig, name)
        if t is None:
            continue
        m = t["marker"]
        colors = m["color"]
        if isinstance(colors, str):
            colors = [colors] * len(t["x"])
        if not isinstance(colors[0] if colors else "", str):
            span = m["cmax"] - m["cmin"]
            colors = sample_colorscale(m["colorscale"], [min(max((c - m["cmin"]) / span, 0), 1)
                                                         for c in colors])
        for x, y, c in zip(t["x"], t["y"], colors):
            assert (x, y) not in out, "two cells on one position"
            out[(x, y)] = rgb_of(c)
    return out


def texts(fig) -> dict[tuple[int, int], tuple[str, str]]:
    t = trace(fig, "numbers")
    return {(x, y): (s, c) for x, y, s, c in zip(t["x"], t["y"], t["text"], t["textfont"]["color"])}


def assert_readable(fig):
    bg, tx = backgrounds(fig), texts(fig)
    assert bg and set(bg) == set(tx), "a number on every non-empty cell, and none elsewhere"
    worst = min(contrast(bg[pos], rgb_of(color)) for pos, (_, color) in tx.items())
    assert worst >= 4.5, worst
    assert all(s.strip() for s, _ in tx.values())
    return bg, tx


# ---------------------------------------------------------------- confusion matrix

def test_all_44_cmeie_predicates_are_on_both_axes_and_the_figure_grows():
    codes = list(CMEIE.label_codes)
    assert len(codes) == 44
    big = confusion_figure(counts_for(codes), labels=codes, label_text=CMEIE.display_label)
    layout = big.figure.to_dict()["layout"]
    shown = [plot_text(CMEIE.display_label(c)) for c in codes]
    for name in ("xaxis", "yaxis"):
        ax = layout[name]
        assert ax["tickmode"] == "array"
        assert ax["tickvals"] == list(range(45))             # 44 labels + Σ: nothing skipped
        assert len(ax["ticktext"]) == 45 and ax["ticktext"][-1] == ALL
        assert ax["ticktext"][:44] == shown
        assert ax["automargin"] is False and ax.get("nticks") is None
        assert ax["ticklabeloverflow"] == "allow"               # no label hidden at an edge
        assert ax["title"]["text"]
    assert layout["xaxis"]["tickangle"] in (0, -45)          # never the vertical default
    assert layout["yaxis"]["tickangle"] == 0
    assert big.labels == tuple(CMEIE.display_label(c) for c in codes)
    assert big.members == tuple((c,) for c in codes)

    small = confusion_figure(counts_for(list(CMEEE.label_codes)), labels=list(CMEEE.label_codes))
    assert big.width > small.width and big.height > small.height
    assert layout["width"] == big.width and layout["height"] == big.height
    # Streamlit squeezes a chart wider than its column, which would overlap the fixed-size
    # markers: the matrix fits the column by default, with smaller cells; unbounded, it grows
    assert big.width <= MAX_FIGURE_WIDTH and big.cell_px >= CELL_FLOOR
    cells = next(t for t in big.figure.data if t.name == "cells")
    assert cells.marker.size < big.cell_px                     # squares never overlap
    free = confusion_figure(counts_for(codes), labels=codes, label_text=CMEIE.display_label, max_width=None)
    assert free.width >= 45 * 28 and free.height >= 45 * 28    # ~28-32 px per label
    # margins fit the longest label (a Chinese character counts ~14 px)
    longest = max(CMEIE.display_label(c) for c in codes)
    assert layout["margin"]["l"] > 14 * sum(1 for ch in longest if ord(ch) > 0x2e80)


def test_cmeee_x_labels_are_horizontal_when_they_fit():
    codes = list(CMEEE.label_codes)                         # dis, sym, ... fit in a cell
    fig = confusion_figure(counts_for(codes), labels=codes).figure
    assert fig.layout.xaxis.tickangle == 0
    named = confusion_figure(counts_for(codes), labels=codes, label_text=CMEEE.display_label).figure
    assert named.layout.xaxis.tickangle == -45


@pytest.mark.parametrize("normalize", [None, "row"])
@pytest.mark.parametrize("task", [CMEIE, CMEEE])
def test_every_number_contrasts_4_5_to_1_with_its_cell(task, normalize):
    codes = list(task.label_codes)
    for seed in range(3):
        cf = confusion_figure(counts_for(codes, seed=seed, off=0.4), labels=codes, normalize=normalize,
                              label_text=task.display_label)
        _, tx = assert_readable(cf.figure)
        colours = {c for _, c in tx.values()}
        assert colours == {"#000000", "#ffffff"}            # dark cells get white, light ones black


def test_contrast_holds_on_every_colour_of_the_scale():
    # A matrix whose cell values sweep the whole colour scale: 1..400 on the diagonal and around.
    labels = [f"L{i}" for i in range(20)]
    rows = [(g, p, 1 + 20 * i + j) for i, g in enumerate(labels) for j, p in enumerate(labels)]
    cf = confusion_figure(pd.DataFrame(rows, columns=["gold_label", "pred_label", "n"]))
    assert len(assert_readable(cf.figure)[0]) == 400 + 40
    for grey in range(256):
        bg = (grey, grey, grey)
        assert contrast_ratio(bg, rgb_of(text_color_on(bg))) >= 4.5


def test_empty_cells_are_blank_and_the_sums_are_grey_cells():
    df = pd.DataFrame([("a", "a", 5), ("a", "b", 2), ("b", "b", 7)], columns=["gold_label", "pred_label", "n"])
    cf = confusion_figure(df)
    bg, tx = assert_readable(cf.figure)
    cells = trace(cf.figure, "cells")
    assert sorted(zip(cells["x"], cells["y"])) == [(0, 0), (1, 0), (1, 1)]   # (x=pred, y=gold)
    assert (0, 1) not in bg and (0, 1) not in tx                           # gold b, predicted a: empty
    assert tx[(0, 0)][0] == "5" and tx[(1, 0)][0] == "2" and tx[(1, 1)][0] == "7"
    totals = trace(cf.figure, "totals")
    assert totals["marker"]["color"] == "#e9ecef"
    assert sorted(zip(totals["x"], totals["y"])) == [(0, 2), (1, 2), (2, 0), (2, 1)]
    assert tx[(2, 0)][0] == "7" and tx[(2, 1)][0] == "7" and tx[(1, 2)][0] == "9"
    assert (2, 2) not in tx                                                # no Σ×Σ corner
    assert trace(confusion_figure(df, sums=False).figure, "totals") is None


def test_row_normalised_cells_show_the_share_of_the_gold_row():
    df = pd.DataFrame([("a", "a", 3), ("a", "b", 1), ("b", "b", 1000), ("b", "a", 1)],
                      columns=["gold_label", "pred_label", "n"])
    cf = confusion_figure(df, normalize="row")
    tx = texts(cf.figure)
    assert tx[(0, 0)][0] == "75%" and tx[(1, 0)][0] == "25%"
    assert tx[(0, 1)][0] == "&lt;1%"                     # escaped: Plotly renders tags in text
    assert tx[(2, 0)][0] == "4"                           # the Σ column keeps counts
    cells = trace(cf.figure, "cells")
    assert cells["marker"]["cmax"] == 1
    with pytest.raises(ValueError):
        confusion_figure(df, normalize="column")


def test_a_click_maps_back_to_the_labels_and_the_sums():
    codes = list(CMEEE.label_codes)
    cf = confusion_figure(counts_for(codes, off=1.0), labels=codes, label_text=CMEEE.display_label)
    fig = cf.figure.to_dict()
    cells, totals = trace(cf.figure, "cells"), trace(cf.figure, "totals")
    for t in (cells, totals):
        for x, y, data in zip(t["x"], t["y"], t["customdata"]):
            assert data[:2] == [y, x]
    dis_dru = next(d for d in cells["customdata"] if d[:2] == [0, 2])    # gold dis, predicted dru
    assert cf.pick({"x": 2, "y": 0, "customdata": dis_dru}) == CellPick(("dis",), ("dru",))
    assert cf.pick({"customdata": [0, 9]}) == CellPick(("dis",), None)       # Σ column: all predicted
    assert cf.pick({"customdata": [9, 3]}) == CellPick(None, ("equ",))       # Σ row: all gold
    assert cf.pick({"x": 1, "y": 1}) == CellPick(("sym",), ("sym",))         # no customdata: x/y
    assert cf.pick({"customdata": [42, 0]}) is None
    assert cf.pick({}) is None
    assert CellPick(("dis",), None).filter() == {"gold_label": "dis"}
    assert CellPick(None, ("a", "b")).filter() == {"pred_label": ("a", "b")}
    assert fig["layout"]["xaxis"]["fixedrange"] and fig["layout"]["yaxis"]["fixedrange"]


@pytest.mark.parametrize("selected, position", [(("sym", "dis"), (0, 1)), (("sym", None), (9, 1)),
                                                (("sym", ALL), (9, 1)), ((None, "ite"), (6, 9))])
def test_the_selected_cell_is_outlined_and_nothing_fades(selected, position):
    codes = list(CMEEE.label_codes)
    cf = confusion_figure(counts_for(codes, off=1.0), labels=codes, selected=selected)
    assert cf.selected == position[::-1]
    outline = trace(cf.figure, "selected")
    assert list(zip(outline["x"], outline["y"])) == [position, position]
    assert outline["marker"]["symbol"] == "square-open"
    assert max(outline["marker"]["line"]["width"]) >= 3 and outline["marker"]["color"][0] == "#111111"
    assert outline["hoverinfo"] == "skip"                                    # takes no clicks
    for name in ("cells", "totals", "selected"):
        t = trace(cf.figure, name)
        assert t["marker"]["opacity"] == 1
        # Plotly fades unselected points to 20% after a click unless these say otherwise
        assert t["selected"]["marker"]["opacity"] == 1
        assert t["unselected"]["marker"]["opacity"] == 1
    numbers = trace(cf.figure, "numbers")
    # With `selected.textfont.color` set and no `unselected.textfont.color`, plotly.js keeps each
    # unselected number in its own colour (makeSelectedTextStyleFns) instead of dimming it.
    assert numbers["selected"]["textfont"]["color"]
    assert "unselected" not in numbers
    assert numbers["hoverinfo"] == "skip"
    assert_readable(cf.figure)


def test_no_outline_without_a_selection_or_for_an_unknown_label():
    codes = list(CMEEE.label_codes)
    assert trace(confusion_figure(counts_for(codes), labels=codes).figure, "selected") is None
    cf = confusion_figure(counts_for(codes), labels=codes, selected=("nope", "dis"))
    assert cf.selected is None and trace(cf.figure, "selected") is None


def test_top_k_merges_the_rest_into_other():
    codes = list(CMEIE.label_codes)
    df = counts_for(codes, seed=1, off=0.3)
    cf = confusion_figure(df, labels=codes, top_k=10, label_text=CMEIE.display_label)
    freq = (df.groupby("gold_label")["n"].sum().add(df.groupby("pred_label")["n"].sum(), fill_value=0))
    top = set(freq.sort_values(ascending=False).index[:10])
    assert len(cf.members) == 11 and {m[0] for m in cf.members[:10]} == top
    assert set(cf.merged) == set(codes) - top and cf.members[10] == cf.merged and len(cf.merged) == 34
    assert cf.labels[10].startswith("other") and cf.ticktext[10].startswith("other")
    assert cf.figure.layout.xaxis.tickvals == tuple(range(12))             # 10 + other + Σ
    assert cf.pick({"customdata": [10, 11]}) == CellPick(cf.merged, None)
    assert cf.pick({"customdata": [10, 10]}).gold == cf.merged
    # the counts are kept: every cell of the figure sums to the data's total
    cells = trace(cf.figure, "cells")
    assert sum(int(d[4].replace(",", "").split()[0]) for d in cells["customdata"]) == int(df["n"].sum())
    # a selection on a merged label outlines "other"
    sel = confusion_figure(df, labels=codes, top_k=10, selected=(cf.merged[0], cf.merged[1]))
    assert sel.selected == (10, 10)
    # ... and so does the filter a click on "other" gives back (labels as a tuple)
    again = cf.pick({"customdata": [10, 11]}).filter()
    assert confusion_figure(df, labels=codes, top_k=10,
                            selected=(again["gold_label"], again.get("pred_label"))).selected == (10, 11)
    assert_readable(cf.figure)
    # off by default
    assert confusion_figure(df, labels=codes).merged == ()


def test_labels_order_the_axes_and_empty_labels_still_show():
    df = pd.DataFrame([("b", "b", 2), ("z", "b", 1)], columns=["gold_label", "pred_label", "n"])
    cf = confusion_figure(df, labels=["c", "b", "a"])
    assert cf.labels == ("c", "b", "a", "z")          # given order, then the rest of the data
    assert cf.figure.layout.yaxis.ticktext == ("c", "b", "a", "z", ALL)
    missing = pd.DataFrame([("a", None, 2)], columns=["gold_label", "pred_label", "n"])
    assert confusion_figure(missing).labels == ("a", "∅")          # a missing label, as the store names it
    empty = confusion_figure(pd.DataFrame(columns=["gold_label", "pred_label", "n"]), labels=["a"])
    assert empty.labels == ("a",) and trace(empty.figure, "cells")["x"] == []
    pio.to_json(empty.figure)


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
    codes = list(CMEEE.label_codes) + [HOSTILE]
    df = counts_for(codes, off=0.5)
    cf = confusion_figure(df, labels=codes, selected=(HOSTILE, HOSTILE))
    assert_escaped(cf.figure)
    assert cf.pick({"customdata": [9, 9]}) == CellPick((HOSTILE,), (HOSTILE,))
    assert_escaped(confusion_figure(df, labels=codes, top_k=3).figure)       # merged, in the hover
    assert_escaped(bar_figure({HOSTILE: 3, "dis": 4}, title=HOSTILE, x_title=HOSTILE, y_title="n"))
    buckets = [BucketScore(HOSTILE, HOSTILE, 0, 1, 1, 1, 1, 0.5, 0.4, 0.6)]
    assert_escaped(bucket_figure(buckets))
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


# ---------------------------------------------------------------- buckets

def test_bucket_figure_has_axis_titles_error_bars_and_every_bucket():
    buckets = [BucketScore("entity length", name, i, 10 + i, 2, 3, 40, 0.5 + 0.05 * i, 0.4 + 0.05 * i,
                           0.62 + 0.05 * i) for i, (_, name) in enumerate(LENGTH_EDGES)][::-1]
    fig = bucket_figure(buckets)
    spec = fig.to_dict()
    bar = spec["data"][0]
    names = [name for _, name in LENGTH_EDGES]
    assert bar["x"] == names                                          # in bucket order
    err = bar["error_y"]
    assert err["type"] == "data" and err["symmetric"] is False and err.get("visible", True)
    assert err["array"] == pytest.approx([0.12] * 5) and err["arrayminus"] == pytest.approx([0.1] * 5)
    ax = spec["layout"]["xaxis"]
    assert ax["tickmode"] == "array" and ax["tickvals"] == names and len(ax["ticktext"]) == 5
    assert ax["ticktext"][0] == "1<br>n=13"                           # label and its gold items
    assert ax["title"]["text"] == "entity length (characters)"
    assert spec["layout"]["yaxis"]["title"]["text"] == "F1"
    acc = bucket_figure(buckets, metric="accuracy", feature="text length")
    assert acc.layout.yaxis.title.text == "accuracy"
    assert acc.layout.xaxis.title.text == "text length (characters)"
    cons = [BucketScore("label consistency", n, i, 1, 0, 0, 1, 1.0, 1.0, 1.0)
            for i, (_, n) in enumerate(CONS_EDGES)]
    assert bucket_figure(cons).layout.xaxis.title.text.startswith("label consistency (")
    pio.to_json(fig)


def test_bucket_figure_puts_every_feature_in_a_panel_of_one_figure_two_a_row():
    features = ["entity length", "sentence length", "entity density", "nesting depth", "training frequency"]
    buckets = [BucketScore(f, f"b{i}", i, 5, 1, 1, 3, 0.5, 0.4, 0.6)
               for f in features for i in range(3)]
    fig = bucket_figure(buckets)
    assert len(fig.data) == 5
    spec = fig.to_dict()["layout"]
    axes = [spec["xaxis" + ("" if i == 1 else str(i))] for i in range(1, 6)]
    assert [a["title"]["text"] for a in axes] == [
        "entity length (characters)", "sentence length (characters)", "entity density (entities per character)",
        "nesting depth (levels)", "training frequency (occurrences in the train split)"]
    assert all(spec["yaxis" + ("" if i == 1 else str(i))]["title"]["text"] == "F1" for i in range(1, 6))
    # two a row, three rows: the first two panels side by side, the fifth alone below
    x1, x2, x5 = (a["domain"] for a in (axes[0], axes[1], axes[4]))
    assert x1[1] < x2[0] and x5 == x1
    y1, y3 = spec["yaxis"]["domain"], spec["yaxis3"]["domain"]
    assert y3[1] < y1[0]
    assert spec["height"] > 3 * 300


def test_group_buckets_keeps_features_and_bucket_order():
    b = [BucketScore("f", "2", 2, 1, 0, 0, 1, 1, 1, 1), BucketScore("g", "x", 0, 1, 0, 0, 1, 1, 1, 1),
         BucketScore("f", "1", 1, 1, 0, 0, 1, 1, 1, 1)]
    groups = group_buckets(b)
    assert list(groups) == ["f", "g"] and [x.bucket for x in groups["f"]] == ["1", "2"]


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


def test_every_figure_serialises():
    codes = list(CMEIE.label_codes)
    for kwargs in ({}, {"normalize": "row"}, {"top_k": 5}, {"selected": (codes[0], None)}, {"sums": False}):
        cf = confusion_figure(counts_for(codes), labels=codes, **kwargs)
        assert json.loads(pio.to_json(cf.figure))["data"]
