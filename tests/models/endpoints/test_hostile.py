"""The runner and the stream against a hostile OpenAI-compatible server on loopback: one that
echoes the key, drips, floods, and sends counts that are not counts. No model behind it, so these
run in seconds."""
from __future__ import annotations

import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import duckdb
import pytest

from cblue_core.cli import main
from cblue_core.io.logs import log_path
from cblue_core.models.endpoints.client import (
    LENGTH_CAP,
    EndpointFailure,
    answer_prefix,
    describe,
    token_count,
)
from cblue_core.models.endpoints.config import ENV_ENDPOINTS, EndpointConfig, load_endpoints
from cblue_core.models.endpoints.runner import AnswerNotStored, run_prompts
from cblue_core.models.endpoints.streaming import stream_answer
from cblue_core.store.responses import CachedResponse, ResponseStore, cache_key
from cblue_core.store.workspace import connect

from .conftest import write_endpoints
from .hostile_server import HostileServer
from .test_commands import KEY, cli_json, workspace

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = [f"患者咳嗽{i}天，伴发热" for i in range(6)]


@pytest.fixture
def hostile():
    server = HostileServer()
    yield server
    server.close()


def config(server: HostileServer, name: str = "evil", **kw) -> EndpointConfig:
    settings = {"mode": "chat", "max_concurrency": 1, "timeout_s": 10.0, "max_retries": 1,
                "max_tokens": 6, "temperature": 0.0, **kw}
    return EndpointConfig(name=name, base_url=server.url, model="evil-model", **settings)


@pytest.fixture
def keyed(tmp_path, monkeypatch, hostile):
    """The hostile server declared with a key, the log beside the workspace."""
    cfg = config(hostile, api_key_env="CBLUE_TEST_KEY")
    monkeypatch.setenv(ENV_ENDPOINTS, str(write_endpoints(tmp_path / "endpoints.toml", [cfg])))
    monkeypatch.setenv("CBLUE_TEST_KEY", KEY)
    monkeypatch.setenv("CBLUE_STUDIO_LOG", str(tmp_path / "cblue_studio.log"))
    return cfg


# 1. the key never comes back --------------------------------------------------------------------

@pytest.mark.parametrize("behaviour, status", [("echo401", "HTTP 401"), ("echo500", "HTTP 500")])
def test_a_key_echoed_in_an_error_body_reaches_no_failure_output_or_byte(tmp_path, keyed, hostile, capsys,
                                                                         behaviour, status):
    db = workspace(tmp_path)
    hostile.default = behaviour
    code, out = cli_json(["run", "--model", "endpoint:evil", "--task", "CliMedBench", "--split", "test",
                          "--db", str(db), "--json", "--limit", "2"])
    captured = capsys.readouterr()
    assert code == 0 and out["requests"]["failed"] == 2
    sent = [{k.lower(): v for k, v in r["headers"].items()}["authorization"] for r in hostile.requests]
    assert sent and set(sent) == {f"Bearer {KEY}"}         # the key was sent, and echoed back
    ws = connect(db)
    failures = ws.runs.get(out["run_id"]).params["failures"]
    ws.close()
    assert len(failures) == 2 and all(status in f and "[redacted]" in f for f in failures), failures
    assert KEY not in json.dumps(failures) and KEY not in json.dumps(out) and KEY not in captured.err
    assert "invalid credentials" in captured.err        # what the endpoint said is still shown
    files = [*tmp_path.glob("ws.duckdb*")] + ([log_path()] if log_path().exists() else [])
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f


def test_a_key_echoed_in_a_streamed_error_event_is_redacted(keyed, hostile):
    hostile.default = "echo_stream"
    with pytest.raises(EndpointFailure) as failed:
        list(stream_answer(load_endpoints()["evil"], PROMPTS[0]))
    line = str(failed.value)
    assert "upstream rejected Authorization: Bearer [redacted]" in line and "broke after 2 characters" in line
    assert KEY not in line and "\n" not in line


def test_describe_works_without_the_key_variable_and_redacts_a_bare_key(keyed, monkeypatch):
    import openai

    exc = openai.APIError(f"the key {KEY} is not valid", request=None, body=None)  # type: ignore[arg-type]
    assert KEY not in describe(keyed, exc) and "[redacted]" in describe(keyed, exc)
    monkeypatch.delenv("CBLUE_TEST_KEY")
    assert "the endpoint reported an error" in describe(keyed, exc)    # no EndpointConfigError


# 2. counts that are not counts, and an answer the database refuses ------------------------------

