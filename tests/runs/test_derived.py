"""What pages derive from a whole run is computed once and kept in the workspace: read back as
equal dataclasses, by this process or another one without computing again; computed again when
the code or the train split it came from changed, or when the kept text is unreadable; never
written to a read-only workspace. The train split's statistics come from a query, with the same
buckets as from its decoded records."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from cblue_core.analysis.buckets import run_buckets
from cblue_core.runs import derived
from cblue_core.runs.record import import_run, run_evaluation
from cblue_core.store.ingest import ingest_paths
from cblue_core.store.workspace import connect
from cblue_core.tasks import get_task
from tests.app_pages.conftest import count_calls
from tests.conftest import ROOT, SAMPLE_DATA


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """CMeEE, CMeIE and CHIP-CTC sample splits with one imported dev run each."""
    path = tmp_path_factory.mktemp("derived") / "template.duckdb"
    ws = connect(path)
    ingest_paths(ws, [SAMPLE_DATA / "cblue/CMeEE", SAMPLE_DATA / "cblue/CMeIE", SAMPLE_DATA / "cblue/CHIP-CTC"])
    runs = {}
    for task in ("CMeEE", "CMeIE", "CHIP-CTC"):
        did = ws.datasets.find(task, "dev").dataset_id
        runs[task] = import_run(ws, did, SAMPLE_DATA / f"cblue/{task}/{task}_dev.pred.json", name=task).run_id
    ws.close()
    return path, runs


@pytest.fixture
def db(template, tmp_path):
    path = tmp_path / "ws.duckdb"
    shutil.copy(template[0], path)
    return path, template[1]


@pytest.fixture
def computed(monkeypatch):
    """How often the derivations really computed: {"buckets": {"n": ...}, "evaluation": {"n": ...}}."""
    return {"buckets": count_calls(monkeypatch, derived, "run_buckets"),
            "evaluation": count_calls(monkeypatch, derived, "run_evaluation")}


def buckets_from_records(ws, run_id):
    """The buckets as the Errors page computed them before: every train record decoded."""
    run = ws.runs.get(run_id)
    train = ws.datasets.find(run.task, "train")
    return run_buckets(get_task(run.task), ws.datasets.examples(run.dataset_id), ws.runs.predictions(run_id),
                       ws.datasets.examples(train.dataset_id))


@pytest.mark.parametrize(("task", "train_feature"), [("CMeEE", "training frequency"),
                                                     ("CMeIE", "triple in the train split"),
                                                     ("CHIP-CTC", "gold label training frequency")])
def test_buckets_are_computed_once_and_read_back_equal(db, computed, task, train_feature):
    path, runs = db
    ws = connect(path)
    first = derived.run_buckets_kept(ws, runs[task])
    assert first == buckets_from_records(ws, runs[task])      # the query's train statistics agree
    assert any(b.feature == train_feature for b in first)
    again = derived.run_buckets_kept(ws, runs[task])
    assert computed["buckets"]["n"] == 1 and again == first
    assert list(ws.derived.kinds(runs[task])) == ["buckets"]
    ws.close()


def test_the_evaluation_is_kept_with_its_statistics_and_without_error_rows(db, computed):
    path, runs = db
    ws = connect(path)
    fresh = run_evaluation(ws, runs["CMeEE"])
    derived.run_evaluation_kept(ws, runs["CMeEE"])
    kept = derived.run_evaluation_kept(ws, runs["CMeEE"])
    assert computed["evaluation"]["n"] == 1
    assert kept is not None and kept.error_rows == [] and fresh.error_rows
    assert (kept.task, kept.headline, kept.metrics, kept.per_label, kept.notes) == (
        fresh.task, fresh.headline, fresh.metrics, fresh.per_label, fresh.notes)
    assert kept.stats.kind == fresh.stats.kind == "counts" and kept.stats.n == fresh.stats.n
    for a, b in zip(kept.stats.counts(), fresh.stats.counts()):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    ws.close()


SECOND_PROCESS = textwrap.dedent("""
    import json, sys
    from cblue_core.runs import derived
    from cblue_core.store.workspace import connect

    def refuse(*args, **kwargs):
        raise AssertionError("computed again")
    derived.run_buckets = derived.run_evaluation = refuse
    ws = connect(sys.argv[1])
    buckets = derived.run_buckets_kept(ws, int(sys.argv[2]))
    ev = derived.run_evaluation_kept(ws, int(sys.argv[2]))
    print(json.dumps({"f1": [b.f1 for b in buckets], "tp": ev.stats.tp.tolist(), "metrics": ev.metrics}))
