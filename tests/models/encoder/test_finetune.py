"""Task models on the shared encoder, on the sample data: a tiny encoder pretrained here, heads
fine-tuned on it (the loss falls, the folder holds only head + adapter and loads and predicts, the
encoder loads with plain transformers), adapters merged at load give the training net's outputs,
windows of long texts, resume, the registry's view of the encoder and its task models."""
from __future__ import annotations

import itertools
import json
import shutil

import pytest
import torch

from cblue_core.cli import main
from cblue_core.io.validate import load as load_file
from cblue_core.models import registry
from cblue_core.models.builtin import common, train
from cblue_core.models.builtin import encoder_heads as H
from cblue_core.models.builtin import finetune as F
from cblue_core.models.loading import load_predictor
from cblue_core.models.registry import ModelLoadError, list_models
from cblue_core.records import Example
from cblue_core.tasks import get_task
from tests.models.encoder.conftest import DATA, ENCODER


def dev_examples(task: str, n: int = 6) -> list[Example]:
    spec = get_task(task)
    return load_file(DATA / task / spec.files["dev"], spec).examples[:n]


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory, tiny_encoder):
    """``models/`` with a tiny encoder pretrained on the sample data, a QIC classifier, a QQR pair
    classifier and a CMeEE span model trained on it (the encoder's 48 positions make the sample's
    long CMeEE texts go through the windows)."""
    root = tmp_path_factory.mktemp("ft") / "models"
    shutil.copytree(tiny_encoder, root / "encoder")
    cards = {}
    for task, folder, adapter in [("KUAKE-QIC", "qic", "lora"), ("KUAKE-QQR", "qqr", "bias"),
                                  ("CMeEE", "cmeee", "lora+bias")]:
        cards[task] = train(task, DATA, root / folder, seed=1, progress=False, architecture="encoder",
                            encoder=root / "encoder", overrides={**H.TINY, "adapter": adapter, "epochs": 3})
    return root, cards


@pytest.fixture
def as_builtin(models_dir, monkeypatch):
    monkeypatch.setattr(registry, "BUILTIN_DIR", models_dir[0])
    return models_dir[0]


def test_loss_falls_and_the_folder_holds_only_head_and_adapter(models_dir):
    root, cards = models_dir
    for task, card in cards.items():
        losses = card.training["losses"]
        assert len(losses) == 3 and losses[-1] < losses[0], (task, losses)
        assert card.training["selection_scores"] and card.training["best_epoch"] >= 1
        assert card.training["data"]["selection_examples"] > 0
    for folder in ("qic", "qqr", "cmeee"):
        files = {p.name for p in (root / folder).iterdir()}
        assert files == {"adapter.safetensors", "config.json", "model_card.json", "README.md",
                         "training_records.sha1.gz"}, files
        config = json.loads((root / folder / "config.json").read_text(encoding="utf-8"))
        assert config["encoder"] == "encoder"
        assert config["encoder_sha1"] == registry.weights_sha1(root / "encoder")
    # the adapter file is much smaller than the encoder
    assert (root / "qic" / F.ADAPTER_FILE).stat().st_size < (root / "encoder" / "model.safetensors").stat().st_size
    shipped = common.load_tensors(root / "qic" / F.ADAPTER_FILE)
    assert cards["KUAKE-QIC"].extra["adapter_parameters"] == sum(v.numel() for v in shipped.values())
    assert any(k.startswith("lora.") for k in shipped) and any(k.startswith("head.") for k in shipped)
    card = common.read_card(root / "cmeee")
    assert card.kind == H.KIND_SPANS and card.dev_metrics["intervals"]
    assert card.extra["encoder"]["path"] == "encoder" and card.extra["adapter"] == "lora+bias"
    assert "train_dictionary" in card.baselines
    assert "held out to choose the epoch" in (root / "cmeee" / "README.md").read_text(encoding="utf-8")


def test_encoder_loads_with_plain_transformers(models_dir):
    from transformers import AutoModel, AutoTokenizer

    folder = models_dir[0] / "encoder"
    model = AutoModel.from_pretrained(folder)
    tok = AutoTokenizer.from_pretrained(folder)
    enc = tok("患儿发热", return_tensors="pt")
    assert type(model).__name__ == "BertModel"
    assert model(**enc).last_hidden_state.shape == (1, 6, ENCODER["hidden"])
    # and our own reading of it gives the same encoder
    ours, _ = F.build_encoder(folder)
    with torch.no_grad():
        assert torch.allclose(ours.eval()(**enc).last_hidden_state, model.eval()(**enc).last_hidden_state)


