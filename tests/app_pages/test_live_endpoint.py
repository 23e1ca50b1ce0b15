"""The Live page with a declared endpoint that is the tests' hostile server (issue 35, items 4
and 8): a viewer is told why and sends nothing, an annotator sees the answer and the call is
audited, the visitor's prompt limit says so, a flood is cut and the page says where; the
autolink guard is linear and shows an answer without spaces as it arrives."""
from __future__ import annotations

import os
import time

import pytest
from streamlit.testing.v1 import AppTest

import app_pages.identity
from app_pages.live_page.llm import escaped_stream
from cblue_core.auth import Role, User, local_user
from cblue_core.models.endpoints.config import EndpointConfig
from cblue_core.store.audit import DONE, AuditFilter
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP
from tests.conftest import SAMPLE_DATA
from tests.models.endpoints.conftest import write_endpoints
from tests.models.endpoints.hostile_server import HostileServer

PROMPT = "找出句子中的疾病实体：患者咳嗽"


def test_an_answer_without_spaces_is_shown_as_it_arrives():
    arrived: list[int] = []

    def pieces():
        for n in range(200):
            arrived.append(n)
            yield "a" * 1_000          # 200 KB of one word: the old guard held it all back
    shown = 0
    for out in escaped_stream(pieces()):
        shown += len(out)
        assert shown >= 1_000 * len(arrived) - 6      # all but the guard's six letters, at once
    assert shown == 200_000


def test_the_autolink_guard_is_linear():
    def cost(n: int) -> float:
        start = time.process_time()
        for _ in escaped_stream("b" * 1_000 for _ in range(n)):
            pass
        return time.process_time() - start
    small, large = cost(100), cost(400)
    assert large < 0.5, f"{large:.2f} CPU-s for 400 KB"
    assert large < 8 * max(small, 0.005), (small, large)     # 4x the text: about 4x the time


def test_a_url_split_anywhere_forms_no_link():
    for url in ("http://evil.example/x", "https://evil.example", "www.evil.example", "mailto:a@evil.example",
                "a@evil.example"):
        text = "见" + url + " 好"
        for cut in range(1, len(text)):
            shown = "".join(escaped_stream([text[:cut], text[cut:]]))
            assert "http:" not in shown and "https:" not in shown and "www." not in shown and "@e" not in shown


@pytest.fixture(scope="module")
def server():
    s = HostileServer()
    yield s
    s.close()


@pytest.fixture(scope="module")
def live_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("live_endpoint") / "live.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    for name in ("ann", "bea", "cat", "dan"):
        ws.users.set_role(name, Role.ANNOTATOR)
    ws.close()
    return db


@pytest.fixture
def ask_as(live_db, server, tmp_path, monkeypatch):
    cfg = EndpointConfig(name="hostile", base_url=server.url, model="m", max_retries=0, timeout_s=30.0)
    monkeypatch.setenv("CBLUE_STUDIO_ENDPOINTS", str(write_endpoints(tmp_path / "endpoints.toml", [cfg])))
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(live_db))
    monkeypatch.delenv("CBLUE_STUDIO_READONLY", raising=False)
    monkeypatch.delenv("CBLUE_STUDIO_ADMINS", raising=False)
    with server.lock:
        server.requests.clear()
        server.queue.clear()
    server.piece_delay_s = 0.0

    def open_as(name: str) -> AppTest:
        monkeypatch.setattr(app_pages.identity, "current_user", lambda: User(name, "proxy"))
        at = AppTest.from_file(APP, default_timeout=60)
        at.run()
        at.switch_page("pages/live.py")
        at.run()
        at.selectbox(key="live_task").set_value("PromptCBLUE").run()
        at.selectbox(key="live_model").set_value("endpoint:hostile").run()
        at.text_area(key="live_text").input(PROMPT).run()
        assert not at.exception, [e.value for e in at.exception]
        return at
    return open_as


def ask(at: AppTest) -> AppTest:
    at.button(key="live_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def owner(db):
    """The page's own connection to the file, acting as the file's owner."""
    from app_pages.common import shared_workspace

    return shared_workspace(str(db)).cursor(actor=local_user("cli"))


def events(db, user: str):
    return owner(db).audit.events(AuditFilter(action="endpoint.ask", user=user))


def test_a_viewer_is_told_why_and_nothing_is_sent(ask_as, server):
    at = ask_as("vic")                       # signed in, no role: a viewer
    assert any("Needs the annotator role" in i.value and "you are a viewer" in i.value for i in at.info)
    assert at.button(key="live_run").disabled
    assert server.requests == []


def test_a_user_demoted_while_the_page_shows_ask_sends_nothing(ask_as, server):
    at = ask_as("dan")
    assert not at.button(key="live_run").disabled
    owner(os.environ["CBLUE_STUDIO_DB"]).users.set_role("dan", Role.VIEWER)    # the core refuses too: test_live_calls
    ask(at)
    assert server.requests == [] and "答：" not in shown(at)
    assert any("you are a viewer" in i.value for i in at.info)


def test_an_annotator_sees_the_answer_and_the_call_is_audited(ask_as, server, live_db):
    at = ask(ask_as("ann"))
    assert not at.error, [e.value for e in at.error]
    assert "答：找出句子中的疾病" in shown(at)
    assert len(server.requests) == 1
    [event] = events(live_db, "ann")
    assert (event.outcome, event.target, event.source) == (DONE, "endpoint:hostile", "proxy")
    tokens = f"prompt_tokens {len(server.requests[0]['prompt'])}; completion_tokens 10"
    assert tokens in event.detail and "finished (stop)" in event.detail


def test_the_visitors_prompt_limit_says_so_and_sends_nothing(ask_as, server, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_LIVE_PROMPTS_PER_MINUTE", "1")
    at = ask(ask_as("bea"))
    assert "答：" in shown(at) and len(server.requests) == 1
    ask(at)
    assert len(server.requests) == 1
    [refusal] = [w.value for w in at.warning if "Nothing was sent" in w.value]
    assert "1 prompt in the last minute" in refusal and "CBLUE\\_STUDIO\\_LIVE\\_PROMPTS\\_PER\\_MINUTE" in refusal


def test_a_flood_is_cut_and_the_page_says_where(ask_as, server, live_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_LIVE_MAX_CHARS", "3000")
    server.then("flood")
    server.piece_delay_s = 0.01
    at = ask(ask_as("cat"))
    assert "洪" * 3000 in shown(at) and "洪" * 3001 not in shown(at)
    assert any("cut at 3\\,000 characters" in w.value and "MAX\\_CHARS" in w.value for w in at.warning)
    assert server.streams_ended.wait(5)
    [event] = events(live_db, "cat")
    assert "cut at 3,000 characters" in event.detail
