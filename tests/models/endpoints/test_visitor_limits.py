"""The per-visitor prompt limit of Live (issue 35, item 8): a sliding window per visitor,
thread-safe, shared by the process, configured by one environment variable."""
from __future__ import annotations

import threading

import pytest

from cblue_core.models.endpoints.visitor_limits import (
    DEFAULT_PROMPTS_PER_MINUTE,
    ENV_PROMPTS_PER_MINUTE,
    RateLimited,
    SlidingWindow,
    prompts_per_minute,
    shared_window,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_window_slides():
    clock = Clock()
    window = SlidingWindow(3, 60.0, clock)
    for _ in range(3):
        window.take("ann")
        clock.now += 10
    with pytest.raises(RateLimited) as refused:
        window.take("ann")
    assert refused.value.retry_after_s == pytest.approx(30.0)     # the first take leaves the window at 1060
    clock.now = 1060.0
    window.take("ann")          # one left the window: one more allowed
    with pytest.raises(RateLimited):
        window.take("ann")


def test_each_visitor_has_their_own_window():
    window = SlidingWindow(1, 60.0, Clock())
    window.take("proxy:ann")
    window.take("proxy:bob")
    with pytest.raises(RateLimited):
        window.take("proxy:ann")


def test_a_refusal_is_not_counted():
    clock = Clock()
    window = SlidingWindow(1, 60.0, clock)
    window.take("ann")
    for _ in range(5):
        with pytest.raises(RateLimited):
            window.take("ann")
    clock.now += 60.0
    window.take("ann")


def test_the_message_says_the_limit_and_where_it_is_set():
    window = SlidingWindow(2, 60.0, Clock())
    window.take("ann")
    window.take("ann")
    with pytest.raises(RateLimited) as refused:
        window.take("ann")
    text = str(refused.value)
    assert "2 prompts in the last minute" in text and ENV_PROMPTS_PER_MINUTE in text and "try again in 60 s" in text
    with pytest.raises(RateLimited, match="allows no prompt"):
        SlidingWindow(0).take("ann")


def test_concurrent_takes_never_pass_the_limit():
    window = SlidingWindow(50, 60.0)
    passed, lock = [], threading.Lock()

    def hammer() -> None:
        for _ in range(100):
            try:
                window.take("ann")
            except RateLimited:
                continue
            with lock:
                passed.append(1)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(passed) == 50


def test_visitors_who_left_are_forgotten():
    clock = Clock()
    window = SlidingWindow(5, 60.0, clock)
    for n in range(100):
        window.take(f"visitor{n}")
    clock.now += 61
    window.take("ann")
    assert window.active() == 1


def test_the_process_shares_one_window_per_limit():
    assert shared_window(7) is shared_window(7)
    assert shared_window(7) is not shared_window(8)


def test_the_limit_from_the_environment():
    assert prompts_per_minute({}) == DEFAULT_PROMPTS_PER_MINUTE
    assert prompts_per_minute({ENV_PROMPTS_PER_MINUTE: " 3 "}) == 3
    assert prompts_per_minute({ENV_PROMPTS_PER_MINUTE: "0"}) == 0
    for bad in ("-1", "many", "2.5"):
        with pytest.raises(ValueError, match=ENV_PROMPTS_PER_MINUTE):
            prompts_per_minute({ENV_PROMPTS_PER_MINUTE: bad})
