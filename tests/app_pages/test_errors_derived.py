"""The Errors page runs only the open tab, and derives each run's buckets, slice scores and
corrected-gold scores once (spies count the computations; nothing is timed); the buckets and
per-example statistics are kept in the workspace, so a restarted server does not derive them
again. Scores on corrected gold are recomputed when the gold changes."""
from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app_pages import rescoring
from app_pages.errors_tabs import derived
from cblue_core.annotation.model import Annotation
from cblue_core.runs import derived as kept
from cblue_core.runs.record import import_run
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP, count_calls
from tests.app_pages.test_runs_errors_compare import SAMPLE_DATA


@pytest.fixture
def db(tmp_path, monkeypatch):
    path = tmp_path / "derived.duckdb"
    ws = connect(path)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    run = import_run(ws, did, SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json", name="A").run_id
    ws.slices.save("nested", "nesting_depth >= 2", "CMeEE")
    ws.close()
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(path))
    for cached in (derived.buckets, derived.bucket_chart, derived.slice_table, rescoring.gold_changes):
        cached.clear()
    return {"path": path, "run": run, "did": did}


@pytest.fixture
def spies(monkeypatch):
    calls = {"buckets": 0, "slices": 0, "gold": 0}
    for name, module, fn in (("buckets", derived, "compute_buckets"), ("slices", derived, "compute_slices"),
                             ("gold", rescoring, "compute_gold_changes")):
        real = getattr(module, fn)

        def spy(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(module, fn, spy)
    return calls


def open_errors(run: int, tab: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/errors.py")
    at.query_params["run"] = str(run)
    if tab:
        at.query_params["tab"] = tab
    at.run()
    assert not at.exception, at.exception
    return at


def _charts(at: AppTest) -> list[str]:
    """The HTML bar charts the page shows (F1 per label, bucket panels)."""
    return [e.proto.body for e in at.get("html") if "cbr-bars" in e.proto.body]


def test_only_the_open_tab_runs(db, spies):
    at = open_errors(db["run"])
    assert spies == {"buckets": 0, "slices": 0, "gold": 0}
    assert at.query_params["tab"] == "labels"
    [per_label] = _charts(at)                          # F1 per label: a bar for each CMeEE type
    assert per_label.count('class="cbr-bars-r"') == 9 and "F1 (0-1)" in per_label
    at.session_state["err_tab"] = "Buckets"
    at.run()
    assert spies["buckets"] == 1 and spies["slices"] == 0 and at.query_params["tab"] == "buckets"
    [buckets] = _charts(at)                            # every feature a titled panel
    assert buckets.count('class="cbr-bars-t"') >= 4


def test_derived_data_is_computed_once_per_run(db, spies):
    for _ in range(3):                                 # three visitors, three fresh sessions
        open_errors(db["run"], "buckets")
        open_errors(db["run"], "slices")
    assert spies["buckets"] == 1 and spies["slices"] == 1


def test_a_restarted_server_reads_what_the_last_one_derived(db, monkeypatch):
    buckets = count_calls(monkeypatch, kept, "run_buckets")
    scoring = count_calls(monkeypatch, kept, "run_evaluation")
    first = _charts(open_errors(db["run"], "buckets"))
    open_errors(db["run"], "slices")
    assert buckets["n"] == 1 and scoring["n"] == 1
    # a new server process: no cached data, a new connection to the workspace file
    st.cache_data.clear()
    st.cache_resource.clear()
    again = _charts(open_errors(db["run"], "buckets"))
    at = open_errors(db["run"], "slices")
    assert buckets["n"] == 1 and scoring["n"] == 1
    assert again == first
    assert "nested" in at.dataframe[0].value["slice"].tolist()


def test_corrected_gold_scores_follow_the_gold(db, spies):
    ws = connect(db["path"])
    current, rev = ws.annotations.current(db["did"], 0)
    ws.annotations.save(db["did"], 0, Annotation(spans=current.spans[1:]), author="t", base_revision=rev)
    ws.close()
    open_errors(db["run"], "gold")
    open_errors(db["run"], "gold")
    assert spies["gold"] == 1
    ws = connect(db["path"])
    current, rev = ws.annotations.current(db["did"], 1)
    ws.annotations.save(db["did"], 1, Annotation(spans=current.spans[1:]), author="t", base_revision=rev)
    ws.close()
    at = open_errors(db["run"], "gold")                # a new correction: a new key, recomputed
    assert spies["gold"] == 2
    assert any(m.label.startswith("f1 on current") for m in at.metric)


def test_annotate_rescore_and_errors_corrected_gold_share_one_computation(db, spies):
    ws = connect(db["path"])
    current, rev = ws.annotations.current(db["did"], 0)
    ws.annotations.save(db["did"], 0, Annotation(spans=current.spans[1:]), author="t", base_revision=rev)
    ws.close()
    errors = open_errors(db["run"], "gold")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/annotate.py")
    at.query_params.update({"task": "CMeEE", "split": "dev"})
    at.run()
    at.session_state["ann_tab"] = "Re-score"
    at.run()
    assert not at.exception, at.exception
    assert spies["gold"] == 1                          # the Errors page's result, read again
    def rescored(page: AppTest) -> list[str]:
        return [m.value for m in page.metric if m.label.startswith("f1 on ")]
    assert rescored(at) == rescored(errors) and len(rescored(at)) == 2
