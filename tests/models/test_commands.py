"""The `models`, `predict` and `run` commands, end to end on the tiny checkpoints and sample files."""
from __future__ import annotations

import argparse
import json
import os

import pytest

from cblue_core.cli.models import build_parser_hooks, cmd_models, cmd_predict, cmd_run, main
from cblue_core.io.validate import validate
from cblue_core.models import registry
from cblue_core.runs.record import export_run
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect

from .conftest import SAMPLE, fake_card_folder, fake_hf_folder


@pytest.fixture
def user_models(tiny, tmp_path, monkeypatch):
    """$CBLUE_STUDIO_MODELS -> the tiny checkpoints' folder; plus a broken user folder."""
    broken = fake_hf_folder(tmp_path / "extra" / "broken", weights=None)
    monkeypatch.setenv(registry.ENV_VAR, os.pathsep.join([str(tiny.root), str(tmp_path / "extra")]))
    return broken


def test_models_json(user_models, tmp_path, monkeypatch, capsys):
    root = tmp_path / "builtin"
    fake_card_folder(root / "qic-ngram", "qic-ngram")
    monkeypatch.setattr(registry, "BUILTIN_DIR", root)
    assert cmd_models(True) == 0
    out = json.loads(capsys.readouterr().out)
    models = {m["name"]: m for m in out["models"]}
    for m in out["models"]:
        assert set(m) == {"name", "task", "path", "kind", "role", "source", "size_bytes", "problem"}
    assert models["qic-ngram"]["source"] == "built-in"
    assert models["tiny-ner"] | {"path": None} == {
        "name": "tiny-ner", "task": "CMeEE", "path": None, "kind": "hf-token-classification",
        "role": "model", "source": "user", "size_bytes": models["tiny-ner"]["size_bytes"], "problem": None}
    assert models["tiny-ner"]["size_bytes"] > 1000
    assert models["tiny-lm"]["task"] is None and models["tiny-lm"]["kind"] == "hf-causal-lm"
    assert "no weights" in models["broken"]["problem"]


def test_models_table(user_models, capsys):
    assert cmd_models(False) == 0
    out = capsys.readouterr().out
    assert "tiny-qic" in out and "KUAKE-QIC" in out and "PROBLEM: no weights" in out


def test_models_table_empty(capsys):
    assert cmd_models(False) == 0
    assert "no models found" in capsys.readouterr().out


def test_predict_ner_to_folder(user_models, tmp_path, capsys):
    src = SAMPLE / "cblue" / "CMeEE" / "CMeEE_test.json"
    rc = cmd_predict("tiny-ner", str(src), str(tmp_path / "out"), "cpu", 2, False)
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    out = tmp_path / "out" / "CMeEE_test.json"
    assert out.is_file()
    assert "wrote 5 predictions of CMeEE" in cap.out and "timing: 5 examples" in cap.out
    rep = validate(out, "CMeEE", predictions=True).report
    assert rep.ok and rep.records == 5
    gold = json.loads(src.read_text(encoding="utf-8"))
    pred = json.loads(out.read_text(encoding="utf-8"))
    assert [r["text"] for r in pred] == [r["text"] for r in gold]
    for r in pred:  # official inclusive end_idx
        for e in r["entities"]:
            assert r["text"][e["start_idx"]:e["end_idx"] + 1] == e["entity"]


def test_predict_pairs_to_file_with_progress(tiny, tmp_path, capsys):
    out = tmp_path / "sub" / "sts.json"
    rc = cmd_predict(str(tiny.sts), str(SAMPLE / "cblue" / "CHIP-STS" / "CHIP-STS_test.json"),
                     str(out), "auto", 4, True)
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    recs = json.loads(out.read_text(encoding="utf-8"))
    assert len(recs) == 5 and all(r["label"] in ("0", "1") for r in recs)
    assert all("category" in r for r in recs)
    assert "predict CHIP-STS" in cap.err  # the tqdm bar on stderr


