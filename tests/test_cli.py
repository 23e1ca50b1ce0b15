"""`python -m cblue_core ...`: validate, ingest, list, export, tasks."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cblue_core.cli import main

ROOT = Path(__file__).resolve().parents[1]

RECORDS = [{"id": "s1", "query1": "头痛怎么办", "query2": "头疼如何处理", "label": "2"},
           {"id": "s2", "query1": "胃痛吃什么药", "query2": "胃痛的原因", "label": "NA"}]


@pytest.fixture
def qqr(tmp_path):
    p = tmp_path / "KUAKE-QQR_dev.json"
    p.write_text(json.dumps(RECORDS, ensure_ascii=False, indent=2), encoding="utf-8")
    return p


def test_validate_json_fields(qqr, capsys):
    assert main(["validate", str(qqr), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["task"] == "KUAKE-QQR" and out["records"] == 2 and out["annotations"] == 2
    assert out["offset_convention"] == "none" and out["errors"] == []
    assert len(out["warnings"]) == 1 and "'NA'" in out["warnings"][0]


def test_validate_strict_exit_status(qqr, capsys):
    assert main(["validate", str(qqr), "--strict", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["errors"]


def test_validate_task_override(tmp_path, capsys):
    p = tmp_path / "whatever.json"
    p.write_text(json.dumps(RECORDS, ensure_ascii=False), encoding="utf-8")
    assert main(["validate", str(p), "--json"]) == 1
    capsys.readouterr()
    assert main(["validate", str(p), "--task", "KUAKE-QQR", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["task"] == "KUAKE-QQR"


def test_validate_refused_file_exit_status(tmp_path, capsys):
    p = tmp_path / "CMeEE_dev.json"
    p.write_bytes('[{"text": "发热"'.encode())
    assert main(["validate", str(p)]) == 1
    assert "REFUSED" in capsys.readouterr().out


def test_unknown_task_is_a_message(qqr, capsys):
    assert main(["validate", str(qqr), "--task", "NoSuchTask"]) == 2
    assert "unknown task" in capsys.readouterr().err


def test_ingest_list_export_round_trip(qqr, tmp_path, capsys):
    db = tmp_path / "ws.duckdb"
    assert main(["ingest", str(qqr), "--db", str(db)]) == 0
    assert main(["ingest", str(qqr), "--db", str(db)]) == 0   # same content: not duplicated
    assert "already in the workspace" in capsys.readouterr().out
    assert main(["list", "--db", str(db), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [(d["task"], d["split"], d["records"]) for d in listing["datasets"]] == [("KUAKE-QQR", "dev", 2)]
    out_dir = tmp_path / "export"
    assert main(["export", "--task", "KUAKE-QQR", "--split", "dev", "--db", str(db), "--out", str(out_dir)]) == 0
    assert json.loads((out_dir / "KUAKE-QQR_dev.json").read_text(encoding="utf-8")) == RECORDS


def test_commands_without_db_use_the_default_workspace(qqr, tmp_path, monkeypatch, capsys):
    db = tmp_path / "default.duckdb"
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    assert main(["ingest", str(qqr)]) == 0 and db.is_file()
    capsys.readouterr()
    assert main(["list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [d["task"] for d in listing["datasets"]] == ["KUAKE-QQR"]
    assert main(["run", "--model", "kuake-qqr", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("stored run #1 of kuake-qqr on KUAKE-QQR dev: accuracy = ")
    assert main(["export", "--task", "KUAKE-QQR", "--split", "dev", "--out", str(tmp_path / "x")]) == 0


def test_ingest_refusal_exit_status(tmp_path, capsys):
    bad = tmp_path / "CHIP-STS_dev.json"
    bad.write_text("[1, 2", encoding="utf-8")
    assert main(["ingest", str(bad), "--db", str(tmp_path / "ws.duckdb")]) == 1
    assert "REFUSED" in capsys.readouterr().out


def test_tasks_json(capsys):
    assert main(["tasks", "--json"]) == 0
    names = {t["name"] for t in json.loads(capsys.readouterr().out)["tasks"]}
    assert {"CMeEE", "CMeIE", "CHIP-CDN", "CHIP-CTC", "CHIP-STS", "KUAKE-QIC", "KUAKE-QTR", "KUAKE-QQR",
            "CMeEE-V2", "CMeIE-V2", "CHIP-CDEE", "IMCS-V2-NER", "IMCS-V2-DAC", "IMCS-V2-SR",
            "IMCS-V2-MRG", "CHIP-MDCFNPC", "KUAKE-IR", "MedDG", "Text2DT", "CMedCausal",
            "PromptCBLUE", "CliMedBench"} <= names


def test_module_entry_point(qqr):
    proc = subprocess.run([sys.executable, "-m", "cblue_core", "validate", str(qqr), "--json"],
                          capture_output=True, text=True, check=False, cwd=ROOT, timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["records"] == 2


def test_evaluate_promptcblue_reference(promptcblue_dir, capsys):
    ref = promptcblue_dir / "reference"
    for pred, expected in (("pred_perfect.jsonl", "perfect"), ("pred_empty.jsonl", "empty")):
        assert main(["evaluate", "--task", "PromptCBLUE", "--gold", str(ref / "inputs/dev_v2.jsonl"),
                     "--pred", str(ref / "inputs" / pred), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        official = json.loads((ref / expected / "eval_result.json").read_text(encoding="utf-8"))
        assert abs(out["score"] - official["score"]) < 1e-9
        assert len(out["tasks"]) == 18
        for task, value in out["tasks"].items():
            key = next(k for k in official["scoreJson"] if k.startswith(task + "-"))
            assert abs(value - official["scoreJson"][key]) < 1e-9, task
        assert "clean" in out


def test_evaluate_cblue_example_files(cblue_dir, capsys):
    # CMeEE example files: gold 10 entities, prediction 8, of which 5 exact matches
    # (counted by hand from the files): P = 5/8, R = 5/10, F1 = 2*5/(8+10) = 0.5556
    assert main(["evaluate", "--gold", str(cblue_dir / "CMeEE/example_gold.json"),
                 "--pred", str(cblue_dir / "CMeEE/example_pred.json"), "--task", "CMeEE", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["task"] == "CMeEE"
    assert out["metrics"]["precision"] == pytest.approx(5 / 8)
    assert out["metrics"]["recall"] == pytest.approx(5 / 10)
    assert out["metrics"]["f1"] == pytest.approx(10 / 18)


def test_evaluate_classification_json_keys(capsys):
    gold = ROOT / "sample_data/cblue/CHIP-CTC/CHIP-CTC_dev.json"
    assert main(["evaluate", "--gold", str(gold), "--pred", str(gold), "--json", "--bootstrap", "100"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"]["accuracy"] == 1.0 and out["metrics"]["macro_f1"] == 1.0


def test_evaluate_refuses_unmatched(tmp_path, capsys):
    gold = ROOT / "sample_data/cblue/KUAKE-QIC/KUAKE-QIC_dev.json"
    recs = json.loads(gold.read_text(encoding="utf-8"))[:3]
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps(recs, ensure_ascii=False), encoding="utf-8")
    assert main(["evaluate", "--gold", str(gold), "--pred", str(pred)]) == 1
    assert "missing" in capsys.readouterr().err
