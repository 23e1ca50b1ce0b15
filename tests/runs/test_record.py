"""Runs: import (matching by key, refusals that store nothing), model runs, scoring, export
round trip."""
from __future__ import annotations

import json

import pytest

from cblue_core.io.errors import FileRefused
from cblue_core.io.validate import load
from cblue_core.models.base import ModelCard, Predictor
from cblue_core.models.loading import load_predictor
from cblue_core.records import Example
from cblue_core.runs.record import ModelTaskMismatch, export_run, import_run, model_run, run_evaluation
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect
from cblue_core.tasks import get_task
from tests.conftest import SAMPLE_DATA

QIC = SAMPLE_DATA / "cblue/KUAKE-QIC/KUAKE-QIC_dev.json"


@pytest.fixture
def ws(tmp_path):
    w = connect(tmp_path / "ws.duckdb")
    assert ingest_file(w, QIC).ok
    yield w
    w.close()


def did(ws):
    return ws.datasets.find("KUAKE-QIC", "dev").dataset_id


def gold_records():
    return json.loads(QIC.read_text(encoding="utf-8"))


def counts(ws):
    return {t: ws.db.con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "predictions", "errors")}


def test_gold_as_predictions_scores_one(ws):
    r = import_run(ws, did(ws), json.dumps(gold_records(), ensure_ascii=False).encode(), file_name="gold.json")
    assert r.evaluation.metrics["accuracy"] == 1.0 and r.evaluation.metrics["macro_f1"] == 1.0
    assert r.match.matched == r.match.gold


def test_hand_computed_accuracy(ws):
    recs = gold_records()
    for rec in recs[:6]:                      # 6 of 24 wrong -> accuracy 18/24 = 0.75
        rec["label"] = "其他" if rec["label"] != "其他" else "病情诊断"
    r = import_run(ws, did(ws), json.dumps(recs, ensure_ascii=False).encode(), file_name="p.json")
    assert r.evaluation.metrics["accuracy"] == pytest.approx(18 / 24)
    lo, hi = r.evaluation.intervals["accuracy"]
    assert lo <= 0.75 <= hi
    assert ws.runs.error_counts(r.run_id) == {"correct": 18, "confusion": 6}


def test_missing_keys_refuse_and_store_nothing(ws):
    before = counts(ws)
    with pytest.raises(FileRefused) as err:
        import_run(ws, did(ws), json.dumps(gold_records()[:-2], ensure_ascii=False).encode(), file_name="p.json")
    assert "2 missing" in str(err.value)
    assert counts(ws) == before


def test_missing_keys_allowed_score_as_empty(ws):
    r = import_run(ws, did(ws), json.dumps(gold_records()[:-2], ensure_ascii=False).encode(),
                   file_name="p.json", allow_missing=True)
    assert r.evaluation.metrics["accuracy"] == pytest.approx(22 / 24)
    assert len(r.match.missing) == 2


def test_extra_and_duplicate_keys_are_reported(ws):
    recs = gold_records()
    recs.append({"id": "not-in-gold", "query": "x", "label": "其他"})
    recs.append(dict(recs[0]))
    r = import_run(ws, did(ws), json.dumps(recs, ensure_ascii=False).encode(), file_name="p.json")
    assert r.match.extra == ["not-in-gold"] and r.match.duplicated == [recs[0]["id"]]
    lines = " ".join(r.match.lines())
    assert "1 extra" in lines and "1 duplicated" in lines


