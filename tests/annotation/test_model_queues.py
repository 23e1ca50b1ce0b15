"""Review queues driven by one run: likely gold errors and most uncertain, over the split's
current gold, the model's training records left out and counted, every item with its reason;
and the review queue's "all runs wrong" ranked by the model's confidence with one run."""
from __future__ import annotations

import pytest

from cblue_core.annotation import Annotation
from cblue_core.annotation.label_issues import ProbabilitiesMissing
from cblue_core.annotation.model_queues import GOLD_ERRORS, UNCERTAIN, model_queue
from cblue_core.annotation.review import review_queue
from cblue_core.runs.record import record_run
from tests.annotation.planted_qic import CLASSES, FLIPPED, TIE, planted_run


@pytest.fixture
def qic(ws, tmp_path):
    """KUAKE-QIC dev with three flipped labels; a model run trained on record 17 (one of them)."""
    return (ws, *planted_run(ws, tmp_path))


def test_gold_error_queue_orders_the_flips_and_counts_training_records(qic):
    ws, _did, run_id = qic
    q = model_queue(ws, run_id, GOLD_ERRORS)
    assert [it.idx for it in q.items] == [3, 10]         # 17 was trained on
    assert (q.excluded_training, q.examined, q.training_known) == (1, 31, True)
    assert {it.reason for it in q.items} == {GOLD_ERRORS}
    assert q.items[0].detail.startswith("model gives 0.97 to 治疗方案, gold says ")
    assert q.items[0].score > q.items[1].score


def test_gold_error_queue_follows_the_current_gold(qic):
    ws, did, run_id = qic
    _ann, rev = ws.annotations.current(did, 3)
    ws.annotations.save(did, 3, Annotation(label="治疗方案"), author="a", reason="fixed", base_revision=rev)
    assert [it.idx for it in model_queue(ws, run_id, GOLD_ERRORS).items] == [10]


def test_uncertain_queue_puts_the_near_tie_first(qic):
    ws, _did, run_id = qic
    q = model_queue(ws, run_id, UNCERTAIN, limit=3)
    assert q.items[0].idx == TIE and q.items[0].reason == UNCERTAIN
    assert q.items[0].detail == f"margin 0.03 between {CLASSES[TIE % 4]} and {CLASSES[(TIE + 1) % 4]}"
    assert len(q.items) == 3 and q.excluded_training == 1
    whole = model_queue(ws, run_id, UNCERTAIN, limit=None)
    assert 17 not in [it.idx for it in whole.items]
    # the cut queue still knows the whole queue's size, for the page to say "first 3 of N"
    assert q.found == whole.found == len(whole.items) > 3


def test_a_run_without_probabilities_or_an_unknown_queue_is_refused(qic):
    ws, did, run_id = qic
    bare = record_run(ws, did, ws.datasets.examples(did), name="labels", source="import", n_boot=0)
    with pytest.raises(ProbabilitiesMissing):
        model_queue(ws, bare.run_id, UNCERTAIN)
    with pytest.raises(ValueError, match="unknown queue"):
        model_queue(ws, run_id, "loudest")


def test_one_run_all_wrong_is_ranked_by_the_models_confidence(qic):
    ws, did, _run_id = qic
    wrong = {it.idx: it for it in review_queue(ws, did, reasons=["all_runs_wrong"])}
    assert set(wrong) == set(FLIPPED)
    assert sorted(wrong, key=lambda i: -wrong[i].score) == [3, 17, 10]   # 0.97, 0.95, 0.92
    assert wrong[3].score == pytest.approx(0.97)
    assert wrong[3].detail.endswith("model confidence in its answer 0.97")


def test_a_run_on_the_start_of_the_split_ranks_that_start(ws, tmp_path):
    _did, run_id = planted_run(ws, tmp_path, limit=8)
    q = model_queue(ws, run_id, UNCERTAIN, limit=None)
    assert sorted(it.idx for it in q.items) == list(range(8)) and q.items[0].idx == TIE


def test_which_tasks_drive_which_queue():
    from cblue_core.annotation.model_queues import supports
    from cblue_core.tasks import get_task

    assert supports(get_task("CMeEE"), UNCERTAIN) and supports(get_task("KUAKE-QQR"), GOLD_ERRORS)
    assert supports(get_task("CMeIE"), GOLD_ERRORS) and not supports(get_task("CMeIE"), UNCERTAIN)
    assert not supports(get_task("CHIP-CDN"), GOLD_ERRORS)
