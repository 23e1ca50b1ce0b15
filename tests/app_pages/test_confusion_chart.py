"""The confusion matrix (app_pages.confusion_chart: the grid as data; app_pages.confusion_html:
the grid as HTML): every label whole on both axes, cells and numbers readable at 44 labels (WCAG
contrast recomputed here from the cells' own colours), the ∅ row and column, clicks that map
back, the ring on the selected cell, everything escaped."""
from __future__ import annotations

import random
import re
from html import escape

import pandas as pd
import pytest

from app_pages.charts import contrast_ratio, parse_rgb, text_color_on
from app_pages.confusion_chart import ALL, CELL_FONT, NONE, CellPick, cell_key, confusion_grid
from app_pages.confusion_html import CSS, grid_html, matrix_view
from cblue_core.tasks import get_task

CMEIE = get_task("CMeIE")
CMEEE = get_task("CMeEE")
CTC = get_task("CHIP-CTC")
HOSTILE = "<a href=http://x>y</a>"


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


def texts(grid) -> dict[tuple[int, int], str]:
    """{(x = predicted column, y = gold row): the cell's text}."""
    return {(c.p, c.g): c.text for c in grid.cells}


def assert_readable(grid):
    assert grid.cells and all(c.text.strip() for c in grid.cells)
    worst = min(contrast_ratio(parse_rgb(c.background), parse_rgb(c.color)) for c in grid.cells)
    assert worst >= 4.5, worst
    assert len({(c.g, c.p) for c in grid.cells}) == len(grid.cells), "two cells on one position"


def headers(html: str, kind: str) -> list[str]:
    return re.findall(rf'<div class="cbr-cm-{kind}" style="grid-(?:column|row): \d+" title="[^"]*">([^<]*)</div>', html)


# ---------------------------------------------------------------- readable at 44 labels

@pytest.mark.parametrize("task", [CMEIE, CTC], ids=lambda t: t.name)
def test_44_labels_are_whole_on_both_axes_and_every_cell_is_readable(task):
    codes = list(task.label_codes)
    assert len(codes) == 44
    # the largest real-size counts: CMeEE bod 4,133 on the diagonal, 5-digit totals
    df = counts_for(codes, diag=(40, 4133))
    df = pd.concat([df, pd.DataFrame([(codes[0], None, 12_345), (None, codes[1], 9)],
                                     columns=["gold_label", "pred_label", "n"])])
    big = confusion_grid(df, labels=codes, label_text=task.display_label)
    shown = [task.display_label(c) for c in codes]
    assert big.labels == (*shown, NONE) and big.members == tuple((c,) for c in codes) + ((NONE,),)
    html = grid_html(big)
    # every label whole (never cut with "…"), once as a column and once as a row, Σ last
    assert headers(html, "col") == headers(html, "row") == [escape(s) for s in [*shown, NONE, ALL]]
    assert "…" not in "".join(headers(html, "col"))
    # columns stand vertical, one line of text per cell: no two overlap; rows read flat
    assert not big.flat_columns and 'class="cbr-cm"' in html
    assert "writing-mode: vertical-rl" in CSS and "white-space: nowrap" in CSS
    # both axes named in the top-left corner, in sight whatever the scroll
    assert '<div class="cbr-cm-corner">gold ↓  predicted →</div>' in html
    # square cells of cell_px in a grid of 46 positions, numbers of at least 10 px
    assert big.size == 46 and f"repeat(46, {big.cell_px}px)" in html and big.cell_px >= 18
    assert CELL_FONT >= 10 and f"font-size: {CELL_FONT}px" in CSS
    # the widest number fits its cell, at a generous 0.6 em per digit
    assert max(len(c.text) for c in big.cells) * 0.6 * CELL_FONT <= big.cell_px - 2
    assert {"12k", "9"} <= {c.text for c in big.cells}
    assert_readable(big)
    small = confusion_grid(counts_for(list(CMEEE.label_codes)), labels=list(CMEEE.label_codes))
    assert small.size < big.size


