"""AppTest fixtures: the real app on a throwaway workspace filled with the sample data."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.runs.record import import_run
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.conftest import SAMPLE_DATA

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="session")
def workspace_file(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("apptest") / "workspace.duckdb"


@pytest.fixture(scope="module")
def runs_db(tmp_path_factory):
    """The sample workspace plus two CMeEE runs: A (the sample predictions) and B (gold without
    the first entity of every other sentence); ``cell``: a confusion cell where A errs."""
    db = tmp_path_factory.mktemp("runs") / "runs.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    a = import_run(ws, did, SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json", name="model A").run_id
    gold = json.loads((SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.json").read_text(encoding="utf-8"))
    for rec in gold[::2]:
        rec["entities"] = rec["entities"][1:]     # model B misses the first entity of every other sentence
    b = import_run(ws, did, json.dumps(gold, ensure_ascii=False).encode(), name="model B",
                   file_name="b.json").run_id
    cell = ws.runs.confusion(a)
    cell = cell[(cell.gold_label != cell.pred_label) & (cell.gold_label != "∅") & (cell.pred_label != "∅")].iloc[0]
    ws.close()
    return {"db": db, "a": a, "b": b, "cell": (cell.gold_label, cell.pred_label)}


@pytest.fixture
def app(workspace_file, monkeypatch):
    """A fresh AppTest of app.py; every test shares one sample workspace file (one process)."""
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(workspace_file))

    def make(query: dict | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        return at
    return make


def opened(path: str, query: dict | None = None) -> AppTest:
    """The app run once, then switched to the page at ``path`` with ``query`` in its URL."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(path)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def signed_in(at: AppTest, name: str, monkeypatch) -> AppTest:
    """Act as ``name``: single sign-on mode with AppTest's own ``st.user``, which a visitor cannot
    set (the studio has no box to type a name into)."""
    monkeypatch.setenv("CBLUE_STUDIO_AUTH", "oidc")
    at.user = {"is_logged_in": True, "sub": name}
    return at


def html_of(at: AppTest) -> str:
    """All HTML the page rendered with st.html."""
    return "\n".join(str(getattr(e, "body", "") or getattr(e.proto, "body", "")) for e in at.get("html"))


def matrix_grid(at: AppTest) -> tuple[str, dict]:
    """The confusion matrix the page drew: its component's key and data (``html``, ``version``,
    ``picked``)."""
    import json

    found = [e for e in at.get("bidi_component") if str(getattr(e, "key", "") or "").startswith("err_cm::")]
    if not found:
        raise AssertionError("no confusion matrix on the page")
    return found[0].key, json.loads(found[0].proto.json)


def matrix_labels(data: dict) -> list[str]:
    """The grid's column labels in order (∅ and Σ included), unescaped."""
    import html
    import re

    return [html.unescape(n) for n in re.findall(
        r'<div class="cbr-cm-col" style="grid-column: \d+" title="[^"]*">([^<]*)</div>', data["html"])]


def matrix_click(at: AppTest, task: str, gold: str | None, pred: str | None) -> tuple[str, dict]:
    """What a click on the confusion-matrix cell (gold, pred) sends back (None: the Σ side), read
    from the grid the page drew: (the component's key, its state)."""
    from cblue_core.tasks import get_task

    key, data = matrix_grid(at)
    names = matrix_labels(data)
    display = get_task(task).display_label

    def position(label: str | None) -> int:
        if label is None:
            return len(names) - 1                  # Σ, last
        for shown in (display(label), label):
            if shown in names:
                return names.index(shown)
        raise AssertionError(f"no label {label!r} in the matrix: {names}")

    pick = f"{position(gold)},{position(pred)}"
    if f'data-pick="{pick}"' not in data["html"]:
        raise AssertionError(f"no cell ({gold}, {pred}) in the matrix")
    return key, {"pick": pick}


def taxonomy_click(at: AppTest, category: str) -> dict:
    """What a click on the taxonomy table's row of ``category`` sends back (read from the table
    the page drew)."""
    table = at.dataframe(key="err_tax").value
    shown = list(table["error category"])
    if category not in shown:
        raise AssertionError(f"no row {category!r} in the taxonomy table: {shown}")
    return {"selection": {"rows": [shown.index(category)], "columns": [], "cells": []}}


def count_calls(monkeypatch, owner, name: str) -> dict[str, int]:
    """Replace ``owner.name`` by a spy that counts its calls (and calls the real one)."""
    calls = {"n": 0}
    real = getattr(owner, name)

    def spy(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(owner, name, spy)
    return calls


def sample_runs_db(tmp_path_factory, tasks) -> dict:
    """A workspace file with the sample data and one run of each task's sample dev predictions:
    ``{"db": path, task: run id, ...}``."""
    from cblue_core.runs.record import import_run
    from cblue_core.store.ingest import bootstrap_sample_data
    from cblue_core.store.workspace import connect
    from tests.conftest import SAMPLE_DATA

    db = tmp_path_factory.mktemp("sample_runs") / "workspace.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    out: dict = {"db": db}
    for task in tasks:
        did = ws.datasets.find(task, "dev").dataset_id
        out[task] = import_run(ws, did, SAMPLE_DATA / f"cblue/{task}/{task}_dev.pred.json", name=task).run_id
    ws.close()
    return out