""")


def test_a_second_process_reads_the_kept_data_without_computing(db):
    path, runs = db
    ws = connect(path)
    buckets = derived.run_buckets_kept(ws, runs["CMeEE"])
    ev = derived.run_evaluation_kept(ws, runs["CMeEE"])
    ws.close()                              # DuckDB: one process at a time on the file
    done = subprocess.run([sys.executable, "-c", SECOND_PROCESS, str(path), str(runs["CMeEE"])],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    assert got == {"f1": [b.f1 for b in buckets], "tp": ev.stats.tp.tolist(), "metrics": ev.metrics}


def test_another_code_version_is_computed_again_and_replaces_the_old(db, computed, monkeypatch):
    path, runs = db
    ws = connect(path)
    run = runs["CMeEE"]
    derived.run_buckets_kept(ws, run)
    before = ws.derived.kinds(run)["buckets"]
    monkeypatch.setattr(derived, "code_version", lambda sources: "edited")
    derived.run_buckets_kept(ws, run)
    derived.run_buckets_kept(ws, run)
    assert computed["buckets"]["n"] == 2
    assert ws.derived.kinds(run) == {"buckets": "edited;" + before.split(";", 1)[1]}
    ws.close()


def test_editing_a_source_module_changes_the_version(tmp_path, monkeypatch):
    pkg = tmp_path / "probe_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = derived.code_version.__wrapped__(("probe_pkg",))
    (pkg / "mod.py").write_text("X = 2\n")
    assert derived.code_version.__wrapped__(("probe_pkg",)) != first


def test_another_train_split_is_computed_again(db, computed):
    path, runs = db
    ws = connect(path)
    run = runs["CMeEE"]
    assert any(b.feature == "training frequency" for b in derived.run_buckets_kept(ws, run))
    ws.datasets.delete(ws.datasets.find("CMeEE", "train").dataset_id)
    without = derived.run_buckets_kept(ws, run)
    assert computed["buckets"]["n"] == 2 and not any(b.feature == "training frequency" for b in without)
    ws.close()


def test_an_unreadable_payload_is_computed_again(db, computed):
    path, runs = db
    ws = connect(path)
    run = runs["CMeEE"]
    first = derived.run_buckets_kept(ws, run)
    version = ws.derived.kinds(run)["buckets"]
    ws.derived.put(run, "buckets", version, '[{"feature": 3}]')
    assert derived.run_buckets_kept(ws, run) == first and computed["buckets"]["n"] == 2
    assert derived.run_buckets_kept(ws, run) == first and computed["buckets"]["n"] == 2    # replaced
    ws.close()


def test_a_read_only_workspace_computes_without_keeping(db, computed):
    path, runs = db
    ws = connect(path, read_only=True)
    assert derived.run_buckets_kept(ws, runs["CMeEE"])
    assert derived.run_buckets_kept(ws, runs["CMeEE"]) and computed["buckets"]["n"] == 2
    assert ws.derived.kinds(runs["CMeEE"]) == {}
    ws.close()


def test_a_missing_run_has_nothing(db, computed):
    path, _ = db
    ws = connect(path)
    assert derived.run_buckets_kept(ws, 999) == [] and derived.run_evaluation_kept(ws, 999) is None
    assert computed["buckets"]["n"] == 0 and computed["evaluation"]["n"] == 0
    ws.close()