def test_cmeee_columns_lie_flat_when_they_fit():
    codes = list(CMEEE.label_codes)                         # dis, sym, ... fit in a cell
    flat = confusion_grid(counts_for(codes), labels=codes)
    assert flat.flat_columns and 'class="cbr-cm cbr-cm-flat"' in grid_html(flat)
    named = confusion_grid(counts_for(codes), labels=codes, label_text=CMEEE.display_label)
    assert not named.flat_columns and 'class="cbr-cm"' in grid_html(named)


# ---------------------------------------------------------------- what the cells hold

def test_missed_and_spurious_have_a_row_and_column_of_their_own():
    df = pd.DataFrame([("a", "a", 5), ("a", None, 2), (None, "b", 3), ("b", "a", 1), ("∅", "a", 4)],
                      columns=["gold_label", "pred_label", "n"])
    cf = confusion_grid(df, labels=["b", "a"])
    assert cf.labels == ("b", "a", NONE) and cf.size == 4
    tx = texts(cf)
    assert tx[(2, 1)] == "2" and tx[(1, 2)] == "4" and tx[(0, 2)] == "3"   # (x=pred, y=gold)
    assert tx[(3, 1)] == "7" and tx[(1, 3)] == "10"         # Σ: gold a 7; predicted a 10
    hover = {(c.p, c.g): c.hover for c in cf.cells}
    assert "predicted ∅ (no predicted item: missed)" in hover[(2, 1)]
    assert "gold ∅ (no gold item: spurious)" in hover[(1, 2)]
    assert cf.pick("2,1") == CellPick((NONE,), ("a",))
    assert cf.pick("1,2").filter() == {"gold_label": "a", "pred_label": NONE}
    # ∅ is never merged into "other", and stays last
    many = pd.concat([df, pd.DataFrame([(f"l{i}", f"l{i}", 1) for i in range(6)],
                                       columns=["gold_label", "pred_label", "n"])])
    top = confusion_grid(many, top_k=2)
    assert top.labels[-1] == NONE and NONE not in top.merged and top.labels[-2].startswith("other")
    assert confusion_grid(df.dropna()[lambda d: d.gold_label != NONE]).labels == ("a", "b")


@pytest.mark.parametrize("normalize", [None, "row"])
@pytest.mark.parametrize("task", [CMEIE, CMEEE])
def test_every_number_contrasts_4_5_to_1_with_its_cell(task, normalize):
    codes = list(task.label_codes)
    for seed in range(3):
        cf = confusion_grid(counts_for(codes, seed=seed, off=0.4), labels=codes, normalize=normalize,
                            label_text=task.display_label)
        assert_readable(cf)
        assert {c.color for c in cf.cells} == {"#000000", "#ffffff"}     # dark cells get white


def test_contrast_holds_on_every_colour_of_the_scale():
    # A matrix whose cell values sweep the whole colour scale: 1..400 on the diagonal and around.
    labels = [f"L{i}" for i in range(20)]
    rows = [(g, p, 1 + 20 * i + j) for i, g in enumerate(labels) for j, p in enumerate(labels)]
    cf = confusion_grid(pd.DataFrame(rows, columns=["gold_label", "pred_label", "n"]))
    assert len(cf.cells) == 400 + 40
    assert_readable(cf)
    for grey in range(256):
        bg = (grey, grey, grey)
        assert contrast_ratio(bg, parse_rgb(text_color_on(bg))) >= 4.5


