"""Model discovery: built-in folder, $CBLUE_STUDIO_MODELS, extra folders, broken folders.
No torch needed: the folders here only look like models."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from cblue_core.models import registry
from cblue_core.models.base import ModelCard
from cblue_core.models.registry import ModelNotFoundError, list_models, read_card, resolve, write_card

from .conftest import fake_card_folder, fake_hf_folder


@pytest.fixture
def builtin(tmp_path, monkeypatch):
    root = tmp_path / "models"
    root.mkdir()
    monkeypatch.setattr(registry, "BUILTIN_DIR", root)
    fake_card_folder(root / "qic-ngram", "qic-ngram", "KUAKE-QIC", "ngram-classifier",
                     description="n-gram classifier", dev_metrics={"accuracy": 0.5})
    fake_card_folder(root / "cmeee-span", "cmeee-span", "CMeEE", "span-encoder")
    (root / "broken-json").mkdir()
    (root / "broken-json" / "model_card.json").write_text("{not json", encoding="utf-8")
    fake_card_folder(root / "no-weights", "no-weights", weights=False)
    fake_card_folder(root / "bad-task", "bad-task", task="NoSuchTask")
    (root / "only-weights").mkdir()
    (root / "only-weights" / "model.safetensors").write_bytes(b"\0")
    (root / "__pycache__").mkdir()
    (root / "notes").mkdir()
    (root / "notes" / "readme.md").write_text("not a model")
    (root / "README.md").write_text("built-in models")
    return root


def by_name(models):
    return {m.name: m for m in models}


def test_builtin_models_listed_with_problems(builtin):
    models = list_models()
    names = [m.name for m in models]
    assert names == sorted(names)
    found = by_name(models)
    assert {"qic-ngram", "cmeee-span", "no-weights", "bad-task", "broken-json", "only-weights"} <= set(found)
    assert "notes" not in found and "__pycache__" not in found  # nothing model-like there
    ok = found["qic-ngram"]
    assert ok.ok and ok.source == "built-in" and ok.task == "KUAKE-QIC" and ok.kind == "ngram-classifier"
    assert ok.card.description == "n-gram classifier" and ok.card.dev_metrics == {"accuracy": 0.5}
    assert ok.size_bytes > 0 and ok.path == builtin / "qic-ngram"
    assert "not valid UTF-8 JSON" in found["broken-json"].problem
    assert "no weights" in found["no-weights"].problem
    assert "unknown task 'NoSuchTask'" in found["bad-task"].problem
    assert "not a model folder" in found["only-weights"].problem
    assert all(m.source == "built-in" for m in models)


def test_card_missing_fields_and_extra_keys(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "model_card.json").write_text(json.dumps({"name": "m", "task": "CMeEE"}))
    with pytest.raises(ValueError, match="lacks kind"):
        read_card(folder)
    (folder / "model_card.json").write_text(json.dumps(
        {"name": "m", "task": "CMeEE", "kind": "span-encoder", "vocab_size": 300, "extra": {"a": 1}}))
    card = read_card(folder)
    assert card.extra == {"a": 1, "vocab_size": 300}
    write_card(ModelCard("n", "CMeEE", "span-encoder", labels=["dis"]), folder)
    assert read_card(folder).labels == ["dis"]


def test_env_folders_and_extra_dirs(builtin, tmp_path, monkeypatch):
    users = tmp_path / "users"
    fake_hf_folder(users / "hf-ner", task="CMeEE-V2")
    fake_hf_folder(users / "hf-cls", arch="BertForSequenceClassification")
    fake_hf_folder(users / "hf-lm", arch="Qwen2ForCausalLM")
    fake_hf_folder(users / "hf-pickle", arch="BertForSequenceClassification", weights="pytorch_model.bin")
    fake_hf_folder(users / "hf-notok", tokenizer=False)
    fake_hf_folder(users / "hf-seq2seq", arch="T5ForConditionalGeneration")
    fake_hf_folder(users / "hf-badtask", task="Nope")
    single = fake_hf_folder(tmp_path / "single-model", arch="BertForSequenceClassification", task="CHIP-STS")
    missing = tmp_path / "does-not-exist"
    monkeypatch.setenv(registry.ENV_VAR, os.pathsep.join([str(users), str(single), str(missing)]))
    extra = fake_card_folder(tmp_path / "sidebar" / "mine", "mine", "CHIP-CTC", "ngram-classifier")

    models = list_models(extra_dirs=[tmp_path / "sidebar"])
    found = by_name(models)
    # built-in first, then user folders in the order given
    assert [m.source for m in models[:6]] == ["built-in"] * 6
    assert models[-1].name == "mine" and models[-1].path == extra
    assert found["hf-ner"].task == "CMeEE-V2" and found["hf-ner"].kind == "hf-token-classification"
    assert found["hf-ner"].ok and found["hf-ner"].source == "user" and found["hf-ner"].card is None
    assert found["hf-cls"].task is None and found["hf-cls"].kind == "hf-sequence-classification"
    assert found["hf-lm"].kind == "hf-causal-lm" and found["hf-lm"].ok
    assert "safetensors" in found["hf-pickle"].problem and "allow_pickle" in found["hf-pickle"].problem
    assert "no tokenizer files" in found["hf-notok"].problem
    assert "unsupported architecture (T5ForConditionalGeneration)" in found["hf-seq2seq"].problem
    assert "unknown cblue_task 'Nope'" in found["hf-badtask"].problem
    assert found["single-model"].task == "CHIP-STS" and found["single-model"].ok
    assert "folder not found" in found["does-not-exist"].problem
    # a folder listed twice (env and extra) appears once
    again = list_models(extra_dirs=[users, str(users) + os.sep])
    assert len(again) == len(list_models())


def test_resolve_by_name_path_and_errors(builtin, tmp_path, monkeypatch):
    assert resolve("qic-ngram").path == builtin / "qic-ngram"
    assert resolve(builtin / "cmeee-span").name == "cmeee-span"
    folder = fake_hf_folder(tmp_path / "elsewhere" / "x", task="CMeEE")
    info = resolve(str(folder))
    assert info.source == "user" and info.task == "CMeEE"
    monkeypatch.setenv(registry.ENV_VAR, str(tmp_path / "elsewhere"))
    assert resolve("x").path == folder
    with pytest.raises(ModelNotFoundError) as err:
        resolve("qic-ngramm")
    msg = str(err.value)
    assert "unknown model 'qic-ngramm'" in msg and "available: " in msg and "qic-ngram" in msg
    assert "broken-json" not in msg.split("available:")[1]  # only loadable names are offered
    with pytest.raises(ModelNotFoundError, match="no model folder at"):
        resolve(str(tmp_path / "nope" / "model"))
    with pytest.raises(ModelNotFoundError, match="no model given"):
        resolve("  ")


def test_resolve_with_no_models(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "BUILTIN_DIR", tmp_path / "none")
    with pytest.raises(ModelNotFoundError, match="no models available"):
        resolve("anything")


def test_model_info_json(builtin):
    info = resolve("qic-ngram")
    js = info.to_json()
    assert set(js) == {"name", "task", "path", "kind", "role", "source", "size_bytes", "problem"}
    assert js["role"] == "model"
    json.dumps(js)


def test_real_builtin_folder_never_crashes(monkeypatch):
    """Whatever the repository's models/ folder holds, listing it gives a well-formed answer."""
    monkeypatch.setattr(registry, "BUILTIN_DIR",
                        registry.Path(registry.__file__).resolve().parents[2] / "models")
    for m in list_models():
        assert m.source == "built-in" and isinstance(m.name, str)
        assert m.ok or isinstance(m.problem, str)


