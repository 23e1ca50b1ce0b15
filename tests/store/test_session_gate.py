"""One holder per session at a time; the next one waits for it, or is refused after its wait."""
from __future__ import annotations

import threading
import time

import pytest

from cblue_core.store.session_gate import SessionBusy, SessionGate


def hold_in_thread(gate: SessionGate, session: str, seconds: float,
                   leaving: threading.Event | None = None) -> threading.Thread:
    inside = threading.Event()

    def work() -> None:
        with gate.hold(session, wait=0):
            inside.set()
            time.sleep(seconds)
            if leaving is not None:
                leaving.set()

    thread = threading.Thread(target=work)
    thread.start()
    assert inside.wait(5)
    return thread


def test_a_second_holder_of_the_session_is_refused_after_its_wait():
    gate = SessionGate()
    thread = hold_in_thread(gate, "s", 1.0)
    start = time.perf_counter()
    with pytest.raises(SessionBusy, match="another filter of this session is still running"), \
            gate.hold("s", wait=0.2):
        pass
    assert 0.15 < time.perf_counter() - start < 0.9
    with gate.hold("other", wait=0):   # another session is not held up
        pass
    with gate.hold(None, wait=0):      # nor the command line
        pass
    thread.join()


def test_a_second_holder_waits_for_the_first():
    gate = SessionGate()
    leaving = threading.Event()
    thread = hold_in_thread(gate, "s", 0.3, leaving)
    with gate.hold("s", wait=5):
        assert leaving.is_set()
    thread.join()


def test_the_turn_is_released_when_the_block_raises():
    gate = SessionGate()
    with pytest.raises(RuntimeError), gate.hold("s", wait=0):
        raise RuntimeError("boom")
    with gate.hold("s", wait=0):
        pass
