"""At most one user filter per session at a time.

Streamlit starts a new run of a page on every keystroke while the interrupted run is still in
its filter, so filters of one visitor stacked: eight copies of one regular expression used 364
CPU-seconds in 12 s. A session's next filter waits for the one before it (which the time limit
ends), and is refused with a message when that has not ended in time.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager

from .user_sql import PredicateRefused

__all__ = ["SessionBusy", "SessionGate"]


class SessionBusy(PredicateRefused):
    """The session already has a filter running."""


class SessionGate:
    """Lets one holder per session key through at a time."""

    def __init__(self) -> None:
        self._busy: set[Hashable] = set()
        self._changed = threading.Condition()

    @contextmanager
    def hold(self, session: Hashable | None, *, wait: float) -> Iterator[None]:
        """Hold ``session``'s turn for the block, waiting up to ``wait`` seconds for the holder
        before it; :class:`SessionBusy` if that one still runs. ``None`` (the command line, a
        test) is no session and always passes."""
        if session is None:
            yield
            return
        deadline = time.monotonic() + wait
        with self._changed:
            while session in self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SessionBusy("another filter of this session is still running; "
                                      "this one was not started (try again when that one ends)")
                self._changed.wait(left)
            self._busy.add(session)
        try:
            yield
        finally:
            with self._changed:
                self._busy.discard(session)
                self._changed.notify_all()