def test_empty_cells_are_blank_and_the_sums_are_grey_cells():
    df = pd.DataFrame([("a", "a", 5), ("a", "b", 2), ("b", "b", 7)], columns=["gold_label", "pred_label", "n"])
    cf = confusion_grid(df)
    assert_readable(cf)
    cells = [c for c in cf.cells if not c.total]
    assert sorted((c.p, c.g) for c in cells) == [(0, 0), (1, 0), (1, 1)]   # (x=pred, y=gold)
    tx = texts(cf)
    assert (0, 1) not in tx                                                # gold b, predicted a: empty
    assert tx[(0, 0)] == "5" and tx[(1, 0)] == "2" and tx[(1, 1)] == "7"
    totals = [c for c in cf.cells if c.total]
    assert {c.background for c in totals} == {"#e9ecef"}
    assert sorted((c.p, c.g) for c in totals) == [(0, 2), (1, 2), (2, 0), (2, 1)]
    assert tx[(2, 0)] == "7" and tx[(2, 1)] == "7" and tx[(1, 2)] == "9"
    assert (2, 2) not in tx                                                # no Σ×Σ corner
    assert not [c for c in confusion_grid(df, sums=False).cells if c.total]
    # the diagonal is bordered, the totals are not
    html = grid_html(cf)
    assert html.count('class="cbr-cm-c d"') + html.count('class="cbr-cm-c w d"') == 2


def test_row_normalised_cells_show_the_share_of_the_gold_row():
    df = pd.DataFrame([("a", "a", 3), ("a", "b", 1), ("b", "b", 1000), ("b", "a", 1)],
                      columns=["gold_label", "pred_label", "n"])
    cf = confusion_grid(df, normalize="row")
    tx = texts(cf)
    assert tx[(0, 0)] == "75%" and tx[(1, 0)] == "25%"
    assert tx[(0, 1)] == "<1%" and ">&lt;1%<" in grid_html(cf)          # escaped in the HTML
    assert tx[(2, 0)] == "4"                                              # the Σ column keeps counts
    assert cf.cmax == 1 and "share of the gold row: 0" in grid_html(cf)
    with pytest.raises(ValueError):
        confusion_grid(df, normalize="column")


# ---------------------------------------------------------------- clicks and the ring

def test_a_click_maps_back_to_the_labels_and_the_sums():
    codes = list(CMEEE.label_codes)
    cf = confusion_grid(counts_for(codes, off=1.0), labels=codes, label_text=CMEEE.display_label)
    html = grid_html(cf)
    # every cell and Σ cell carries the key a click on it reports
    assert sorted(re.findall(r'data-pick="(\d+,\d+)"', html)) == sorted(c.key for c in cf.cells)
    assert cf.pick(cell_key(0, 2)) == CellPick(("dis",), ("dru",))
    assert cf.pick("0,9") == CellPick(("dis",), None)       # Σ column: all predicted
    assert cf.pick("9,3") == CellPick(None, ("equ",))       # Σ row: all gold
    for hostile in ("42,0", "9,9", "", None, "a,b", "1,2,3", {"pick": "1,1"}, "1;1", "-1,0"):
        assert cf.pick(hostile) is None, hostile
    assert CellPick(("dis",), None).filter() == {"gold_label": "dis"}
    assert CellPick(None, ("a", "b")).filter() == {"pred_label": ("a", "b")}


@pytest.mark.parametrize("selected, position", [(("sym", "dis"), (0, 1)), (("sym", None), (9, 1)),
                                                (("sym", ALL), (9, 1)), ((None, "ite"), (6, 9))])
def test_the_selected_cell_is_named_for_the_ring(selected, position):
    codes = list(CMEEE.label_codes)
    cf = confusion_grid(counts_for(codes, off=1.0), labels=codes)
    assert cf.selected_key(selected) == cell_key(*position[::-1])
    assert "box-shadow: 0 0 0 3px #111111" in CSS.replace("\n", " ").split(".cbr-cm-c.cbr-cm-picked")[1]


