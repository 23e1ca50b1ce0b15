"""Built-in models: shipped folders load and predict valid output, training runs on the sample
data and lowers the loss, save/reload is exact, cards are complete, no pickle anywhere."""
from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from cblue_core.io.validate import load as load_file
from cblue_core.models.base import ModelCard, Predictor
from cblue_core.models.builtin import BUILTIN_LOADERS, MODEL_DIRS, TRAINERS, common, load, loss_curve, train
from cblue_core.records import Example
from cblue_core.tasks import Kind, get_task

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
SAMPLE = ROOT / "sample_data" / "cblue"

SHIPPED = [t for t, d in MODEL_DIRS.items() if (MODELS / d / "model_card.json").is_file()]

TINY = {
    "ngram": {"epochs": 2, "dim": 8, "hidden": 16, "max_vocab": 2000, "min_count": 1, "batch_size": 8},
    "spans": {"char_dim": 16, "bigram_dim": 8, "hidden": 16, "layers": 1, "span_dim": 16, "max_span": 12,
                  "epochs": 2, "batch_size": 4, "min_bigram_count": 1},
    "cdn": {"epochs": 2, "hidden": 8, "k_terms": 10, "k_memory": 3},
    "gbm": {"max_iter": 5, "min_samples_leaf": 2},
    "cmeie": {"char_dim": 16, "bigram_dim": 8, "hidden": 16, "layers": 1, "span_dim": 16, "max_span": 12,
                  "epochs": 2, "batch_size": 4, "min_bigram_count": 1, "aux_per_epoch": 8, "pair_dim": 8, "init_from": None},
}
TINY_FOR = {"CMeEE": "spans", "CMeIE": "cmeie", "CHIP-CDN": "cdn", "KUAKE-QQR": "gbm"}


def tiny(task: str) -> dict:
    return dict(TINY[TINY_FOR.get(task, "ngram")])


def sample_examples(task: str, n: int = 8) -> list[Example]:
    spec = get_task(task)
    path = SAMPLE / task / spec.files["dev"]
    return load_file(path, spec).examples[:n]


def check_predictions(task: str, model: Predictor, gold: list[Example], preds: list[Example]) -> None:
    spec = get_task(task)
    assert len(preds) == len(gold)
    for g, p in zip(gold, preds):
        assert (p.key, p.index) == (g.key, g.index)
        assert p.text == g.text and p.text2 == g.text2
        if spec.kind == Kind.SPANS:
            for s in p.spans:
                assert 0 <= s.start < s.end <= len(g.text)
                assert s.text == g.text[s.start:s.end]
                assert s.type in spec.label_codes
        elif spec.kind == Kind.RELATIONS:
            allowed = set(model.schemas.rows)
            for t in p.triples:
                assert t.predicate in spec.label_codes
                assert (t.subject_type, t.predicate, t.object_type) in allowed
                assert t.subject and t.object and isinstance(t.combined, bool)
        elif spec.kind == Kind.NORMALIZATION:
            assert p.terms, "at least one term per text"
            assert all(isinstance(t, str) and t.strip() for t in p.terms)
        else:
            assert p.label in spec.label_codes
            probs = p.meta["probabilities"]
            assert set(probs) == set(spec.label_codes)
            assert abs(sum(probs.values()) - 1) < 1e-3
            assert p.label == max(probs, key=probs.get)


def check_card(folder: Path, task: str) -> None:
    raw = json.loads((folder / "model_card.json").read_text(encoding="utf-8"))
    assert {f.name for f in fields(ModelCard)} <= set(raw)
    card = common.read_card(folder)
    assert card.task == task and card.kind in BUILTIN_LOADERS and card.name and card.description
    for key in ("data", "split", "command", "seed", "time_s", "epochs", "tried"):
        assert key in card.training, key
    assert card.dev_metrics["headline"] in card.dev_metrics["metrics"]
    assert card.dev_metrics["intervals"]
    assert card.baselines
    assert card.size_bytes == sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert task in readme and "Limitations" in readme


# ---------------------------------------------------------------------- shipped models

