"""The command line says the same as it did before its modules moved into ``cblue_core/cli/``:
every command's ``--help`` and the ``--json`` output of a fixed session over the sample data,
compared with snapshots taken from the code before the move.

To take the snapshots again after a deliberate change of a command's help or JSON:
``CBLUE_STUDIO_WRITE_CLI_SNAPSHOTS=1 python -m pytest tests/cli/test_unchanged_outputs.py``."""
from __future__ import annotations

import argparse
import io
import json
import os
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from cblue_core.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
WRITE = os.environ.get("CBLUE_STUDIO_WRITE_CLI_SNAPSHOTS") == "1"
SAMPLE = ROOT / "sample_data"
# Values that differ between any two sessions: times, the temporary folder, the clock.
VARYING_KEYS = {"seconds", "wall_s", "at", "created_at", "tokens_per_s", "latency_s", "load_s", "elapsed_s"}


def help_texts() -> dict[str, str]:
    """``--help`` of the program and of every (sub)command, by its command path."""
    out: dict[str, str] = {}

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        out[" ".join(path) or "(program)"] = parser.format_help()
        for action in parser._actions:   # argparse keeps its subcommands here only
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*path, name])

    walk(build_parser("cblue-studio"), [])
    return out


def run_json(argv: list[str]) -> tuple[int, object]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    text = out.getvalue()
    try:
        return code, json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        return code, {"not json": text}


def normalised(value: object, tmp: str) -> object:
    if isinstance(value, dict):
        return {k: "<varies>" if k in VARYING_KEYS else normalised(v, tmp) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalised(v, tmp) for v in value]
    if isinstance(value, str):
        value = value.replace(tmp, "<tmp>").replace(str(ROOT), "<repo>")
        return re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?", "<time>", value)
    return value


def session(tmp_path: Path) -> dict[str, object]:
    """A fixed sequence of commands over the sample data, each output as it is printed."""
    db = str(tmp_path / "ws.duckdb")
    cmeee = SAMPLE / "cblue" / "CMeEE"
    steps: list[list[str]] = [
        ["validate", str(cmeee / "CMeEE_dev.json"), "--json"],
        ["ingest", str(SAMPLE / "cblue"), "--db", db],
        ["list", "--db", db, "--json"],
        ["tasks", "--json"],
        ["query", "--task", "CMeEE", "--split", "dev", "--where", "n_spans >= 3", "--db", db, "--json"],
        ["evaluate", "--task", "CMeEE", "--gold", str(cmeee / "CMeEE_dev.json"),
         "--pred", str(cmeee / "CMeEE_dev.json"), "--json"],
        ["run", "--model", "kuake-qic", "--task", "KUAKE-QIC", "--split", "dev", "--db", db, "--json"],
        ["errors", "--run", "1", "--limit", "5", "--db", db, "--json"],
        ["users", "list", "--db", db, "--json"],
        ["audit", "--db", db, "--json"],
    ]
    tmp = str(tmp_path)
    return {" ".join(argv).replace(tmp, "<tmp>").replace(str(ROOT), "<repo>"): normalised(run_json(argv), tmp)
            for argv in steps}


def compare(name: str, found: dict) -> None:
    path = SNAPSHOTS / name
    if WRITE:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(json.dumps(found, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip(f"wrote {path}")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert sorted(found) == sorted(expected), "commands added or gone"
    for key in expected:
        assert found[key] == expected[key], f"{key} differs from before the move"


def test_every_help_is_what_it_was(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")    # argparse wraps at the terminal's width
    # the default workspace, which --help shows, would otherwise be under the checkout's folder
    monkeypatch.setenv("CBLUE_STUDIO_DB", "/srv/cblue-studio/workspace.duckdb")
    compare("help.json", help_texts())


def test_the_json_of_a_session_is_what_it_was(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("CBLUE_STUDIO_LOG", str(tmp_path / "log.txt"))
    compare("session.json", session(tmp_path))
