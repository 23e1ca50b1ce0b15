"""DerivedStore keeps one payload per run and kind: a payload of another version reads as absent,
a new one replaces the old, a run's payloads go with the run (or its dataset) in the same
transaction, and nothing is kept for a run that does not exist."""
from __future__ import annotations

import pytest

from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect


@pytest.fixture
def ws(tmp_path):
    w = connect(tmp_path / "ws.duckdb")
    yield w
    w.close()


def new_run(ws, cmeee_file) -> int:
    if ws.datasets.find("CMeEE", "dev") is None:
        ingest_file(ws, cmeee_file)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    return ws.runs.create(did, "r", source="test", predictions=[], metrics={})


def test_a_payload_is_read_at_its_version_only(ws, cmeee_file):
    run = new_run(ws, cmeee_file)
    assert ws.derived.get(run, "buckets", "v1") is None
    assert ws.derived.put(run, "buckets", "v1", '[1]')
    assert ws.derived.get(run, "buckets", "v1") == "[1]"
    assert ws.derived.get(run, "buckets", "v2") is None          # stale: another code version
    assert ws.derived.get(run, "evaluation", "v1") is None
    assert ws.derived.put(run, "buckets", "v2", '[2]')           # replaces, never stacks
    assert ws.derived.kinds(run) == {"buckets": "v2"}
    assert ws.derived.get(run, "buckets", "v1") is None


def test_nothing_is_kept_for_a_missing_run(ws, cmeee_file):
    run = new_run(ws, cmeee_file)
    assert not ws.derived.put(run + 1, "buckets", "v1", "[]")
    assert ws.db.scalar("SELECT count(*) FROM run_derived") == 0


def test_deleting_a_run_deletes_its_payloads_only(ws, cmeee_file):
    a, b = new_run(ws, cmeee_file), new_run(ws, cmeee_file)
    for run in (a, b):
        ws.derived.put(run, "buckets", "v", "[]")
        ws.derived.put(run, "evaluation", "v", "{}")
    ws.runs.delete(a)
    assert ws.derived.kinds(a) == {} and ws.derived.kinds(b) == {"buckets": "v", "evaluation": "v"}


def test_a_failed_run_deletion_keeps_its_payloads(ws, cmeee_file, monkeypatch):
    run = new_run(ws, cmeee_file)
    ws.derived.put(run, "buckets", "v", "[]")
    real = ws.db.execute

    def failing(sql, params=None):
        if sql.startswith("DELETE FROM runs"):
            raise RuntimeError("disk full")
        return real(sql, params)
    monkeypatch.setattr(ws.db, "execute", failing)
    with pytest.raises(RuntimeError):
        ws.runs.delete(run)
    monkeypatch.undo()
    assert ws.derived.kinds(run) == {"buckets": "v"} and ws.runs.get(run) is not None


def test_deleting_a_dataset_deletes_its_runs_payloads(ws, cmeee_file):
    run = new_run(ws, cmeee_file)
    ws.derived.put(run, "buckets", "v", "[]")
    ws.datasets.delete(ws.datasets.find("CMeEE", "dev").dataset_id)
    assert ws.db.scalar("SELECT count(*) FROM run_derived") == 0
