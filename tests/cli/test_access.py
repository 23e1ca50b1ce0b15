"""``users`` and ``audit`` on the command line."""
from __future__ import annotations

import json

from cblue_core.cli import main
from cblue_core.store.workspace import connect


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_users_add_list_set_role_remove(tmp_path, capsys):
    db = str(tmp_path / "w.duckdb")
    assert run(capsys, "users", "add", "ann", "--role", "annotator", "--db", db)[0] == 0    # creates the file
    assert run(capsys, "users", "add", "boss", "--role", "admin", "--db", db)[0] == 0
    code, out, _ = run(capsys, "users", "list", "--json", "--db", db)
    assert code == 0 and json.loads(out) == {"users": [{"name": "ann", "role": "annotator"},
                                                        {"name": "boss", "role": "admin"}]}
    assert run(capsys, "users", "set-role", "ann", "curator", "--db", db)[0] == 0
    code, _, err = run(capsys, "users", "add", "ann", "--role", "viewer", "--db", db)
    assert code == 1 and "already has a role" in err
    code, _, err = run(capsys, "users", "set-role", "nobody", "admin", "--db", db)
    assert code == 1 and "no stored role" in err
    assert run(capsys, "users", "remove", "boss", "--db", db)[0] == 0
    code, _, err = run(capsys, "users", "remove", "boss", "--db", db)
    assert code == 1 and "boss has no stored role" in err
    code, out, _ = run(capsys, "users", "list", "--db", db)
    assert code == 0 and out.split()[:2] == ["ann", "curator"]
    code, _, err = run(capsys, "users", "add", "x", "--role", "boss", "--db", db)
    assert code == 2 and "invalid choice" in err


def test_audit_prints_the_trail_newest_first_with_filters(tmp_path, capsys):
    db = str(tmp_path / "w.duckdb")
    run(capsys, "users", "add", "ann", "--role", "annotator", "--db", db)
    run(capsys, "users", "remove", "ann", "--db", db)
    code, out, _ = run(capsys, "audit", "--json", "--db", db)
    events = json.loads(out)["events"]
    assert code == 0 and [(e["action"], e["target"]) for e in events] == [("role.remove", "user ann"),
                                                                           ("role.set", "user ann")]
    ws = connect(db, read_only=True)
    me = ws.actor.name
    ws.close()
    assert {e["user"] for e in events} == {me} and {"at", "user", "action", "target", "detail"} <= set(events[0])
    code, out, _ = run(capsys, "audit", "--action", "role.set", "--limit", "5", "--db", db)
    assert code == 0 and "role.set" in out and "role.remove" not in out
    code, out, _ = run(capsys, "audit", "--json", "--user", "someone-else", "--db", db)
    assert json.loads(out) == {"events": []}
    code, _, err = run(capsys, "audit", "--db", str(tmp_path / "missing.duckdb"))
    assert code == 2 and "no workspace" in err
