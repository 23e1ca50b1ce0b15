"""A shipped model on the shared encoder was trained with the recipe `train` uses by default, so
that `python -m cblue_core train --task T ...` (its card's command, which names no override)
retrains it: the card's hyperparameters are the task's DEFAULTS over HeadConfig's."""
from __future__ import annotations

from dataclasses import asdict

import pytest

from cblue_core.models.builtin import MODEL_DIRS, shipped_architecture
from cblue_core.models.builtin import common as C
from cblue_core.models.builtin.encoder_heads import DEFAULTS
from cblue_core.models.builtin.finetune import HeadConfig
from cblue_core.models.registry import BUILTIN_DIR

ENCODER_MODELS = [t for t in sorted(MODEL_DIRS)
                  if (BUILTIN_DIR / MODEL_DIRS[t] / C.CARD_FILE).is_file()
                  and C.read_card(BUILTIN_DIR / MODEL_DIRS[t]).kind.startswith("encoder-")]


def test_some_shipped_model_is_on_the_encoder():
    assert ENCODER_MODELS, "no shipped model on the shared encoder: this file tests nothing"


@pytest.mark.parametrize("task", ENCODER_MODELS)
def test_the_card_recipe_is_the_default_one(task):
    card = C.read_card(BUILTIN_DIR / MODEL_DIRS[task])
    positions = C.read_json(BUILTIN_DIR / "encoder" / "config.json")["max_position_embeddings"]
    default = HeadConfig(task=task, kind=card.kind, labels=card.labels, **DEFAULTS.get(task, {}))
    default.max_len = min(default.max_len, positions)
    expected = {k: v for k, v in asdict(default).items() if k in card.training["hyperparameters"]}
    assert card.training["hyperparameters"] == expected
    command = card.training["command"]
    assert f"--task {task} " in command and f"--out models/{MODEL_DIRS[task]}" in command
    assert "--encoder" not in command                     # the shipped encoder, the default
    assert shipped_architecture(task, BUILTIN_DIR) == "encoder"     # so `train` picks the encoder by default
