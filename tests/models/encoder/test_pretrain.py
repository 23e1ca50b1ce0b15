"""Pretraining smoke test on the sample data: the loss falls, the folder loads with plain
transformers, a cut-and-resumed run equals an uninterrupted one, the command line works."""
from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from cblue_core.cli import main
from cblue_core.models.encoder.pretrain import PretrainConfig, export_checkpoint, pretrain
from tests.models.conftest import SAMPLE

DATA = SAMPLE / "cblue"
TINY = {"hidden": 32, "layers": 1, "heads": 2, "intermediate": 64, "min_count": 1, "batch_size": 8,
        "steps": 40, "warmup_steps": 4, "lr": 3e-3, "eval_every": 20, "log_every": 10, "eval_sequences": 16}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("encoder")
    return pretrain(DATA, out, overrides=TINY, progress=False)


def test_loss_falls_and_the_run_finishes(smoke):
    st = smoke.state
    assert smoke.finished and st["step"] == TINY["steps"] and not st["stopped_early"]
    curve = [loss for _, loss, _ in st["train_curve"]]
    assert len(curve) == TINY["steps"] // TINY["log_every"]
    assert curve[-1] < curve[0] - 0.3
    assert [s for s, _, _ in st["heldout_curve"]] == [0, 20, 40]
    assert st["tokens"] > 0 and st["masked"] > 0 and st["cpu_s"] > 0


def test_folder_loads_with_plain_transformers(smoke):
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    folder = smoke.out_dir
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    assert type(model).__name__ == "BertForMaskedLM"
    text = smoke.corpus.train[0][:20]
    enc = tok(text, return_tensors="pt")
    ids = enc["input_ids"][0].tolist()
    assert ids[1:-1] == [tok.convert_tokens_to_ids(c.lower()) for c in text if not c.isspace()][:len(ids) - 2]
    assert tok.unk_token_id not in ids and len(ids) == len(text) + 2
    with torch.no_grad():
        logits = model(**enc).logits
    assert logits.shape == (1, len(ids), len(tok))
    # the same weights as the last checkpoint, and the encoder alone loads too
    ckpt = load_file(str(folder / "checkpoint" / "model.safetensors"))
    assert torch.equal(model.bert.embeddings.word_embeddings.weight, ckpt["bert.embeddings.word_embeddings.weight"])
    assert type(AutoModel.from_pretrained(folder)).__name__ == "BertModel"
    assert "auto_map" not in json.loads((folder / "config.json").read_text())


def test_card(smoke):
    card = json.loads((smoke.out_dir / "model_card.json").read_text(encoding="utf-8"))
    assert card["kind"] == "mlm-encoder" and card["size_bytes"] > 0
    t = card["training"]
    assert t["steps"] == TINY["steps"] and t["hyperparameters"]["hidden"] == 32
    assert {s["kind"] for s in t["corpus"]["sources"]} == {"train", "icd10", "ctc_categories"}
    assert t["heldout_curve"] == smoke.state["heldout_curve"] and t["train_curve"]
    assert card["extra"]["parameters"]["total"] > 0
    assert "CMeEE" in card["extra"]["dev_overlap"]
    readme = (smoke.out_dir / "README.md").read_text(encoding="utf-8")
    assert "Held-out curve" in readme and "CMeEE/CMeEE_train.json" in readme


