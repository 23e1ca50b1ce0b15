"""The confusion matrix chart (app_pages.confusion_chart), checked on the figure spec: every
label whole on both axes, cells and numbers readable at 44 labels (WCAG contrast recomputed here
from the figure's own colours), the ∅ row and column, clicks that map back, the outline."""
from __future__ import annotations

import random

import pandas as pd
import plotly.io as pio
import pytest
from plotly.colors import sample_colorscale, unlabel_rgb

from app_pages.charts import contrast_ratio, text_color_on, text_px
from app_pages.common import plot_text
from app_pages.confusion_chart import ALL, NONE, CellPick, confusion_figure, outline
from cblue_core.tasks import get_task

CMEIE = get_task("CMeIE")
CMEEE = get_task("CMeEE")
CTC = get_task("CHIP-CTC")


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

@pytest.mark.parametrize("task", [CMEIE, CTC], ids=lambda t: t.name)
def test_44_labels_are_whole_on_both_axes_and_every_cell_is_readable(task):
    codes = list(task.label_codes)
    assert len(codes) == 44
    # the largest real-size counts: CMeEE bod 4,133 on the diagonal, 5-digit totals
    df = counts_for(codes, diag=(40, 4133))
    df = pd.concat([df, pd.DataFrame([(codes[0], None, 12_345), (None, codes[1], 9)],
                                     columns=["gold_label", "pred_label", "n"])])
    big = confusion_figure(df, labels=codes, label_text=task.display_label)
    layout = big.figure.to_dict()["layout"]
    shown = [plot_text(task.display_label(c)) for c in codes]
    assert not [s for s in shown if "…" in s]
    for name in ("xaxis", "yaxis"):
        ax = layout[name]
        assert ax["tickmode"] == "array"
        assert ax["tickvals"] == list(range(46))             # 44 labels + ∅ + Σ: nothing skipped
        assert ax["ticktext"] == [*shown, NONE, ALL]          # whole, never cut with "…"
        assert ax["automargin"] is False and ax.get("nticks") is None
        assert ax["ticklabeloverflow"] == "allow"               # no label hidden at an edge
    # both axes named in the top-left corner, in sight whatever the scroll
    assert [a["text"] for a in layout["annotations"]] == ["gold ↓  predicted →"]
    assert layout["annotations"][0]["x"] == 0 and layout["annotations"][0]["xanchor"] == "right"
    # rows read flat; columns stand vertical, one line of text per cell: no two overlap
    assert layout["yaxis"]["tickangle"] == 0 and layout["xaxis"]["tickangle"] == -90
    assert layout["xaxis"]["side"] == "top"
    assert big.cell_px >= 18 and big.cell_px >= 1.3 * layout["xaxis"]["tickfont"]["size"]
    cells, numbers = trace(big.figure, "cells"), trace(big.figure, "numbers")
    assert cells["marker"]["size"] < big.cell_px                 # squares never overlap
    assert numbers["textfont"]["size"] >= 10
    # the widest number fits its cell, at a generous 0.6 em per digit
    widest = max(len(t) for t in numbers["text"])
    assert widest * 0.6 * numbers["textfont"]["size"] <= big.cell_px - 2
    assert {"12k", "9"} <= set(numbers["text"])
    # margins hold the longest label whole: ~14 px a Chinese character, 0.6 em else
    longest = max(text_px(task.display_label(c)) for c in codes)
    assert layout["margin"]["l"] > longest and layout["margin"]["t"] > longest
    assert layout["width"] == big.width >= 46 * big.cell_px + layout["margin"]["l"]
    assert layout["height"] == big.height >= 46 * big.cell_px + layout["margin"]["t"]
    assert big.labels == tuple(task.display_label(c) for c in codes) + (NONE,)
    assert big.members == tuple((c,) for c in codes) + ((NONE,),)
    small = confusion_figure(counts_for(list(CMEEE.label_codes)), labels=list(CMEEE.label_codes))
    assert big.width > small.width and big.height > small.height


def test_cmeee_x_labels_are_horizontal_when_they_fit():
    codes = list(CMEEE.label_codes)                         # dis, sym, ... fit in a cell
    fig = confusion_figure(counts_for(codes), labels=codes).figure
    assert fig.layout.xaxis.tickangle == 0
    named = confusion_figure(counts_for(codes), labels=codes, label_text=CMEEE.display_label).figure
    assert named.layout.xaxis.tickangle == -90