@pytest.mark.parametrize("task", ["KUAKE-QIC", "KUAKE-QQR", "CMeEE"])
def test_models_load_and_predict(task, as_builtin):
    folder = {"KUAKE-QIC": "qic", "KUAKE-QQR": "qqr", "CMeEE": "cmeee"}[task]
    model = load_predictor(folder)
    gold = dev_examples(task)
    preds = model.predict(gold)
    assert [(p.key, p.index) for p in preds] == [(g.key, g.index) for g in gold]
    spec = get_task(task)
    for g, p in zip(gold, preds):
        if task == "CMeEE":
            assert all(0 <= s.start < s.end <= len(g.text) and s.text == g.text[s.start:s.end]
                       and s.type in spec.label_codes for s in p.spans)
        else:
            assert p.label in spec.label_codes and abs(sum(p.meta["probabilities"].values()) - 1) < 1e-3
    assert [p.to_dict() for p in preds] == [p.to_dict() for p in load_predictor(folder).predict(gold)]


@pytest.mark.parametrize("adapter", ["lora", "bias", "lora+bias", "lora+emb", "frozen"])
def test_merged_adapter_gives_the_training_outputs(adapter, models_dir, tmp_path):
    enc_dir = models_dir[0] / "encoder"
    cfg = F.HeadConfig(task="KUAKE-QIC", kind=H.KIND_CLASSIFIER, labels=["a", "b", "c"], adapter=adapter,
                       encoder=str(enc_dir), head_hidden=8)
    torch.manual_seed(0)
    net, tok = F.new_net(cfg, enc_dir, H.ClassifierHead)
    with torch.no_grad():                        # a trained-looking adapter: B and biases moved
        for name, p in net.encoder.named_parameters():
            if p.requires_grad:
                p.add_(torch.randn_like(p) * 0.1)
    trainable = {n for n, p in net.encoder.named_parameters() if p.requires_grad}
    if adapter == "frozen":
        assert not trainable
    else:
        assert trainable and all(n.endswith((".A", ".B", ".bias")) or "LayerNorm" in n
                                 or n == "embeddings.word_embeddings.weight" for n in trainable)
        assert ("embeddings.word_embeddings.weight" in trainable) == ("emb" in adapter)
        lora = {n.rsplit(".", 1)[0] for n in trainable if n.endswith(".A")}
        assert len(lora) == (6 if "lora" in adapter else 0)     # every linear layer of the 1 layer
    seqs = H.encode_texts(tok, dev_examples("KUAKE-QIC"), cfg.max_len, pair=False)
    ids, types, attn = F.collate(seqs, tok.pad_token_id)
    with torch.no_grad():
        want = net.eval()(ids, types, attn)
    F.save_model(tmp_path / "m", net)
    loaded, _ = F.load_net(tmp_path / "m", H.ClassifierHead)
    assert not any(isinstance(m, F.LoRALinear) for m in loaded.modules())
    with torch.no_grad():
        assert torch.allclose(loaded(ids, types, attn), want, atol=1e-5)


def test_adapter_names_are_checked(models_dir):
    cfg = F.HeadConfig(task="KUAKE-QIC", kind=H.KIND_CLASSIFIER, labels=["a"], adapter="lora+full")
    with pytest.raises(ValueError, match="unknown adapter"):
        F.new_net(cfg, models_dir[0] / "encoder", H.ClassifierHead)
    cfg = F.HeadConfig(task="KUAKE-QIC", kind=H.KIND_CLASSIFIER, labels=["a"], lora_targets=["dense"])
    with pytest.raises(ValueError, match="no linear layer"):
        F.new_net(cfg, models_dir[0] / "encoder", H.ClassifierHead)
    only_ffn = F.HeadConfig(task="KUAKE-QIC", kind=H.KIND_CLASSIFIER, labels=["a"], lora_targets=["output.dense"])
    net, _ = F.new_net(only_ffn, models_dir[0] / "encoder", H.ClassifierHead)
    assert [n for n, m in net.encoder.named_modules() if isinstance(m, F.LoRALinear)] == ["encoder.layer.0.output.dense"]


def test_windows_and_their_merge():
    assert H.window_starts(5, 8, 3) == [0]
    starts = H.window_starts(20, 8, 3)
    assert starts[0] == 0 and starts[-1] == 12 and all(b - a <= 5 for a, b in itertools.pairwise(starts))
    # windows at 0 and 5 (8 tokens each): a span at 6-8 touches the first one's edge, so the
    # second decides (and what it misses is dropped); 5-7 is more central in the first
    found = [(0, 8, [(6, 8, "dis", 0.9), (1, 2, "sym", 0.8), (5, 7, "ite", 0.5)]),
             (5, 8, [(1, 3, "bod", 0.7), (2, 3, "sym", 0.6), (0, 2, "pro", 0.4)])]
    assert sorted(H.merge_windows(found)) == [(1, 2, "sym", 0.8), (5, 7, "ite", 0.5), (6, 8, "bod", 0.7),
                                              (7, 8, "sym", 0.6)]
    # token offsets: an entity whose edge falls inside a token is not aligned
    offsets = [(0, 1), (1, 2), (3, 6), (6, 7)]      # a space at 2, an [UNK] word at 3-6
    assert H.token_spans(offsets, [(0, 2, 0), (3, 7, 1), (4, 6, 2)]) == ([(0, 2, 0), (2, 4, 1)], 1)


