"""Fixtures for the model tests: tiny randomly initialised Hugging Face checkpoints built once per
session in a temporary folder (hidden 16-32, one layer, a character vocabulary), loaded back
through the same code paths as real ones. No network: sockets are blocked for these tests."""
from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"

SENTENCES = [
    "患儿3天前无明显诱因出现发热，最高体温39.5℃，伴咳嗽、流涕。",
    "糖尿病人能喝牛奶吗",
    "川崎病急性期可出现双侧球结膜充血、口唇皲裂及杨梅舌。",
    "头痛",
    "",
]
NER_TAGS = ["O", "B-dis", "I-dis", "B-sym", "I-sym", "B-bod", "I-bod"]
BIOES_TAGS = ["O", "B-dis", "I-dis", "E-dis", "S-dis", "B-sym", "I-sym", "E-sym", "S-sym"]
QIC_LABELS = ["病情诊断", "病因分析", "治疗方案", "就医建议", "指标解读", "疾病表述", "后果表述",
              "注意事项", "功效作用", "医疗费用", "其他"]
CHAT_TEMPLATE = ("{% for m in messages %}<|user|>{{ m['content'] }}{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def _chars() -> list[str]:
    text = "".join(SENTENCES)
    for f in (SAMPLE / "promptcblue" / "dev.json", SAMPLE / "cblue" / "CMeEE" / "CMeEE_test.json",
              SAMPLE / "cblue" / "CHIP-STS" / "CHIP-STS_test.json"):
        if f.is_file():
            text += f.read_text(encoding="utf-8")[:4000]
    chars = [c for c in dict.fromkeys(text) if not c.isspace() and c.isprintable()]
    return chars[:400]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Any attempt to open a network connection fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args[1:] if len(args) > 1 else args}")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(autouse=True)
def _isolated_registry(monkeypatch, tmp_path):
    """Tests see no real built-in models and no user env folders unless they set them."""
    from cblue_core.models import registry

    empty = tmp_path / "_no_builtin_models"
    monkeypatch.setattr(registry, "BUILTIN_DIR", empty)
    monkeypatch.delenv(registry.ENV_VAR, raising=False)


def bert_tokenizer(chars: list[str]):
    from transformers import BertTokenizerFast

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars)}
    # vocab=dict, not vocab_file= (which silently yields an all-[UNK] tokenizer in transformers 5)
    return BertTokenizerFast(vocab=vocab, do_lower_case=True, tokenize_chinese_chars=True)


def char_lm_tokenizer(chars: list[str], chat: bool):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    special = ["<pad>", "<unk>", "<s>", "</s>", "<|user|>", "<|assistant|>"]
    vocab = {t: i for i, t in enumerate(special + chars + ["\n", " "])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tk.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>",
                                  pad_token="<pad>", unk_token="<unk>",
                                  additional_special_tokens=["<|user|>", "<|assistant|>"])
    if chat:
        tok.chat_template = CHAT_TEMPLATE
    return tok


def _set_config_key(folder: Path, **kv) -> None:
    cfg = folder / "config.json"
    data = json.loads(cfg.read_text(encoding="utf-8"))
    data.update(kv)
    cfg.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def _encoder_config(vocab_size: int, labels: list[str], max_pos: int = 64, **kw):
    from transformers import BertConfig

    return BertConfig(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=32, max_position_embeddings=max_pos,
                      id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)},
                      **kw)


def _scale_head(model, attr: str, factor: float = 20.0) -> None:
    """Spread the random head's logits so that every tag/label gets predicted sometimes."""
    import torch

    head = getattr(model, attr)
    with torch.no_grad():
        head.weight.mul_(factor)
        head.bias.zero_()


