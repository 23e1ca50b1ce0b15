"""What keys a cached answer (the server as well as the model and settings), and the role
checked before an endpoint run sends anything."""
from __future__ import annotations

from pathlib import Path

import pytest

from cblue_core.auth.roles import PermissionDenied, Role
from cblue_core.auth.user import User
from cblue_core.models.endpoints.config import EndpointConfig
from cblue_core.models.endpoints.runner import run_prompts
from cblue_core.runs.endpoint import endpoint_run
from cblue_core.store.ingest import ingest_file
from cblue_core.store.responses import cache_key
from cblue_core.store.workspace import connect

from .hostile_server import HostileServer

ROOT = Path(__file__).resolve().parents[3]
PROMPTCBLUE = ROOT / "sample_data" / "promptcblue" / "dev.json"
PROMPTS = ["找出实体：头痛。", "找出实体：发热。"]


@pytest.fixture
def servers():
    first, second = HostileServer(lambda p: "一号：" + p), HostileServer(lambda p: "二号：" + p)
    yield first, second
    first.close()
    second.close()


def config(server: HostileServer, name: str = "e", **kw) -> EndpointConfig:
    return EndpointConfig(name=name, base_url=server.url, model="same-model", max_retries=0, timeout_s=10.0, **kw)


def test_two_servers_with_one_model_name_do_not_share_answers(servers):
    first, second = servers
    ws = connect(":memory:")
    a = run_prompts(config(first, "a"), PROMPTS, cache=ws.responses)
    b = run_prompts(config(second, "b"), PROMPTS, cache=ws.responses)
    assert [r.answer.text for r in a.results] == ["一号：" + p for p in PROMPTS]
    assert [r.answer.text for r in b.results] == ["二号：" + p for p in PROMPTS]
    assert b.stats.sent == 2 and b.stats.cached == 0 and len(second.requests) == 2
    again = run_prompts(config(first, "a-again"), PROMPTS, cache=ws.responses)
    assert again.stats.cached == 2 and len(first.requests) == 2     # same server: nothing re-sent
    ws.close()


def test_credentials_in_the_address_neither_key_the_cache_nor_reach_it(servers):
    first, _ = servers
    plain = config(first)
    with_password = EndpointConfig(name="e", base_url=first.url.replace("http://", "http://ann:pw-secret@"),
                                   model="same-model")
    assert plain.settings == with_password.settings
    assert "pw-secret" not in repr(with_password.settings)


@pytest.mark.parametrize("setting", [{"max_tokens": 7}, {"temperature": 0.5}, {"mode": "completions"}])
def test_every_generation_setting_keys_the_cache(servers, setting):
    first, _ = servers
    base = config(first)
    other = config(first, **setting)
    assert cache_key(base.model, base.settings, "问") != cache_key(other.model, other.settings, "问")


def test_a_viewer_starting_an_endpoint_run_sends_nothing_and_is_audited(servers):
    first, _ = servers
    ws = connect(":memory:")
    ingest_file(ws, PROMPTCBLUE, task="PromptCBLUE", split="dev")
    did = ws.datasets.all()[0].dataset_id
    ws.users.set_role("vera", Role.VIEWER)
    viewer = ws.acting_as(User("vera", "oidc"))
    with pytest.raises(PermissionDenied, match="run.create refused for vera"):
        endpoint_run(viewer, did, config(first), limit=3)
    assert first.requests == [] and ws.responses.count() == 0 and ws.runs.all() == []
    refused = [e for e in ws.audit.events() if e.action == "run.create"]
    assert [(e.user, e.outcome) for e in refused] == [("vera", "refused")]
    ws.users.set_role("adam", Role.ADMIN)
    done = endpoint_run(ws.acting_as(User("adam", "oidc")), did, config(first), limit=3)
    assert len(first.requests) == 3 and done.run.run_id == ws.runs.all()[0].run_id
    ws.close()
