"""Roles before cost on Live (issue 35, item 8): a viewer's prompt is refused before anything
is sent (and the refusal audited), a rate-limited one sends nothing, a read-only workspace sends
none, and every call made is audited with its user, endpoint and tokens, however it ended."""
from __future__ import annotations

import pytest

from cblue_core.auth import PermissionDenied, Role, User
from cblue_core.models.endpoints.config import EndpointConfig
from cblue_core.models.endpoints.live_calls import LiveAnswer, LiveRefused
from cblue_core.models.endpoints.streaming import StreamLimits
from cblue_core.models.endpoints.visitor_limits import RateLimited, SlidingWindow
from cblue_core.store.audit import DONE, REFUSED, AuditFilter
from cblue_core.store.workspace import connect

from .hostile_server import HostileServer

ANN, VIC = User("ann", "proxy"), User("vic", "proxy")


@pytest.fixture
def server():
    s = HostileServer()
    yield s
    s.close()


@pytest.fixture
def ws():
    w = connect(":memory:")
    w.users.set_role("ann", Role.ANNOTATOR)
    yield w
    w.close()


def config(server: HostileServer) -> EndpointConfig:
    return EndpointConfig(name="hostile", base_url=server.url, model="m", max_retries=0, timeout_s=30.0)


def calls(ws, outcome=None):
    return ws.audit.events(AuditFilter(action="endpoint.ask", outcome=outcome))


def test_a_viewer_is_refused_before_anything_is_sent_and_the_refusal_is_kept(ws, server):
    with pytest.raises(PermissionDenied, match="endpoint.ask refused for vic .viewer.: it needs the annotator role"):
        LiveAnswer(ws.acting_as(VIC), config(server), "你好", window=SlidingWindow(10))
    assert server.requests == []
    [event] = calls(ws)
    assert (event.user, event.outcome, event.target) == ("vic", REFUSED, "endpoint:hostile")


def test_an_annotators_call_is_audited_with_user_endpoint_and_tokens(ws, server):
    answer = LiveAnswer(ws.acting_as(ANN), config(server), "你好世界一二三四五六", window=SlidingWindow(10))
    assert "".join(answer) == "答：你好世界一二三四"
    [event] = calls(ws)
    assert (event.user, event.source, event.outcome, event.target) == ("ann", "proxy", DONE, "endpoint:hostile")
    assert event.detail == ("model m; prompt_tokens 10; completion_tokens 10; 10 characters; finished (stop)")


def test_a_cut_answer_is_audited_as_cut(ws, server):
    server.then("flood")
    answer = LiveAnswer(ws.acting_as(ANN), config(server), "x", window=SlidingWindow(10),
                        limits=StreamLimits(max_chars=2_000))
    assert len("".join(answer)) == 2_000
    [event] = calls(ws)
    assert event.detail.endswith("prompt_tokens ?; completion_tokens ?; 2000 characters; cut at 2,000 characters")


def test_an_answer_the_page_stops_reading_is_audited_when_closed(ws, server):
    server.then("flood")
    server.piece_delay_s = 0.01
    answer = LiveAnswer(ws.acting_as(ANN), config(server), "x", window=SlidingWindow(10))
    pieces = iter(answer)
    next(pieces)
    answer.close()                          # a Streamlit stop raised at the page's next st call
    [event] = calls(ws)
    assert "stopped by the page" in event.detail
    assert server.streams_ended.wait(5)
    answer.close()
    assert len(calls(ws)) == 1               # once


def test_over_the_limit_nothing_is_sent_and_a_viewer_uses_no_window(ws, server):
    window = SlidingWindow(1)
    with pytest.raises(PermissionDenied):
        LiveAnswer(ws.acting_as(VIC), config(server), "a", window=window)
    "".join(LiveAnswer(ws.acting_as(ANN), config(server), "a", window=window))
    with pytest.raises(RateLimited, match="1 prompt in the last minute"):
        LiveAnswer(ws.acting_as(ANN), config(server), "b", window=window)
    assert [r["prompt"] for r in server.requests] == ["a"]
    assert [e.outcome for e in calls(ws)] == [DONE, REFUSED]


def test_a_read_only_workspace_sends_nothing(tmp_path, server):
    path = tmp_path / "w.duckdb"
    w = connect(path)
    w.users.set_role("ann", Role.ANNOTATOR)
    w.close()
    ro = connect(path, read_only=True, actor=ANN)
    try:
        with pytest.raises(LiveRefused, match="read-only"):
            LiveAnswer(ro, config(server), "a", window=SlidingWindow(10))
    finally:
        ro.close()
    assert server.requests == []
