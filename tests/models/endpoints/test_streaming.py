"""The Live stream's bounds against the hostile server (issue 35, item 4): cut at a number of
characters, stopped after a number of seconds, stopped within a second by ``should_stop`` while
the server says nothing, the connection shut so that the server sees the client leave, and the
token counts handed back."""
from __future__ import annotations

import threading
import time

import pytest

from cblue_core.models.endpoints.client import EndpointFailure
from cblue_core.models.endpoints.config import EndpointConfig
from cblue_core.models.endpoints.streaming import CHARS, SECONDS, STOPPED, StreamLimits, stream_answer

from .hostile_server import HostileServer


@pytest.fixture
def server():
    s = HostileServer()
    yield s
    s.close()


def config(server: HostileServer, **kw) -> EndpointConfig:
    return EndpointConfig(name="hostile", base_url=server.url, model="m", max_retries=0, timeout_s=60.0, **kw)


def no_reader_left() -> bool:
    return not any(t.name.startswith("live-stream-") and t.is_alive() for t in threading.enumerate())


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_flood_is_cut_at_max_chars_and_the_server_sees_the_stream_end(server):
    server.then("flood")
    server.piece_delay_s = 0.01        # a server still sending: it notices the client leave at once
    stream = stream_answer(config(server), "x", limits=StreamLimits(max_chars=5_500))
    text = "".join(stream)
    assert text == "洪" * 5_500
    assert stream.outcome.stopped == CHARS and stream.outcome.chars == 5_500
    assert stream.outcome.ended(stream.limits) == "cut at 5,500 characters"
    assert server.streams_ended.wait(5) and server.open_streams == 0
    assert wait_for(no_reader_left, 3)


def test_an_endless_stream_stops_after_max_seconds(server):
    server.then("flood")
    server.flood_chars, server.piece_chars, server.piece_delay_s = 10**6, 10, 0.05   # 80 min, slowly
    start = time.monotonic()
    stream = stream_answer(config(server), "x", limits=StreamLimits(max_seconds=1.0))
    text = "".join(stream)
    assert 0.9 <= time.monotonic() - start < 3.0
    assert text and stream.outcome.stopped == SECONDS
    assert stream.outcome.ended(stream.limits) == "stopped after 1 s"
    assert server.streams_ended.wait(5)


def test_should_stop_ends_a_silent_stream_within_a_second(server):
    server.then("drip")
    server.drip_s = 2.0                # one piece, then silence
    asked = threading.Event()
    stream = stream_answer(config(server), "abcdefgh", should_stop=asked.is_set)
    pieces = iter(stream)
    assert next(pieces) == "答："
    threading.Timer(0.3, asked.set).start()
    rest = list(pieces)
    stopped_at = time.monotonic()
    assert asked.is_set() and rest == []
    assert stream.outcome.stopped == STOPPED
    assert wait_for(no_reader_left, 1.0), "the reader thread still blocks on the socket"
    assert time.monotonic() - stopped_at < 1.5
    # the server learns it at its next write (TCP says nothing to a silent peer)
    assert server.streams_ended.wait(3 * server.drip_s)


def test_a_should_stop_that_raises_shuts_the_stream(server):
    class SessionGone(BaseException):     # as Streamlit's StopException
        pass

    server.then("flood")
    server.piece_delay_s = 0.01
    calls = []

    def gone() -> bool:
        calls.append(1)
        if len(calls) > 3:
            raise SessionGone
        return False

    stream = stream_answer(config(server), "x", should_stop=gone)
    with pytest.raises(SessionGone):
        for _ in stream:
            pass
    assert stream.outcome.stopped == STOPPED
    assert server.streams_ended.wait(5) and wait_for(no_reader_left, 3)


@pytest.mark.parametrize("mode", ["chat", "completions"])
def test_the_stream_asks_for_and_hands_back_the_token_counts(server, mode):
    stream = stream_answer(config(server, mode=mode), "你好世界一二三四五六")
    assert "".join(stream) == "答：你好世界一二三四"
    out = stream.outcome
    assert (out.prompt_tokens, out.completion_tokens, out.finish_reason, out.stopped) == (10, 10, "stop", None)
    assert server.requests[0]["body"]["stream_options"] == {"include_usage": True}


def test_counts_that_are_no_counts_are_unknown(server):
    server.then("usage")
    server.usage_override = {"prompt_tokens": 2**40, "completion_tokens": -5}
    stream = stream_answer(config(server), "abc")
    "".join(stream)
    assert (stream.outcome.prompt_tokens, stream.outcome.completion_tokens) == (None, None)


def test_a_refused_request_is_one_line_built_by_describe(server):
    server.then("echo401")
    stream = stream_answer(config(server), "abc")
    with pytest.raises(EndpointFailure, match=r"^endpoint 'hostile' \(http://127\.0\.0\.1:\d+/v1\): HTTP 401"):
        list(stream)
    assert stream.outcome.failure is not None and stream.outcome.ended(stream.limits) == "failed"


def test_limits_from_the_environment():
    assert StreamLimits.from_env({}) == StreamLimits(20_000, 180.0)
    got = StreamLimits.from_env({"CBLUE_STUDIO_LIVE_MAX_CHARS": "500", "CBLUE_STUDIO_LIVE_MAX_SECONDS": "2.5"})
    assert got == StreamLimits(500, 2.5)
    for bad in ({"CBLUE_STUDIO_LIVE_MAX_CHARS": "0"}, {"CBLUE_STUDIO_LIVE_MAX_CHARS": "1e3"},
                {"CBLUE_STUDIO_LIVE_MAX_SECONDS": "inf"}, {"CBLUE_STUDIO_LIVE_MAX_SECONDS": "soon"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            StreamLimits.from_env(bad)
