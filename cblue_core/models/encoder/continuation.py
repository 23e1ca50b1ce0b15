"""Continued pretraining: a new stage of masked-language modelling that starts from a finished
encoder folder (its weights and vocabulary) instead of from random weights.

The stage has its own recipe (learning-rate warm-up and decay over its own steps) but counts its
updates after the base's, so that the exported card reads as one run: the curves of both stages
on one step axis, steps, tokens and time summed, and each stage's recipe and weights listed in
``training.stages``. The base is read once, when the stage starts, and kept in the checkpoint's
state; a resumed stage checks that the base folder still holds the same weights.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..registry import CARD_FILE, ENCODER_KIND, weights_sha1
from .vocab import read_vocab

# The second stage's recipe: a gentler peak than the first stage's 5e-4, warmed up again because
# the optimizer's moments are not shipped with the folder; bf16 autocast where the CPU has it in
# hardware (AMX halves the step time), fp32 elsewhere: both gave the same held-out curve.
STAGE_RECIPE = {"steps": 9000, "warmup_steps": 300, "lr": 3e-4, "precision": "auto"}
# Settings of the architecture: a stage must keep the base's.
ARCHITECTURE = ("hidden", "layers", "heads", "intermediate", "max_len")


def read_base(folder: str | Path) -> dict[str, Any]:
    """What a new stage keeps of the finished encoder in ``folder`` (ValueError when it is not one)."""
    folder = Path(folder)
    card_path = folder / CARD_FILE
    if not card_path.is_file() or not (folder / "model.safetensors").is_file():
        raise ValueError(f"{folder} is not an encoder folder (model_card.json and model.safetensors expected)")
    card = json.loads(card_path.read_text(encoding="utf-8"))
    if card.get("kind") != ENCODER_KIND:
        raise ValueError(f"{folder} holds a {card.get('kind')!r} model, not the shared encoder ({ENCODER_KIND})")
    if card.get("extra", {}).get("partial"):
        raise ValueError(f"{folder} is a partly trained export: continue from a finished encoder")
    t = card["training"]
    earlier = t.get("stages") or [{"steps": t["steps"], "hyperparameters": t["hyperparameters"],
                                   "command": t["command"]}]
    return {"folder": str(folder), "weights_sha1": weights_sha1(folder), "steps": int(t["steps"]),
            "tokens": int(t["tokens"]), "masked_tokens": int(t["masked_tokens"]),
            "cpu_s": float(t["cpu_s"]), "time_s": float(t["time_s"]),
            "pass_losses": list(t.get("pass_losses", [])), "train_curve": list(t["train_curve"]),
            "heldout_curve": list(t["heldout_curve"]), "stages": earlier,
            "vocab": read_vocab(folder)}


def recipe_of(base: dict[str, Any]) -> dict[str, Any]:
    """The recipe of the base's last stage (the start of a stage's own)."""
    return dict(base["stages"][-1]["hyperparameters"])


def check_base(base: dict[str, Any], recipe: dict[str, Any]) -> None:
    """ValueError when the stage's recipe changes the base's architecture."""
    then = base["stages"][-1]["hyperparameters"]
    diff = [k for k in ARCHITECTURE if then.get(k) != recipe.get(k)]
    if diff:
        raise ValueError(f"the base encoder was built with other settings ({', '.join(diff)}); "
                         "a continued stage keeps its architecture")


def check_unchanged(base: dict[str, Any]) -> None:
    """ValueError when the base folder no longer holds the weights the stage started from."""
    now = weights_sha1(base["folder"])
    if now != base["weights_sha1"]:
        raise ValueError(f"the base encoder in {base['folder']} has other weights than when this stage started "
                         f"(sha1 {now[:12]}, was {base['weights_sha1'][:12]}); start the stage afresh")


def whole_run(base: dict[str, Any] | None, stage: dict[str, Any], recipe: Any, command: str) -> dict[str, Any]:
    """The card's training figures of the base and the stage as one run (the stage alone when
    there is no base). ``stage`` holds the stage's own figures, its curves on the shared axis."""
    if base is None:
        return stage
    heldout = list(base["heldout_curve"])
    # The stage scores the base's weights first: the same point as the base's last, kept as a check.
    start = stage["heldout_curve"][:1]
    rest = stage["heldout_curve"][1:] if start and heldout and start[0][0] == heldout[-1][0] else stage["heldout_curve"]
    return {**stage,
            "steps": base["steps"] + stage["steps"],
            "tokens": base["tokens"] + stage["tokens"],
            "masked_tokens": base["masked_tokens"] + stage["masked_tokens"],
            "cpu_s": round(base["cpu_s"] + stage["cpu_s"], 1),
            "time_s": round(base["time_s"] + stage["time_s"], 1),
            "pass_losses": base["pass_losses"] + stage["pass_losses"],
            "train_curve": base["train_curve"] + stage["train_curve"],
            "heldout_curve": heldout + rest,
            "stages": [*base["stages"],
                       {"steps": stage["steps"], "hyperparameters": asdict(recipe), "command": command,
                        "from_weights_sha1": base["weights_sha1"],
                        "heldout_at_start": start[0] if start else None}]}