class TinyModels:
    """Paths of the tiny checkpoints, plus builders for variants."""

    def __init__(self, root: Path):
        import torch
        from transformers import (
            BertForSequenceClassification,
            BertForTokenClassification,
            LlamaConfig,
            LlamaForCausalLM,
        )

        torch.manual_seed(0)
        self.root = root
        self.chars = _chars()
        tok = bert_tokenizer(self.chars)
        v = len(tok)

        self.ner = root / "tiny-ner"          # BIO, CMeEE, short positions (windowing)
        m = BertForTokenClassification(_encoder_config(v, NER_TAGS, max_pos=24))
        _scale_head(m, "classifier")
        m.save_pretrained(self.ner)
        tok.save_pretrained(self.ner)
        _set_config_key(self.ner, cblue_task="CMeEE")

        self.ner_bioes = root / "tiny-ner-bioes"  # BIOES, task unknown
        m = BertForTokenClassification(_encoder_config(v, BIOES_TAGS))
        _scale_head(m, "classifier")
        m.save_pretrained(self.ner_bioes)
        tok.save_pretrained(self.ner_bioes)

        self.qic = root / "tiny-qic"          # single-text classifier with label names
        m = BertForSequenceClassification(_encoder_config(v, QIC_LABELS))
        _scale_head(m, "classifier")
        m.save_pretrained(self.qic)
        tok.save_pretrained(self.qic)
        _set_config_key(self.qic, cblue_task="KUAKE-QIC")

        self.sts = root / "tiny-sts"          # pair classifier saved without label names
        m = BertForSequenceClassification(_encoder_config(v, ["LABEL_0", "LABEL_1"]))
        _scale_head(m, "classifier")
        m.save_pretrained(self.sts)
        tok.save_pretrained(self.sts)
        _set_config_key(self.sts, cblue_task="CHIP-STS")

        for chat in (False, True):
            folder = root / ("tiny-lm-chat" if chat else "tiny-lm")
            ltok = char_lm_tokenizer(self.chars, chat)
            cfg = LlamaConfig(vocab_size=len(ltok), hidden_size=32, intermediate_size=64,
                              num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                              max_position_embeddings=512, pad_token_id=ltok.pad_token_id,
                              bos_token_id=ltok.bos_token_id, eos_token_id=ltok.eos_token_id)
            m = LlamaForCausalLM(cfg)
            with torch.no_grad():  # never end early: the tests want some text
                m.lm_head.weight[ltok.eos_token_id].fill_(0.0)
            m.save_pretrained(folder)
            ltok.save_pretrained(folder)
            setattr(self, "lm_chat" if chat else "lm", folder)

    def copy(self, name: str, dest: Path) -> Path:
        src = getattr(self, name)
        out = dest / src.name
        shutil.copytree(src, out)
        return out

    def pickle_only(self, dest: Path) -> Path:
        """A copy of tiny-qic whose weights are pytorch_model.bin (pickle) instead of safetensors."""
        import torch
        from safetensors.torch import load_file

        out = self.copy("qic", dest)
        state = load_file(str(out / "model.safetensors"))
        torch.save(state, out / "pytorch_model.bin")
        (out / "model.safetensors").unlink()
        return out


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> TinyModels:
    return TinyModels(tmp_path_factory.mktemp("tiny-models"))


def fake_hf_folder(folder: Path, arch: str = "BertForTokenClassification", task: str | None = None,
                   weights: str | None = "model.safetensors", tokenizer: bool = True) -> Path:
    """A folder that looks like an HF checkpoint (no real weights): for registry tests."""
    folder.mkdir(parents=True, exist_ok=True)
    cfg = {"architectures": [arch], "model_type": "bert"}
    if task:
        cfg["cblue_task"] = task
    (folder / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    if weights:
        (folder / weights).write_bytes(b"\0" * 16)
    if tokenizer:
        (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n", encoding="utf-8")
    return folder


def fake_card_folder(folder: Path, name: str, task: str = "KUAKE-QIC", kind: str = "ngram-classifier",
                     weights: bool = True, **card) -> Path:
    """A built-in-style folder: model_card.json + a (dummy) safetensors file."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {"name": name, "task": task, "kind": kind, **card}
    (folder / "model_card.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    if weights:
        (folder / "model.safetensors").write_bytes(b"\0" * 32)
    return folder