# ---- dispatch of built-in kinds (loading.py; no torch) -------------------------------------

class _Fixed:
    """A stand-in for a built-in predictor."""

    def __init__(self, task: str, device: str):
        from cblue_core.tasks import get_task

        self.task, self.device, self.batch_size = get_task(task), device, 32
        self.card = ModelCard("x", task, "ngram-classifier")


def test_builtin_kind_dispatch(builtin, monkeypatch):
    from cblue_core.models import loading
    from cblue_core.models.registry import ModelLoadError

    calls = []

    def fake_loader(path, device):
        calls.append((path, device))
        return _Fixed("KUAKE-QIC", device)

    monkeypatch.setattr(loading, "_builtin_loaders", lambda: ({"ngram-classifier": fake_loader}, None))
    p = loading.load_predictor("qic-ngram", batch_size=7)
    assert calls == [(builtin / "qic-ngram", "cpu")] and p.batch_size == 7
    assert loading.predictor_params(p) == {"model": "x", "kind": "ngram-classifier", "device": "cpu"}
    with pytest.raises(ModelLoadError, match="is for task KUAKE-QIC, not CHIP-CTC"):
        loading.load_predictor("qic-ngram", task="CHIP-CTC")
    with pytest.raises(ModelLoadError, match="cannot be loaded: no weights"):
        loading.load_predictor("no-weights")
    with pytest.raises(ModelLoadError, match="unknown kind 'span-encoder'"):
        loading.load_predictor("cmeee-span")

    def failing(path, device):
        raise ValueError("vocabulary size mismatch")
    monkeypatch.setattr(loading, "_builtin_loaders", lambda: ({"ngram-classifier": failing}, None))
    with pytest.raises(ModelLoadError, match="failed to load: ValueError: vocabulary size mismatch"):
        loading.load_predictor("qic-ngram")