@pytest.mark.parametrize("bad", [2**40, -5, 1.5, "12", True, {"n": 1}])
def test_usage_that_is_not_a_count_is_stored_as_unknown_and_noted(hostile, bad):
    ws = connect(":memory:")
    hostile.default = "usage"
    hostile.usage_override = {"prompt_tokens": bad, "completion_tokens": 3}
    out = run_prompts(config(hostile), PROMPTS[:2], cache=ws.responses)
    assert out.stats.failed == 0 and out.stats.usage_unusable == 2
    assert [(r.answer.prompt_tokens, r.answer.completion_tokens) for r in out.results] == [(None, 3)] * 2
    assert out.stats.to_json()["answers"]["usage_unusable"] == 2
    again = run_prompts(config(hostile), PROMPTS[:2], cache=ws.responses)     # stored: not sent again
    assert again.stats.sent == 0 and again.results[0].answer.prompt_tokens is None


def test_token_count_accepts_only_sane_integers():
    assert [token_count(v) for v in (0, 7, 10**9, 10**9 + 1, -1, 2.0, "3", None, False)] == \
        [0, 7, 10**9, None, None, None, None, None, None]


def test_a_run_with_an_absurd_count_is_stored_with_a_note(tmp_path, keyed, hostile, capsys):
    db = workspace(tmp_path)
    hostile.default = "usage"
    hostile.usage_override = {"prompt_tokens": 2**40, "completion_tokens": -5}
    code, out = cli_json(["run", "--model", "endpoint:evil", "--task", "CliMedBench", "--split", "test",
                          "--db", str(db), "--json", "--limit", "3"])
    assert code == 0 and out["requests"] == {"sent": 3, "cached": 0, "failed": 0}
    assert out["tokens"] == {"prompt": 0, "completion": 0}
    assert "3 answer(s) came with token counts that are not counts" in capsys.readouterr().err
    ws = connect(db)
    assert ws.runs.get(out["run_id"]).params["answers"]["usage_unusable"] == 3
    ws.close()


def refusing(real, poisoned):
    """``ResponseStore.put_many`` whose commit fails for the answer to the prompt ``poisoned()``
    names, as DuckDB's conversion errors do (the whole batch rolled back)."""
    def put_many(self, rows):
        if any(row[3] == poisoned() for row in rows):
            raise duckdb.ConversionException("Conversion Error: out of range for the destination type")
        real(self, rows)
    return put_many


def test_an_answer_the_cache_refuses_fails_the_run_naming_it_and_keeps_the_others(hostile):
    ws = connect(":memory:")
    cfg = config(hostile)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ResponseStore, "put_many", refusing(ResponseStore.put_many, lambda: PROMPTS[2]))
        with pytest.raises(AnswerNotStored) as failed:
            run_prompts(cfg, PROMPTS, cache=ws.responses)
    line = str(failed.value)
    assert "prompt 3 of 6" in line and repr(PROMPTS[2]) in line and "ConversionException" in line
    assert "\n" not in line
    keys = [cache_key(cfg.model, cfg.settings, p) for p in PROMPTS]
    stored = set(ws.responses.get_many(keys))
    assert set(keys[:2]) <= stored and keys[2] not in stored
    sent_before = len(hostile.requests)
    again = run_prompts(cfg, PROMPTS, cache=ws.responses)       # resumes: only the unstored are sent
    assert again.stats.failed == 0 and again.stats.cached == len(stored)
    assert len(hostile.requests) - sent_before == 6 - len(stored)


def test_the_command_says_one_line_stores_no_run_and_the_rerun_resumes(tmp_path, keyed, hostile, capsys):
    db = workspace(tmp_path)
    argv = ["run", "--model", "endpoint:evil", "--task", "CliMedBench", "--split", "test", "--db", str(db),
            "--limit", "4", "--no-progress"]
    second = lambda: hostile.requests[1]["prompt"] if len(hostile.requests) > 1 else None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ResponseStore, "put_many", refusing(ResponseStore.put_many, second))
        assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "could not store the answer to prompt 2 of 4" in err[0], err
    ws = connect(db)
    assert ws.runs.all() == []
    stored = ws.responses.count()
    ws.close()
    assert 1 <= stored < 4
    before = len(hostile.requests)
    code, out = cli_json(argv[:-1] + ["--json"])
    assert code == 0 and out["requests"]["cached"] == stored and out["requests"]["sent"] == 4 - stored
    assert len(hostile.requests) - before == 4 - stored


# 3. bounded in time and size ----------------------------------------------------------------------

