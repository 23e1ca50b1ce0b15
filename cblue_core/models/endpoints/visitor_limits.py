"""How many prompts one visitor may send to the endpoints in a minute (the Live page).

A declared endpoint costs its operator money or GPU time per prompt, and Live sends whatever a
signed-in visitor types. One sliding window per visitor, kept for the whole process: Streamlit
runs every session in one process, so a visitor opening ten tabs still shares one window.
"""
from __future__ import annotations

import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping

ENV_PROMPTS_PER_MINUTE = "CBLUE_STUDIO_LIVE_PROMPTS_PER_MINUTE"
# A clinician clicking through curated cases asks a few a minute; a script hammering the button
# is held to this.
DEFAULT_PROMPTS_PER_MINUTE = 10
WINDOW_S = 60.0


class RateLimited(Exception):
    """A prompt over the visitor's limit; nothing was sent."""

    def __init__(self, limit: int, window_s: float, retry_after_s: float) -> None:
        self.limit, self.window_s, self.retry_after_s = limit, window_s, retry_after_s
        if limit == 0:
            text = f"this server allows no prompt to its LLM endpoints (${ENV_PROMPTS_PER_MINUTE} is 0)"
        else:
            window = "minute" if window_s == WINDOW_S else f"{window_s:g} s"
            text = (f"you have sent {limit} prompt{'s' if limit != 1 else ''} in the last {window}, the most this "
                    f"server allows a visitor (${ENV_PROMPTS_PER_MINUTE}); try again in "
                    f"{max(1, math.ceil(retry_after_s))} s")
        super().__init__(text)


class SlidingWindow:
    """At most ``limit`` takes per key in any ``window_s`` seconds. Thread-safe."""

    def __init__(self, limit: int, window_s: float = WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        if limit < 0 or window_s <= 0:
            raise ValueError(f"a limit of {limit} per {window_s} s cannot be kept")
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._taken: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        self._swept = clock()

    def take(self, key: str) -> None:
        """Count one prompt for ``key``, or raise :class:`RateLimited` (and count nothing)."""
        with self._lock:
            now = self.clock()
            self._sweep(now)
            times = self._taken.setdefault(key, deque())
            while times and times[0] <= now - self.window_s:
                times.popleft()
            if len(times) >= self.limit:
                retry = (times[0] + self.window_s - now) if times else self.window_s
                raise RateLimited(self.limit, self.window_s, retry)
            times.append(now)

    def active(self) -> int:
        """How many visitors the window remembers (those with a prompt in the last window, or
        since the last sweep)."""
        with self._lock:
            return len(self._taken)

    def _sweep(self, now: float) -> None:
        # Visitors who left keep no entry: once a window, drop the keys with nothing recent.
        if now - self._swept < self.window_s:
            return
        self._swept = now
        for key in [k for k, t in self._taken.items() if not t or t[-1] <= now - self.window_s]:
            del self._taken[key]


def prompts_per_minute(environ: Mapping[str, str] | None = None) -> int:
    """The limit ``$CBLUE_STUDIO_LIVE_PROMPTS_PER_MINUTE`` sets (default 10; 0 sends none)."""
    raw = (os.environ if environ is None else environ).get(ENV_PROMPTS_PER_MINUTE, "").strip()
    if not raw:
        return DEFAULT_PROMPTS_PER_MINUTE
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"${ENV_PROMPTS_PER_MINUTE} is {raw!r}, expected a whole number of prompts, 0 or more")
    return value


_shared: dict[tuple[int, float], SlidingWindow] = {}
_shared_lock = threading.Lock()


def shared_window(limit: int, window_s: float = WINDOW_S) -> SlidingWindow:
    """The process's window for this limit (a changed limit starts a new one)."""
    with _shared_lock:
        found = _shared.get((limit, window_s))
        if found is None:
            found = _shared[(limit, window_s)] = SlidingWindow(limit, window_s)
        return found
