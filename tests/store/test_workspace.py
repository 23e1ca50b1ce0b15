"""The DuckDB workspace: one transaction per file, no duplicates, filters, locking."""
from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest

from cblue_core.io.validate import load
from cblue_core.store import workspace as wsmod
from cblue_core.store.datasets import prepare
from cblue_core.store.ingest import ingest_file, ingest_paths
from cblue_core.store.workspace import WorkspaceLocked, connect
from tests.store.conftest import RECORDS

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]

@pytest.fixture
def ws(tmp_path):
    w = connect(tmp_path / "ws.duckdb")
    yield w
    w.close()


def table_counts(ws):
    return {t: ws.db.con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("datasets", "examples", "gold_spans", "gold_triples", "gold_terms")}


def test_ingest_and_read_back(ws, cmeee_file):
    out = ingest_file(ws, cmeee_file)
    assert out.ok and out.result.created
    info = ws.datasets.find("CMeEE", "dev")
    assert info.records == 3 and info.annotations == 5 and info.offset_convention == "inclusive"
    ex = ws.datasets.example(info.dataset_id, 0)
    assert [(s.start, s.end, s.type) for s in ex.spans] == [(0, 3, "bod"), (0, 5, "sym"), (22, 24, "dis")]
    assert ex.raw == RECORDS[0]
    assert [e.text for e in ws.datasets.examples(info.dataset_id)] == [r["text"] for r in RECORDS]
    stats = ws.datasets.stats(info.dataset_id)
    assert stats.examples == 3 and stats.label_counts == {"sym": 2, "bod": 1, "dis": 1, "dru": 1}
    assert stats.nesting_depths == {0: 1, 1: 1, 2: 1}


def test_reingest_same_content_is_detected(ws, cmeee_file):
    first = ingest_file(ws, cmeee_file)
    second = ingest_file(ws, cmeee_file)
    assert second.ok and not second.result.created
    assert second.result.dataset_id == first.result.dataset_id
    assert table_counts(ws)["examples"] == 3


def test_refused_file_changes_nothing(ws, cmeee_file, tmp_path):
    ingest_file(ws, cmeee_file)
    before = table_counts(ws)
    bad = tmp_path / "KUAKE-QIC_dev.json"
    bad.write_text('[{"id": "s1", "query": "感冒", "label": "其他"}, {"id": "s2"', encoding="utf-8")
    out = ingest_file(ws, bad)
    assert not out.ok and "truncated" in out.message
    assert table_counts(ws) == before


def test_failure_inside_the_transaction_rolls_back(ws, cmeee_file, monkeypatch):
    ingest_file(ws, cmeee_file)
    before = table_counts(ws)
    other = load(cmeee_file)
    other.report.sha256 = "different-content"
    prepared = prepare(other)
    # Break the last insert of the transaction: the dataset row and examples already went in.
    prepared.columns["gold_terms"] = {"idx": [0], "no_such_column": ["x"]}
    with pytest.raises(duckdb.Error):
        ws.datasets.ingest(prepared)
    assert table_counts(ws) == before


def test_filters(ws, cmeee_file):
    ingest_file(ws, cmeee_file)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    assert ws.datasets.query(did, substring="阿莫西林").total == 1
    assert ws.datasets.query(did, regex=r"^呼吸.*肺炎").total == 1
    assert ws.datasets.query(did, types=["dru"]).total == 1
    assert ws.datasets.query(did, nested_only=True).rows["idx"].tolist() == [0]
    assert ws.datasets.query(did, predicate="n_spans >= 2 AND text_length < 20").total == 1
    page = ws.datasets.query(did, limit=2, offset=2)
    assert page.total == 3 and page.rows["idx"].tolist() == [2]


def test_texts_by_record_number(ws, cmeee_file):
    ingest_file(ws, cmeee_file)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    assert ws.datasets.texts(did, [2, 0, 2, 7]) == {0: RECORDS[0]["text"], 2: RECORDS[2]["text"]}
    assert ws.datasets.texts(did, []) == {}


@pytest.mark.parametrize("predicate, fragment", [
    ("no_such_column > 1", "unknown column 'no_such_column'"),
    ("1=1); DROP TABLE examples; --", "syntax error"),
    ("idx IN (SELECT dataset_id FROM datasets)", "subqueries"),
    ("text = read_text('/etc/passwd')", "function 'read_text' is not allowed"),
    ("1=1) OR (1=1", None),
])
def test_bad_predicates_are_messages_not_exceptions(ws, cmeee_file, predicate, fragment):
    ingest_file(ws, cmeee_file)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    page = ws.datasets.query(did, predicate=predicate)
    if fragment is None:     # accepted, but only as one boolean inside this dataset
        assert page.error is None and page.total == 3
    else:
        assert page.error and fragment in page.error and page.total == 0
    assert table_counts(ws)["examples"] == 3


def test_bad_regex_is_a_message(ws, cmeee_file):
    ingest_file(ws, cmeee_file)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    assert ws.datasets.query(did, regex="([").error


def test_cursor_sees_the_same_data(ws, cmeee_file):
    ingest_file(ws, cmeee_file)
    cur = ws.cursor()
    assert [d.task for d in cur.datasets.all()] == ["CMeEE"]


def test_second_process_gets_a_plain_message(ws, tmp_path):
    # `ws` holds the file read-write: the CLI in another process must say so, not crash.
    proc = subprocess.run([sys.executable, "-m", "cblue_core", "list", "--db", str(ws.path)],
                          capture_output=True, text=True, check=False, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert "open in another process" in proc.stderr and "Traceback" not in proc.stderr


def test_locked_error_type(tmp_path, monkeypatch):
    import duckdb

    def locked(*a, **k):
        raise duckdb.IOException('IO Error: Could not set lock on file "x": Conflicting lock is held')
    monkeypatch.setattr(wsmod.duckdb, "connect", locked)
    with pytest.raises(WorkspaceLocked):
        connect(tmp_path / "x.duckdb")


def test_delete_dataset(ws, cmeee_file):
    ingest_file(ws, cmeee_file)
    ws.datasets.delete(ws.datasets.find("CMeEE", "dev").dataset_id)
    assert all(v == 0 for v in table_counts(ws).values())


def test_ingest_real_folder_counts(tmp_path, cblue_dir):
    # Through the command line, in its own interpreter: the folder is big enough for the
    # parallel path (worker processes), which must not be started from inside pytest, where
    # other tests replace __main__.
    db = tmp_path / "real.duckdb"
    proc = subprocess.run([sys.executable, "-m", "cblue_core", "ingest", str(cblue_dir), "--db", str(db)],
                          capture_output=True, text=True, check=False, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "REFUSED" not in proc.stdout
    ws = connect(db)
    counts = {(d.task, d.split): (d.records, d.annotations) for d in ws.datasets.all()}
    assert counts[("CMeEE", "dev")] == (5000, 20300)
    assert counts[("CMeIE", "dev")] == (3585, 10626)
    assert counts[("KUAKE-QQR", "dev")] == (1600, 1600)
    assert {k: n for k, _, n in ws.resources.all()}["icd10"] == 40474
    ws.close()


def test_ingest_paths_in_process(ws, sample_data):
    outcomes = ingest_paths(ws, [sample_data / "cblue"], workers=1)
    assert outcomes and all(o.ok for o in outcomes), [o.message for o in outcomes if not o.ok]
    assert ws.datasets.find("CMeEE", "dev").records == 25
