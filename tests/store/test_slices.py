"""Saved slices go through the same allow-list and sandbox as the Datasets filter, when saved
and again when used."""
from __future__ import annotations

import pytest

from cblue_core.store.ingest import ingest_file
from cblue_core.store.slices import SliceError
from cblue_core.store.workspace import connect


@pytest.fixture
def ws(tmp_path):
    w = connect(tmp_path / "ws.duckdb")
    yield w
    w.close()


def test_a_slice_selects_within_its_dataset(ws, cmeee_file):
    ingest_file(ws, cmeee_file)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    ws.slices.save("nested", "nesting_depth > 1 OR list_contains(types, 'dru')", task="CMeEE")
    assert ws.slices.indices(did, ws.slices.all("CMeEE")[0].predicate) == [0, 1]
    ws.slices.save("breakout", "1=1) OR (1=1")         # one boolean: every example of this dataset
    assert ws.slices.indices(did, "1=1) OR (1=1") == [0, 1, 2]


@pytest.mark.parametrize("predicate, fragment", [
    ("exists(from\tglob('/*'))", "not allowed"),
    ("query('SEL'||'ECT 1') IS NOT NULL", "function 'query' is not allowed"),
    ("length(repeat('x', 2000000000)) > 1", "function 'repeat' is not allowed"),
    ("text = read_text('/proc/self/environ')", "function 'read_text' is not allowed"),
    ("nesting_depth >>= 3", "not allowed"),
])
def test_harmful_slices_are_refused_when_saved(ws, predicate, fragment):
    with pytest.raises(SliceError, match=fragment.replace("(", r"\(")):
        ws.slices.save("evil", predicate)
    assert ws.slices.all() == []


def test_a_slice_written_behind_our_back_is_refused_when_used(ws, cmeee_file):
    ingest_file(ws, cmeee_file)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    ws.db.execute("INSERT INTO slices (name, task, predicate) VALUES ('old', NULL, ?)",
                  ["text = read_text('/etc/passwd')"])
    with pytest.raises(SliceError, match="read_text"):
        ws.slices.indices(did, ws.slices.all()[0].predicate)


def test_slice_names_are_bounded(ws):
    with pytest.raises(SliceError, match="at most 200"):
        ws.slices.save("x" * 201, "idx > 0")