def test_missed_and_spurious_have_a_row_and_column_of_their_own():
    df = pd.DataFrame([("a", "a", 5), ("a", None, 2), (None, "b", 3), ("b", "a", 1), ("∅", "a", 4)],
                      columns=["gold_label", "pred_label", "n"])
    cf = confusion_figure(df, labels=["b", "a"])
    assert cf.labels == ("b", "a", NONE) and cf.figure.layout.yaxis.ticktext == ("b", "a", NONE, ALL)
    tx = texts(cf.figure)
    assert tx[(2, 1)][0] == "2" and tx[(1, 2)][0] == "4" and tx[(0, 2)][0] == "3"   # (x=pred, y=gold)
    assert tx[(3, 1)][0] == "7" and tx[(1, 3)][0] == "10"         # Σ: gold a 7; predicted a 10
    targets = trace(cf.figure, "targets")
    hover = {(x, y): d for x, y, d in zip(targets["x"], targets["y"], targets["customdata"])}
    assert hover[(2, 1)][3].startswith("∅") and "missed" in hover[(2, 1)][3]
    assert hover[(1, 2)][2].startswith("∅") and "spurious" in hover[(1, 2)][2]
    assert cf.pick({"customdata": [2, 1]}) == CellPick((NONE,), ("a",))
    assert cf.pick({"customdata": [1, 2]}).filter() == {"gold_label": "a", "pred_label": NONE}
    # ∅ is never merged into "other", and stays last
    many = pd.concat([df, pd.DataFrame([(f"l{i}", f"l{i}", 1) for i in range(6)],
                                       columns=["gold_label", "pred_label", "n"])])
    top = confusion_figure(many, top_k=2)
    assert top.labels[-1] == NONE and NONE not in top.merged and top.labels[-2].startswith("other")
    assert confusion_figure(df.dropna()[lambda d: d.gold_label != NONE]).labels == ("a", "b")


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
    cells, totals, targets = (trace(cf.figure, name) for name in ("cells", "totals", "targets"))
    # every coloured and Σ square has its click target, and only the targets take clicks
    assert list(zip(targets["x"], targets["y"])) == [*zip(cells["x"], cells["y"]), *zip(totals["x"], totals["y"])]
    assert cells["hoverinfo"] == totals["hoverinfo"] == "skip" and "hoverinfo" not in targets
    for x, y, data in zip(targets["x"], targets["y"], targets["customdata"]):
        assert data[:2] == [y, x]
    assert cf.targets == {(y, x): i for i, (x, y) in enumerate(zip(targets["x"], targets["y"]))}
    dis_dru = next(d for d in targets["customdata"] if d[:2] == [0, 2])    # gold dis, predicted dru
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
def test_the_selected_cell_is_ringed_and_nothing_fades(selected, position):
    codes = list(CMEEE.label_codes)
    cf = confusion_figure(counts_for(codes, off=1.0), labels=codes, selected=selected)
    assert cf.selected == position[::-1]
    targets = trace(cf.figure, "targets")
    # the figure marks the cell's target selected, as Plotly marks a clicked one
    (index,) = targets["selectedpoints"]
    assert (targets["x"][index], targets["y"][index]) == position
    # a ring, invisible until Plotly selects its point
    assert targets["marker"]["symbol"] == "square-open" and targets["marker"]["color"] == "#111111"
    assert targets["marker"]["line"]["width"] >= 3 and targets["marker"]["size"] >= cf.cell_px - 2
    assert targets["marker"]["opacity"] == 0
    assert targets["selected"]["marker"]["opacity"] == 1 and targets["unselected"]["marker"]["opacity"] == 0
    for name in ("cells", "totals"):
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
    # the ring is drawn over the numbers: the targets come last
    assert cf.figure.to_dict()["data"][-1]["name"] == "targets"
    assert_readable(cf.figure)


def test_no_ring_without_a_selection_or_for_an_unknown_label_or_an_empty_cell():
    codes = list(CMEEE.label_codes)
    assert "selectedpoints" not in trace(confusion_figure(counts_for(codes), labels=codes).figure, "targets")
    cf = confusion_figure(counts_for(codes), labels=codes, selected=("nope", "dis"))
    assert cf.selected is None and "selectedpoints" not in trace(cf.figure, "targets")
    df = pd.DataFrame([("a", "a", 5), ("b", "b", 7)], columns=["gold_label", "pred_label", "n"])
    empty = confusion_figure(df, selected=("a", "b"))          # gold a, predicted b: no items
    assert empty.selected is None and "selectedpoints" not in trace(empty.figure, "targets")


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
    targets = trace(cf.figure, "targets")
    in_cells = [d for d in targets["customdata"] if 11 not in d[:2]]      # not the Σ row or column
    assert sum(int(d[4].replace(",", "").split()[0]) for d in in_cells) == int(df["n"].sum())
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


def test_a_plain_figure_is_outlined_on_a_copy():
    """What the page caches is Plotly's dict of the matrix: marking a cell on it must leave the
    cached figure as it was (the next mark rings another cell, not two)."""
    codes = list(CMEEE.label_codes)
    built = confusion_figure(counts_for(codes, off=1.0), labels=codes)
    plain = built.plain()
    before = [dict(t) for t in plain.figure["data"]]
    picked = outline(plain, ("sym", "dis"))
    assert plain.figure["data"] == before and plain.selected is None
    on_figure = outline(built, ("sym", "dis"))
    assert picked.selected == on_figure.selected == (codes.index("sym"), codes.index("dis"))
    assert [t["name"] for t in picked.figure["data"]] == [t["name"] for t in before]
    assert picked.figure["data"][-1]["selectedpoints"] == trace(on_figure.figure, "targets")["selectedpoints"]
    assert outline(plain, None) is plain                       # nothing marked: the figure as cached