def test_timeout_is_a_wall_clock_limit_per_attempt_not_between_bytes(hostile):
    hostile.default, hostile.drip_s = "drip", 0.3      # the whole body would take a minute or more
    cfg = config(hostile, timeout_s=1.0, max_retries=1)
    start = time.monotonic()
    out = run_prompts(cfg, PROMPTS[:1])
    took = time.monotonic() - start
    assert out.stats.failed == 1 and "no complete answer within 1 s" in out.results[0].failure
    assert len(hostile.requests) == 2 and took < 8, took       # one try and one retry, a second each


@pytest.fixture
def flooding():
    """A hostile server flooding 48 MB answers, in a process of its own: in this one its
    allocations would count as the client's."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.models.endpoints.hostile_server", "flood",
                             str(16_000_000)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()


def test_a_flood_is_cut_at_the_cap_without_being_read_whole(flooding):
    ws = connect(":memory:")
    cfg = EndpointConfig(name="flood", base_url=flooding, model="m", max_answer_chars=2000, max_retries=0)
    run_prompts(cfg, ["warm up the imports"])
    tracemalloc.start()
    try:
        out = run_prompts(cfg, PROMPTS[:1], cache=ws.responses)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    a = out.results[0].answer
    assert a is not None and a.text == "洪" * 2000 and a.finish_reason == LENGTH_CAP
    assert out.stats.length_capped == 1 and peak < 5_000_000, peak      # of a 48 MB body
    stored = ws.responses.get_many([cache_key(cfg.model, cfg.settings, PROMPTS[0])])
    assert [len(c.answer) for c in stored.values()] == [2000]


def test_an_answer_over_the_cap_but_under_the_byte_cap_is_cut_with_its_usage(hostile):
    hostile.answer = lambda p: "长" * 3000
    out = run_prompts(config(hostile, max_answer_chars=1000), PROMPTS[:1])
    a = out.results[0].answer
    assert a.text == "长" * 1000 and a.finish_reason == LENGTH_CAP and a.completion_tokens == 3000


def test_the_default_cap_comes_from_max_tokens_and_is_declared(tmp_path):
    assert EndpointConfig(name="x", base_url="http://h/v1", model="m", max_tokens=512).answer_char_cap == 8192
    assert EndpointConfig(name="x", base_url="http://h/v1", model="m", max_tokens=6).answer_char_cap == 1024
    path = tmp_path / "e.toml"
    path.write_text('[endpoints.a]\nbase_url = "http://h/v1"\nmodel = "m"\nmax_answer_chars = 50\n')
    assert load_endpoints(path)["a"].answer_char_cap == 50
    assert load_endpoints(path)["a"].run_params()["max_answer_chars"] == 50
    path.write_text('[endpoints.a]\nbase_url = "http://h/v1"\nmodel = "m"\nmax_answer_chars = 0\n')
    with pytest.raises(ValueError, match="max_answer_chars must be at least 1"):
        load_endpoints(path)


def test_a_huge_answer_cached_before_the_cap_is_cut_on_the_way_out(hostile):
    ws = connect(":memory:")
    cfg = config(hostile, max_answer_chars=100)
    key = cache_key(cfg.model, cfg.settings, PROMPTS[0])
    ws.responses.put(key, cfg.model, cfg.settings, PROMPTS[0], CachedResponse("旧" * 200_000, "stop", 5, 9, 0.1))
    out = run_prompts(cfg, PROMPTS[:1], cache=ws.responses)
    a = out.results[0].answer
    assert out.stats.cached == 1 and not hostile.requests
    assert a.text == "旧" * 100 and a.finish_reason == LENGTH_CAP and out.stats.length_capped == 1


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_the_answer_is_read_from_a_body_cut_anywhere(ensure_ascii):
    cfg = EndpointConfig(name="x", base_url="http://h/v1", model="m")
    text = "洪\\" + "水\U0001F600\"q\n" * 3
    body = json.dumps({"choices": [{"message": {"content": text}}], "usage": {}}, ensure_ascii=ensure_ascii)
    raw = body.encode()
    start = raw.index(b'"content": "') + len(b'"content": "')
    for cut in range(start, len(raw) + 1):
        prefix = answer_prefix(cfg, raw[:cut])
        assert prefix is not None and text.startswith(prefix.rstrip("\ud83d")), (cut, prefix)
    assert answer_prefix(cfg, raw) == text and answer_prefix(cfg, b'{"choices": [{"text": "a') is None


def test_a_lone_surrogate_in_an_answer_is_stored_replaced(hostile):
    ws = connect(":memory:")
    hostile.answer = lambda p: "发热\ud800"
    out = run_prompts(config(hostile), PROMPTS[:1], cache=ws.responses)
    assert out.stats.failed == 0 and out.results[0].answer.text == "发热\ufffd"