def test_long_text_is_read_in_windows(as_builtin):
    model = load_predictor("cmeee")
    size = model.net.cfg.max_len - 2
    text = "患者出现发热、咳嗽，诊断为肺炎。" * 12
    assert len(text) > 2 * size
    (pred,) = model.predict([Example(key="k", index=0, text=text)])
    assert all(0 <= s.start < s.end <= len(text) and s.text == text[s.start:s.end] for s in pred.spans)
    # the windows cover the whole text, and their merge leaves no crossing spans
    assert any(s.start >= size for s in pred.spans) and any(s.end <= size for s in pred.spans)
    assert not [(a, b) for a in pred.spans for b in pred.spans if a.start < b.start < a.end < b.end]


def test_registry_lists_the_shared_encoder(as_builtin, tmp_path):
    found = {m.name: m for m in list_models()}
    enc = found["encoder"]
    assert enc.ok and enc.role == "encoder" and enc.task is None and enc.kind == "mlm-encoder"
    assert enc.to_json()["role"] == "encoder"
    assert all(found[n].ok and found[n].role == "model" for n in ("qic", "qqr", "cmeee"))
    with pytest.raises(ModelLoadError, match="shared encoder"):
        load_predictor("encoder")
    # a task model copied elsewhere still finds the shipped encoder; without it, it has a problem
    copy = tmp_path / "elsewhere" / "qic"
    shutil.copytree(as_builtin / "qic", copy)
    assert registry.inspect_folder(copy).ok
    config = json.loads((copy / "config.json").read_text(encoding="utf-8"))
    (copy / "config.json").write_text(json.dumps({**config, "encoder": "nowhere"}), encoding="utf-8")
    assert "is not there" in registry.inspect_folder(copy).problem
    (copy / "config.json").write_text(json.dumps({**config, "encoder_sha1": "0" * 40}), encoding="utf-8")
    assert "other weights" in registry.inspect_folder(copy).problem
    with pytest.raises(ModelLoadError, match="other weights"):
        load_predictor(copy)


def test_resume_selects_as_an_uninterrupted_run(models_dir, tmp_path):
    enc = models_dir[0] / "encoder"
    over = {**H.TINY, "epochs": 3}
    kw = {"seed": 3, "progress": False, "architecture": "encoder", "encoder": enc, "overrides": over}
    whole = train("KUAKE-QIC", DATA, tmp_path / "whole", **kw)
    cut = train("KUAKE-QIC", DATA, tmp_path / "cut", max_minutes=0, **kw)
    assert cut.training["epochs"] == 1 and cut.training["stopped_early"]
    assert (tmp_path / "cut" / common.CHECKPOINT / "best.json").is_file()
    resumed = train("KUAKE-QIC", DATA, tmp_path / "cut", resume=True, **kw)
    assert resumed.training["epochs"] == 3 and not (tmp_path / "cut" / common.CHECKPOINT).exists()
    assert resumed.training["losses"] == pytest.approx(whole.training["losses"], rel=1e-5)
    assert resumed.training["selection_scores"] == whole.training["selection_scores"]
    a = common.load_tensors(tmp_path / "whole" / F.ADAPTER_FILE)
    b = common.load_tensors(tmp_path / "cut" / F.ADAPTER_FILE)
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_train_command(models_dir, tmp_path, capsys):
    out = tmp_path / "qic"
    code = main(["train", "--task", "KUAKE-QIC", "--data", str(DATA), "--out", str(out), "--encoder",
                 str(models_dir[0] / "encoder"), "--no-progress", "--max-minutes", "1"])
    assert code == 0 and "encoder-classifier" in capsys.readouterr().out
    card = common.read_card(out)
    assert f"--encoder {models_dir[0] / 'encoder'}" in card.training["command"]
    assert main(["train", "--task", "CHIP-CDN", "--data", str(DATA), "--out", str(tmp_path / "x"),
                 "--architecture", "scratch", "--encoder", str(models_dir[0] / "encoder")]) == 2
    assert "--encoder is for the encoder architecture" in capsys.readouterr().err
    assert main(["train", "--task", "KUAKE-QIC", "--data", str(DATA), "--out", str(tmp_path / "y"),
                 "--architecture", "encoder", "--encoder", str(tmp_path / "none")]) == 2
