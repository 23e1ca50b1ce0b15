"""Every task with sample data: gold written as the official submission file, imported back as a
run, scores perfectly; and every sample file re-encodes to the records it was read from."""
from __future__ import annotations

import json

import pytest

from cblue_core.io.resources import resource_kind
from cblue_core.io.validate import load
from cblue_core.io.writers import dumps_records, encode_records, write_submission
from cblue_core.runs.record import import_run
from cblue_core.store.ingest import bootstrap_sample_data, dataset_files
from cblue_core.store.workspace import connect
from cblue_core.tasks import TASKS, infer_tasks
from tests.conftest import SAMPLE_DATA

# ROUGE-based official scores top out just below 1 (the 1e-8 of rouge_chinese's F).
NEAR_ONE = 1 - 1e-6


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    w = connect(tmp_path_factory.mktemp("rt") / "rt.duckdb")
    bootstrap_sample_data(w, SAMPLE_DATA)
    yield w
    w.close()


@pytest.mark.parametrize("task", [t.name for t in TASKS])
def test_gold_as_submission_scores_perfectly(ws, tmp_path, task):
    infos = [d for d in ws.datasets.all(task) if d.annotations > 0 or task == "MedDG"]
    if not infos:
        pytest.skip(f"no labelled sample split for {task}")
    info = infos[0]
    spec = next(t for t in TASKS if t.name == task)
    gold = ws.datasets.examples(info.dataset_id)
    conv = info.offset_convention if info.offset_convention in ("inclusive", "exclusive") else "inclusive"
    path = write_submission(spec, gold, tmp_path, convention=conv)
    assert path.name == spec.submission_file
    run = import_run(ws, info.dataset_id, path)
    ev = run.evaluation
    assert ev.value is not None, (task, ev.metrics)
    assert ev.value / ev.scale >= NEAR_ONE, (task, ev.headline, ev.value)


@pytest.mark.parametrize("path", [p for p in dataset_files(SAMPLE_DATA) if not resource_kind(p)],
                         ids=lambda p: p.name)
def test_sample_files_validate_and_round_trip(path):
    for spec in infer_tasks(path) or [None]:
        ds = load(path, spec)
        assert ds.report.ok and not [w for w in ds.report.warnings if w.code != "duplicate_key"], \
            [str(w) for w in ds.report.warnings][:3]
        raw = encode_records(ds.task, ds.examples, use_raw=True)
        text = dumps_records(ds.task, raw, [e.key for e in ds.examples])
        again = load(text.encode("utf-8"), ds.task, name=path.name)
        assert [e.to_dict(include_raw=False) for e in again.examples] == \
               [e.to_dict(include_raw=False) for e in ds.examples]


def test_promptcblue_sample_files_both_namings():
    new = load(SAMPLE_DATA / "promptcblue/dev.json", "PromptCBLUE")
    old = load(SAMPLE_DATA / "promptcblue/dev_16task.json", "PromptCBLUE")
    assert len({e.label for e in new.examples}) == 18
    assert "CMeIE" in {e.meta["task_dataset"] for e in old.examples}
    assert json.loads(dumps_records(new.task, encode_records(new.task, new.examples, use_raw=True)).splitlines()[0])