def test_builtin_package_absent(builtin, monkeypatch):
    from cblue_core.models import loading
    from cblue_core.models.registry import ModelLoadError

    monkeypatch.setattr(loading, "_builtin_loaders",
                        lambda: ({}, "ModuleNotFoundError: No module named 'cblue_core.models.builtin'"))
    with pytest.raises(ModelLoadError, match="cblue_core.models.builtin is not available"):
        loading.load_predictor("qic-ngram")
    table = loading.loader_table()
    assert set(registry.HF_KINDS) <= set(table)


def test_shared_encoder_and_the_models_on_it(builtin):
    enc = fake_card_folder(builtin / "encoder", "encoder", task="", kind="mlm-encoder")
    (enc / "config.json").write_text(json.dumps({"model_type": "bert"}), encoding="utf-8")
    (enc / "vocab.txt").write_text("[PAD]\n[UNK]\n", encoding="utf-8")
    sha1 = registry.weights_sha1(enc)
    head = fake_card_folder(builtin / "qic-head", "qic-head", kind="encoder-classifier")
    (head / "config.json").write_text(json.dumps({"encoder": "encoder", "encoder_sha1": sha1}), encoding="utf-8")
    found = by_name(list_models())
    assert found["encoder"].ok and found["encoder"].role == "encoder" and found["encoder"].task is None
    assert found["qic-head"].ok and found["qic-head"].role == "model"
    with pytest.raises(ModelNotFoundError) as err:
        resolve("nothing-like-it")
    assert "qic-head" in str(err.value) and "encoder," not in str(err.value)   # not offered as a model
    # the encoder's weights change: its task models say so; without its tokenizer it has a problem
    (enc / "model.safetensors").write_bytes(b"\1" * 32)
    assert "other weights" in registry.inspect_folder(head).problem
    (enc / "vocab.txt").unlink()
    assert "no tokenizer" in registry.inspect_folder(enc).problem
    assert "cannot be loaded: no tokenizer" in registry.inspect_folder(head).problem
    shutil.rmtree(enc)
    assert "is not there" in registry.inspect_folder(head).problem
