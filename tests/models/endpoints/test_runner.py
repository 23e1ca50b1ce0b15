"""The runner against a real ``transformers serve`` over real HTTP, through a fault proxy that
counts what the server was sent."""
from __future__ import annotations

import pytest

from cblue_core.models.endpoints.client import EndpointFailure
from cblue_core.models.endpoints.runner import run_prompts
from cblue_core.models.endpoints.streaming import stream_answer
from cblue_core.store.workspace import connect

from .conftest import endpoint
from .fault_proxy import FAULTS

PROMPTS = ["患者咳嗽三天", "胸痛两小时", "发热伴头痛", "腹泻一周"]


@pytest.mark.parametrize("mode", ["chat", "completions"])
def test_answers_usage_and_finish_reason_over_real_http(proxy, served, mode):
    out = run_prompts(endpoint(proxy, served, mode=mode, max_tokens=5), PROMPTS)
    assert out.stats.sent == 4 and out.stats.cached == 0 and out.stats.failed == 0
    for r in out.results:
        assert r.answer is not None and r.answer.text and r.answer.finish_reason == "length"
        assert r.answer.completion_tokens == 5 and r.answer.prompt_tokens > 0 and r.answer.latency_s > 0
    assert out.stats.completion_tokens == 20 and out.stats.tokens_per_s > 0
    assert proxy.finished == {p: 1 for p in PROMPTS}


def test_a_second_identical_run_sends_nothing_and_other_settings_send_again(proxy, served):
    ws = connect(":memory:")
    cfg = endpoint(proxy, served)
    first = run_prompts(cfg, PROMPTS + PROMPTS[:1], cache=ws.responses)   # a repeated prompt is sent once
    assert first.stats.sent == 4 and proxy.received == {p: 1 for p in PROMPTS}
    again = run_prompts(cfg, PROMPTS, cache=ws.responses)
    assert again.stats.sent == 0 and again.stats.cached == 4 and sum(proxy.received.values()) == 4
    assert [r.answer.text for r in again.results] == [r.answer.text for r in first.results[:4]]
    longer = run_prompts(endpoint(proxy, served, max_tokens=7), PROMPTS[:2], cache=ws.responses)
    assert longer.stats.sent == 2 and sum(proxy.received.values()) == 6


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_is_retried_and_the_prompt_answered(proxy, served, fault):
    # a short timeout for the 60 s stall; long enough for the tiny model on a busy machine
    cfg = endpoint(proxy, served, timeout_s=4.0, max_retries=2)
    proxy.faults.append(fault)
    out = run_prompts(cfg, PROMPTS[:1])
    assert out.stats.failed == 0 and out.results[0].answer is not None
    assert proxy.received[PROMPTS[0]] == 2 and proxy.finished[PROMPTS[0]] == 1
    if fault == "429":   # the client waited what Retry-After said, not its own 0.5-1 s
        (t0, _), (t1, _) = proxy.arrivals
        assert t1 - t0 >= proxy.retry_after_s - 0.05


@pytest.mark.parametrize("fault, words", [("500", "HTTP 500"), ("badjson", "not valid JSON"),
                                          ("drop", "connection failed")])
def test_a_prompt_still_failing_after_retries_is_one_line_and_counted(proxy, served, fault, words):
    cfg = endpoint(proxy, served, max_retries=1, max_concurrency=1)   # both tries of the first prompt fail
    proxy.faults.extend([fault] * 2)
    out = run_prompts(cfg, PROMPTS[:2])
    assert out.stats.failed == 1 and out.stats.sent == 1
    failure = out.results[0].failure
    assert out.results[1].answer is not None and failure is not None and words in failure and "\n" not in failure and "'tiny'" in failure
    assert out.stats.failures == [failure]


def test_the_stream_gives_the_same_answer_piece_by_piece(proxy, served):
    cfg = endpoint(proxy, served, max_tokens=6)
    pieces = list(stream_answer(cfg, PROMPTS[0]))
    assert len(pieces) > 1
    assert "".join(pieces) == run_prompts(cfg, PROMPTS[:1]).results[0].answer.text


def test_a_stream_cut_short_is_a_clear_failure(proxy, served):
    cfg = endpoint(proxy, served, max_tokens=6)
    proxy.faults.append("cut")
    with pytest.raises(EndpointFailure, match="stream"):
        list(stream_answer(cfg, PROMPTS[0]))


def test_runs_from_a_thread_whose_event_loop_is_running(proxy, served):
    """Playwright's synchronous API (the browser tests, earlier in the same process) or a notebook
    leaves a running loop in the thread: asyncio.run refused to nest there."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    async def inside_a_loop():
        return run_prompts(endpoint(proxy, served, max_tokens=3), PROMPTS[:2])

    def on_a_fresh_thread():        # whatever loop the test process's main thread has
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(inside_a_loop())
        finally:
            loop.close()

    with ThreadPoolExecutor(1) as pool:
        out = pool.submit(on_a_fresh_thread).result()
    assert out.stats.sent + out.stats.cached == 2 and out.stats.failed == 0
