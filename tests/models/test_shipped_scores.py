"""With the real CBLUE files at hand, every shipped model's dev score recomputed from its weights
equals its card (so the README's table, built from the cards, is what the weights do)."""
from __future__ import annotations

import pytest

from cblue_core.models.builtin import MODEL_DIRS, load, scored_dev_data
from cblue_core.models.builtin import common as C
from cblue_core.models.registry import BUILTIN_DIR
from cblue_core.runs.evaluation import evaluate
from cblue_core.tasks import get_task

pytestmark = pytest.mark.slow   # see tests/conftest.py: not in the fast loop


@pytest.mark.parametrize("task", sorted(MODEL_DIRS))
def test_the_dev_score_on_the_card_is_what_the_weights_do(task, shared_dir):
    folder = BUILTIN_DIR / MODEL_DIRS[task]
    if not (folder / C.CARD_FILE).is_file():
        pytest.skip(f"no shipped model for {task}")
    card = C.read_card(folder)
    dev = scored_dev_data(card, shared_dir / "cblue")
    summary = evaluate(get_task(task), dev, load(folder).predict(dev)).summary()
    head = card.dev_metrics["headline"]
    assert summary["headline"] == head
    assert summary["metrics"][head] == pytest.approx(card.dev_metrics["metrics"][head], abs=1e-9)
