"""`python -m cblue_core query`: the app's sandboxed SQL filter from the command line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect

ROOT = Path(__file__).resolve().parents[2]
CMEEE_DEV = ROOT / "sample_data" / "cblue" / "CMeEE" / "CMeEE_dev.json"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("query") / "ws.duckdb"
    ws = connect(path)
    assert ingest_file(ws, CMEEE_DEV).ok
    ws.close()
    return path


def query(db, *args):
    proc = subprocess.run([sys.executable, "-m", "cblue_core", "query", "--db", str(db), *args],
                          capture_output=True, text=True, check=False, cwd=ROOT, timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


def test_json_rows_carry_idx_and_the_example_columns(db):
    proc = query(db, "--task", "CMeEE", "--split", "dev", "--where", "nesting_depth > 1", "--limit", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["total"] == 16 and len(out["rows"]) == 2
    row = out["rows"][0]
    assert {"idx", "key", "text", "types", "nesting_depth", "text_length"} <= set(row)
    assert all(r["nesting_depth"] > 1 for r in out["rows"]) and isinstance(row["types"], list)


def test_default_limit_and_table(db):
    proc = query(db, "--dataset", "1")
    assert proc.returncode == 0
    assert proc.stdout.startswith("25 matching examples in CMeEE dev (dataset 1); the first 20")
    assert len(proc.stdout.strip().splitlines()) == 22      # the summary, the header, 20 rows


def test_a_breakout_is_one_boolean_inside_the_split(db):
    out = json.loads(query(db, "--dataset", "1", "--where", "1=1) OR (1=1", "--json").stdout)
    assert out["total"] == 25


@pytest.mark.parametrize("where, fragment", [
    ("exists(from\tglob('/*'))", "subqueries"),
    ("text = read_text('/etc/passwd')", "read_text"),
    ("length(repeat('x', 2000000000)) > 1", "repeat"),
    ("nesting_depth >>= 3", "not allowed"),
])
def test_refusals_exit_1_with_one_json_object(db, where, fragment):
    proc = query(db, "--dataset", "1", "--where", where, "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert set(out) == {"error"} and fragment in out["error"]
    assert "/etc/passwd" not in proc.stdout.replace("read_text('/etc/passwd')", "")


def test_usage_and_missing_split(db):
    assert query(db, "--where", "idx > 1").returncode == 2
    proc = query(db, "--task", "CMeIE", "--split", "dev", "--json")
    assert proc.returncode == 1 and "no CMeIE dev split" in json.loads(proc.stdout)["error"]
