"""Shipping a newly trained model: only a higher dev score replaces the shipped one, the new card
records what it replaced, and `train` then defaults to the shipped architecture."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cblue_core.models.base import ModelCard
from cblue_core.models.builtin import common as C
from cblue_core.models.builtin import shipped_architecture
from cblue_core.models.builtin.shipping import ship
from cblue_core.models.report import KEPT_OVER, REPLACES

ROOT = Path(__file__).resolve().parents[3]


def model(folder: Path, kind: str, accuracy: float, dev_examples: int = 1955) -> Path:
    folder.mkdir(parents=True)
    (folder / "adapter.safetensors").write_bytes(b"weights of " + kind.encode())
    (folder / "config.json").write_text(json.dumps({"encoder": "encoder"}))
    (folder / "checkpoint").mkdir()
    (folder / "checkpoint" / "state.json").write_text("{}")
    card = ModelCard(name=folder.name, task="KUAKE-QIC", kind=kind, labels=["a"], description="d",
                     training={"data": {"dev_examples": dev_examples}, "time_s": 60,
                               "command": f"python -m cblue_core train --task KUAKE-QIC --data ../shared/cblue "
                                          f"--out {folder} --architecture encoder --encoder /tmp/enc"},
                     dev_metrics={"headline": "accuracy", "metrics": {"accuracy": accuracy},
                                  "intervals": {"accuracy": [accuracy - 0.02, accuracy + 0.02]}})
    C.finish_card(folder, card, f"# {folder.name}\n\n`{card.training['command']}`\n")
    return folder


@pytest.fixture
def shipped(tmp_path) -> Path:
    models = tmp_path / "models"
    model(models / "kuake-qic", "ngram-classifier", 0.7422)
    return models


def test_a_better_model_replaces_the_shipped_one_and_says_what_it_replaced(tmp_path, shipped):
    assert shipped_architecture("KUAKE-QIC", shipped) == "scratch"
    new = model(tmp_path / "new" / "kuake-qic", "encoder-classifier", 0.7642)
    decision = ship(new, shipped)
    assert decision.shipped and decision.old == pytest.approx(0.7422) and decision.new == pytest.approx(0.7642)
    dest = shipped / "kuake-qic"
    card = C.read_card(dest)
    assert card.kind == "encoder-classifier"
    assert card.extra[REPLACES] == {"name": "kuake-qic", "kind": "ngram-classifier", "headline": "accuracy",
                                    "dev": 0.7422, "low": pytest.approx(0.7222), "high": pytest.approx(0.7622)}
    assert not (dest / "checkpoint").exists()                       # training state stays behind
    assert card.size_bytes == sum(p.stat().st_size for p in dest.iterdir() if p.is_file())
    assert "**Replaces.** `kuake-qic` (ngram-classifier), dev accuracy 0.7422" in (dest / "README.md").read_text()
    shipped_command = ("python -m cblue_core train --task KUAKE-QIC --data ../shared/cblue "
                       "--out models/kuake-qic --architecture encoder")         # the shipped encoder
    assert card.training["command"] == shipped_command and shipped_command in (dest / "README.md").read_text()
    assert shipped_architecture("KUAKE-QIC", shipped) == "encoder"   # `train` follows what ships
    # a later, better encoder model still names the from-scratch model it replaced
    newer = model(tmp_path / "newer" / "kuake-qic", "encoder-classifier", 0.77)
    assert ship(newer, shipped).shipped
    assert C.read_card(dest).extra[REPLACES]["kind"] == "ngram-classifier"


def test_a_model_trained_in_another_folder_is_named_by_its_folder_in_models(tmp_path, shipped):
    new = model(tmp_path / "runs" / "qic-try-3", "encoder-classifier", 0.7642)
    assert ship(new, shipped).shipped
    card = C.read_card(shipped / "kuake-qic")
    assert card.name == "kuake-qic" and (shipped / "kuake-qic" / "README.md").read_text().startswith("# kuake-qic\n")


def test_a_worse_or_equal_model_of_the_same_kind_changes_nothing(tmp_path, shipped):
    before = {p.name: p.read_bytes() for p in (shipped / "kuake-qic").iterdir() if p.is_file()}
    for i, score in enumerate((0.70, 0.7422)):
        decision = ship(model(tmp_path / f"n{i}" / "kuake-qic", "ngram-classifier", score), shipped)
        assert not decision.shipped and "kept kuake-qic" in decision.reason
    assert {p.name: p.read_bytes() for p in (shipped / "kuake-qic").iterdir() if p.is_file()} == before
    assert [p.name for p in shipped.iterdir()] == ["kuake-qic"]


def test_a_worse_model_of_another_kind_is_recorded_as_kept_over(tmp_path, shipped):
    dest = shipped / "kuake-qic"
    weights = (dest / "adapter.safetensors").read_bytes()
    for i, score in enumerate((0.70, 0.72)):        # a later try of the same kind replaces the note
        decision = ship(model(tmp_path / f"n{i}" / "kuake-qic", "encoder-classifier", score), shipped)
        assert not decision.shipped and "kept over" in decision.reason
    card = C.read_card(dest)
    assert card.kind == "ngram-classifier" and (dest / "adapter.safetensors").read_bytes() == weights
    assert card.extra[KEPT_OVER] == [{"name": "kuake-qic", "kind": "encoder-classifier", "headline": "accuracy",
                                      "dev": 0.72, "low": pytest.approx(0.70), "high": pytest.approx(0.74),
                                      "time_s": 60}]
    readme = (dest / "README.md").read_text()
    assert readme.count("**Kept over.**") == 1 and "(encoder-classifier), dev accuracy 0.7200" in readme
    assert card.size_bytes == sum(p.stat().st_size for p in dest.iterdir() if p.is_file())
    assert [p.name for p in shipped.iterdir()] == ["kuake-qic"]


def test_a_replacement_keeps_the_notes_of_the_models_its_predecessor_was_kept_over(tmp_path, shipped):
    ship(model(tmp_path / "enc" / "kuake-qic", "encoder-classifier", 0.70), shipped)
    decision = ship(model(tmp_path / "ens" / "kuake-qic", "ngram-ensemble", 0.75), shipped)
    assert decision.shipped
    dest = shipped / "kuake-qic"
    card = C.read_card(dest)
    assert card.kind == "ngram-ensemble" and card.extra[REPLACES]["kind"] == "ngram-classifier"
    assert [(n["kind"], n["dev"]) for n in card.extra[KEPT_OVER]] == [("encoder-classifier", 0.70)]
    readme = (dest / "README.md").read_text()
    assert "**Replaces.** `kuake-qic` (ngram-classifier)" in readme
    assert "**Kept over.** This model scored higher on dev than `kuake-qic` (encoder-classifier), dev accuracy 0.7000" in readme


def test_scores_on_other_examples_are_not_compared(tmp_path, shipped):
    other = model(tmp_path / "x" / "kuake-qic", "encoder-classifier", 0.9, dev_examples=100)
    with pytest.raises(ValueError, match="not comparable"):
        ship(other, shipped)
    assert C.read_card(shipped / "kuake-qic").kind == "ngram-classifier"


def test_the_command_line(tmp_path, shipped):
    new = model(tmp_path / "new" / "kuake-qic", "encoder-classifier", 0.7642)
    out = subprocess.run([sys.executable, "-m", "cblue_core", "ship-model", str(new), "--models-dir", str(shipped),
                          "--json"], check=False, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["shipped"] is True
    bad = subprocess.run([sys.executable, "-m", "cblue_core", "ship-model", str(tmp_path / "nothing"),
                          "--models-dir", str(shipped)], check=False, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "error:" in bad.stderr


def test_a_link_planted_at_the_old_staging_name_is_left_alone(tmp_path, shipped):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    (shipped / ".kuake-qic.incoming").symlink_to(victim)
    new = model(tmp_path / "new" / "kuake-qic", "encoder-classifier", 0.7642)
    assert ship(new, shipped).shipped
    assert (victim / "keep.txt").read_text() == "precious" and sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    assert C.read_card(shipped / "kuake-qic").kind == "encoder-classifier"
    assert (shipped / "kuake-qic").stat().st_mode & 0o777 == new.stat().st_mode & 0o777
