"""The confusion matrix the store counts, checked against the run's own metrics: the diagonal is
each label's true positives, a row sums to the label's gold items and a column to its predicted
items, and the rows a cell, row or column lists are exactly the rows it counts."""
from __future__ import annotations

import json

import pytest

from cblue_core.runs.record import import_run
from cblue_core.store.confusion import NONE
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.conftest import SAMPLE_DATA


def _shifted_cmeee() -> bytes:
    """The sample CMeEE predictions with wrong boundaries of the right type on every third
    sentence (each entity one character longer): same-label pairs that are no match."""
    pred = json.loads((SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json").read_text(encoding="utf-8"))
    for rec in pred[::3]:
        for ent in rec["entities"]:
            if ent["end_idx"] + 1 < len(rec["text"]):
                ent["end_idx"] += 1
                ent["entity"] = rec["text"][ent["start_idx"]:ent["end_idx"] + 1]
    return json.dumps(pred, ensure_ascii=False).encode()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    ws = connect(tmp_path_factory.mktemp("confusion") / "ws.duckdb")
    bootstrap_sample_data(ws, SAMPLE_DATA)
    out = {}
    for task, source in (("CMeEE", _shifted_cmeee()),
                         ("CMeIE", (SAMPLE_DATA / "cblue/CMeIE/CMeIE_dev.pred.json").read_bytes()),
                         ("CHIP-CTC", (SAMPLE_DATA / "cblue/CHIP-CTC/CHIP-CTC_dev.pred.json").read_bytes())):
        did = ws.datasets.find(task, "dev").dataset_id
        out[task] = import_run(ws, did, source, name=task, file_name=f"{task}.json").run_id
    yield ws, out
    ws.close()


@pytest.mark.parametrize("task", ["CMeEE", "CMeIE", "CHIP-CTC"])
def test_diagonal_rows_and_columns_match_the_per_label_scores(runs, task):
    ws, ids = runs
    run = ws.runs.get(ids[task])
    cm = ws.runs.confusion(run.run_id)
    per_label = run.metrics["per_label"]
    counts = {(g, p): int(n) for g, p, n in cm.itertuples(index=False)}
    rows = ws.runs.error_counts(run.run_id)
    if task == "CMeEE":          # the shifted spans made same-type pairs that are no match
        assert rows.get("wrong_boundary", 0) > 10
    for label, scores in per_label.items():
        tp = counts.get((label, label), 0)
        assert tp == scores["tp"], label
        assert sum(n for (g, _), n in counts.items() if g == label) == scores["tp"] + scores["fn"], label
        assert sum(n for (_, p), n in counts.items() if p == label) == scores["tp"] + scores["fp"], label
    assert (NONE, NONE) not in counts


@pytest.mark.parametrize("task", ["CMeEE", "CMeIE", "CHIP-CTC"])
def test_the_rows_of_a_cell_row_or_column_are_the_rows_it_counts(runs, task):
    ws, ids = runs
    run_id = ids[task]
    cm = ws.runs.confusion(run_id)
    assert len(cm)
    for g, p, n in cm.itertuples(index=False):
        listed = ws.runs.error_rows(run_id, gold_label=g, pred_label=p, limit=100_000)
        assert len(listed) == n, (g, p)
        if g != NONE and g == p:
            assert set(listed["category"]) == {"correct"}
    for side in ("gold_label", "pred_label"):
        key = "gold_label" if side == "gold_label" else "pred_label"
        for label, total in cm.groupby(key)["n"].sum().items():
            assert len(ws.runs.error_rows(run_id, limit=100_000, **{side: label})) == total, (side, label)
    # the labels merged into "other": one query for all of them
    labels = sorted(set(cm.gold_label) - {NONE})[:3]
    merged = cm[cm.gold_label.isin(labels)]["n"].sum()
    assert len(ws.runs.error_rows(run_id, gold_label=tuple(labels), limit=100_000)) == merged
