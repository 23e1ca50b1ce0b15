"""The command line's failures: one line on stderr (one JSON object under --json), the traceback
only in the log beside the workspace, no input text in that log, and a closed pipe stops quietly."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from cblue_core.cli import datasets, main, output
from cblue_core.cli import models as commands
from cblue_core.io import logs

ROOT = Path(__file__).resolve().parents[2]

# Stands for a clinical record quoted in an exception's message.
SENTINEL = "患者张某某，男，五十六岁，因胸痛三小时入院"


def _explode(args):
    try:
        int(SENTINEL)   # ValueError: invalid literal for int() with base 10: '患者...'
    except ValueError as exc:
        raise KeyError(f"label {SENTINEL!r} missing") from exc


def _worker_explodes(text: str) -> None:
    raise ValueError(f"bad record: {text}")


@pytest.fixture
def log_file(tmp_path, monkeypatch):
    path = tmp_path / "logs" / "studio.log"
    monkeypatch.setenv(logs.ENV_LOG, str(path))
    return path


def _only_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_unexpected_error_is_one_line_and_logged(log_file, monkeypatch, capsys):
    monkeypatch.setattr(datasets, "cmd_tasks", _explode)
    assert main(["tasks"]) == output.EXIT_UNEXPECTED
    cap = capsys.readouterr()
    line = _only_line(cap.err)
    assert line.startswith("error: KeyError: ")
    assert line.endswith(f"(details: {log_file})")
    assert cap.out == "" and "Traceback" not in cap.err

    record = log_file.read_text(encoding="utf-8")
    assert SENTINEL not in record and "患者" not in record
    # The frames, of both exceptions in the chain, and the types are there.
    assert f'File "{__file__}", line ' in record and "in _explode" in record
    assert 'cblue_core/cli/__init__.py", line ' in record and "in main" in record
    assert "KeyError (message withheld" in record and "ValueError (message withheld" in record
    assert "direct cause" in record and "python -m cblue_core tasks" in record


def test_unexpected_error_with_json_is_one_object(log_file, monkeypatch, capsys):
    monkeypatch.setattr(datasets, "cmd_tasks", _explode)
    assert main(["tasks", "--json"]) == output.EXIT_UNEXPECTED
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert set(out) == {"error", "log"} and out["error"].startswith("KeyError: ")
    assert out["log"] == str(log_file) and "Traceback" not in cap.out
    _only_line(cap.err)


def test_model_subcommand_errors_are_caught_too(log_file, monkeypatch, capsys, tmp_path):
    def boom(*a, **k):
        raise RuntimeError(f"tokenizer failed on {SENTINEL}\nsecond line")
    monkeypatch.setattr(commands, "_choose", boom)
    rc = main(["predict", "--model", "x", "--input", str(tmp_path / "in.json"), "--out", str(tmp_path)])
    assert rc == output.EXIT_UNEXPECTED
    line = _only_line(capsys.readouterr().err)
    # The screen may quote the input (it is the user's own); the log may not.
    assert line.startswith(f"error: RuntimeError: tokenizer failed on {SENTINEL} (details: ")
    record = log_file.read_text(encoding="utf-8")
    assert SENTINEL not in record and "in boom" in record and "in cmd_predict" in record


def test_log_beside_the_workspace(tmp_path, monkeypatch):
    monkeypatch.delenv(logs.ENV_LOG, raising=False)
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(tmp_path / "ws" / "studio.duckdb"))
    assert logs.log_path() == tmp_path / "ws" / "cblue_studio.log"
    assert logs.log_path(tmp_path / "other.duckdb") == tmp_path / "cblue_studio.log"
    monkeypatch.delenv("CBLUE_STUDIO_DB")
    monkeypatch.chdir(tmp_path)
    assert logs.log_path() == tmp_path / "workspace" / "cblue_studio.log"
    monkeypatch.setenv(logs.ENV_LOG, str(tmp_path / "x.log"))
    assert logs.log_path(tmp_path / "other.duckdb") == tmp_path / "x.log"


def test_cli_logs_beside_its_db(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(logs.ENV_LOG, raising=False)
    monkeypatch.setattr(datasets, "cmd_list", _explode)
    assert main(["list", "--db", str(tmp_path / "w" / "ws.duckdb")]) == output.EXIT_UNEXPECTED
    assert (tmp_path / "w" / "cblue_studio.log").is_file()
    assert capsys.readouterr().err.endswith(f"(details: {tmp_path / 'w' / 'cblue_studio.log'})\n")


def test_unwritable_log_still_one_line(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(logs.ENV_LOG, str(blocker / "sub" / "x.log"))   # a folder under a file
    monkeypatch.setattr(datasets, "cmd_tasks", _explode)
    assert main(["tasks"]) == output.EXIT_UNEXPECTED
    line = _only_line(capsys.readouterr().err)
    assert line.startswith("error: KeyError: ") and "(no details: cannot write " in line


def test_worker_traceback_keeps_frames_not_message(tmp_path):
    with ProcessPoolExecutor(1) as pool:
        future = pool.submit(_worker_explodes, SENTINEL)
        with pytest.raises(ValueError) as caught:
            future.result()
    path = logs.log_exception("test", caught.value, tmp_path / "w.log")
    record = path.read_text(encoding="utf-8")
    assert SENTINEL not in record
    assert "(in a worker process:)" in record and "in _worker_explodes" in record
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)


def test_one_line_is_one_printable_line():
    exc = ValueError("first\x1b[31m red\nsecond")
    assert logs.one_line(exc) == "ValueError: first?[31m red"
    assert logs.one_line(KeyError()) == "KeyError"
    assert logs.one_line(ValueError("x" * 500), limit=10) == "ValueError: " + "x" * 10 + "..."


def test_expected_errors_keep_their_messages(tmp_path, log_file, capsys):
    qqr = tmp_path / "KUAKE-QQR_dev.json"
    qqr.write_text("[]", encoding="utf-8")
    assert main(["validate", str(qqr), "--task", "NoSuchTask", "--json"]) == 2
    cap = capsys.readouterr()
    assert cap.err.startswith("error: unknown task 'NoSuchTask'")
    assert json.loads(cap.out)["error"].startswith("unknown task 'NoSuchTask'")
    assert main(["validate", "--json"]) == 2                      # a usage error
    cap = capsys.readouterr()
    assert "the following arguments are required: path" in json.loads(cap.out)["error"]
    assert cap.err.startswith("usage: ")
    assert not log_file.exists()


def test_evaluate_refusal_under_json_is_one_object(tmp_path, capsys):
    gold = ROOT / "sample_data/cblue/KUAKE-QIC/KUAKE-QIC_dev.json"
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps(json.loads(gold.read_text(encoding="utf-8"))[:3], ensure_ascii=False),
                    encoding="utf-8")
    assert main(["evaluate", "--gold", str(gold), "--pred", str(pred), "--json", "--bootstrap", "0"]) == 1
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert out["error"] == "predictions refused" and out["defects"]
    assert cap.err.startswith("predictions refused:\n")


@pytest.mark.parametrize("count", ["99999999999999999999", "100001", "-1", "1e3", "9" * 5000])
def test_evaluate_bootstrap_count_is_bounded(capsys, count):
    gold = ROOT / "sample_data/cblue/KUAKE-QIC/KUAKE-QIC_dev.json"
    assert main(["evaluate", "--gold", str(gold), "--pred", str(gold), "--json", "--bootstrap", count]) == 2
    cap = capsys.readouterr()
    assert "argument --bootstrap" in json.loads(cap.out)["error"] and "Traceback" not in cap.err


def _run(args: list[str], tmp_path: Path, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "CBLUE_STUDIO_LOG": str(tmp_path / "sub.log")}
    return subprocess.run(args, capture_output=True, text=True, check=False, cwd=ROOT, env=env,
                          timeout=120, **kw)


def test_unexpected_error_in_a_real_process(tmp_path):
    code = ("import sys; from cblue_core import cli\nfrom cblue_core.cli import datasets\n"
            "def boom(args): raise ValueError(" + repr("bad: " + SENTINEL) + ")\n"
            "datasets.cmd_tasks = boom\nsys.exit(cli.main(['tasks', '--json']))\n")
    proc = _run([sys.executable, "-c", code], tmp_path)
    assert proc.returncode == 3
    assert json.loads(proc.stdout)["error"] == f"ValueError: bad: {SENTINEL}"
    assert _only_line(proc.stderr) == f"error: ValueError: bad: {SENTINEL} (details: {tmp_path / 'sub.log'})"
    assert SENTINEL not in (tmp_path / "sub.log").read_text(encoding="utf-8")


def test_broken_pipe_elsewhere_is_not_mistaken_for_head(tmp_path):
    code = ("import sys; from cblue_core import cli\nfrom cblue_core.cli import datasets\n"
            "def boom(args): raise BrokenPipeError(32, 'Broken pipe')\n"
            "datasets.cmd_tasks = boom\nsys.exit(cli.main(['tasks']))\n")
    proc = _run([sys.executable, "-c", code], tmp_path)
    assert proc.returncode == output.EXIT_UNEXPECTED
    assert _only_line(proc.stderr).startswith("error: BrokenPipeError: ")
    assert "errno EPIPE" in (tmp_path / "sub.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["tasks", "list"])
def test_closed_pipe_is_quiet(command, tmp_path):
    """The reader is gone before the command writes (deterministic, unlike racing `head`)."""
    db = tmp_path / "ws.duckdb"
    if command == "list":
        assert main(["ingest", str(ROOT / "sample_data/cblue/KUAKE-QQR"), "--db", str(db)]) == 0
    args = [sys.executable, "-m", "cblue_core", command] + (["--db", str(db)] if command == "list" else [])
    env = {**os.environ, "CBLUE_STUDIO_LOG": str(tmp_path / "sub.log")}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) in (0, output.EXIT_CLOSED_PIPE)
    assert err == "" and not (tmp_path / "sub.log").exists()


@pytest.mark.parametrize("command", ["tasks | head -1", "tasks --json | head -c 10", "list --db {db} | head -1"])
def test_shell_pipeline_into_head(command, tmp_path):
    db = tmp_path / "ws.duckdb"
    assert main(["ingest", str(ROOT / "sample_data/cblue/KUAKE-QQR"), "--db", str(db)]) == 0
    script = f"{sys.executable} -m cblue_core {command.format(db=db)}" + '; echo "status ${PIPESTATUS[0]}" >&2'
    proc = _run(["bash", "-c", script], tmp_path)
    assert proc.stdout.strip()
    *noise, status = proc.stderr.splitlines()
    assert noise == [] and status in ("status 0", f"status {output.EXIT_CLOSED_PIPE}")
