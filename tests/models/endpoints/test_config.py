"""Endpoint declarations: what a TOML file may say, and the key read only from the environment."""
from __future__ import annotations

import pytest

from cblue_core.models.endpoints.config import (
    ENV_ENDPOINTS,
    EndpointConfigError,
    get_endpoint,
    is_endpoint,
    load_endpoints,
)

GOOD = """
[endpoints.qwen-local]
base_url = "http://user:pw@127.0.0.1:8000/v1"
model = "Qwen2.5-7B-Instruct"
api_key_env = "QWEN_API_KEY"
mode = "chat"
max_concurrency = 8
timeout_s = 120
max_retries = 4
max_tokens = 512
temperature = 0.0

[endpoints.local-completions]
base_url = "http://127.0.0.1:9000/v1"
model = "tiny"
mode = "completions"
"""


def write(tmp_path, text):
    p = tmp_path / "endpoints.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_the_documented_example_loads(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_ENDPOINTS, str(write(tmp_path, GOOD)))
    found = load_endpoints()
    assert sorted(found) == ["local-completions", "qwen-local"]
    q = found["qwen-local"]
    assert (q.model, q.mode, q.max_concurrency, q.timeout_s, q.max_retries, q.max_tokens, q.temperature) == \
        ("Qwen2.5-7B-Instruct", "chat", 8, 120, 4, 512, 0.0)
    assert found["local-completions"].max_concurrency == 8 and found["local-completions"].mode == "completions"
    assert get_endpoint("endpoint:qwen-local") == q and is_endpoint("endpoint:qwen-local")
    assert q.public_url == "http://127.0.0.1:8000/v1"      # no user or password in what runs record
    assert "pw" not in str(q.run_params()) and "QWEN_API_KEY" not in str(q.run_params())


def test_the_key_is_read_from_the_named_variable_at_call_time(tmp_path, monkeypatch):
    cfg = load_endpoints(write(tmp_path, GOOD))["qwen-local"]
    monkeypatch.delenv("QWEN_API_KEY", raising=False)
    with pytest.raises(EndpointConfigError, match=r"\$QWEN_API_KEY, which is not set"):
        cfg.api_key()
    monkeypatch.setenv("QWEN_API_KEY", "sk-later")
    assert cfg.api_key() == "sk-later"
    assert load_endpoints(write(tmp_path, GOOD))["local-completions"].api_key() == "EMPTY"


@pytest.mark.parametrize("table, message", [
    ('base_url = "http://h/v1"', "model must be a non-empty string"),
    ('base_url = "ftp://h/v1"\nmodel = "m"', "must start with http"),
    ('base_url = "http://h/v1"\nmodel = "m"\nmode = "embeddings"', "mode is 'embeddings'"),
    ('base_url = "http://h/v1"\nmodel = "m"\nmax_concurrency = 0', "max_concurrency must be at least 1"),
    ('base_url = "http://h/v1"\nmodel = "m"\nmax_tokens = "many"', "max_tokens is 'many', expected int"),
    ('base_url = "http://h/v1"\nmodel = "m"\napi_key = "sk-1"', "unknown key(s) api_key"),
    ('base_url = "http://h/v1"\nmodel = "m"\ntimeout_s = -1', "timeout_s must be a positive"),
])
def test_a_bad_table_is_refused_naming_file_table_and_key(tmp_path, table, message):
    path = write(tmp_path, f"[endpoints.bad]\n{table}\n")
    with pytest.raises(EndpointConfigError) as err:
        load_endpoints(path)
    assert message in str(err.value) and "[endpoints.bad]" in str(err.value) and str(path) in str(err.value)


def test_unreadable_or_absent_declarations(tmp_path, monkeypatch):
    with pytest.raises(EndpointConfigError, match="not valid TOML"):
        load_endpoints(write(tmp_path, "[endpoints.x\n"))
    with pytest.raises(EndpointConfigError, match="cannot read the endpoints file"):
        load_endpoints(tmp_path / "missing.toml")
    monkeypatch.delenv(ENV_ENDPOINTS, raising=False)
    assert load_endpoints() == {}
    with pytest.raises(EndpointConfigError, match="unknown endpoint 'x'"):
        get_endpoint("endpoint:x")
    monkeypatch.setenv(ENV_ENDPOINTS, str(write(tmp_path, GOOD)))
    with pytest.raises(EndpointConfigError, match="declared: endpoint:local-completions, endpoint:qwen-local"):
        get_endpoint("endpoint:x")
