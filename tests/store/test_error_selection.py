"""A selection of error rows is applied in the query: every filter, totals over the whole
selection whatever the limit, and the seen/unseen split of a run."""
from __future__ import annotations

from collections import Counter

import pytest

from cblue_core.store.error_selection import ErrorSelection
from cblue_core.store.training_sets import TrainingSet
from cblue_core.store.workspace import connect
from tests.store.many_errors import build, error_rows, seen


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    db, run_id = build(tmp_path_factory.mktemp("many"))
    ws = connect(db)
    yield ws, run_id
    ws.close()


def expected(keep) -> tuple[int, int]:
    rows = [r for r in error_rows() if keep(r)]
    return len(rows), len({r["idx"] for r in rows})


SLICE = "idx >= 1200"     # its rows all lie after the first 2,000 rows in the list's order

CASES = {
    "category": (ErrorSelection(category="missed"), lambda r: r["category"] == "missed"),
    "gold label": (ErrorSelection(gold_label="dis"), lambda r: r.get("gold_label") == "dis"),
    "pred label": (ErrorSelection(pred_label="sym"), lambda r: r.get("pred_label") == "sym"),
    "matrix cell": (ErrorSelection(gold_label="dis", pred_label="sym"),
                    lambda r: r.get("gold_label") == "dis" and r.get("pred_label") == "sym"),
    "no prediction": (ErrorSelection(pred_label="∅"), lambda r: r.get("pred_label") is None),
    "other row": (ErrorSelection(gold_label=("dis", "bod")), lambda r: r.get("gold_label") in ("dis", "bod")),
    "tag": (ErrorSelection(tag="nested"), lambda r: "nested" in r["tags"]),
    "indices": (ErrorSelection(indices=tuple(range(1200, 1500)), errors_only=True),
                lambda r: r["idx"] >= 1200 and r["category"] != "correct"),
    "unseen": (ErrorSelection(seen="unseen"), lambda r: not seen(r["idx"])),
    "seen missed": (ErrorSelection(seen="seen", category="missed"),
                    lambda r: seen(r["idx"]) and r["category"] == "missed"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_filter_counts_the_whole_selection(many, name):
    ws, run_id = many
    selection, keep = CASES[name]
    total, examples = expected(keep)
    found = ws.runs.select_errors(run_id, selection, limit=50)
    assert (found.total_rows, found.examples) == (total, examples)
    assert len(found.rows) == min(50, total) and found.truncated == (total > 50)
    whole = ws.runs.select_errors(run_id, selection, limit=None)
    assert len(whole.rows) == total and not whole.truncated
    assert whole.rows["idx"].nunique() == examples


def test_a_slice_beyond_the_first_2000_rows_is_listed_whole(many):
    ws, run_id = many
    did = ws.runs.get(run_id).dataset_id
    indices = tuple(ws.slices.indices(did, SLICE))
    assert indices == tuple(range(1200, 1500))
    found = ws.runs.select_errors(run_id, ErrorSelection(indices=indices, errors_only=True), limit=2000)
    assert (found.total_rows, found.examples) == (300, 300) and not found.truncated
    assert set(found.rows["idx"]) == set(indices)


def test_the_limit_never_changes_the_totals(many):
    ws, run_id = many
    sizes = {(f.total_rows, f.examples, f.truncated) for f in
             (ws.runs.select_errors(run_id, limit=n) for n in (0, 1, 2000))}
    assert sizes == {(4500, 1500, True)}
    assert not ws.runs.select_errors(run_id, limit=4500).truncated


def test_seen_filter_on_the_run_queries(many):
    ws, run_id = many
    counts = ws.runs.error_counts(run_id, seen="seen")
    assert counts == dict(Counter(r["category"] for r in error_rows() if seen(r["idx"])))
    assert sum(ws.runs.error_counts(run_id, seen="unseen").values()) == 4500 - 3 * 375
    assert ws.runs.tag_counts(run_id, seen="unseen") == {"nested": sum(
        1 for r in error_rows() if "nested" in r["tags"] and not seen(r["idx"]))}
    cm = ws.runs.confusion(run_id, seen="seen")
    cell = cm[(cm.gold_label == "dis") & (cm.pred_label == "sym")]["n"].sum()
    assert cell == sum(1 for r in error_rows() if r["category"] == "wrong_type" and seen(r["idx"]))


def test_seen_of_several_runs_is_their_union(many, tmp_path):
    ws, run_id = many
    did = ws.runs.get(run_id).dataset_id
    other = ws.runs.create(did, "other", source="model", model="n", predictions=[], metrics={},
                           training=TrainingSet(True, "n", 2), seen=[1, 2])
    try:
        union = ErrorSelection(seen="unseen", seen_runs=(run_id, other))
        total, _ = expected(lambda r: not seen(r["idx"]) and r["idx"] not in (1, 2))
        assert ws.runs.select_errors(run_id, union, limit=1).total_rows == total
        assert ws.runs.seen_indices([run_id, other])[:3] == [0, 1, 2]
        assert ws.runs.training_sets([other])[other] == TrainingSet(True, "n", 2)
    finally:
        ws.runs.delete(other)
    assert other not in ws.runs.training_sets() and ws.runs.seen_indices([other]) == []


def test_a_bad_seen_value_is_refused():
    with pytest.raises(ValueError, match="seen must be one of"):
        ErrorSelection(seen="maybe")   # type: ignore[arg-type]


def test_a_selection_describes_its_filters():
    described = ErrorSelection(gold_label=("dis", "bod"), tag="nested", idx=3, indices=(1, 2),
                               errors_only=True, seen="unseen").describe()
    assert described == {"gold_label": "dis, bod", "tag": "nested", "idx": "3", "examples": "2 chosen",
                         "rows": "errors only", "training records": "unseen only"}
    assert ErrorSelection().describe() == {}
