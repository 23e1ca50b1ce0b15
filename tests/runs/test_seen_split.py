"""Seen and unseen examples of a run: settled at first need for a run stored before (from its
model's folder), unknown when the model declares nothing or cannot be found, and on a real
CMeIE dev run the unseen part is the model card's held-out part."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from cblue_core.models import provenance
from cblue_core.runs.record import record_run, run_evaluation
from cblue_core.runs.seen_split import part_indices, seen_split, settle
from cblue_core.store.error_selection import ErrorSelection
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect

ROOT = Path(__file__).resolve().parents[2]
QIC_DEV = ROOT / "sample_data" / "cblue" / "KUAKE-QIC" / "KUAKE-QIC_dev.json"


@pytest.fixture
def qic(tmp_path):
    """A workspace with the sample QIC dev split, and a model folder named qic-probe (a copy of
    the built-in one) trained on its first three records."""
    ws = connect(tmp_path / "ws.duckdb")
    assert ingest_file(ws, QIC_DEV).ok
    did = ws.datasets.find("KUAKE-QIC", "dev").dataset_id
    models = tmp_path / "models"
    folder = models / "qic-probe"
    shutil.copytree(ROOT / "models" / "kuake-qic", folder)
    card = json.loads((folder / "model_card.json").read_text(encoding="utf-8"))
    (folder / "model_card.json").write_text(json.dumps({**card, "name": "qic-probe"}, ensure_ascii=False),
                                            encoding="utf-8")
    gold = ws.datasets.examples(did)
    provenance.write_training_records(folder, gold[:3], sources=["the first three sample records"])
    yield ws, did, folder, [str(models)]
    ws.close()


def older_run(ws, did, model: str) -> int:
    """A model run stored as before training records existed: nothing said about them."""
    preds = [dataclasses.replace(g) for g in ws.datasets.examples(did)]
    preds[5].label = "其他"
    return record_run(ws, did, preds, name="older", source="model", model=model, n_boot=0).run_id


def test_an_older_run_is_settled_from_its_model_folder_once(qic):
    ws, did, folder, dirs = qic
    run_id = older_run(ws, did, "qic-probe")
    assert run_id not in ws.runs.training_sets()
    ts = settle(ws, ws.runs.get(run_id), dirs)
    assert ts is not None and ts.declared and ts.model == "qic-probe" and ts.seen_examples == 3
    assert ws.runs.seen_indices([run_id]) == [0, 1, 2]
    assert ts.unseen_metrics["examples"] == len(ws.datasets.examples(did)) - 3
    assert ts.unseen_metrics["per_label"] == run_evaluation(ws, run_id, indices=list(range(3, 24))).per_label
    (folder / provenance.RECORDS_FILE).unlink()                         # stored: the folder is not read again
    assert ws.runs.training_sets([run_id])[run_id] == ts == settle(ws, ws.runs.get(run_id), dirs)
    unseen = ws.runs.select_errors(run_id, ErrorSelection(seen="unseen"), limit=None)
    assert set(unseen.rows["idx"]) == set(range(3, 24)) and unseen.total_rows == 21


def test_a_model_that_declares_nothing_or_is_gone_is_unknown(qic):
    ws, did, folder, dirs = qic
    (folder / provenance.RECORDS_FILE).unlink()
    declares_nothing = ws.runs.get(older_run(ws, did, "qic-probe"))
    split = seen_split(ws, [declares_nothing], dirs)
    assert not split.known and "declares no training records" in split.reason
    assert ws.runs.training_sets([declares_nothing.run_id])[declares_nothing.run_id].declared is False
    gone = ws.runs.get(older_run(ws, did, "no-such-model"))
    split = seen_split(ws, [gone], dirs)
    assert not split.known and "no-such-model is not found" in split.reason
    assert gone.run_id not in ws.runs.training_sets()        # tried again when the folder returns


def test_a_read_only_workspace_settles_nothing(qic, tmp_path):
    ws, did, _, dirs = qic
    run_id = older_run(ws, did, "qic-probe")
    ws.close()
    ro = connect(tmp_path / "ws.duckdb", read_only=True)
    try:
        split = seen_split(ro, [ro.runs.get(run_id)], dirs)
        assert not split.known and "read-only" in split.reason
    finally:
        ro.close()
    qic_ws = connect(tmp_path / "ws.duckdb")
    assert run_id not in qic_ws.runs.training_sets()
    qic_ws.close()


@pytest.mark.slow
def test_unseen_part_of_a_cmeie_dev_run_is_the_cards_held_out_part(cblue_dir, tmp_path):
    """models/cmeie was trained on 80% of CMeIE dev; its card scores the other 717 records
    (held_out_indices). The unseen filter keeps exactly those, less the held-out records whose
    text is also one of the training records, and the held-out figure comes back from the run."""
    from cblue_core.models.base import model_input
    from cblue_core.models.devices import predict_with_oom_retry
    from cblue_core.models.loading import load_predictor
    from cblue_core.tasks import get_task

    folder = ROOT / "models" / "cmeie"
    card = json.loads((folder / "model_card.json").read_text(encoding="utf-8"))
    held = card["training"]["held_out_indices"]
    assert len(held) == card["training"]["data"]["eval_examples"] == 717
    ws = connect(tmp_path / "cmeie.duckdb")
    assert ingest_file(ws, cblue_dir / "CMeIE" / "CMeIE_dev.json").ok
    did = ws.datasets.find("CMeIE", "dev").dataset_id
    task, gold = get_task("CMeIE"), ws.datasets.examples(did)
    # Only the held-out records are predicted (the model's time is the test's cost); every other
    # record is among the training records, which the unseen filter leaves out.
    predictor = load_predictor(folder, task="CMeIE")
    predicted = dict(zip(held, predict_with_oom_retry(predictor, [model_input(task, gold[i]) for i in held], 32)))
    preds = [predicted.get(g.index) or model_input(task, g) for g in gold]
    records = provenance.read_training_records(folder)
    run_id = record_run(ws, did, preds, name="cmeie on dev", source="model", model="cmeie", n_boot=0,
                        training_records=records).run_id
    split = seen_split(ws, [ws.runs.get(run_id)])
    duplicates = {i for i in held if provenance.fingerprint(gold[i]) in records}
    unseen = part_indices(ws, did, split.runs, "unseen")
    assert unseen == sorted(set(held) - duplicates) and split.seen_examples == len(gold) - len(unseen)
    f1 = card["dev_metrics"]["metrics"]["f1"]
    assert run_evaluation(ws, run_id, indices=held).metrics["f1"] == pytest.approx(f1, abs=1e-9)
    on_unseen = run_evaluation(ws, run_id, indices=unseen)
    low, high = card["dev_metrics"]["intervals"]["f1"]
    assert low <= on_unseen.metrics["f1"] <= high
    stored = ws.runs.training_sets([run_id])[run_id].unseen_metrics
    assert stored["examples"] == len(unseen) and stored["metrics"]["f1"] == pytest.approx(on_unseen.metrics["f1"])
    assert stored["per_label"] == on_unseen.per_label
    rows = ws.runs.select_errors(run_id, ErrorSelection(seen="unseen"), limit=None).rows
    assert set(rows["idx"]) <= set(unseen) and len(rows) == sum(1 for r in on_unseen.error_rows)
    ws.close()
