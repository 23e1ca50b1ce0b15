"""A stored value cannot forge a line of the command line's plain-text output: a newline in a
save reason, a slice, user, dataset, run or model name comes out as a visible ``\\n``, and a
bidi override or an escape sequence as ``\\u202e``, ``\\x1b``; ``--json`` stays JSON."""
from __future__ import annotations

import json

import pytest

from cblue_core.annotation import Annotation
from cblue_core.auth.roles import PermissionDenied
from cblue_core.auth.user import User
from cblue_core.cli import main
from cblue_core.io.validate import validate
from cblue_core.models.base import ModelCard
from cblue_core.models.registry import write_card
from cblue_core.records import Span
from cblue_core.store.runs import error_table
from cblue_core.store.training_sets import TrainingSet
from cblue_core.store.workspace import connect

# What a hostile value would print as a line of its own: an audit event that never happened.
FORGED = "1999-12-04 09:00:00  root             done     role.set             user ann (role admin)"
EVIL = f"x\n{FORGED}\u202e\x1b[2J"
ESCAPED = "x\\n" + FORGED + "\\u202e\\x1b[2J"
ACTING = {"\n", "\u202e", "\x1b"}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A workspace whose every printable value holds :data:`EVIL`; yields (db, run id, models dir)."""
    folder = tmp_path_factory.mktemp("forged")
    data = folder / "CMeEE_dev.json"
    data.write_text(json.dumps([{"text": f"头痛{EVIL}发热", "entities": [
        {"start_idx": 0, "end_idx": len(EVIL) + 1, "type": "sym", "entity": f"头痛{EVIL}"}]}],
        ensure_ascii=False), encoding="utf-8")
    db = folder / "ws.duckdb"
    ws = connect(db)
    did = ws.datasets.ingest(validate(data, "CMeEE"), name=EVIL).dataset_id
    ann, rev = ws.annotations.current(did, 0)
    ws.annotations.save(did, 0, Annotation(ann.spans + (Span(0, 1, "bod"),)), reason=EVIL, base_revision=rev)
    ws.slices.save(f"s{EVIL}", "idx >= 0", "CMeEE")
    # A name the rule now refuses, stored by an older studio, and one that signs in through a
    # proxy which does not check names.
    ws.db.execute("INSERT INTO workspace_users (name, role, granted_by) VALUES (?, 'annotator', ?)", [EVIL, EVIL])
    with pytest.raises(PermissionDenied):
        ws.acting_as(User(EVIL, "proxy")).slices.save("t", "idx >= 0", "CMeEE")
    run_id = ws.runs.create(did, EVIL, source="import", predictions=[], metrics={}, training=TrainingSet(False),
                            errors=error_table([{"idx": 0, "category": "missed", "gold_label": "sym", "tags": [],
                                                 "gold_start": 0, "gold_end": 3, "gold_text": f"头{EVIL}"}]))
    ws.close()
    models = folder / "models"
    (models / "m").mkdir(parents=True)
    write_card(ModelCard(EVIL, "CMeEE", "span-encoder", labels=["dis"]), models / "m")
    return str(db), run_id, str(models)


def output(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def assert_no_forged_line(out: str) -> None:
    assert not any(line.startswith(FORGED[:19]) for line in out.splitlines()), out
    assert not ACTING & set(out.replace("\n", "")), out     # only the command's own line ends
    assert not {"\u2028", "\u2029", "\x85"} & set(out)


def test_audit_prints_one_line_an_event(capsys, workspace):
    db, _, _ = workspace
    out = output(capsys, "audit", "--db", db)
    assert_no_forged_line(out)
    events = json.loads(output(capsys, "audit", "--json", "--db", db))["events"]
    assert len(out.splitlines()) == len(events)
    assert f"({ESCAPED})" in out                               # the save reason
    assert f"slice s{ESCAPED}" in out and f"{ESCAPED} refused" in out    # a slice, a refused user
    assert {e["detail"] for e in events} >= {EVIL}             # --json keeps the values as stored


def test_users_prints_one_line_a_user(capsys, workspace):
    db, _, _ = workspace
    out = output(capsys, "users", "list", "--db", db)
    assert_no_forged_line(out)
    assert len(out.splitlines()) == 1 and out.startswith(ESCAPED) and f"granted by {ESCAPED}" in out
    assert json.loads(output(capsys, "users", "list", "--json", "--db", db))["users"][0]["name"] == EVIL


def test_list_prints_one_line_a_dataset(capsys, workspace):
    db, _, _ = workspace
    out = output(capsys, "list", "--db", db)
    assert_no_forged_line(out)
    assert len(out.splitlines()) == 1 and out.rstrip("\n").endswith(ESCAPED)


def test_errors_prints_one_line_a_row(capsys, workspace):
    db, run_id, _ = workspace
    out = output(capsys, "errors", "--run", str(run_id), "--db", db)
    assert_no_forged_line(out)
    assert ESCAPED in out.splitlines()[0]                      # the run's name
    assert len(out.splitlines()) == 3                          # the count, the table's head, one row
    assert "头x\\n1999-12-04" in out.splitlines()[2]            # the gold text


def test_models_prints_one_line_a_model(capsys, workspace):
    _, _, models = workspace
    out = output(capsys, "models", "--dir", models)
    assert_no_forged_line(out)
    assert any(line.startswith(ESCAPED) for line in out.splitlines())


def test_a_refused_name_is_named_escaped_on_one_line(capsys, workspace, tmp_path):
    db = str(tmp_path / "w.duckdb")
    assert main(["users", "add", EVIL, "--role", "annotator", "--db", db]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a user name contains U+000A" in err and not ACTING & set(err[:-1])
