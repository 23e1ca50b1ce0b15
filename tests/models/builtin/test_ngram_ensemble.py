"""The n-gram seed ensemble: trains on the sample data, saves safetensors and JSON only, loads
back to the same predictions, and predicts the mean of its members' probabilities."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from cblue_core.models.builtin import common as C
from cblue_core.models.builtin import load, ngram, ngram_ensemble
from cblue_core.tasks import get_task

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_data" / "cblue"
TINY = {"epochs": 2, "dim": 8, "hidden": 16, "max_vocab": 2000, "min_count": 1, "batch_size": 8,
        "extra": True, "members": 2}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("ens") / "kuake-qqr"
    card = ngram_ensemble.train("KUAKE-QQR", SAMPLE, out, seed=4, progress=False, overrides=TINY)
    return out, card


def dev_examples():
    return C.load_split(SAMPLE, get_task("KUAKE-QQR"), "dev")[0][:12]


def test_save_load_round_trip_without_pickle(trained):
    out, card = trained
    assert card.kind == ngram_ensemble.KIND and card.training["member_seeds"] == [4, 5]
    assert {p.name for p in out.iterdir()} == {"model.safetensors", "config.json", "vocab.json", "model_card.json",
                                               "README.md", "training_records.sha1.gz"}
    ex = dev_examples()
    p1 = load(out).predict(ex)
    p2 = ngram_ensemble.load_model(out).predict(ex)
    assert [p.to_dict() for p in p1] == [p.to_dict() for p in p2]
    assert all(p.label in ("0", "1", "2") for p in p1)


def test_prediction_is_the_members_mean(trained):
    out, _ = trained
    model = ngram_ensemble.load_model(out)
    members = model.net.members
    assert len(members) == 2
    assert not torch.equal(members[0].mlp[1].weight, members[1].mlp[1].weight)    # seeds apart
    x = ngram.Featurizer.collate(model.feat.encode(dev_examples()))
    with torch.inference_mode():
        mean = torch.stack([torch.softmax(m(x), -1) for m in members]).mean(0)
    assert torch.allclose(model.probabilities(dev_examples()), mean, atol=1e-5)


def test_first_member_is_the_single_model_of_that_seed(tmp_path):
    over = {k: v for k, v in TINY.items() if k != "members"}
    ngram.train("KUAKE-QQR", SAMPLE, tmp_path / "one", seed=4, progress=False, overrides=over)
    ngram_ensemble.train("KUAKE-QQR", SAMPLE, tmp_path / "ens", seed=4, progress=False,
                         overrides={**over, "members": 1})
    single = C.load_tensors(tmp_path / "one" / "model.safetensors")
    first = C.load_tensors(tmp_path / "ens" / "model.safetensors")
    assert set(first) == {f"members.0.{k}" for k in single}
    assert all(torch.equal(first[f"members.0.{k}"], v) for k, v in single.items())


def test_no_members_is_refused():
    cfg = ngram.NgramConfig(task="KUAKE-QQR", labels=["0", "1", "2"], pair=True, vocab_size=4)
    with pytest.raises(ValueError, match="at least one member"):
        ngram_ensemble.EnsembleNet(cfg, 0)


def test_single_texts_are_refused(tmp_path):
    with pytest.raises(ValueError, match="pair tasks"):
        ngram_ensemble.train("KUAKE-QIC", SAMPLE, tmp_path / "qic", progress=False, overrides=TINY)
