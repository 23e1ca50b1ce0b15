"""`python -m cblue_core label-issues`: the JSON shape, the model's training records left out,
span tasks (one issue per span), and one-line errors for an unknown run and a run without
probabilities."""
from __future__ import annotations

import json

import pytest

from cblue_core.cli import main
from cblue_core.models.provenance import fingerprint
from cblue_core.records import Example, Span
from cblue_core.runs.record import record_run
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect

CLASSES = ("病情诊断", "病因分析", "治疗方案", "其他")
FLIPPED = {5: "治疗方案", 13: "其他"}   # position -> the true label the run believes


def dist(best: str, p: float) -> dict[str, float]:
    return {c: p if c == best else (1 - p) / (len(CLASSES) - 1) for c in CLASSES}


@pytest.fixture
def workspace(tmp_path):
    """A KUAKE-QIC dev split with two planted errors and a model run whose probabilities point
    at the true labels; the model declares record 13 as one it was trained on."""
    records = []
    for i in range(40):
        true = CLASSES[i % len(CLASSES)]
        given = next(c for c in CLASSES if c != FLIPPED[i]) if i in FLIPPED else true
        records.append({"id": f"s{i}", "query": f"问题{i}", "label": given})
    path = tmp_path / "KUAKE-QIC_dev.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "ws.duckdb"
    ws = connect(db)
    try:
        out = ingest_file(ws, path)
        assert out.ok, out.message
        dataset_id = out.result.dataset_id
        gold = ws.datasets.examples(dataset_id)
        preds = []
        for ex in gold:
            true = FLIPPED.get(ex.index, str(ex.label))
            p = 0.96 if ex.index in FLIPPED else 0.85
            preds.append(Example(key=ex.key, index=ex.index, label=true, meta={"probabilities": dist(true, p)}))
        model_run = record_run(ws, dataset_id, preds, name="fake model", source="model", model="fake",
                               n_boot=0, training_records=frozenset({fingerprint(gold[13])}))
        bare = [Example(key=ex.key, index=ex.index, label=ex.label) for ex in gold]
        imported = record_run(ws, dataset_id, bare, name="labels only", source="import", n_boot=0)
        cmeee = tmp_path / "CMeEE_dev.json"
        cmeee.write_text(json.dumps([{"text": "发热三天", "entities": [
            {"start_idx": 0, "end_idx": 1, "type": "sym", "entity": "发热"}]}], ensure_ascii=False),
            encoding="utf-8")
        span_out = ingest_file(ws, cmeee)
        assert span_out.ok, span_out.message
        span_gold = ws.datasets.examples(span_out.result.dataset_id)
        span_run = record_run(ws, span_out.result.dataset_id, span_gold, name="spans", source="import", n_boot=0)
    finally:
        ws.close()
    return {"db": str(db), "model": model_run.run_id, "imported": imported.run_id, "spans": span_run.run_id}


def test_json_lists_the_planted_error_and_counts_training_records(workspace, capsys):
    assert main(["label-issues", "--run", str(workspace["model"]), "--db", workspace["db"], "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"issues", "excluded_training"}
    assert out["excluded_training"] == 1   # record 13 was in the model's training data
    assert [i["idx"] for i in out["issues"]] == [5]
    issue = out["issues"][0]
    assert set(issue) == {"idx", "key", "score", "reason", "given", "suggested"}
    assert (issue["key"], issue["given"], issue["suggested"]) == ("s5", "病情诊断", "治疗方案")
    assert issue["reason"] == "model gives 0.96 to 治疗方案, gold says 病情诊断 (0.01)"


def test_top_limits_the_list_and_text_says_what_was_left_out(workspace, capsys):
    assert main(["label-issues", "--run", str(workspace["model"]), "--db", workspace["db"], "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "1 probable gold errors among 39 examples" in out
    assert "1 left out as training records" in out
    assert "#5 s5" in out


@pytest.mark.parametrize("run, message", [
    ("999", "no run 999"),
    ("imported", "no class probabilities"),
    ("spans", "no span probabilities"),
])
def test_errors_are_one_line_and_json(workspace, capsys, run, message):
    run_id = str(workspace.get(run, run))
    assert main(["label-issues", "--run", run_id, "--db", workspace["db"], "--json"]) == 1
    captured = capsys.readouterr()
    assert message in json.loads(captured.out)["error"]
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1


def test_missing_workspace_is_refused(tmp_path, capsys):
    assert main(["label-issues", "--run", "1", "--db", str(tmp_path / "none.duckdb"), "--json"]) == 2
    assert "no workspace at" in json.loads(capsys.readouterr().out)["error"]
    assert not (tmp_path / "none.duckdb").exists()


def test_top_below_one_is_a_usage_error(workspace, capsys):
    assert main(["label-issues", "--run", str(workspace["model"]), "--db", workspace["db"], "--top", "0"]) == 2
    assert "--top must be at least 1" in capsys.readouterr().err


SPAN_TEXT = "患者发热咳嗽三天伴头痛"
SPAN_TRUTH = [(2, 4, "sym"), (4, 6, "sym"), (9, 11, "dis")]


@pytest.fixture
def span_workspace(tmp_path):
    """A CMeEE dev split whose record 4 lost its 咳嗽 span and record 9 had 头痛 retyped; a model
    run predicting the true spans with probabilities, trained on record 9."""
    records, preds_spans = [], []
    for i in range(24):
        spans = list(SPAN_TRUTH)
        if i == 4:
            spans.pop(1)
        if i == 9:
            spans[2] = (9, 11, "sym")
        text = f"{SPAN_TEXT}，第{i}次"     # distinct texts: a record's fingerprint is its text
        records.append({"text": text, "entities": [
            {"start_idx": s, "end_idx": e - 1, "type": t, "entity": text[s:e]} for s, e, t in spans]})
        found = [(s, e, t, 0.97 if i in (4, 9) else 0.9) for s, e, t in SPAN_TRUTH]
        if i % 4 == 0:
            found.append((7, 8, "bod", 0.55))   # a doubtful prediction gold rightly lacks
        preds_spans.append(found)
    path = tmp_path / "CMeEE_dev.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "spans.duckdb"
    ws = connect(db)
    try:
        out = ingest_file(ws, path)
        assert out.ok, out.message
        gold = ws.datasets.examples(out.result.dataset_id)
        preds = [Example(key=ex.key, index=ex.index, text=ex.text,
                         spans=[Span(s, e, t, ex.text[s:e]) for s, e, t, _ in found],
                         meta={"span_probabilities": [p for *_, p in found]})
                 for ex, found in zip(gold, preds_spans)]
        run = record_run(ws, out.result.dataset_id, preds, name="span model", source="model", model="fake",
                         n_boot=0, training_records=frozenset({fingerprint(gold[9])}))
    finally:
        ws.close()
    return {"db": str(db), "run": run.run_id}


def test_span_task_lists_the_dropped_span_and_leaves_out_training_records(span_workspace, capsys):
    assert main(["label-issues", "--run", str(span_workspace["run"]), "--db", span_workspace["db"], "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["excluded_training"] == 1          # record 9 (the retyped one) was trained on
    assert [(i["idx"], i["given"], i["suggested"]) for i in out["issues"]] == [
        (4, "(no span)", "sym '咳嗽' [4, 6)")]
    assert set(out["issues"][0]) == {"idx", "key", "score", "reason", "given", "suggested"}
