"""The file name a run's predictions are exported under names its split (a dev run is not a test
submission) and keeps the official name for the test split."""
from __future__ import annotations

import pytest

from cblue_core.io.writers import run_file_name
from cblue_core.tasks import REGISTRY


@pytest.mark.parametrize("task", sorted(REGISTRY))
def test_every_task_names_its_split(task):
    spec = REGISTRY[task]
    assert run_file_name(spec, "test") == spec.submission_file
    dev = run_file_name(spec, "dev")
    assert "dev" in dev and "test" not in dev and dev.endswith(spec.submission_file.rsplit(".", 1)[1])
    assert dev not in {f for f in spec.files.values()}          # never a gold file's name


def test_names():
    assert run_file_name(REGISTRY["CMeEE"], "dev") == "CMeEE_dev_predictions.json"
    assert run_file_name(REGISTRY["KUAKE-IR"], "train") == "KUAKE-IR_train_predictions.tsv"
