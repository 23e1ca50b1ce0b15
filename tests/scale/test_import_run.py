"""import-run: a folder of Parquet prediction shards imports as the same run as the same
predictions in one file."""
from __future__ import annotations

import json

import pytest

from cblue_core.cli import main
from cblue_core.cli.models import cmd_predict
from cblue_core.cli.scale import cmd_import_run
from cblue_core.scale.imports import iter_folder_records
from cblue_core.store.workspace import connect

from .conftest import DEV, SAMPLE, read_records, write_jsonl, write_parquet


@pytest.fixture
def predictions(tmp_path):
    """CMeEE dev predicted by the built-in model: one official file and the same predictions as
    a folder of Parquet shards (input: the dev records cut into 3 JSON-lines shards)."""
    recs = read_records(DEV)
    inp = tmp_path / "in"
    for k, part in enumerate((recs[:9], recs[9:17], recs[17:])):
        write_jsonl(inp / f"dev-{k}.jsonl", [{"text": r["text"]} for r in part])
    folder = tmp_path / "pred-folder"
    assert cmd_predict("cmeee", str(inp), str(folder), progress=False) == 0
    file_dir = tmp_path / "pred-file"
    assert cmd_predict("cmeee", str(DEV), str(file_dir), progress=False) == 0
    return folder, file_dir / "CMeEE_test.json" if (file_dir / "CMeEE_test.json").exists() else \
        next(file_dir.glob("*.json"))


def test_folder_import_equals_file_import(workspace, predictions, capsys):
    folder, file = predictions
    assert [r["text"] for r in iter_folder_records(folder)] == [r["text"] for r in read_records(DEV)]
    assert cmd_import_run(str(folder), task="CMeEE", split="dev", db=workspace, json_out=True) == 0
    a = json.loads(capsys.readouterr().out)
    assert cmd_import_run(str(file), task="CMeEE", split="dev", db=workspace, json_out=True, name="f") == 0
    b = json.loads(capsys.readouterr().out)
    assert set(a) == {"run_id", "metrics", "match"} and (a["run_id"], b["run_id"]) == (1, 2)
    assert a["match"] == b["match"] == {"matched": 25, "missing": 0, "extra": 0, "duplicates": 0}
    drop = ("match",)
    assert {k: v for k, v in a["metrics"].items() if k not in drop} == \
        {k: v for k, v in b["metrics"].items() if k not in drop}
    ws = connect(workspace, read_only=True)
    try:
        pa, pb = ws.runs.predictions(1), ws.runs.predictions(2)
        assert [(p.key, p.spans) for p in pa] == [(p.key, p.spans) for p in pb]
        assert ws.runs.get(1).name == "pred-folder"
    finally:
        ws.close()


def test_flat_parquet_folder_without_manifest(workspace, tmp_path, capsys):
    recs = read_records(SAMPLE / "CMeEE" / "CMeEE_dev.pred.json")
    folder = tmp_path / "flat"
    write_parquet(folder / "a.parquet", recs[:10])
    write_parquet(folder / "b.parquet", recs[10:])
    assert [r["text"] for r in iter_folder_records(folder)] == [r["text"] for r in recs]
    assert main(["import-run", "--task", "CMeEE", "--split", "dev", "--pred", str(folder), "--db", workspace]) == 0
    assert "stored run #1 on CMeEE dev" in capsys.readouterr().out
    assert main(["import-run", "--dataset", "1", "--pred", str(folder), "--db", workspace, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["run_id"] == 2 and out["match"] == {"matched": 25, "missing": 0, "extra": 0, "duplicates": 0}


def test_refusals(workspace, tmp_path, capsys):
    recs = read_records(SAMPLE / "CMeEE" / "CMeEE_dev.pred.json")
    folder = tmp_path / "part"
    write_parquet(folder / "a.parquet", recs[:10])
    assert cmd_import_run(str(folder), task="CMeEE", split="dev", db=workspace, json_out=True) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["error"] == "predictions refused" and any("missing" in d for d in out["defects"])
    assert cmd_import_run(str(folder), task="CMeEE", split="dev", db=workspace, allow_missing=True,
                          json_out=True) == 0
    assert json.loads(capsys.readouterr().out)["match"]["missing"] == 15
    odd = tmp_path / "odd"
    write_parquet(odd / "a[1].parquet", recs)
    assert cmd_import_run(str(odd), dataset=1, db=workspace) == 1
    assert "glob character" in capsys.readouterr().err
    assert cmd_import_run(str(folder), task="CMeEE", db=workspace) == 2
    assert cmd_import_run(str(folder), dataset=1, task="CMeEE", split="dev", db=workspace) == 2
    assert cmd_import_run(str(folder), task="CMeEE", split="test", db=workspace) == 1
    assert cmd_import_run(str(folder), dataset=1, db=str(tmp_path / "none.duckdb")) == 1
    assert cmd_import_run(str(tmp_path / "nothing"), dataset=1, db=workspace) == 1


def test_wired_into_the_command_line():
    from cblue_core.cli import build_parser

    args = build_parser().parse_args(["import-run", "--dataset", "3", "--pred", "x", "--json", "--allow-missing"])
    assert (args.dataset, args.pred, args.json, args.allow_missing) == (3, "x", True, True)
    assert args.func.__module__ == "cblue_core.cli.scale"