def test_unmatchable_file_refused(ws):
    before = counts(ws)
    other = (SAMPLE_DATA / "cblue/CHIP-STS/CHIP-STS_dev.json").read_bytes()
    with pytest.raises(FileRefused):
        import_run(ws, did(ws), other, file_name="CHIP-STS_dev.json")
    cmeee = (SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json").read_bytes()
    with pytest.raises(FileRefused) as err:
        import_run(ws, did(ws), cmeee, file_name="CMeEE_dev.pred.json")
    assert "id" in str(err.value)            # wrong format: names the field it expected
    with pytest.raises(FileRefused):
        import_run(ws, did(ws), b"[{", file_name="broken.json")
    assert counts(ws) == before


def test_export_round_trip(ws, tmp_path):
    recs = gold_records()
    r = import_run(ws, did(ws), json.dumps(recs, ensure_ascii=False).encode(), file_name="p.json")
    path = export_run(ws, r.run_id, tmp_path)
    assert path.name == "KUAKE-QIC_test.json"
    exported = {x["id"]: x["label"] for x in json.loads(path.read_text(encoding="utf-8"))}
    assert exported == {x["id"]: x["label"] for x in recs}


def test_cmeee_export_keeps_offsets_inclusive(tmp_path):
    ws = connect(tmp_path / "c.duckdb")
    ingest_file(ws, SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.json")
    d = ws.datasets.find("CMeEE", "dev").dataset_id
    r = import_run(ws, d, SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json")
    out = export_run(ws, r.run_id, tmp_path)
    assert out.name == "CMeEE_test.json"
    again = load(out, "CMeEE")
    assert again.report.offset_convention == "inclusive"
    original = load(SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json", "CMeEE")
    assert [e.spans for e in again.examples] == [e.spans for e in original.examples]
    ev = run_evaluation(ws, r.run_id)
    assert ev.value == r.evaluation.value
    ws.close()


def test_model_run_is_stored_like_an_imported_run(ws, tmp_path):
    predictor = load_predictor("kuake-qic")
    done: list[int] = []
    r = model_run(ws, did(ws), predictor, batch_size=5, progress=done.append)
    run = ws.runs.get(r.run_id)
    assert run.source == "model" and run.model == "kuake-qic" and run.device == "cpu"
    assert run.params["batch_size"] == 5 and run.params["examples"] == 24 and run.params["seconds"] > 0
    assert run.params["kind"] == predictor.card.kind and sum(done) == 24
    expected = predictor.predict([Example(key=e.key, index=e.index, text=e.text) for e in load(QIC).examples])
    assert [p.label for p in ws.runs.predictions(r.run_id)] == [p.label for p in expected]
    assert run_evaluation(ws, r.run_id).value == r.evaluation.value
    assert sum(ws.runs.error_counts(r.run_id).values()) == 24           # taxonomy rows, as for imports
    exported = json.loads(export_run(ws, r.run_id, tmp_path).read_text(encoding="utf-8"))
    assert [x["label"] for x in exported] == [p.label for p in expected]


class EchoGold(Predictor):
    """Predicts whatever gold it is handed: a run made with it scores 0 unless gold leaks."""

    def __init__(self, task: str):
        self.task = get_task(task)
        self.card = ModelCard("echo", task, "test")

    def _predict_batch(self, batch):
        return [Example(key=e.key, index=e.index, text=e.text, label=e.label, spans=list(e.spans))
                for e in batch]


def test_model_run_shows_the_model_inputs_only(ws, tmp_path):
    r = model_run(ws, did(ws), EchoGold("KUAKE-QIC"), n_boot=0)
    assert r.evaluation.metrics["accuracy"] == 0.0
    ingest_file(ws, SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.json")
    r = model_run(ws, ws.datasets.find("CMeEE", "dev").dataset_id, EchoGold("CMeEE"), n_boot=0)
    assert r.evaluation.metrics["f1"] == 0.0


def test_model_of_another_task_is_refused_and_stores_nothing(ws):
    before = counts(ws)
    with pytest.raises(ModelTaskMismatch, match="predicts CMeEE, but dataset .* is KUAKE-QIC dev"):
        model_run(ws, did(ws), EchoGold("CMeEE"))
    assert counts(ws) == before


class ShortOfMemory(EchoGold):
    """Runs out of memory on batches above 5, as a GPU would."""

    def _predict_batch(self, batch):
        if len(batch) > 5:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return super()._predict_batch(batch)


def test_model_run_records_the_batch_size_that_fitted(ws):
    retries: list[tuple[int, int]] = []
    r = model_run(ws, did(ws), ShortOfMemory("KUAKE-QIC"), batch_size=16, on_retry=lambda *a: retries.append(a),
                  n_boot=0)
    params = ws.runs.get(r.run_id).params
    assert retries == [(16, 8), (8, 4)] and params["batch_size"] == 4 and params["batch_size_requested"] == 16
    assert len(ws.runs.predictions(r.run_id)) == 24
    with pytest.raises(ValueError, match="batch size must be at least 1"):
        model_run(ws, did(ws), EchoGold("KUAKE-QIC"), batch_size=0)


def test_exported_run_keeps_the_input_fields(tmp_path):
    """A model's CHIP-STS predictions carry only the label: the export takes `category` (and
    any other field) from the split's own records, as the official example submission does."""
    from cblue_core.records import Example
    from cblue_core.runs.record import export_run, record_run
    from cblue_core.store.ingest import ingest_file

    ws = connect(tmp_path / "sts.duckdb")
    did = ingest_file(ws, SAMPLE_DATA / "cblue/CHIP-STS/CHIP-STS_dev.json").result.dataset_id
    gold = ws.datasets.examples(did)
    bare = [Example(key=g.key, index=g.index, text=g.text, text2=g.text2, label="1") for g in gold]
    run = record_run(ws, did, bare, name="bare", source="model", n_boot=0).run_id
    out = export_run(ws, run, tmp_path / "out")
    ws.close()
    records = json.loads(out.read_text(encoding="utf-8"))
    source = json.loads((SAMPLE_DATA / "cblue/CHIP-STS/CHIP-STS_dev.json").read_text(encoding="utf-8"))
    assert [r["category"] for r in records] == [s["category"] for s in source]
    assert {r["label"] for r in records} == {"1"}


def test_reference_lists_are_read_only_for_the_taxonomies_that_use_them(tmp_path, monkeypatch):
    from cblue_core.runs.record import reference_lists
    from cblue_core.store.ingest import bootstrap_sample_data
    from cblue_core.store.resources import ResourceStore

    w = connect(tmp_path / "refs.duckdb")
    bootstrap_sample_data(w, SAMPLE_DATA)
    reads = {"icd_terms": 0, "schemas": 0}
    for name in reads:
        real = getattr(ResourceStore, name)

        def spy(self, _real=real, _name=name):
            reads[_name] += 1
            return _real(self)
        monkeypatch.setattr(ResourceStore, name, spy)
    assert reference_lists(w, "CMeEE") == {} and reference_lists(w, "KUAKE-QIC") == {}
    assert reads == {"icd_terms": 0, "schemas": 0}      # the 40k ICD terms not read for spans
    assert reference_lists(w, "CMeIE")["schemas"] and reads == {"icd_terms": 0, "schemas": 1}
    assert reference_lists(w, "CHIP-CDN")["icd_terms"] and reads == {"icd_terms": 1, "schemas": 1}
    w.close()
