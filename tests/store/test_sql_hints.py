"""A filter that DuckDB refuses for a type mismatch says what to type instead (the Datasets filter,
slices and `query --where` share the sandbox that adds the hint)."""
from __future__ import annotations

import pytest

from cblue_core.store.ingest import ingest_file
from cblue_core.store.sql_hints import hint_for
from cblue_core.store.workspace import connect
from tests.conftest import SAMPLE_DATA


@pytest.fixture(scope="module")
def cmeee(tmp_path_factory):
    ws = connect(tmp_path_factory.mktemp("hints") / "ws.duckdb")
    assert ingest_file(ws, SAMPLE_DATA / "cblue" / "CMeEE" / "CMeEE_dev.json").ok
    yield ws, ws.datasets.find("CMeEE", "dev").dataset_id
    ws.close()


@pytest.mark.parametrize(("where", "hint"), [
    ("types LIKE '%dis%'", "list_contains(types, 'dis')"),
    ("types = 'dis'", "list_contains(types, 'dis')"),
    ("label > 1", "quote the value (label = '1')"),
    ("n_spans = 'many'", "compare them without quotes"),
])
def test_type_mismatches_carry_a_hint(cmeee, where, hint):
    ws, did = cmeee
    page = ws.datasets.query(did, predicate=where)
    assert page.error is not None and hint in page.error
    assert page.error.count("Hint:") == 1


def test_other_errors_carry_none():
    assert hint_for("Parser Error: syntax error at end of input") is None


def test_the_hinted_filter_works(cmeee):
    ws, did = cmeee
    page = ws.datasets.query(did, predicate="list_contains(types, 'dis')")
    assert page.error is None and page.total > 0
