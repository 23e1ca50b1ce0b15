"""The pair GBM: trees exported from scikit-learn give its probabilities back, the folder holds
safetensors and JSON only and loads back to the same predictions."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from cblue_core.models.builtin import common as C
from cblue_core.models.builtin import load, pair_gbm
from cblue_core.tasks import get_task

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_data" / "cblue"


def test_exported_forest_matches_sklearn():
    rng = np.random.RandomState(0)
    x = rng.rand(300, 5)
    y = (x[:, 0] * 2 + x[:, 3]).astype(int)           # 3 classes
    model = HistGradientBoostingClassifier(max_iter=15, random_state=0).fit(x, y)
    forest = pair_gbm.Forest.from_sklearn(model)
    test = rng.rand(50, 5)
    assert np.allclose(forest.probabilities(test), model.predict_proba(test), atol=1e-9)
    again = pair_gbm.Forest.from_tensors(forest.to_tensors())
    assert np.array_equal(again.probabilities(test), forest.probabilities(test))


def test_train_save_load_round_trip_without_pickle(tmp_path):
    out = tmp_path / "kuake-qqr"
    card = pair_gbm.train("KUAKE-QQR", SAMPLE, out, overrides={"max_iter": 5, "min_samples_leaf": 2})
    assert card.kind == pair_gbm.KIND and card.dev_metrics["headline"] == "accuracy"
    assert {p.name for p in out.iterdir()} == {"model.safetensors", "model_card.json", "README.md",
                                               "training_records.sha1.gz"}
    dev = C.load_split(SAMPLE, get_task("KUAKE-QQR"), "dev")[0][:10]
    p1 = load(out).predict(dev)
    p2 = pair_gbm.load_model(out).predict(dev)
    assert [p.to_dict() for p in p1] == [p.to_dict() for p in p2]
    assert all(p.label in card.labels for p in p1)


def test_single_texts_are_refused(tmp_path):
    with pytest.raises(ValueError, match="pair tasks"):
        pair_gbm.train("KUAKE-QIC", SAMPLE, tmp_path / "x")
