"""A workspace with one run of 4,500 error rows over 1,500 CMeEE examples, and the same rows as
plain dicts, so that tests count what a selection should hold independently of the store."""
from __future__ import annotations

import json
from pathlib import Path

from cblue_core.models.base import model_input
from cblue_core.store.ingest import ingest_file
from cblue_core.store.runs import error_table
from cblue_core.store.training_sets import TrainingSet
from cblue_core.store.workspace import connect
from cblue_core.tasks import get_task

EXAMPLES = 1500


def error_rows() -> list[dict]:
    """Three rows per example: correct sym and bod spans, then a missed dis (every third example,
    tagged nested on even ones), a dis predicted as sym, or a spurious bod."""
    rows = []
    for i in range(EXAMPLES):
        rows.append({"idx": i, "category": "correct", "gold_label": "sym", "pred_label": "sym", "tags": [],
                     "gold_start": 0, "gold_end": 2, "pred_start": 0, "pred_end": 2})
        rows.append({"idx": i, "category": "correct", "gold_label": "bod", "pred_label": "bod", "tags": [],
                     "gold_start": 4, "gold_end": 5, "pred_start": 4, "pred_end": 5})
        if i % 3 == 0:
            rows.append({"idx": i, "category": "missed", "gold_label": "dis", "gold_start": 2, "gold_end": 4,
                         "tags": ["nested"] if i % 2 == 0 else []})
        elif i % 3 == 1:
            rows.append({"idx": i, "category": "wrong_type", "gold_label": "dis", "pred_label": "sym",
                         "gold_start": 2, "gold_end": 4, "pred_start": 2, "pred_end": 4, "tags": []})
        else:
            rows.append({"idx": i, "category": "spurious", "pred_label": "bod", "pred_start": 3,
                         "pred_end": 4, "tags": []})
    return rows


def seen(i: int) -> bool:
    """The examples the run's model was trained on."""
    return i % 4 == 0


def seen_by_other(i: int) -> bool:
    """The examples the model of the second run (:func:`add_other_run`) was trained on."""
    return i % 5 == 0


def build(folder: Path) -> tuple[Path, int]:
    """(workspace file, run id): the run's training set declared (see :func:`seen`); its
    predictions are the inputs (no entity), as its gold."""
    data = folder / "CMeEE_dev.json"
    data.write_text(json.dumps([{"text": f"头痛发热{i}", "entities": []} for i in range(EXAMPLES)],
                               ensure_ascii=False), encoding="utf-8")
    db = folder / "many.duckdb"
    ws = connect(db)
    assert ingest_file(ws, data).ok
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    run_id = _model_run(ws, did, "many", "m", seen)
    ws.close()
    return db, run_id


def _model_run(ws, dataset_id: int, name: str, model: str, trained_on) -> int:
    """A run of :func:`error_rows` whose model was trained on the examples ``trained_on`` picks."""
    seen_here = [i for i in range(EXAMPLES) if trained_on(i)]
    return ws.runs.create(dataset_id, name, source="model", model=model, predictions=inputs(ws, dataset_id),
                          metrics={"headline": "f1", "metrics": {"f1": 0.5}}, errors=error_table(error_rows()),
                          training=TrainingSet(True, model, len(seen_here)), seen=seen_here)


def inputs(ws, dataset_id: int) -> list:
    task = get_task("CMeEE")
    return [model_input(task, ex) for ex in ws.datasets.examples(dataset_id)]


def add_other_run(db: Path) -> int:
    """A second model run on the same split, by a model trained on other examples."""
    ws = connect(db)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    run_id = _model_run(ws, did, "other", "n", seen_by_other)
    ws.close()
    return run_id
