"""Hugging Face checkpoints through cblue_core.models.hf / loading: tiny random models built in
conftest, loaded offline exactly like real ones."""
from __future__ import annotations

import json
import shutil

import pytest

from cblue_core.io.validate import load
from cblue_core.models import loading
from cblue_core.models.hf import GenerationParams, decode_tags, parse_tag
from cblue_core.models.loading import get_predictor, load_predictor
from cblue_core.models.registry import ModelLoadError, ModelNotFoundError
from cblue_core.records import Example
from cblue_core.tasks import get_task

from .conftest import QIC_LABELS, SAMPLE, SENTENCES


def _examples(texts, texts2=None):
    return [Example(key=f"k{i}", index=i, text=t, text2=(texts2[i] if texts2 else ""))
            for i, t in enumerate(texts)]


# ---- tag decoding (pure) ---------------------------------------------------------------------

def test_parse_tag_schemes():
    assert parse_tag("O") == ("O", None)
    assert parse_tag("B-dis") == ("B", "dis")
    assert parse_tag("I_sym") == ("I", "sym")
    assert parse_tag("S-Drug_Category") == ("S", "Drug_Category")
    assert parse_tag("dis-E") == ("E", "dis")
    with pytest.raises(ValueError):
        parse_tag("LABEL_3")


def test_decode_tags_bio_bioes_and_lenient():
    toks = lambda tags: [(i, i + 1, *parse_tag(t)) for i, t in enumerate(tags)]
    assert decode_tags(toks(["B-a", "I-a", "O", "B-b"])) == [(0, 2, "a"), (3, 4, "b")]
    assert decode_tags(toks(["B-a", "I-a", "E-a", "S-b", "O"])) == [(0, 3, "a"), (3, 4, "b")]
    # I without B starts a span; a type change closes the previous one
    assert decode_tags(toks(["I-a", "I-a", "I-b"])) == [(0, 2, "a"), (2, 3, "b")]
    # E without a matching open span is a one-token span
    assert decode_tags(toks(["B-a", "E-b"])) == [(0, 1, "a"), (1, 2, "b")]
    # multi-character tokens: spans use the tokens' character offsets
    assert decode_tags([(0, 2, "B", "a"), (3, 5, "I", "a")]) == [(0, 5, "a")]


# ---- token classification --------------------------------------------------------------------

def _check_spans(preds, texts, types):
    n = 0
    for p, text in zip(preds, texts):
        assert p.text == text
        for s in p.spans:
            assert 0 <= s.start < s.end <= len(text), (s, text)
            assert text[s.start:s.end] == s.text
            assert s.type in types
            n += 1
    return n


def test_token_classifier_predicts_valid_spans(tiny):
    pred = load_predictor(tiny.ner, task="CMeEE")
    assert pred.task.name == "CMeEE" and pred.device == "cpu"
    long = "".join(SENTENCES) * 2  # longer than the model's 24 positions: read in windows
    texts = SENTENCES + [long]
    preds = pred.predict(_examples(texts), batch_size=2)
    assert [p.key for p in preds] == [f"k{i}" for i in range(len(texts))]
    assert _check_spans(preds, texts, {"dis", "sym", "bod"}) > 0
    assert preds[4].spans == []  # empty text
    assert any(s.end > 30 for s in preds[-1].spans), "the windows must cover the whole long text"
    assert pred.last_timing.examples == len(texts)


def test_token_classifier_bioes_needs_task_and_fits_it(tiny):
    with pytest.raises(ModelLoadError, match="does not say its task"):
        load_predictor(tiny.ner_bioes)
    pred = load_predictor(tiny.ner_bioes, task="CMeEE-V2")
    preds = pred.predict(_examples(SENTENCES))
    assert _check_spans(preds, SENTENCES, {"dis", "sym"}) > 0


def test_token_classifier_windows_agree_with_one_pass(tiny):
    """A text that fits one window gives the same spans whether read alone or in a batch."""
    pred = load_predictor(tiny.ner, task="CMeEE")
    short = [s[:15] for s in SENTENCES if s]
    together = pred.predict(_examples(short), batch_size=8)
    alone = [pred.predict(_examples([t]))[0] for t in short]
    assert [p.spans for p in together] == [p.spans for p in alone]


# ---- sequence classification ------------------------------------------------------------------

def test_sequence_classifier_single_text(tiny):
    pred = load_predictor(tiny.qic)  # task from config.json's cblue_task
    assert pred.task.name == "KUAKE-QIC"
    preds = pred.predict(_examples(SENTENCES))
    for p in preds:
        assert p.label in QIC_LABELS
        probs = p.meta["probabilities"]
        assert set(probs) == set(QIC_LABELS)
        assert abs(sum(probs.values()) - 1) < 1e-3
        assert max(probs, key=probs.get) == p.label
    assert len({p.label for p in preds}) >= 1


