"""The Errors page's confusion-matrix tab under AppTest, on the sample CMeIE run (many
predicates): the top-k control is on the page, a click lists its cell's rows and the grid rings
that cell in the run it starts, a cell chosen elsewhere is ringed too, a click on one view is no
click on another, and the ∅ column lists exactly the rows it counts."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP, matrix_click, matrix_grid, matrix_labels, sample_runs_db


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


def confused_pair(cm) -> tuple[str, str]:
    """A cell off the diagonal with a label on both sides (else a diagonal one)."""
    pair = cm[(cm.gold_label != cm.pred_label) & (cm.gold_label != "∅") & (cm.pred_label != "∅")]
    return (pair.iloc[0].gold_label, pair.iloc[0].pred_label) if len(pair) else (cm.iloc[0].gold_label,) * 2


def click(at: AppTest, gold: str | None, pred: str | None) -> str:
    """Click the cell (gold, pred) and run: the grid rings that cell in the run the click starts
    (the browser rang it already) and lists its rows. Returns the cell's key."""
    key, value = matrix_click(at, "CMeIE", gold, pred)
    at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    assert matrix_grid(at)[1]["picked"] == value["pick"]
    assert any(c.value.startswith("Filter: ") for c in at.caption)
    return value["pick"]


def test_a_click_rings_its_cell_and_a_cell_chosen_elsewhere_is_ringed(matrix_tab, cmeie_db):
    assert matrix_grid(matrix_tab)[1]["picked"] is None
    gold, pred = confused_pair(cmeie_db["cm"])
    html_before = matrix_grid(matrix_tab)[1]["html"]
    click(matrix_tab, gold, pred)
    assert matrix_grid(matrix_tab)[1]["html"] == html_before       # the grid itself unchanged
    # a cell chosen elsewhere (here: the filter set, no click on this grid): ringed, Σ column
    matrix_tab.session_state["err_filter"] = {"gold_label": gold}
    key, _ = matrix_grid(matrix_tab)
    matrix_tab.session_state[key] = {"pick": None}
    matrix_tab.run()
    data = matrix_grid(matrix_tab)[1]
    names = matrix_labels(data)
    row, column = (int(v) for v in data["picked"].split(","))
    assert names[column] == "Σ" and row == next(i for i, n in enumerate(names) if gold in n)


def test_the_missed_column_lists_the_rows_it_counts(matrix_tab, cmeie_db):
    cm = cmeie_db["cm"]
    missed = cm[(cm.pred_label == "∅")].sort_values("n").iloc[-1]
    click(matrix_tab, missed.gold_label, "∅")
    rows = matrix_tab.dataframe(key="err_rows").value
    assert len(rows) == missed.n and set(rows["gold_label"]) == {missed.gold_label}
    assert set(rows["category"]) - {"missed"} <= {"argument_boundary", "swapped"}   # same predicate


def test_the_top_k_control_merges_the_rest_into_other(matrix_tab, cmeie_db):
    cm = cmeie_db["cm"]
    labels = (set(cm.gold_label) | set(cm.pred_label)) - {"∅"}
    assert len(labels) > 10
    control = matrix_tab.radio(key="err_top_k")
    assert control.value == "all" and "Labels shown" in control.label
    names = matrix_labels(matrix_grid(matrix_tab)[1])
    assert len(names) == len(labels) + 2 and names[-2:] == ["∅", "Σ"]
    control.set_value(10).run()
    names = matrix_labels(matrix_grid(matrix_tab)[1])
    assert len(names) == 13 and names[10].startswith("other") and names[-2:] == ["∅", "Σ"]


def test_a_click_on_other_lists_the_rows_of_every_merged_label(matrix_tab, cmeie_db):
    matrix_tab.radio(key="err_top_k").set_value(10).run()
    key, data = matrix_grid(matrix_tab)
    names = matrix_labels(data)
    other, missed = names.index(next(n for n in names if n.startswith("other"))), names.index("∅")
    assert f'data-pick="{other},{missed}"' in data["html"]
    title = data["html"].split(f'data-pick="{other},{missed}"')[1].split('title="')[1].split('"')[0]
    shown = int(title.rsplit("\n", 1)[-1].replace(",", ""))
    matrix_tab.session_state[key] = {"pick": f"{other},{missed}"}
    matrix_tab.run()
    assert not matrix_tab.exception, matrix_tab.exception
    rows = matrix_tab.dataframe(key="err_rows").value
    assert len(rows) == shown and rows["gold_label"].nunique() > 1


def test_a_click_on_one_view_is_no_click_on_another(matrix_tab, cmeie_db):
    """Each view (here: top 10) is its own grid with its own key: the cell a click picked in the
    whole matrix is not read again in the merged one, where other labels sit at that position."""
    gold, pred = confused_pair(cmeie_db["cm"])
    picked = click(matrix_tab, gold, pred)
    whole_key, _ = matrix_grid(matrix_tab)
    matrix_tab.radio(key="err_top_k").set_value(10).run()
    key, data = matrix_grid(matrix_tab)
    assert key != whole_key
    assert any(c.value.startswith("Filter: gold\\_label") for c in matrix_tab.caption)     # kept
    # the ring follows the filter's labels (or the "other" that merged them), not the position
    names = matrix_labels(data)
    row, column = (int(v) for v in data["picked"].split(","))

    def holds(name: str, label: str) -> bool:
        return name.startswith(("other", label)) or label in name
    assert holds(names[row], gold) and holds(names[column], pred), (picked, data["picked"], names)


def test_a_click_builds_no_matrix(matrix_tab, cmeie_db, monkeypatch):
    """A click built the 44-label matrix again: the grid of a view is built once and cached, and a
    click only moves the ring."""
    from app_pages.errors_tabs import derived
    from tests.app_pages.conftest import count_calls

    builds = count_calls(monkeypatch, derived, "confusion_grid")
    gold, pred = confused_pair(cmeie_db["cm"])
    click(matrix_tab, gold, pred)
    click(matrix_tab, gold, None)              # a second click
    assert builds["n"] == 0


def test_a_forged_click_is_ignored(matrix_tab):
    key, _ = matrix_grid(matrix_tab)
    for forged in ("999,0", "<img src=x>", ["1", "2"], "1,1,1"):
        matrix_tab.session_state[key] = {"pick": forged}
        matrix_tab.run()
        assert not matrix_tab.exception, (forged, matrix_tab.exception)
        assert not any(c.value.startswith("Filter: ") for c in matrix_tab.caption)
