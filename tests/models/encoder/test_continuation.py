"""Continued pretraining: a stage that starts from a finished encoder folder reads as one run in
its card, resumes exactly, and refuses a base it cannot continue."""
from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file

from cblue_core.cli import main
from cblue_core.models.encoder.pretrain import export_checkpoint, pretrain
from tests.models.encoder.test_pretrain import DATA, TINY

BASE = {**TINY, "steps": 10, "eval_every": 5, "log_every": 5}
STAGE = {"steps": 6, "warmup_steps": 2, "lr": 1e-3}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("base") / "encoder"
    pretrain(DATA, folder, overrides=BASE, progress=False)
    shutil.rmtree(folder / "checkpoint")
    return folder


def _card(folder):
    return json.loads((folder / "model_card.json").read_text(encoding="utf-8"))


def test_a_stage_continues_the_base_and_the_card_reads_as_one_run(base, tmp_path):
    before = _card(base)["training"]
    result = pretrain(DATA, tmp_path / "next", overrides=STAGE, progress=False, init_from=base)
    assert result.finished and result.state["step"] == STAGE["steps"]
    card = _card(tmp_path / "next")
    t = card["training"]
    assert t["steps"] == BASE["steps"] + STAGE["steps"]
    assert t["tokens"] == before["tokens"] + result.state["tokens"]
    assert t["cpu_s"] >= before["cpu_s"]
    # one step axis: the base's points, then the stage's after them
    assert [s for s, *_ in t["heldout_curve"]] == [0, 5, 10, 15, 16]
    assert [s for s, *_ in t["train_curve"]] == [5, 10, 15, 16]
    assert t["heldout_curve"][:3] == before["heldout_curve"]
    # the stage first scores the base's weights: the same held-out figures as the base's last point
    first, second = t["stages"]
    assert first["steps"] == 10 and first["hyperparameters"]["lr"] == BASE["lr"]
    assert second["steps"] == 6 and second["hyperparameters"]["lr"] == STAGE["lr"]
    assert second["hyperparameters"]["hidden"] == BASE["hidden"]        # the base's architecture kept
    assert second["heldout_at_start"] == before["heldout_curve"][-1]
    assert (tmp_path / "next" / "vocab.txt").read_text() == (base / "vocab.txt").read_text()
    readme = (tmp_path / "next" / "README.md").read_text(encoding="utf-8")
    assert "trained in stages" in readme and "updates 11-16" in readme
    # the weights moved on from the base's
    a, b = load_file(str(base / "model.safetensors")), load_file(str(tmp_path / "next" / "model.safetensors"))
    assert not torch.equal(a["bert.embeddings.word_embeddings.weight"], b["bert.embeddings.word_embeddings.weight"])


def test_a_cut_stage_resumes_to_the_weights_of_an_uninterrupted_one(base, tmp_path):
    whole = pretrain(DATA, tmp_path / "whole", overrides=STAGE, progress=False, init_from=base)
    cut = pretrain(DATA, tmp_path / "cut", overrides=STAGE, progress=False, init_from=base, max_steps=3)
    assert not cut.finished
    partial = export_checkpoint(tmp_path / "cut", tmp_path / "trial", DATA)
    assert _card(tmp_path / "trial")["extra"]["partial"] == {"steps": 13, "of": 16}
    assert not partial.finished
    with pytest.raises(ValueError, match="continued stage"):
        pretrain(DATA, tmp_path / "cut", overrides=STAGE, progress=False, resume=True)
    resumed = pretrain(DATA, tmp_path / "cut", overrides=STAGE, progress=False, init_from=base, resume=True)
    assert resumed.finished
    a = load_file(str(tmp_path / "whole" / "model.safetensors"))
    b = load_file(str(tmp_path / "cut" / "model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert whole.state["heldout_curve"] == resumed.state["heldout_curve"]


def test_a_stage_draws_other_masks_than_its_base(base, tmp_path):
    """Counted after the base's updates, the stage's step seeds differ from the base's own."""
    again = pretrain(DATA, tmp_path / "again", overrides={**BASE, "steps": 2}, progress=False)
    stage = pretrain(DATA, tmp_path / "stage", overrides={**STAGE, "steps": 2, "lr": 0.0}, progress=False,
                     init_from=base)
    assert again.state["tokens"] != stage.state["tokens"] or again.state["masked"] != stage.state["masked"]


def test_bases_that_cannot_be_continued_are_refused(base, tmp_path):
    with pytest.raises(ValueError, match="not an encoder folder"):
        pretrain(DATA, tmp_path / "x", overrides=STAGE, progress=False, init_from=tmp_path)
    with pytest.raises(ValueError, match="architecture"):
        pretrain(DATA, tmp_path / "x", overrides={**STAGE, "hidden": 64}, progress=False, init_from=base)
    partial = tmp_path / "partial"
    pretrain(DATA, tmp_path / "run", overrides=BASE, progress=False, max_steps=3)
    export_checkpoint(tmp_path / "run", partial, DATA)
    with pytest.raises(ValueError, match="partly trained"):
        pretrain(DATA, tmp_path / "x", overrides=STAGE, progress=False, init_from=partial)


def test_a_base_that_changed_under_a_stage_stops_its_resume(base, tmp_path):
    mine = tmp_path / "base"
    shutil.copytree(base, mine)
    pretrain(DATA, tmp_path / "cut", overrides=STAGE, progress=False, init_from=mine, max_steps=2)
    weights = load_file(str(mine / "model.safetensors"))
    from safetensors.torch import save_file

    save_file({k: v + 1 for k, v in weights.items()}, str(mine / "model.safetensors"))
    with pytest.raises(ValueError, match="other weights"):
        pretrain(DATA, tmp_path / "cut", overrides=STAGE, progress=False, init_from=mine, resume=True)


def test_command_line_continues_with_the_stage_recipe(base, tmp_path, capsys, monkeypatch):
    import cblue_core.models.encoder.pretrain as P

    monkeypatch.setattr(P, "native_bf16", lambda: False)    # an AVX2 CPU: the stage runs in fp32
    out = tmp_path / "next"
    assert main(["pretrain", "--data", str(DATA), "--out", str(out), "--continue-from", str(base),
                 "--max-steps", "2", "--no-progress"]) == 0
    assert "stopped at step 2 of 9000" in capsys.readouterr().out
    state = json.loads((out / "checkpoint" / "state.json").read_text())["state"]
    assert state["base"]["steps"] == BASE["steps"] and state["recipe"]["hidden"] == BASE["hidden"]
    assert state["recipe"]["lr"] == 3e-4 and state["recipe"]["precision"] == "fp32"
    assert main(["pretrain", "--data", str(DATA), "--out", str(out), "--continue-from", str(tmp_path),
                 "--no-progress"]) == 2