def test_sequence_classifier_pairs_numbered_labels(tiny):
    ds = load(SAMPLE / "cblue" / "CHIP-STS" / "CHIP-STS_test.json")
    pred = load_predictor(tiny.sts, task="CHIP-STS")
    preds = pred.predict(ds.examples)
    assert [p.key for p in preds] == [e.key for e in ds.examples]
    for p, ex in zip(preds, ds.examples):
        assert p.label in ("0", "1")  # LABEL_0/LABEL_1 mapped to the numbered STS classes
        assert p.text2 == ex.text2
        assert p.meta.get("category") == ex.meta.get("category")  # kept for the submission file
    # pairs are read as pairs: swapping the texts changes the input
    swapped = [Example(e.key, e.index, text=e.text2, text2=e.text) for e in ds.examples]
    a = [p.meta["probabilities"] for p in preds]
    b = [p.meta["probabilities"] for p in pred.predict(swapped)]
    assert a != b


def test_unnamed_labels_refused_for_named_task(tiny, tmp_path):
    folder = tiny.copy("sts", tmp_path)
    # cblue_task says CHIP-STS: asking for another task is refused first
    with pytest.raises(ModelLoadError, match="is for task CHIP-STS, not KUAKE-QQR"):
        load_predictor(folder, task="KUAKE-QQR")
    cfg = json.loads((folder / "config.json").read_text())
    cfg.pop("cblue_task")
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelLoadError, match="no label names"):
        load_predictor(folder, task="KUAKE-QQR")  # LABEL_0/LABEL_1: 2 classes, QQR has 3


# ---- causal LM ---------------------------------------------------------------------------------

def _prompts(n=3):
    return load(SAMPLE / "promptcblue" / "dev.json").examples[:n]


@pytest.mark.parametrize("name,templated", [("lm", False), ("lm_chat", True)])
def test_causal_lm_generates_for_prompts(tiny, name, templated):
    gen = {"max_new_tokens": 6}
    pred = load_predictor(getattr(tiny, name), generation=gen)
    assert pred.task.name == "PromptCBLUE"  # default task of a causal LM
    assert pred.templated is templated
    assert pred.tokenizer.padding_side == "left"
    prompt = pred.prompt("你好")
    assert (prompt == "<|user|>你好<|assistant|>") if templated else (prompt == "你好")
    exs = _prompts()
    preds = pred.predict(exs, batch_size=3)
    for p, ex in zip(preds, exs):
        assert p.key == ex.key and p.label == ex.label and p.raw == ex.raw
        assert isinstance(p.target, str) and p.target
        assert p.meta["generation"].strip() == p.target
        assert p.meta["task_dataset"] == ex.meta["task_dataset"]
    params = pred.params
    assert params["max_new_tokens"] == 6 and params["do_sample"] is False
    assert params["chat_template"] is templated and params["weights"] == "safetensors"


def test_causal_lm_left_padding_batch_equals_single(tiny):
    pred = load_predictor(tiny.lm, generation={"max_new_tokens": 5})
    exs = _prompts(3)
    batched = [p.target for p in pred.predict(exs, batch_size=3)]
    single = [pred.predict([e])[0].target for e in exs]
    assert batched == single


def test_causal_lm_sampling_is_seeded(tiny):
    gen = {"max_new_tokens": 6, "do_sample": True, "temperature": 1.5, "top_p": 0.95, "seed": 7}
    pred = load_predictor(tiny.lm_chat, generation=gen)
    exs = _prompts(2)
    a = [p.target for p in pred.predict(exs)]
    b = [p.target for p in pred.predict(exs)]
    assert a == b
    assert pred.params["seed"] == 7 and pred.params["temperature"] == 1.5


def test_generation_params_validated():
    with pytest.raises(ModelLoadError, match="unknown generation parameter"):
        GenerationParams.from_any({"beams": 3})
    with pytest.raises(ModelLoadError, match="temperature"):
        GenerationParams.from_any({"do_sample": True, "temperature": 0})


def test_causal_lm_refuses_span_task(tiny):
    with pytest.raises(ModelLoadError, match="cannot predict CMeEE"):
        load_predictor(tiny.lm, task="CMeEE")


# ---- safety and errors -------------------------------------------------------------------------

def test_pickle_weights_refused_by_default_and_allowed_on_request(tiny, tmp_path):
    folder = tiny.pickle_only(tmp_path)
    with pytest.raises(ModelLoadError, match="safetensors") as err:
        load_predictor(folder)
    assert str(folder) in str(err.value)
    with pytest.warns(UserWarning, match="pickle"):
        pred = load_predictor(folder, allow_pickle=True)
    assert pred.params["weights"] == "pickle"
    safe = load_predictor(tiny.qic)
    exs = _examples(SENTENCES)
    assert [p.label for p in pred.predict(exs)] == [p.label for p in safe.predict(exs)]


def test_config_pointing_at_pickle_refused(tiny, tmp_path):
    folder = tiny.copy("qic", tmp_path)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["transformers_weights"] = "weights.bin"
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelLoadError, match="not safetensors"):
        load_predictor(folder)


def test_remote_code_never_trusted(tiny, tmp_path):
    folder = tiny.copy("qic", tmp_path)
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(model_type="my-custom-bert", auto_map={"AutoConfig": "modeling_x.MyConfig"})
    (folder / "config.json").write_text(json.dumps(cfg))
    (folder / "modeling_x.py").write_text("raise SystemExit('remote code ran')\n")
    with pytest.raises(ModelLoadError, match="trust_remote_code=False"):
        load_predictor(folder)


