"""A page file runs its page inside the app's navigation, or hands over to the app: decided per
script run (thread), never by what another visitor's run is doing."""
from __future__ import annotations

import threading

from app_pages import navigation


def _calls(monkeypatch) -> list[str]:
    calls: list[str] = []

    def fake_main() -> None:
        calls.append("main")
        navigation._running.inside = True
        try:
            navigation.page_or_app(lambda: calls.append("render"))
        finally:
            navigation._running.inside = False

    monkeypatch.setattr(navigation, "main", fake_main)
    return calls


def test_a_page_file_run_on_its_own_hands_over_to_the_app(monkeypatch):
    calls = _calls(monkeypatch)
    navigation.page_or_app(lambda: calls.append("render"))
    assert calls == ["main", "render"]


def test_another_sessions_run_in_the_app_does_not_make_a_first_deep_link_skip_it(monkeypatch):
    calls = _calls(monkeypatch)
    inside, release = threading.Event(), threading.Event()

    def other_session() -> None:            # a visitor whose run is inside the app right now
        navigation._running.inside = True
        inside.set()
        release.wait(10)
        navigation._running.inside = False

    t = threading.Thread(target=other_session)
    t.start()
    try:
        assert inside.wait(10)
        navigation.page_or_app(lambda: calls.append("render"))
    finally:
        release.set()
        t.join()
    assert calls == ["main", "render"]