def test_no_ring_without_a_selection_or_for_an_unknown_label_or_an_empty_cell():
    codes = list(CMEEE.label_codes)
    cf = confusion_grid(counts_for(codes), labels=codes)
    assert cf.selected_key(None) is None and cf.selected_key(("nope", "dis")) is None
    df = pd.DataFrame([("a", "a", 5), ("b", "b", 7)], columns=["gold_label", "pred_label", "n"])
    assert confusion_grid(df).selected_key(("a", "b")) is None           # gold a, predicted b: no items


def test_top_k_merges_the_rest_into_other():
    codes = list(CMEIE.label_codes)
    df = counts_for(codes, seed=1, off=0.3)
    cf = confusion_grid(df, labels=codes, top_k=10, label_text=CMEIE.display_label)
    freq = (df.groupby("gold_label")["n"].sum().add(df.groupby("pred_label")["n"].sum(), fill_value=0))
    top = set(freq.sort_values(ascending=False).index[:10])
    assert len(cf.members) == 11 and {m[0] for m in cf.members[:10]} == top
    assert set(cf.merged) == set(codes) - top and cf.members[10] == cf.merged and len(cf.merged) == 34
    assert cf.labels[10].startswith("other") and cf.size == 12             # 10 + other + Σ
    assert cf.pick("10,11") == CellPick(cf.merged, None)
    assert cf.pick("10,10").gold == cf.merged
    # the counts are kept: every cell sums to the data's total
    assert sum(c.n for c in cf.cells if not c.total) == int(df["n"].sum())
    # a selection on a merged label rings "other", and so does the filter a click on it gives back
    assert cf.selected_key((cf.merged[0], cf.merged[1])) == "10,10"
    again = cf.pick("10,11").filter()
    assert cf.selected_key((again["gold_label"], again.get("pred_label"))) == "10,11"
    assert_readable(cf)
    assert confusion_grid(df, labels=codes).merged == ()                   # off by default


def test_labels_order_the_axes_and_empty_labels_still_show():
    df = pd.DataFrame([("b", "b", 2), ("z", "b", 1)], columns=["gold_label", "pred_label", "n"])
    cf = confusion_grid(df, labels=["c", "b", "a"])
    assert cf.labels == ("c", "b", "a", "z")          # given order, then the rest of the data
    assert headers(grid_html(cf), "col") == ["c", "b", "a", "z", ALL]
    missing = pd.DataFrame([("a", None, 2)], columns=["gold_label", "pred_label", "n"])
    assert confusion_grid(missing).labels == ("a", "∅")          # a missing label, as the store names it
    empty = confusion_grid(pd.DataFrame(columns=["gold_label", "pred_label", "n"]), labels=["a"])
    assert empty.labels == ("a",) and not [c for c in empty.cells if not c.total]
    assert grid_html(empty)


# ---------------------------------------------------------------- escaped

def test_a_hostile_label_is_only_ever_escaped():
    codes = list(CMEEE.label_codes) + [HOSTILE]
    df = counts_for(codes, off=0.5)
    for grid in (confusion_grid(df, labels=codes), confusion_grid(df, labels=codes, top_k=3),
                 confusion_grid(df, labels=codes, label_text=lambda c: f'{c}" onclick="x')):
        html = grid_html(grid)
        assert "<a" not in html and "</a>" not in html and '" onclick' not in html
        assert "&lt;a href=http://x&gt;y&lt;/a&gt;" in html
        assert "<script" not in html
    cf = confusion_grid(df, labels=codes)
    assert cf.pick("9,9") == CellPick((HOSTILE,), (HOSTILE,))
    assert cf.selected_key((HOSTILE, HOSTILE)) == "9,9"


def test_the_view_is_versioned_by_its_html():
    codes = list(CMEEE.label_codes)
    a = matrix_view(confusion_grid(counts_for(codes), labels=codes))
    b = matrix_view(confusion_grid(counts_for(codes), labels=codes, normalize="row"))
    assert a.version == matrix_view(confusion_grid(counts_for(codes), labels=codes)).version
    assert a.version != b.version and a.html != b.html
