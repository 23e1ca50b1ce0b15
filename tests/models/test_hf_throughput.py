"""The fast paths of the HF predictors: tokenized once, length-bucketed batches, the first-token
last layer of BERT-like classifiers (logits equal to the full model's within 1e-5, to one text
at a time within 1e-4), and batched causal-LM generation with left padding."""
from __future__ import annotations

import pytest

from cblue_core.io.validate import load
from cblue_core.models.hf.throughput import _set_first_token, install_first_token_last_layer, length_buckets
from cblue_core.models.loading import load_predictor
from cblue_core.records import Example

from .conftest import SAMPLE, SENTENCES


def _examples(texts, texts2=None):
    return [Example(key=f"k{i}", index=i, text=t, text2=(texts2[i] if texts2 else "")) for i, t in enumerate(texts)]


def test_length_buckets_cover_once_and_limit_padding():
    lengths = [5, 30, 6, 7, 31, 5, 100, 8, 29, 6]
    batches = length_buckets(lengths, size=3, slack=0.5)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert all(1 <= len(b) <= 3 for b in batches)
    for b in batches:
        width = max(lengths[i] for i in b)
        assert width * len(b) <= 1.5 * sum(lengths[i] for i in b) or len(b) == 1
    assert [100] in [[lengths[i] for i in b] for b in batches]   # the outlier pads no one
    assert length_buckets([], 4) == []


def _texts():
    exs = load(SAMPLE / "cblue" / "CMeEE" / "CMeEE_dev.json").examples
    return [e.text[: 5 + 3 * i] for i, e in enumerate(exs)] + SENTENCES


def test_classifier_logits_match_one_text_at_a_time(tiny):
    import torch

    pred = load_predictor(tiny.qic)
    assert pred.first_token_only and pred.params["first_token_last_layer"] is True
    exs = _examples(_texts())
    logits, batches = pred.logits(exs, batch_size=4)
    assert batches >= len(exs) // 4
    one = torch.cat([pred.logits([e], batch_size=1)[0] for e in exs])
    assert torch.allclose(logits, one, atol=1e-4)
    # the full model (no first-token shortcut) on the same batches: within 1e-5
    layer = pred.model.base_model.encoder.layer[-1]
    _set_first_token(layer, False)
    full, _ = pred.logits(exs, batch_size=4)
    _set_first_token(layer, True)
    assert torch.allclose(logits, full, atol=1e-5)
    preds = pred.predict(exs, batch_size=4)
    assert [p.key for p in preds] == [e.key for e in exs]
    assert [p.label for p in preds] == [pred.labels[k] for k in logits.argmax(-1).tolist()]
    assert pred.last_timing.batches == batches and pred.last_timing.examples == len(exs)


def test_pair_classifier_logits_match_one_at_a_time(tiny):
    import torch

    ds = load(SAMPLE / "cblue" / "CHIP-STS" / "CHIP-STS_test.json")
    pred = load_predictor(tiny.sts, task="CHIP-STS")
    logits, _ = pred.logits(ds.examples, batch_size=3)
    one = torch.cat([pred.logits([e])[0] for e in ds.examples])
    assert torch.allclose(logits, one, atol=1e-4)


def test_first_token_layer_refused_where_the_head_reads_more(tiny):
    from transformers import AutoModelForTokenClassification

    model = AutoModelForTokenClassification.from_pretrained(str(tiny.ner))
    model.eval()
    # a token classifier reads every position: the probe tells, and the full layer stays
    assert install_first_token_last_layer(model) is False
    assert "forward" not in vars(model.base_model.encoder.layer[-1])


@pytest.mark.parametrize("name", ["lm", "lm_chat"])
def test_causal_lm_batches_left_padded_equal_single(tiny, name):
    pred = load_predictor(getattr(tiny, name), generation={"max_new_tokens": 8})
    exs = load(SAMPLE / "promptcblue" / "dev.json").examples[:4]
    prompts = [pred.prompt(e.text) for e in exs]
    enc = pred.tokenizer(prompts, padding=True, return_tensors="pt",
                         add_special_tokens=not pred.templated)
    lengths = enc["attention_mask"].sum(-1).tolist()
    assert len(set(lengths)) > 1                      # the batch really is padded ...
    assert pred.tokenizer.padding_side == "left"
    short = lengths.index(min(lengths))
    assert enc["attention_mask"][short, 0] == 0 and enc["attention_mask"][short, -1] == 1  # ... on the left
    batched = pred.predict(exs, batch_size=4)
    assert pred.last_timing.batches == 1
    single = [pred.predict([e], batch_size=1)[0] for e in exs]
    assert [p.target for p in batched] == [p.target for p in single]
    assert all(p.target for p in batched)
