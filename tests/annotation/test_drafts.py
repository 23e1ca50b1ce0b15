"""The per-browser store of unsaved drafts: ids validated, every bound held, expiry, clearing."""
from __future__ import annotations

import threading

import pytest

from cblue_core.annotation.drafts import DAY, DraftOutcome, DraftStore, saved_time, valid_browser_id

A = "a" * 32
B = "b" * 32
WS = "/srv/workspace.duckdb"


class Clock:
    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def browser(n: int) -> str:
    return f"{n:032x}"


def test_browser_ids_are_32_lowercase_hex_digits():
    assert valid_browser_id("0123456789abcdef" * 2) == "0123456789abcdef" * 2
    for bad in ("0123456789ABCDEF" * 2, "a" * 31, "a" * 33, "a" * 31 + "g", "../../etc/passwd", "",
                "a" * 32 + "\n", " " + "a" * 31, None, 1, b"a" * 32, ["a" * 32]):
        assert valid_browser_id(bad) is None, bad


def test_put_get_clear_and_keys():
    clock = Clock()
    s = DraftStore(clock=clock)
    assert s.get(A, WS, 1, 2) is None
    assert s.put(A, WS, 1, 2, base_revision=3, data='{"spans": []}').kept
    d = s.get(A, WS, 1, 2)
    assert d is not None and (d.browser, d.scope, d.dataset_id, d.idx, d.base_revision, d.data, d.saved_at) == (
        A, WS, 1, 2, 3, '{"spans": []}', clock.t)
    assert saved_time(d).count(":") == 2
    # another browser, workspace, dataset or example sees nothing
    assert s.get(B, WS, 1, 2) is None and s.get(A, "/other.duckdb", 1, 2) is None
    assert s.get(A, WS, 2, 2) is None and s.get(A, WS, 1, 3) is None
    # the latest draft replaces the earlier one
    clock.t += 5
    assert s.put(A, WS, 1, 2, base_revision=4, data='{"label": "x"}').kept
    d = s.get(A, WS, 1, 2)
    assert d is not None and (d.base_revision, d.data, d.saved_at) == (4, '{"label": "x"}', clock.t)
    assert len(s) == 1
    assert s.clear(A, WS, 1, 2) and not s.clear(A, WS, 1, 2)
    assert s.get(A, WS, 1, 2) is None and len(s) == 0 and s.total_bytes == 0


def test_malformed_input_is_refused():
    s = DraftStore()
    for bad_browser in ("A" * 32, "x", None, "../" * 11):
        with pytest.raises(ValueError):
            s.put(bad_browser, WS, 1, 1, base_revision=0, data="{}")
        assert s.get(bad_browser, WS, 1, 1) is None and not s.clear(bad_browser, WS, 1, 1)
        assert s.drafts_of(bad_browser) == []
    for kw in ({"dataset_id": -1}, {"idx": True}, {"idx": 1.5}, {"base_revision": -2}):
        args = {"dataset_id": 1, "idx": 1, "base_revision": 0} | kw
        with pytest.raises(ValueError):
            s.put(A, WS, args["dataset_id"], args["idx"], base_revision=args["base_revision"], data="{}")
    with pytest.raises(ValueError):
        s.put(A, WS, 1, 1, base_revision=0, data=b"{}")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        s.put(A, "x" * 5000, 1, 1, base_revision=0, data="{}")
    assert len(s) == 0


def test_a_draft_larger_than_the_limit_is_not_kept_and_drops_the_older_one():
    s = DraftStore(max_draft_bytes=100)
    assert s.put(A, WS, 1, 1, base_revision=0, data="x" * 100).kept
    assert not s.put(A, WS, 1, 1, base_revision=0, data="x" * 101).kept
    assert s.get(A, WS, 1, 1) is None           # the older draft is never restored over a newer edit
    assert not s.put(A, WS, 1, 1, base_revision=0, data="字" * 34).kept   # bytes, not characters
    assert len(s) == 0 and s.total_bytes == 0


def test_at_most_n_drafts_per_browser_oldest_dropped_first():
    clock = Clock()
    s = DraftStore(per_browser=3, clock=clock)
    for i in range(5):
        clock.t += 1
        assert s.put(A, WS, 1, i, base_revision=0, data="{}").kept
    s.put(B, WS, 1, 0, base_revision=0, data="{}")
    assert [d.idx for d in s.drafts_of(A)] == [2, 3, 4]
    assert [d.idx for d in s.drafts_of(B)] == [0]
    # writing an existing example again makes it the newest
    clock.t += 1
    s.put(A, WS, 1, 2, base_revision=1, data="{}")
    clock.t += 1
    s.put(A, WS, 1, 9, base_revision=0, data="{}")
    assert [d.idx for d in s.drafts_of(A)] == [4, 2, 9]
    assert len(s) == 4


