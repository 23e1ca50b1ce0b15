"""Unsaved edits kept on the server per browser, so that a page reload loses nothing.

A *draft* is the annotation a visitor is editing on one example (``Annotation.to_json()`` as a
JSON string) and the revision the edit started from. The Annotate page keeps one per
(browser id, workspace, dataset, example) in a :class:`DraftStore` that lives in the server's
memory (one per process): a refresh starts a new Streamlit session, the span editor reports the
browser id it keeps in the browser's ``localStorage``, and the page finds the draft again.
Drafts are gone when the server restarts; they never reach the workspace file.

A visitor chooses the browser id (it comes from the browser), so the store is bounded whatever
they send: an id must be 32 lowercase hex digits (:func:`valid_browser_id`), a draft's JSON at
most ``max_draft_bytes``, a browser at most ``per_browser`` drafts and ``max_browser_bytes``
(its own oldest dropped first), the whole store at most ``max_drafts`` drafts and ``max_bytes``,
and a draft expires ``ttl_seconds`` after it was written. A full store makes room only from the
writing browser's own drafts: anyone can forge ids, so evicting the least recently written
would let 100 forged ids push out another visitor's unsaved edit; the new draft is refused
instead (:attr:`DraftOutcome.STORE_FULL`) and the page says to save. Ids are only ever
dictionary keys here: never a path, never SQL.
"""
from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

BROWSER_ID = re.compile(r"[0-9a-f]{32}")
DAY = 24 * 3600.0

_Key = tuple[str, str, int, int]            # (browser, scope, dataset_id, idx)


def valid_browser_id(value: object) -> str | None:
    """``value`` when it is a browser id (32 lowercase hex digits), else None."""
    if isinstance(value, str) and BROWSER_ID.fullmatch(value):
        return value
    return None


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, not {value!r}")
    return value


class DraftOutcome(Enum):
    """What :meth:`DraftStore.put` did with a draft."""

    KEPT = "kept"
    TOO_LARGE = "too large"         # over max_draft_bytes or max_browser_bytes on its own
    STORE_FULL = "store full"       # no room without dropping another browser's drafts

    @property
    def kept(self) -> bool:
        return self is DraftOutcome.KEPT


@dataclass(frozen=True)
class Draft:
    browser: str
    scope: str              # the workspace file the draft belongs to
    dataset_id: int
    idx: int
    base_revision: int      # the example's revision the edit started from
    data: str               # Annotation.to_json() as JSON text
    saved_at: float         # seconds since the epoch (time.time())

    @property
    def size(self) -> int:
        """What the draft counts against the store's byte budget."""
        return len(self.data.encode("utf-8")) + len(self.scope.encode("utf-8")) + 128


