"""``run`` and ``predict`` with ``--model endpoint:NAME`` against a real ``transformers serve``:
the score equals that of importing the same answers, a run killed with SIGKILL resumes without
re-sending a stored answer, and the API key reaches no byte of the workspace, log or export."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import duckdb
import pytest

from cblue_core.cli import main
from cblue_core.io.logs import log_path
from cblue_core.io.validate import load
from cblue_core.models.endpoints.config import ENV_ENDPOINTS
from cblue_core.runs.record import export_run, import_run
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect

from .conftest import endpoint, write_endpoints

ROOT = Path(__file__).resolve().parents[3]
PROMPTCBLUE = ROOT / "sample_data" / "promptcblue" / "dev.json"
CLIMEDBENCH = ROOT / "sample_data" / "climedbench" / "CliMedBench.jsonl"
KEY = "sk-test-9f3c1e7d-never-stored"


def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws.duckdb"
    ws = connect(path)
    ingest_file(ws, PROMPTCBLUE, task="PromptCBLUE", split="dev")
    ingest_file(ws, CLIMEDBENCH, task="CliMedBench", split="test")
    ws.close()
    return path


def cli_json(argv: list[str]) -> tuple[int, dict]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(argv)
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else {}


@pytest.fixture
def declared(tmp_path, monkeypatch, proxy, served):
    cfgs = [endpoint(proxy, served, name="tiny", api_key_env="CBLUE_TEST_KEY", max_tokens=6),
            endpoint(proxy, served, name="tiny-completions", mode="completions", max_tokens=6),
            # one request at a time: the proxy's faults then hit the first prompt's tries
            endpoint(proxy, served, name="tiny-serial", api_key_env="CBLUE_TEST_KEY", max_tokens=6,
                     max_concurrency=1)]
    monkeypatch.setenv(ENV_ENDPOINTS, str(write_endpoints(tmp_path / "endpoints.toml", cfgs)))
    monkeypatch.setenv("CBLUE_TEST_KEY", KEY)
    monkeypatch.setenv("CBLUE_STUDIO_LOG", str(tmp_path / "cblue_studio.log"))
    return cfgs


@pytest.mark.parametrize("task, split, model", [("CliMedBench", "test", "endpoint:tiny"),
                                                ("PromptCBLUE", "dev", "endpoint:tiny-completions")])
def test_a_run_scores_as_importing_the_same_answers(tmp_path, declared, proxy, task, split, model):
    db = workspace(tmp_path)
    code, out = cli_json(["run", "--model", model, "--task", task, "--split", split, "--db", str(db), "--json"])
    assert code == 0 and out["training_overlap"] is None
    n = sum(proxy.finished.values())
    assert out["requests"] == {"sent": n, "cached": 0, "failed": 0} and n > 20
    assert out["tokens"]["completion"] == 6 * n and out["tokens"]["prompt"] > 0
    ws = connect(db)
    run = ws.runs.get(out["run_id"])
    assert run.source == "endpoint" and run.model == model and run.params["partial"] is False
    assert run.params["requests"]["sent"] == n and run.params["tokens_per_s"] > 0
    pred = ws.runs.predictions(out["run_id"])[0]
    assert {"latency_s", "prompt_tokens", "completion_tokens", "finish_reason"} <= set(pred.meta)
    exported = export_run(ws, out["run_id"], tmp_path / "export")
    imported = import_run(ws, run.dataset_id, exported)
    assert imported.evaluation.summary()["metrics"] == out["metrics"]["metrics"]
    ws.close()


def test_a_second_run_sends_nothing_and_limit_sends_the_first_examples(tmp_path, declared, proxy):
    db = workspace(tmp_path)
    argv = ["run", "--model", "endpoint:tiny", "--task", "CliMedBench", "--split", "test", "--db", str(db), "--json"]
    code, first = cli_json(argv + ["--limit", "5"])
    assert code == 0 and first["requests"]["sent"] == 5
    code, second = cli_json(argv + ["--limit", "7"])
    assert second["requests"] == {"sent": 2, "cached": 5, "failed": 0}
    assert sum(proxy.received.values()) == 7
    ws = connect(db)
    assert [len(ws.runs.predictions(o["run_id"])) for o in (first, second)] == [5, 7]
    assert ws.runs.get(second["run_id"]).params["limit"] == 7
    from cblue_core.runs.record import run_evaluation
    assert run_evaluation(ws, second["run_id"]).summary()["metrics"] == second["metrics"]["metrics"]
    ws.close()


def test_failed_prompts_make_a_partial_run_scored_as_empty_answers(tmp_path, declared, proxy, capsys):
    db = workspace(tmp_path)
    proxy.faults.extend(["500"] * 3)     # max_retries 2: the first prompt fails for good
    code, out = cli_json(["run", "--model", "endpoint:tiny-serial", "--task", "CliMedBench", "--split", "test",
                          "--db", str(db), "--json", "--limit", "4"])
    assert code == 0 and out["requests"]["failed"] == 1 and out["requests"]["sent"] == 3
    err = capsys.readouterr().err
    assert "failed: endpoint 'tiny-serial'" in err and "HTTP 500" in err and "1 prompt(s) failed" in err
    ws = connect(db)
    run = ws.runs.get(out["run_id"])
    assert run.params["partial"] is True and len(run.params["failures"]) == 1
    failed = [p for p in ws.runs.predictions(out["run_id"]) if p.meta.get("failure")]
    assert len(failed) == 1 and failed[0].target == ""
    ws.close()


def test_the_api_key_reaches_no_byte_of_workspace_log_or_export(tmp_path, declared, proxy):
    db = workspace(tmp_path)
    proxy.faults.extend(["500"] * 3)
    code, out = cli_json(["run", "--model", "endpoint:tiny-serial", "--task", "CliMedBench", "--split", "test",
                          "--db", str(db), "--json", "--limit", "3"])
    assert code == 0 and f"Bearer {KEY}" in proxy.auth          # the key was sent to the server
    ws = connect(db)
    export = export_run(ws, out["run_id"], tmp_path / "export")
    ws.close()
    code = main(["predict", "--model", "endpoint:tiny", "--task", "CliMedBench", "--input", str(CLIMEDBENCH),
                 "--out", str(tmp_path / "predicted"), "--no-progress"])
    assert code == 0
    files = [export, db, *tmp_path.glob("ws.duckdb*"), *(tmp_path / "predicted").iterdir()]
    files += [log_path()] if log_path().exists() else []
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f
    assert "CBLUE_TEST_KEY" not in json.dumps(connect(db).runs.get(out["run_id"]).params)


def test_predict_writes_the_official_submission_file(tmp_path, declared, proxy):
    code = main(["predict", "--model", "endpoint:tiny-completions", "--input", str(PROMPTCBLUE),
                 "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    written = load(tmp_path / "test_predictions.json", "PromptCBLUE").examples
    source = load(PROMPTCBLUE, "PromptCBLUE").examples
    assert [e.key for e in written] == [e.key for e in source]
    assert all(e.target for e in written) and sum(proxy.finished.values()) == len(source)


def test_unknown_endpoint_and_unset_key_are_usage_errors(tmp_path, declared, monkeypatch, capsys):
    db = workspace(tmp_path)
    assert main(["run", "--model", "endpoint:nope", "--task", "PromptCBLUE", "--db", str(db)]) == 2
    assert "declared: endpoint:tiny, endpoint:tiny-completions, endpoint:tiny-serial" in capsys.readouterr().err
    monkeypatch.delenv("CBLUE_TEST_KEY")
    assert main(["run", "--model", "endpoint:tiny", "--task", "PromptCBLUE", "--db", str(db)]) == 2
    assert "$CBLUE_TEST_KEY, which is not set" in capsys.readouterr().err
    monkeypatch.setenv("CBLUE_TEST_KEY", KEY)
    assert main(["run", "--model", "endpoint:tiny", "--task", "CMeEE", "--db", str(db)]) == 2
    assert "endpoints answer PromptCBLUE and CliMedBench prompts" in capsys.readouterr().err
    assert main(["predict", "--model", "endpoint:tiny", "--input", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "one official input file" in capsys.readouterr().err


def stored_prompts(db: Path) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT prompt FROM response_cache").fetchall()}
    finally:
        con.close()


def test_a_run_killed_with_sigkill_resumes_without_resending_a_stored_answer(tmp_path, declared, proxy):
    db = workspace(tmp_path)
    proxy.delay_s = 0.2      # slow enough to kill it halfway
    cmd = [sys.executable, "-m", "cblue_core", "run", "--model", "endpoint:tiny", "--task", "PromptCBLUE",
           "--split", "dev", "--db", str(db), "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while sum(proxy.finished.values()) < 10 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    stored = stored_prompts(db)
    total = len(load(PROMPTCBLUE, "PromptCBLUE").examples)
    assert 5 <= len(stored) < total     # the answers in flight at the kill were not stored
    proxy.reset()
    code, out = cli_json(["run", "--model", "endpoint:tiny", "--task", "PromptCBLUE", "--split", "dev",
                          "--db", str(db), "--json"])
    assert code == 0
    assert not stored & set(proxy.received), "a prompt answered before the kill was sent again"
    assert all(n == 1 for n in proxy.received.values())
    assert out["requests"]["cached"] == len(stored) and out["requests"]["sent"] == len(proxy.received)
    proxy.reset()
    code, again = cli_json(["run", "--model", "endpoint:tiny", "--task", "PromptCBLUE", "--split", "dev",
                            "--db", str(db), "--json"])
    assert again["requests"]["sent"] == 0 and not proxy.received