def test_missing_folder_weights_tokenizer_config(tiny, tmp_path):
    with pytest.raises(ModelNotFoundError, match="no model folder at"):
        load_predictor(str(tmp_path / "nope"))
    with pytest.raises(ModelNotFoundError, match="unknown model 'nope'"):
        load_predictor("nope")

    no_weights = tiny.copy("qic", tmp_path / "a")
    (no_weights / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError, match="no weights") as err:
        load_predictor(no_weights)
    assert str(no_weights) in str(err.value)

    no_tok = tiny.copy("qic", tmp_path / "b")
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (no_tok / f).unlink(missing_ok=True)
    (no_tok / "vocab.txt").unlink(missing_ok=True)
    with pytest.raises(ModelLoadError, match="no tokenizer files"):
        load_predictor(no_tok)

    no_cfg = tiny.copy("qic", tmp_path / "c")
    (no_cfg / "config.json").unlink()
    with pytest.raises(ModelLoadError, match="no model_card.json or config.json"):
        load_predictor(no_cfg)


def test_wrong_task_is_refused(tiny):
    with pytest.raises(ModelLoadError, match="is for task CMeEE, not CMeEE-V2"):
        load_predictor(tiny.ner, task="CMeEE-V2")
    with pytest.raises(ModelLoadError, match="cannot predict KUAKE-QIC"):
        load_predictor(tiny.ner_bioes, task="KUAKE-QIC")
    with pytest.raises(ModelLoadError, match="are not CHIP-CTC labels"):
        _load_without_task(tiny.qic, "CHIP-CTC")
    with pytest.raises(ModelLoadError, match="unknown task"):
        load_predictor(tiny.qic, task="NoSuchTask")


def _load_without_task(folder, task):
    """Load a copy of ``folder`` whose config does not name its task (labels decide the fit)."""
    import tempfile
    from pathlib import Path

    tmp = Path(tempfile.mkdtemp())
    out = tmp / folder.name
    shutil.copytree(folder, out)
    cfg = json.loads((out / "config.json").read_text())
    cfg.pop("cblue_task", None)
    (out / "config.json").write_text(json.dumps(cfg))
    try:
        return load_predictor(out, task=task)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_model_card_on_hf_folder(tiny, tmp_path):
    from cblue_core.models.base import ModelCard
    from cblue_core.models.registry import write_card

    folder = tiny.copy("qic", tmp_path)
    write_card(ModelCard(name="my-qic", task="KUAKE-QIC", kind="hf-sequence-classification",
                         description="fine-tuned"), folder)
    pred = load_predictor(folder)
    assert pred.card.name == "my-qic" and pred.card.description == "fine-tuned"
    write_card(ModelCard(name="my-qic", task="KUAKE-QIC", kind="hf-token-classification"), folder)
    with pytest.raises(ModelLoadError, match="architecture"):
        load_predictor(folder)


# ---- save / reload, device, cache ------------------------------------------------------------

def test_save_and_reload_give_identical_predictions(tiny, tmp_path):
    for name, task in (("ner", "CMeEE"), ("qic", "KUAKE-QIC")):
        first = load_predictor(getattr(tiny, name), task=task)
        out = tmp_path / f"resaved-{name}"
        first.model.save_pretrained(out)
        first.tokenizer.save_pretrained(out)
        shutil.copy(getattr(tiny, name) / "config.json", out / "config.json")
        again = load_predictor(out, task=task)
        exs = _examples(SENTENCES)
        a, b = first.predict(exs), again.predict(exs)
        assert [(p.spans, p.label) for p in a] == [(p.spans, p.label) for p in b]
        if name == "qic":
            assert [p.meta["probabilities"] for p in a] == [p.meta["probabilities"] for p in b]


def test_cuda_refused_without_gpu(tiny, monkeypatch):
    import torch

    from cblue_core.models.devices import DeviceError

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError, match="CUDA is not available"):
        load_predictor(tiny.qic, device="cuda")
    assert load_predictor(tiny.qic, device="auto").device == "cpu"


def test_get_predictor_lru_cache(tiny):
    loading.clear_cache()
    a = get_predictor(tiny.qic)
    assert get_predictor(str(tiny.qic)) is a
    assert loading.cache_info()["hits"] == 1
    b = get_predictor(tiny.sts, max_models=1)
    assert b is not a and loading.cache_info()["size"] == 1
    assert get_predictor(tiny.qic, max_models=1) is not a  # evicted, loaded again
    loading.clear_cache()
    assert loading.cache_info()["size"] == 0


def test_predictor_params_for_runs(tiny):
    p = load_predictor(tiny.qic)
    params = loading.predictor_params(p)
    assert params["model"] == "tiny-qic" and params["kind"] == "hf-sequence-classification"
    assert params["device"] == "cpu" and params["dtype"] == "float32"
    assert get_task("KUAKE-QIC") is p.task