class DraftStore:
    """The latest unsaved draft per (browser, scope, dataset, example), bounded; thread-safe."""

    def __init__(self, *, per_browser: int = 50, max_drafts: int = 5000,
                 max_bytes: int = 32 * 2**20, max_draft_bytes: int = 256 * 2**10,
                 max_browser_bytes: int = 2 * 2**20, max_scope_chars: int = 4096,
                 ttl_seconds: float = 7 * DAY, clock: Callable[[], float] = time.time) -> None:
        if min(per_browser, max_drafts, max_bytes, max_draft_bytes, max_browser_bytes,
               max_scope_chars) < 1 or ttl_seconds <= 0:
            raise ValueError("draft store limits must be positive")
        self.per_browser = per_browser
        self.max_browser_bytes = max_browser_bytes
        self.max_drafts = max_drafts
        self.max_bytes = max_bytes
        self.max_draft_bytes = max_draft_bytes
        self.max_scope_chars = max_scope_chars
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._items: OrderedDict[_Key, Draft] = OrderedDict()   # least recently written first
        self._counts: dict[str, int] = {}
        self._browser_bytes: dict[str, int] = {}
        self._bytes = 0

    # ------------------------------------------------------------------ keys
    def _key(self, browser: object, scope: object, dataset_id: object, idx: object) -> _Key:
        b = valid_browser_id(browser)
        if b is None:
            raise ValueError("a browser id is 32 lowercase hexadecimal digits")
        if not isinstance(scope, str) or len(scope) > self.max_scope_chars:
            raise ValueError("a draft scope is a string of at most "
                             f"{self.max_scope_chars} characters")
        return b, scope, _check_int("dataset_id", dataset_id), _check_int("idx", idx)

    # ------------------------------------------------------------------ inside the lock
    def _drop(self, key: _Key) -> Draft | None:
        d = self._items.pop(key, None)
        if d is not None:
            self._bytes -= d.size
            left = self._counts[d.browser] - 1
            if left:
                self._counts[d.browser] = left
                self._browser_bytes[d.browser] -= d.size
            else:
                del self._counts[d.browser], self._browser_bytes[d.browser]
        return d

    def _full(self, browser: str, size: int) -> bool:
        return (self._counts.get(browser, 0) >= self.per_browser
                or self._browser_bytes.get(browser, 0) + size > self.max_browser_bytes
                or len(self._items) >= self.max_drafts or self._bytes + size > self.max_bytes)

    def _expired(self, d: Draft, now: float) -> bool:
        return now - d.saved_at > self.ttl_seconds

    def _prune(self, now: float) -> int:
        """Drop expired drafts (the oldest written come first; a clock that went back may leave
        a few behind them, which :meth:`get` still refuses)."""
        n = 0
        while self._items:
            key, d = next(iter(self._items.items()))
            if not self._expired(d, now):
                break
            self._drop(key)
            n += 1
        return n

    # ------------------------------------------------------------------ API
    def put(self, browser: str, scope: str, dataset_id: int, idx: int, *, base_revision: int,
            data: str) -> DraftOutcome:
        """Keep ``data`` as the latest draft of the example for this browser, dropping the
        browser's own oldest drafts to stay within its bounds and the store's. When it is not
        kept (too large, or the store is full of other browsers' drafts) any older draft of the
        example is dropped too, so that it is never restored. ValueError for a malformed id,
        scope or number."""
        key = self._key(browser, scope, dataset_id, idx)
        _check_int("base_revision", base_revision)
        if not isinstance(data, str):
            raise ValueError("a draft is JSON text")
        now = self._clock()
        draft = Draft(key[0], key[1], key[2], key[3], base_revision, data, now)
        with self._lock:
            self._prune(now)
            self._drop(key)
            if (len(data.encode("utf-8")) > self.max_draft_bytes or draft.size > self.max_bytes
                    or draft.size > self.max_browser_bytes):
                return DraftOutcome.TOO_LARGE
            mine, my_bytes = self._counts.get(draft.browser, 0), self._browser_bytes.get(draft.browser, 0)
            if (len(self._items) - mine >= self.max_drafts
                    or self._bytes - my_bytes + draft.size > self.max_bytes):
                return DraftOutcome.STORE_FULL      # even without its own drafts: nothing dropped
            own = iter([k for k in self._items if k[0] == draft.browser])     # oldest first
            while self._full(draft.browser, draft.size):
                self._drop(next(own))
            self._items[key] = draft
            self._counts[draft.browser] = self._counts.get(draft.browser, 0) + 1
            self._browser_bytes[draft.browser] = self._browser_bytes.get(draft.browser, 0) + draft.size
            self._bytes += draft.size
        return DraftOutcome.KEPT

    def get(self, browser: str, scope: str, dataset_id: int, idx: int) -> Draft | None:
        """The browser's draft of the example, or None (none, expired, or a malformed id)."""
        try:
            key = self._key(browser, scope, dataset_id, idx)
        except ValueError:
            return None
        now = self._clock()
        with self._lock:
            self._prune(now)
            d = self._items.get(key)
            if d is not None and self._expired(d, now):
                self._drop(key)
                return None
            return d

    def clear(self, browser: str, scope: str, dataset_id: int, idx: int) -> bool:
        """Forget the browser's draft of the example (saved or discarded); True if there was one."""
        try:
            key = self._key(browser, scope, dataset_id, idx)
        except ValueError:
            return False
        with self._lock:
            return self._drop(key) is not None

    def drafts_of(self, browser: str, scope: str | None = None) -> list[Draft]:
        """The browser's live drafts (of one workspace when ``scope`` is given), oldest first."""
        if valid_browser_id(browser) is None:
            return []
        now = self._clock()
        with self._lock:
            self._prune(now)
            return [d for k, d in self._items.items()
                    if k[0] == browser and (scope is None or k[1] == scope) and not self._expired(d, now)]

    def prune(self) -> int:
        """Drop the expired drafts now; how many were dropped."""
        with self._lock:
            return self._prune(self._clock())

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return self._bytes


def saved_time(draft: Draft) -> str:
    """When the draft was written, in the server's local time (``2024-06-01 14:03:22``)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(draft.saved_at))
