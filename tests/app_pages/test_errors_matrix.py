"""The Errors page's confusion-matrix tab under AppTest, on the sample CMeIE run (many
predicates): the top-k control is on the page, a click is answered with the figure unchanged (the
browser keeps the ring Plotly drew on the clicked cell, tested in Chromium), a cell chosen
elsewhere is marked in the figure, and the ∅ column lists exactly the rows it counts."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP, matrix_click, sample_runs_db


@pytest.fixture(scope="module")
def cmeie_db(tmp_path_factory):
    made = sample_runs_db(tmp_path_factory, ["CMeIE"])
    ws = connect(made["db"])
    cm = ws.runs.confusion(made["CMeIE"])
    ws.close()
    return {"db": made["db"], "run": made["CMeIE"], "cm": cm}


@pytest.fixture
def matrix_tab(cmeie_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(cmeie_db["db"]))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/errors.py")
    at.query_params["run"] = str(cmeie_db["run"])
    at.query_params["tab"] = "matrix"
    at.run()
    assert not at.exception, at.exception
    return at


def matrix_spec(at: AppTest) -> dict:
    chart = next(c for c in at.get("plotly_chart") if '"cells"' in c.proto.spec)
    return json.loads(chart.proto.spec)


def marked(at: AppTest) -> tuple[int, int] | None:
    """The (row, column) of the cell the figure itself marks selected, or None."""
    targets = next(t for t in matrix_spec(at)["data"] if t.get("name") == "targets")
    if not targets.get("selectedpoints"):
        return None
    (index,) = targets["selectedpoints"]
    return targets["y"][index], targets["x"][index]


def confused_pair(cm) -> tuple[str, str]:
    """A cell off the diagonal with a label on both sides (else a diagonal one)."""
    pair = cm[(cm.gold_label != cm.pred_label) & (cm.gold_label != "∅") & (cm.pred_label != "∅")]
    return (pair.iloc[0].gold_label, pair.iloc[0].pred_label) if len(pair) else (cm.iloc[0].gold_label,) * 2


def click_keeps_the_figure(at: AppTest, gold: str | None, pred: str | None) -> None:
    """Click the cell (gold, pred): the rerun it starts lists the cell's rows and sends the figure
    the browser already drew (Streamlit keeps that chart, and the ring on the clicked cell)."""
    before = matrix_spec(at)
    click = matrix_click(at, "CMeIE", gold, pred)
    at.session_state["err_cm"] = click
    at.run()
    assert not at.exception, at.exception
    assert matrix_spec(at) == before
    assert any(c.value.startswith("Filter: ") for c in at.caption)


def test_a_click_keeps_the_figure_and_a_cell_chosen_elsewhere_is_marked(matrix_tab, cmeie_db):
    assert marked(matrix_tab) is None
    gold, pred = confused_pair(cmeie_db["cm"])
    click_keeps_the_figure(matrix_tab, gold, pred)
    # the same cell chosen elsewhere (here: the filter set, no click on this chart): marked
    matrix_tab.session_state["err_cm"] = {"selection": {"points": [], "point_indices": [], "box": [],
                                                        "lasso": []}}
    matrix_tab.session_state["err_filter"] = {"gold_label": gold}
    matrix_tab.run()
    spec = matrix_spec(matrix_tab)
    targets = next(t for t in spec["data"] if t.get("name") == "targets")
    row, column = marked(matrix_tab)
    assert targets["customdata"][targets["selectedpoints"][0]][:2] == [row, column]
    assert targets["customdata"][targets["selectedpoints"][0]][3].startswith("Σ")     # the Σ column


def test_the_missed_column_lists_the_rows_it_counts(matrix_tab, cmeie_db):
    cm = cmeie_db["cm"]
    missed = cm[(cm.pred_label == "∅")].sort_values("n").iloc[-1]
    matrix_tab.session_state["err_cm"] = matrix_click(matrix_tab, "CMeIE", missed.gold_label, "∅")
    matrix_tab.run()
    rows = matrix_tab.dataframe(key="err_rows").value
    assert len(rows) == missed.n and set(rows["gold_label"]) == {missed.gold_label}
    assert set(rows["category"]) - {"missed"} <= {"argument_boundary", "swapped"}   # same predicate


def test_the_top_k_control_merges_the_rest_into_other(matrix_tab, cmeie_db):
    cm = cmeie_db["cm"]
    labels = (set(cm.gold_label) | set(cm.pred_label)) - {"∅"}
    assert len(labels) > 10
    control = matrix_tab.radio(key="err_top_k")
    assert control.value == "all" and "Labels shown" in control.label
    ticks = matrix_spec(matrix_tab)["layout"]["yaxis"]["ticktext"]
    assert len(ticks) == len(labels) + 2 and ticks[-2:] == ["∅", "Σ"]
    control.set_value(10).run()
    ticks = matrix_spec(matrix_tab)["layout"]["yaxis"]["ticktext"]
    assert len(ticks) == 13 and ticks[10].startswith("other") and ticks[-2:] == ["∅", "Σ"]


def test_a_click_on_other_lists_the_rows_of_every_merged_label(matrix_tab, cmeie_db):
    matrix_tab.radio(key="err_top_k").set_value(10).run()
    spec = matrix_spec(matrix_tab)
    targets = next(t for t in spec["data"] if t.get("name") == "targets")
    other = next(d for d in targets["customdata"] if str(d[2]).startswith("other") and str(d[3]).startswith("∅"))
    matrix_tab.session_state["err_cm"] = {"selection": {"points": [{"customdata": other, "x": other[1],
                                                                    "y": other[0]}],
                                                        "point_indices": [0], "box": [], "lasso": []}}
    matrix_tab.run()
    assert not matrix_tab.exception, matrix_tab.exception
    rows = matrix_tab.dataframe(key="err_rows").value
    assert len(rows) == int(other[4].replace(",", "")) and rows["gold_label"].nunique() > 1


def test_a_click_builds_no_matrix(matrix_tab, cmeie_db, monkeypatch):
    """A click built the 44-label figure again (0.06-0.3 s, 0.5 s of the click's script in
    Chromium), then sent a changed figure that the browser redrew whole (0.5-1 s): the figure of
    the view is built once and cached, and a click sends it unchanged."""
    from app_pages.errors_tabs import derived
    from tests.app_pages.conftest import count_calls

    builds = count_calls(monkeypatch, derived, "confusion_figure")
    gold, pred = confused_pair(cmeie_db["cm"])
    click_keeps_the_figure(matrix_tab, gold, pred)
    click_keeps_the_figure(matrix_tab, gold, None)      # a second click
    assert builds["n"] == 0