@pytest.mark.parametrize("task", SHIPPED)
def test_shipped_model_loads_and_predicts(task):
    # Load time and latency are measured by bench/inference.py, not asserted here: this
    # machine is shared and noisy.
    folder = MODELS / MODEL_DIRS[task]
    model = load(folder)
    gold = sample_examples(task)
    preds = model.predict(gold)
    check_predictions(task, model, gold, preds)
    check_card(folder, task)
    ex = Example(key="k", index=0, text=(gold[0].text * 4)[:100], text2=gold[0].text2)
    check_predictions(task, model, [ex], model.predict([ex]))


def test_shipped_models_are_small_and_pickle_free():
    if not MODELS.is_dir():
        pytest.skip("no models/ folder")
    total = 0
    for path in MODELS.rglob("*"):
        if not path.is_file():
            continue
        assert path.suffix not in (".pt", ".pth", ".bin", ".pkl", ".pickle", ".ckpt", ".joblib", ".npy", ".npz")
        head = path.read_bytes()[:64]
        assert not (head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05")), path
        assert not (head[:2] == b"PK" and b"data.pkl" in path.read_bytes()), path
        if path.suffix == ".safetensors":
            total += path.stat().st_size
    assert total <= 60 * 10 ** 6          # the budget of issue 14: all shipped weights, the encoder included


def test_loaders_cover_every_trainer():
    assert set(TRAINERS) == {t.name for t in (get_task(n) for n in MODEL_DIRS)}
    assert set(BUILTIN_LOADERS) == {"ngram-classifier", "ngram-ensemble", "pair-gbm", "span-encoder", "cdn-retrieval-reranker",
                                    "span-relation", "encoder-classifier", "encoder-spans",
                                    "encoder-relations", "encoder-cdn-reranker"}


# ---------------------------------------------------------------------- training on sample data

def test_classifier_loss_goes_down():
    curve = loss_curve("CHIP-STS", SAMPLE, steps=30, overrides={"lr": 3e-2})
    assert len(curve) == 30
    assert sum(curve[-5:]) / 5 < sum(curve[:5]) / 5


def test_span_model_loss_goes_down():
    curve = loss_curve("CMeEE", SAMPLE, steps=20)
    assert len(curve) == 20
    assert sum(curve[-5:]) / 5 < sum(curve[:5]) / 5


@pytest.mark.parametrize("task", ["KUAKE-QIC", "KUAKE-QQR", "CMeEE", "CHIP-CDN", "CMeIE"])
def test_train_save_reload_identical(task, tmp_path):
    out = tmp_path / MODEL_DIRS[task]
    card = train(task, SAMPLE, out, seed=1, progress=False, overrides=tiny(task))
    assert card.task == task and card.size_bytes > 0
    assert not (out / common.CHECKPOINT).exists()
    assert not list(out.glob("*.pt")) and list(out.glob("*.safetensors"))
    check_card(out, task)
    gold = sample_examples(task)
    m1 = load(out)
    p1 = m1.predict(gold)
    check_predictions(task, m1, gold, p1)
    p2 = load(out).predict(gold)
    assert [p.to_dict() for p in p1] == [p.to_dict() for p in p2]


def test_resume_continues_from_checkpoint(tmp_path):
    over = {**tiny("KUAKE-QIC"), "epochs": 3}
    full = train("KUAKE-QIC", SAMPLE, tmp_path / "full", seed=2, progress=False, overrides=over)
    cut = train("KUAKE-QIC", SAMPLE, tmp_path / "cut", seed=2, progress=False, overrides=over,
                max_minutes=0)
    assert cut.training["epochs"] == 1 and cut.training["stopped_early"]
    assert (tmp_path / "cut" / common.CHECKPOINT / "state.json").is_file()
    assert not list((tmp_path / "cut" / common.CHECKPOINT).glob("*.pt"))
    resumed = train("KUAKE-QIC", SAMPLE, tmp_path / "cut", seed=2, progress=False, overrides=over,
                    resume=True)
    assert resumed.training["epochs"] == 3
    assert resumed.training["losses"] == pytest.approx(full.training["losses"], rel=1e-4)
    assert not (tmp_path / "cut" / common.CHECKPOINT).exists()


def test_cmeie_split_is_fixed(tmp_path):
    a = common.seeded_split(100, 0)
    assert a == common.seeded_split(100, 0)
    assert len(a[0]) == 80 and not set(a[0]) & set(a[1])


def test_unknown_task_is_refused(tmp_path):
    with pytest.raises(ValueError):
        train("CHIP-CDEE", SAMPLE, tmp_path)