def test_predict_promptcblue_with_lm(tiny, tmp_path, capsys):
    rc = cmd_predict(str(tiny.lm_chat), str(SAMPLE / "promptcblue" / "dev.json"), str(tmp_path),
                     "cpu", 8, False, generation={"max_new_tokens": 4})
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    lines = (tmp_path / "test_predictions.json").read_text(encoding="utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    src = [json.loads(x) for x in (SAMPLE / "promptcblue" / "dev.json").read_text(encoding="utf-8").splitlines() if x.strip()]
    assert [r["sample_id"] for r in recs] == [r["sample_id"] for r in src]
    assert all(isinstance(r["target"], str) and r["target"] for r in recs)
    assert all(r["task_dataset"] == s["task_dataset"] for r, s in zip(recs, src))


def test_predict_errors(user_models, tiny, tmp_path, capsys, monkeypatch):
    src = str(SAMPLE / "cblue" / "CMeEE" / "CMeEE_test.json")
    assert cmd_predict("no-such-model", src, str(tmp_path), "cpu", 8, False) == 2
    err = capsys.readouterr().err
    assert "unknown model 'no-such-model'" in err and "tiny-ner" in err

    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cmd_predict("tiny-ner", src, str(tmp_path), "cuda", 8, False) == 2
    assert "CUDA is not available" in capsys.readouterr().err

    assert cmd_predict("tiny-ner", str(tmp_path / "CMeEE_test.json"), str(tmp_path), "cpu", 8, False) == 1
    assert "no such file" in capsys.readouterr().err

    bad = tmp_path / "CMeEE_test.json"
    bad.write_text('[{"txt": 1}]', encoding="utf-8")
    assert cmd_predict("tiny-ner", str(bad), str(tmp_path / "o"), "cpu", 8, False) == 1
    assert "input file refused" in capsys.readouterr().err

    assert cmd_predict("tiny-ner", src, str(tmp_path), "cpu", 8, False, task="KUAKE-QIC") == 2
    assert "is for task CMeEE, not KUAKE-QIC" in capsys.readouterr().err

    assert cmd_predict("broken", src, str(tmp_path), "cpu", 8, False) == 1
    assert "no weights" in capsys.readouterr().err

    assert cmd_predict("tiny-ner", src, str(tmp_path / "p"), "cpu", 0, False) == 2
    assert "--batch-size must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_predict_pickle_needs_opt_in(tiny, tmp_path, capsys):
    folder = tiny.pickle_only(tmp_path)
    src = str(SAMPLE / "cblue" / "KUAKE-QIC" / "KUAKE-QIC_test.json")
    assert cmd_predict(str(folder), src, str(tmp_path / "o"), "cpu", 8, False) == 1
    assert "safetensors" in capsys.readouterr().err
    with pytest.warns(UserWarning, match="pickle"):
        assert cmd_predict(str(folder), src, str(tmp_path / "o"), "cpu", 8, False, allow_pickle=True) == 0
    assert (tmp_path / "o" / "KUAKE-QIC_test.json").is_file()


def test_parser_hooks(user_models, tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="x")
    sub = parser.add_subparsers(dest="command", required=True)
    build_parser_hooks(sub)
    args = parser.parse_args(["models", "--json"])
    assert args.func(args) == 0
    assert "tiny-qic" in capsys.readouterr().out
    args = parser.parse_args(["predict", "--model", "tiny-qic", "--input",
                              str(SAMPLE / "cblue" / "KUAKE-QIC" / "KUAKE-QIC_test.json"),
                              "--out", str(tmp_path), "--batch-size", "2", "--no-progress"])
    assert args.device == "cpu" and args.func(args) == 0
    recs = json.loads((tmp_path / "KUAKE-QIC_test.json").read_text(encoding="utf-8"))
    assert len(recs) == 5 and all(r["label"] for r in recs)
    args = parser.parse_args(["predict", "--model", "tiny-lm", "--input", "in.json", "--out", "o",
                              "--max-new-tokens", "3", "--do-sample", "--seed", "5"])
    from cblue_core.cli.models import _generation_args
    assert _generation_args(args) == {"max_new_tokens": 3, "seed": 5, "do_sample": True}
    assert main(["models", "--dir", str(tmp_path / "none")]) == 0


@pytest.fixture
def workspace_db(tmp_path):
    db = tmp_path / "ws.duckdb"
    ws = connect(db)
    assert ingest_file(ws, SAMPLE / "cblue" / "CMeEE" / "CMeEE_dev.json").ok
    assert ingest_file(ws, SAMPLE / "promptcblue" / "dev.json", "PromptCBLUE", split="dev").ok
    ws.close()
    return str(db)


def test_run_stores_a_scored_model_run(user_models, workspace_db, capsys):
    assert cmd_run("tiny-ner", "dev", db=workspace_db, name="tiny on dev", batch_size=4, progress=False) == 0
    out = capsys.readouterr().out
    assert out.startswith("stored run #1 of tiny-ner on CMeEE dev: f1 = ") and "95% CI" in out
    ws = connect(workspace_db, read_only=True)
    run = ws.runs.get(1)
    assert (run.name, run.source, run.model, run.device) == ("tiny on dev", "model", "tiny-ner", "cpu")
    assert run.params["batch_size"] == 4 and run.params["kind"] == "hf-token-classification"
    assert len(ws.runs.predictions(1)) == ws.datasets.find("CMeEE", "dev").records
    ws.close()


def test_run_with_a_language_model_records_its_decoding(tiny, workspace_db, tmp_path, capsys):
    rc = cmd_run(str(tiny.lm_chat), "dev", db=workspace_db, task="PromptCBLUE", batch_size=8,
                 progress=False, generation={"max_new_tokens": 4, "seed": 3})
    assert rc == 0, capsys.readouterr().err
    ws = connect(workspace_db, read_only=True)
    run = ws.runs.all(task="PromptCBLUE")[0]
    assert run.params["max_new_tokens"] == 4 and run.source == "model"
    preds = ws.runs.predictions(run.run_id)
    assert all(p.meta.get("generation") is not None for p in preds)
    # the exported submission keeps the prompt fields post-processing reads
    out = export_run(ws, run.run_id, tmp_path / "export")
    ws.close()
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    src = [json.loads(x) for x in (SAMPLE / "promptcblue" / "dev.json").read_text(encoding="utf-8").splitlines()
           if x.strip()]
    for r, s in zip(recs, src):
        assert (r["sample_id"], r["task_type"], r.get("answer_choices") or None) == (
            s["sample_id"], s["task_type"], s.get("answer_choices") or None)


def test_run_errors_store_nothing(user_models, workspace_db, capsys):
    assert cmd_run("tiny-qic", "dev", db=workspace_db, progress=False) == 1
    assert "no KUAKE-QIC dev split in" in capsys.readouterr().err
    assert cmd_run("tiny-ner", "dev", db=workspace_db, dataset=2, progress=False) == 2
    assert "is for task CMeEE, but dataset 2 is PromptCBLUE dev" in capsys.readouterr().err
    missing = workspace_db + ".typo"
    assert cmd_run("tiny-ner", "dev", db=missing, progress=False) == 1
    assert "no workspace at" in capsys.readouterr().err and not os.path.exists(missing)
    assert cmd_run("no-such-model", "dev", db=workspace_db) == 2
    assert main(["run", "--model", "tiny-ner", "--db", workspace_db, "--batch-size", "0"]) == 2
    ws = connect(workspace_db, read_only=True)
    assert ws.runs.all() == []
    ws.close()
