"""``python -m cblue_core errors``: the error rows a selection holds, totals over the whole
selection whatever --limit is, every filter, and clear failures."""
from __future__ import annotations

import json
import shutil

import pytest

from cblue_core.cli import main
from cblue_core.store.training_sets import TrainingSet
from cblue_core.store.workspace import connect
from tests.store.many_errors import build, error_rows, seen


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    db, run_id = build(tmp_path_factory.mktemp("cli_errors"))
    ws = connect(db)
    ws.slices.save("late", "idx >= 1200", "CMeEE")
    did = ws.runs.get(run_id).dataset_id
    imported = ws.runs.create(did, "imported", source="import", predictions=[], metrics={},
                              training=TrainingSet(False))
    ws.close()
    return db, run_id, imported


@pytest.fixture
def many(built, tmp_path):
    db, run_id, imported = built
    copy = tmp_path / "many.duckdb"
    shutil.copy(db, copy)
    return str(copy), run_id, imported


def errors_json(capsys, db, *args) -> tuple[int, dict]:
    code = main(["errors", "--db", db, "--json", *map(str, args)])
    return code, json.loads(capsys.readouterr().out)


def counted(keep) -> tuple[int, int]:
    rows = [r for r in error_rows() if keep(r)]
    return len(rows), len({r["idx"] for r in rows})


@pytest.mark.parametrize("args, keep", [
    ((), lambda r: True),
    (("--slice", "late"), lambda r: r["idx"] >= 1200 and r["category"] != "correct"),
    (("--where", "idx >= 1200"), lambda r: r["idx"] >= 1200 and r["category"] != "correct"),
    (("--where", "idx >= 1200", "--category", "correct"), lambda r: r["idx"] >= 1200 and r["category"] == "correct"),
    (("--category", "missed"), lambda r: r["category"] == "missed"),
    (("--gold-label", "dis"), lambda r: r.get("gold_label") == "dis"),
    (("--pred-label", "sym", "--gold-label", "dis"), lambda r: r.get("pred_label") == "sym" and r.get("gold_label") == "dis"),
    (("--pred-label", "∅"), lambda r: r.get("pred_label") is None),
    (("--tag", "nested"), lambda r: "nested" in r["tags"]),
    (("--seen", "yes"), lambda r: seen(r["idx"])),
    (("--seen", "no", "--category", "missed"), lambda r: not seen(r["idx"]) and r["category"] == "missed"),
], ids=lambda a: " ".join(a) if isinstance(a, tuple) else "")
def test_totals_cover_the_whole_selection_whatever_the_limit(capsys, many, args, keep):
    db, run_id, _ = many
    total, examples = counted(keep)
    for limit in (0, 5, 2000):
        code, out = errors_json(capsys, db, "--run", run_id, "--limit", limit, *args)
        assert code == 0
        assert (out["total_rows"], out["examples"]) == (total, examples)
        assert len(out["rows"]) == min(limit, total) and out["truncated"] == (limit < total)
    code, out = errors_json(capsys, db, "--run", run_id, "--limit", total, *args)
    assert len({r["idx"] for r in out["rows"]}) == examples and not out["truncated"]


def test_the_rows_are_plain_json(capsys, many):
    db, run_id, _ = many
    _, out = errors_json(capsys, db, "--run", run_id, "--limit", 2, "--category", "missed")
    first = out["rows"][0]
    assert first["idx"] == 0 and first["tags"] == ["nested"] and first["pred_label"] is None


def test_text_output_says_when_it_shows_part(capsys, many):
    db, run_id, _ = many
    assert main(["errors", "--db", db, "--run", str(run_id), "--slice", "late", "--limit", "3"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"300 error rows in 300 examples of run #{run_id} (many, CMeEE dev); the first 3"


@pytest.mark.parametrize("args, message", [
    (("--run", 999), "no run 999 in"),
    (("--run", "{run}", "--slice", "nope"), "no slice named 'nope' for CMeEE (saved: late)"),
    (("--run", "{run}", "--where", "read_csv('/etc/passwd') IS NOT NULL"), "predicate refused"),
    (("--run", "{imported}", "--seen", "no"), "--seen no: the seen/unseen split of run"),
])
def test_failures_exit_1_with_one_line(capsys, many, args, message):
    db, run_id, imported = many
    args = [str(a).format(run=run_id, imported=imported) for a in args]
    code = main(["errors", "--db", db, "--json", *args])
    captured = capsys.readouterr()
    assert code == 1
    assert message in json.loads(captured.out)["error"]
    assert len(captured.err.splitlines()) == 1 and message in captured.err


def test_usage_errors_exit_2(capsys, many):
    db, run_id, _ = many
    assert main(["errors", "--db", db, "--run", str(run_id), "--slice", "late", "--where", "idx > 1"]) == 2
    assert main(["errors", "--db", db, "--run", str(run_id), "--limit", "-1"]) == 2
    assert main(["errors", "--db", db + ".missing", "--run", str(run_id)]) == 1
