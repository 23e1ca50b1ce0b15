"""CHIP-CDN on the shared encoder (kind encoder-cdn-reranker): the scratch pipeline plus two
similarity features from the frozen encoder; the folder names the encoder and ships no copy of it."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from cblue_core.models import registry
from cblue_core.models.builtin import cdn, common, load, train
from cblue_core.models.registry import weights_sha1
from cblue_core.records import Example
from tests.models.encoder.conftest import DATA

TINY = {"epochs": 2, "hidden": 8, "k_terms": 10, "k_memory": 3}


@pytest.fixture(scope="module")
def models(tmp_path_factory, tiny_encoder):
    root = tmp_path_factory.mktemp("cdn") / "models"
    shutil.copytree(tiny_encoder, root / "encoder")
    on_encoder = train("CHIP-CDN", DATA, root / "chip-cdn", seed=1, progress=False, architecture="encoder",
                       encoder=root / "encoder", overrides=TINY)
    scratch = train("CHIP-CDN", DATA, root.parent / "scratch" / "chip-cdn", seed=1, progress=False,
                    architecture="scratch", overrides=TINY)
    return root, on_encoder, scratch


def test_the_folder_names_the_encoder_and_ships_no_copy(models):
    root, card, scratch = models
    assert card.kind == cdn.ENCODER_KIND and scratch.kind == cdn.KIND
    config = common.read_json(root / "chip-cdn" / "config.json")
    assert config["encoder"] == "encoder" and config["encoder_sha1"] == weights_sha1(root / "encoder")
    assert "encoder" not in common.read_json(root.parent / "scratch" / "chip-cdn" / "config.json")
    shipped = {p.name for p in (root / "chip-cdn").iterdir()}
    assert shipped == {p.name for p in (root.parent / "scratch" / "chip-cdn").iterdir()}   # nothing more
    assert card.training["command"].endswith(f"--architecture encoder --encoder {root / 'encoder'}")
    assert "encoder" in card.description and card.extra["encoder"]["sha1"] == config["encoder_sha1"]


def test_the_encoder_adds_two_features_to_every_candidate(models):
    root, _, _ = models
    model = load(root / "chip-cdn")
    texts = ["左肺上叶肺癌", "高血压3级"]
    with_enc = model.gen.candidates(texts)
    model.gen.similarity = None
    plain = model.gen.candidates(texts)
    for (ids, f), (ids0, f0) in zip(with_enc, plain):
        assert ids == ids0 and f.shape == (len(ids), cdn.N_FEATS + cdn.N_ENCODER_FEATS)
        np.testing.assert_array_equal(f[:, :cdn.N_FEATS], f0)
        cos, gap = f[:, cdn.N_FEATS], f[:, cdn.N_FEATS + 1]
        assert np.all(cos <= 1 + 1e-5) and np.all(cos >= -1 - 1e-5)
        assert gap.max() == pytest.approx(0.0) and np.allclose(gap, cos - cos.max())


def test_reloaded_model_predicts_valid_terms(models):
    root, _, _ = models
    gold = [Example(key="k", index=i, text=t) for i, t in enumerate(["左肺上叶肺癌", "高血压3级", "", "<b>x</b>"])]
    p1, p2 = load(root / "chip-cdn").predict(gold), load(root / "chip-cdn").predict(gold)
    assert [p.to_dict() for p in p1] == [p.to_dict() for p in p2]
    assert all(1 <= len(p.terms) <= cdn.CdnConfig().max_terms for p in p1)


def test_a_missing_or_other_encoder_is_a_clear_problem(models, tmp_path):
    root, _, _ = models
    copy = tmp_path / "models"
    shutil.copytree(root, copy)
    shutil.rmtree(copy / "encoder")
    assert "is not there" in (registry.shared_encoder_problem(copy / "chip-cdn") or "")
    with pytest.raises(FileNotFoundError, match="shared encoder"):
        load(copy / "chip-cdn")
    shutil.copytree(root / "encoder", copy / "encoder")
    weights = copy / "encoder" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-4] + b"\0\0\0\0")
    assert "other weights" in (registry.shared_encoder_problem(copy / "chip-cdn") or "")
    with pytest.raises(ValueError, match="not the one this model was trained with"):
        load(copy / "chip-cdn")
    assert registry.shared_encoder_problem(root.parent / "scratch" / "chip-cdn") is None
