"""The tiny shared encoder the task-model tests fine-tune: pretrained once per session on the
sample data (hidden 32, one layer, 48 positions, so that long sample texts go through windows)."""
from __future__ import annotations

import shutil

import pytest

from tests.models.conftest import SAMPLE

DATA = SAMPLE / "cblue"
ENCODER = {"hidden": 32, "layers": 1, "heads": 2, "intermediate": 64, "max_len": 48, "min_count": 1,
           "batch_size": 8, "steps": 30, "warmup_steps": 3, "lr": 3e-3, "eval_every": 30, "log_every": 10,
           "eval_sequences": 8}


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory):
    """A folder holding the tiny pretrained encoder (copy it beside a model's folder to use it)."""
    from cblue_core.models.encoder.pretrain import pretrain

    folder = tmp_path_factory.mktemp("tiny-encoder") / "encoder"
    pretrain(DATA, folder, overrides=ENCODER, progress=False)
    shutil.rmtree(folder / "checkpoint")
    return folder