def test_the_whole_store_is_bounded_whatever_ids_a_visitor_makes_up():
    s = DraftStore(max_drafts=100, max_bytes=50_000, max_draft_bytes=1_000)
    for n in range(1_000):                       # a visitor inventing a new browser id per request
        s.put(browser(n), WS, 1, 0, base_revision=0, data="y" * 1_000)
        assert len(s) <= 100 and s.total_bytes <= 50_000
    assert s.total_bytes <= 50_000
    # the first ones stay: a full store refuses rather than evicting other browsers' drafts
    assert s.get(browser(0), WS, 1, 0) is not None and s.get(browser(999), WS, 1, 0) is None
    assert len(s) == 50_000 // (1_000 + len(WS) + 128)
    assert all(len(s.drafts_of(browser(n))) <= 1 for n in range(1_000))


def test_forged_ids_filling_the_store_never_evict_another_visitors_draft():
    s = DraftStore(per_browser=50, max_drafts=5_000)
    assert s.put(A, WS, 1, 7, base_revision=0, data='{"spans": [[0, 2, "dis"]]}') is DraftOutcome.KEPT
    outcomes = {s.put(browser(n), WS, 1, i, base_revision=0, data="{}")
                for n in range(100) for i in range(50)}
    assert outcomes == {DraftOutcome.KEPT} and len(s) == 5_000
    assert s.get(A, WS, 1, 7) is not None            # the visitor's unsaved draft is still there
    assert len(s.drafts_of(browser(99))) == 49       # the last forged id made room from its own
    # a browser with drafts of its own makes room from them, the oldest first
    assert s.put(browser(0), WS, 1, 99, base_revision=0, data="{}") is DraftOutcome.KEPT
    assert s.get(browser(0), WS, 1, 0) is None and s.get(A, WS, 1, 7) is not None
    # a new browser is refused, and nothing is dropped for it
    assert s.put(B, WS, 1, 1, base_revision=0, data="{}") is DraftOutcome.STORE_FULL
    assert len(s) == 5_000 and s.drafts_of(B) == []


def test_a_browser_is_bounded_in_bytes_by_dropping_its_own_oldest():
    s = DraftStore(max_draft_bytes=1_000, max_browser_bytes=3 * (1_000 + len(WS) + 128))
    s.put(B, WS, 1, 0, base_revision=0, data="b" * 1_000)
    for i in range(5):
        assert s.put(A, WS, 1, i, base_revision=0, data="a" * 1_000) is DraftOutcome.KEPT
    assert [d.idx for d in s.drafts_of(A)] == [2, 3, 4] and len(s.drafts_of(B)) == 1
    assert DraftStore(max_browser_bytes=500).put(A, WS, 1, 0, base_revision=0, data="a" * 600) \
        is DraftOutcome.TOO_LARGE


def test_drafts_expire():
    clock = Clock()
    s = DraftStore(ttl_seconds=7 * DAY, clock=clock)
    s.put(A, WS, 1, 1, base_revision=0, data="{}")
    clock.t += DAY
    s.put(A, WS, 1, 2, base_revision=0, data="{}")
    clock.t += 6 * DAY                            # the first is exactly 7 days old: still there
    assert s.get(A, WS, 1, 1) is not None
    clock.t += 1
    assert s.get(A, WS, 1, 1) is None and s.get(A, WS, 1, 2) is not None
    assert [d.idx for d in s.drafts_of(A)] == [2]
    clock.t += DAY
    assert s.prune() == 1 and len(s) == 0 and s.total_bytes == 0
    # a put prunes too
    s.put(A, WS, 1, 3, base_revision=0, data="{}")
    clock.t += 8 * DAY
    s.put(B, WS, 1, 3, base_revision=0, data="{}")
    assert len(s) == 1 and s.drafts_of(A) == []


def test_limits_must_be_positive():
    for kw in ({"per_browser": 0}, {"max_drafts": 0}, {"max_bytes": 0}, {"max_draft_bytes": 0},
               {"max_browser_bytes": 0}, {"ttl_seconds": 0}):
        with pytest.raises(ValueError):
            DraftStore(**kw)


def test_concurrent_writers_keep_the_bounds():
    s = DraftStore(per_browser=5, max_drafts=40)

    def work(t: int) -> None:
        for i in range(300):
            s.put(browser(t * 1000 + i % 20), WS, 1, i % 7, base_revision=0, data="{}")
            s.get(browser(t * 1000 + i % 20), WS, 1, i % 7)
            if i % 5 == 0:
                s.clear(browser(t * 1000 + i % 20), WS, 1, i % 7)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(s) <= 40
    assert s.total_bytes == sum(d.size for n in range(8) for i in range(20)
                                for d in s.drafts_of(browser(n * 1000 + i)))