def test_resume_gives_the_weights_of_an_uninterrupted_run(tmp_path):
    small = {**TINY, "steps": 10, "eval_every": 5, "log_every": 5}
    whole = pretrain(DATA, tmp_path / "whole", overrides=small, progress=False)
    cut = pretrain(DATA, tmp_path / "cut", overrides=small, progress=False, max_steps=6)
    assert not cut.finished and cut.state["step"] == 6 and cut.state["stopped_early"]
    assert not (tmp_path / "cut" / "model.safetensors").exists()
    resumed = pretrain(DATA, tmp_path / "cut", overrides=small, progress=False, resume=True)
    assert resumed.finished
    a = load_file(str(tmp_path / "whole" / "model.safetensors"))
    b = load_file(str(tmp_path / "cut" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert whole.state["train_curve"] == resumed.state["train_curve"]
    assert whole.state["heldout_curve"] == resumed.state["heldout_curve"]
    # another recipe cannot continue that checkpoint
    with pytest.raises(ValueError, match="lr"):
        pretrain(DATA, tmp_path / "cut", overrides={**small, "lr": 1e-3}, progress=False, resume=True)


def test_an_unfinished_checkpoint_exports_as_a_partial_folder(tmp_path):
    from transformers import AutoModelForMaskedLM

    small = {**TINY, "steps": 10, "eval_every": 5, "log_every": 5}
    cut = pretrain(DATA, tmp_path / "run", overrides=small, progress=False, max_steps=6)
    assert not cut.finished
    result = export_checkpoint(tmp_path / "run", tmp_path / "encoder", DATA)
    assert not result.finished and result.state["step"] == 6
    card = json.loads((tmp_path / "encoder" / "model_card.json").read_text(encoding="utf-8"))
    assert card["kind"] == "mlm-encoder" and card["extra"]["partial"] == {"steps": 6, "of": 10}
    assert "PARTLY TRAINED" in card["description"] and not (tmp_path / "encoder" / "checkpoint").exists()
    model = AutoModelForMaskedLM.from_pretrained(tmp_path / "encoder")
    ckpt = load_file(str(tmp_path / "run" / "checkpoint" / "model.safetensors"))
    assert torch.equal(model.bert.embeddings.word_embeddings.weight, ckpt["bert.embeddings.word_embeddings.weight"])
    with pytest.raises(FileNotFoundError):
        export_checkpoint(tmp_path / "nothing", tmp_path / "x", DATA)


def test_bf16_runs_the_forward_pass_in_bfloat16_and_keeps_fp32_weights(tmp_path, monkeypatch):
    import cblue_core.models.encoder.pretrain as P

    seen: list[torch.dtype] = []
    real = P.mlm_loss

    def spy(model, *args):    # the dtype of the first attention projection's output
        seen.append(model.bert.encoder.layer[0].attention.self.query(
            model.bert.embeddings(input_ids=args[0], token_type_ids=args[1])).dtype)
        return real(model, *args)

    monkeypatch.setattr(P, "mlm_loss", spy)
    small = {**TINY, "steps": 4, "eval_every": 4, "log_every": 2, "eval_sequences": 8}
    run = pretrain(DATA, tmp_path / "bf16", overrides={**small, "precision": "bf16"}, progress=False)
    assert run.finished and run.state["recipe"]["precision"] == "bf16"
    # four training steps under autocast, then the held-out scores (before and after) in fp32
    assert seen.count(torch.bfloat16) == 4 and set(seen) == {torch.bfloat16, torch.float32}
    weights = load_file(str(tmp_path / "bf16" / "model.safetensors"))
    assert {w.dtype for w in weights.values()} == {torch.float32}
    card = json.loads((tmp_path / "bf16" / "model_card.json").read_text(encoding="utf-8"))
    assert card["training"]["hyperparameters"]["precision"] == "bf16"
    # an fp32 checkpoint does not resume as bf16
    pretrain(DATA, tmp_path / "fp32", overrides=small, progress=False, max_steps=2)
    with pytest.raises(ValueError, match="precision"):
        pretrain(DATA, tmp_path / "fp32", overrides={**small, "precision": "bf16"}, progress=False, resume=True)
    with pytest.raises(ValueError, match="precision must be one of fp32, bf16"):
        PretrainConfig(precision="fp16")


def test_auto_precision_is_bf16_only_where_the_cpu_has_it_and_a_resumed_run_keeps_its_own(
        tmp_path, monkeypatch, capsys):
    import cblue_core.models.encoder.pretrain as P

    auto = {"steps": 10, "precision": "auto"}
    for native, expected in ((True, "bf16"), (False, "fp32")):
        monkeypatch.setattr(P, "native_bf16", lambda native=native: native)
        assert P.settled_overrides(auto, tmp_path / "new", resume=False) == {"steps": 10, "precision": expected}
        assert P.settled_overrides(auto, tmp_path / "new", resume=True)["precision"] == expected
    assert P.settled_overrides({"precision": "bf16"}, tmp_path, resume=False) == {"precision": "bf16"}
    assert P.settled_overrides(None, tmp_path, resume=False) is None
    # a bf16 checkpoint resumes in bf16 on a CPU without it, with a warning; fp32 stays fp32
    small = {**TINY, "steps": 4, "eval_every": 4, "log_every": 2, "eval_sequences": 8}
    pretrain(DATA, tmp_path / "bf16", overrides={**small, "precision": "bf16"}, progress=False, max_steps=1)
    pretrain(DATA, tmp_path / "fp32", overrides=small, progress=False, max_steps=1)
    capsys.readouterr()
    assert P.settled_overrides(auto, tmp_path / "bf16", resume=True)["precision"] == "bf16"
    assert "no native bf16" in capsys.readouterr().out
    monkeypatch.setattr(P, "native_bf16", lambda: True)
    assert P.settled_overrides(auto, tmp_path / "fp32", resume=True)["precision"] == "fp32"
    run = pretrain(DATA, tmp_path / "fp32", overrides={**small, "precision": "auto"}, progress=False, resume=True)
    assert run.finished and run.state["recipe"]["precision"] == "fp32"


def test_defaults_are_the_recipe():
    cfg = PretrainConfig()
    assert cfg.steps > cfg.warmup_steps > 0 and cfg.lr_at(0) < cfg.lr_at(cfg.warmup_steps - 1) == cfg.lr
    assert cfg.lr_at(cfg.steps - 1) < cfg.lr / 100
    assert cfg.precision == "fp32"     # the first stage's; a checkpoint without the setting is fp32


def test_command_line(tmp_path, capsys, monkeypatch):
    import cblue_core.models.encoder.pretrain as P

    monkeypatch.setattr(P, "make_config", lambda overrides=None: PretrainConfig(**{**TINY, "steps": 6}))
    out = tmp_path / "enc"
    assert main(["pretrain", "--data", str(DATA), "--out", str(out), "--max-steps", "3", "--no-progress"]) == 0
    assert "stopped at step 3 of 6" in capsys.readouterr().out
    assert main(["pretrain", "--data", str(DATA), "--out", str(out), "--resume", "--no-progress"]) == 0
    assert "pretrained the encoder: 6 steps" in capsys.readouterr().out
    assert (out / "model.safetensors").is_file()
    assert main(["pretrain", "--data", str(tmp_path / "nothing"), "--out", str(out)]) == 2
