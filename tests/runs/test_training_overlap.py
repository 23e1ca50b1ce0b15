"""A model run on records its model was trained on says so, with the score on the rest: in the
core, on the command line (--json) and for user checkpoints that declare nothing."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cblue_core.io.validate import load
from cblue_core.models.provenance import (
    RECORDS_FILE,
    fingerprint,
    read_training_records,
    write_training_records,
)
from cblue_core.models.registry import ENCODER_KIND
from cblue_core.records import Example
from cblue_core.runs.record import overlap_sentence, training_overlap
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect
from cblue_core.tasks import get_task

ROOT = Path(__file__).resolve().parents[2]
QIC_DEV = ROOT / "sample_data" / "cblue" / "KUAKE-QIC" / "KUAKE-QIC_dev.json"


def ex(i, text, label, text2=None):
    return Example(key=str(i), index=i, text=text, text2=text2, label=label)


def test_fingerprint_is_the_nfc_text_and_pairs_join_with_a_tab():
    import hashlib
    import unicodedata
    decomposed = unicodedata.normalize("NFD", "café 咳嗽")
    assert fingerprint(ex(0, decomposed, "x")) == hashlib.sha1("café 咳嗽".encode()).hexdigest()
    assert fingerprint(ex(0, "a", "1", text2="b")) == hashlib.sha1(b"a\tb").hexdigest()


def test_records_file_round_trips_and_is_deterministic(tmp_path):
    examples = [ex(0, "头痛", "a"), ex(1, "发热", "b"), ex(2, "头痛", "c")]
    entry = write_training_records(tmp_path, examples, sources=["X/X_train.json"])
    first = (tmp_path / RECORDS_FILE).read_bytes()
    write_training_records(tmp_path, list(reversed(examples)), sources=["X/X_train.json"])
    assert (tmp_path / RECORDS_FILE).read_bytes() == first
    assert entry["records"] == 2 and read_training_records(tmp_path) == {fingerprint(e) for e in examples}
    assert read_training_records(tmp_path / "nothing-here") is None


def test_overlap_scores_the_unseen_part():
    task = get_task("KUAKE-QIC")
    gold = [ex(0, "头痛怎么办", "治疗方案"), ex(1, "发热吃什么药", "治疗方案"),
            ex(2, "糖尿病能喝牛奶吗", "注意事项"), ex(3, "感冒的原因", "病因分析")]
    pred = [ex(0, g.text, "治疗方案") for g in gold[:1]] + [
        ex(1, "", "治疗方案"), ex(2, "", "病因分析"), ex(3, "", "病因分析")]
    seen = frozenset({fingerprint(gold[0]), fingerprint(gold[1])})
    out = training_overlap(task, gold, pred, seen, n_boot=0)
    assert out["examples"] == 2 and out["share"] == 0.5 and out["indices"] == [0, 1]
    rest = out["metrics_without_overlap"]
    assert rest["examples"] == 2 and rest["headline"] == "accuracy" and rest["metrics"]["accuracy"] == 0.5
    assert "2 of these examples (50.0%)" in overlap_sentence(out, "m") and "accuracy = 0.5000" in overlap_sentence(out, "m")
    everything = frozenset(fingerprint(g) for g in gold)
    assert training_overlap(task, gold, pred, everything, n_boot=0)["metrics_without_overlap"] is None
    assert training_overlap(task, gold, pred, None) is None


@pytest.fixture
def qic_workspace(tmp_path):
    db = tmp_path / "ws.duckdb"
    ws = connect(db)
    assert ingest_file(ws, QIC_DEV).ok
    ws.close()
    return db


def run_json(model: Path, db: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "cblue_core", "run", "--model", str(model), "--split", "dev",
                           "--db", str(db), "--json"], capture_output=True, text=True, check=False,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(not (ROOT / "models" / "kuake-qic" / RECORDS_FILE).is_file(),
                    reason="the built-in KUAKE-QIC model is not in this checkout")
@pytest.mark.slow
def test_cli_run_json_reports_the_overlap(tmp_path, qic_workspace):
    model = tmp_path / "qic-copy"
    shutil.copytree(ROOT / "models" / "kuake-qic", model)
    dev = load(QIC_DEV, "KUAKE-QIC").examples
    write_training_records(model, dev[:3], sources=["part of the sample dev file"])
    out = run_json(model, qic_workspace)
    assert set(out) == {"run_id", "metrics", "training_overlap"}
    overlap = out["training_overlap"]
    assert overlap["examples"] == 3 and overlap["share"] == pytest.approx(3 / len(dev))
    assert overlap["metrics_without_overlap"]["examples"] == len(dev) - 3
    ws = connect(qic_workspace, read_only=True)
    assert ws.runs.get(out["run_id"]).metrics["training_overlap"]["indices"] == [0, 1, 2]
    ws.close()
    (model / RECORDS_FILE).unlink()                     # a checkpoint that declares nothing
    assert run_json(model, qic_workspace)["training_overlap"] is None


def test_shipped_models_declare_their_training_records():
    for card in sorted((ROOT / "models").glob("*/model_card.json")):
        raw = json.loads(card.read_text(encoding="utf-8"))
        if raw["kind"] == ENCODER_KIND:           # unsupervised: it lists its corpus instead
            assert raw["training"]["corpus"]["sources"] and not read_training_records(card.parent)
            continue
        entry = raw["training"]["supervised_records"]
        records = read_training_records(card.parent)
        assert records is not None and len(records) == entry["records"] > 1000, card.parent.name


@pytest.mark.parametrize("name", ["kuake-qic", "cmeie"])
def test_shipped_records_are_the_training_files(name, cblue_dir):
    from cblue_core.models.builtin import supervised_training_data
    from cblue_core.models.builtin.common import read_card

    folder = ROOT / "models" / name
    examples, _ = supervised_training_data(read_card(folder), cblue_dir)
    assert read_training_records(folder) == {fingerprint(e) for e in examples}
