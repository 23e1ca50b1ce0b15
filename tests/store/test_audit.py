from __future__ import annotations

from pathlib import Path

import pytest

from cblue_core.auth.roles import PermissionDenied, Role
from cblue_core.auth.user import User
from cblue_core.store import audit
from cblue_core.store.audit import AuditFilter
from cblue_core.store.workspace import connect


@pytest.fixture
def ws():
    w = connect(":memory:", actor=User("boss", "cli"))
    w.users.set_role("ann", Role.ANNOTATOR)
    with pytest.raises(PermissionDenied):
        w.acting_as(User("ann", "proxy")).slices.save("s", "idx > 0")
    w.slices.save("s", "idx > 1")
    yield w
    w.close()


def test_events_newest_first_with_filters(ws):
    events = ws.audit.events()
    assert [(e.user, e.action, e.outcome) for e in events] == [
        ("boss", "slice.save", "done"), ("ann", "slice.save", "refused"), ("boss", "role.set", "done")]
    assert events[0].detail == "idx > 1" and events[0].target == "slice s"
    assert [e.action for e in ws.audit.events(AuditFilter(user="ann"))] == ["slice.save"]
    assert [e.user for e in ws.audit.events(AuditFilter(action="slice", outcome="done"))] == ["boss"]
    assert [e.action for e in ws.audit.events(AuditFilter(action="role.set"))] == ["role.set"]
    assert len(ws.audit.events(AuditFilter(limit=1))) == 1
    assert ws.audit.events(AuditFilter(since="2999-01-01")) == []
    assert len(ws.audit.events(AuditFilter(until="2999-01-01"))) == 3
    assert ws.audit.users() == ["ann", "boss"]
    assert ws.audit.actions() == ["role.set", "slice.save"]
    assert set(events[0].to_json()) >= {"at", "user", "action", "target", "detail"}


def test_a_bad_filter_is_refused(ws):
    with pytest.raises(ValueError, match="unknown outcome"):
        ws.audit.events(AuditFilter(outcome="maybe"))


def test_the_trail_is_append_only():
    """Nothing in the store module updates or deletes an event."""
    source = Path(audit.__file__).read_text(encoding="utf-8")
    assert "UPDATE" not in source and "DELETE" not in source
    assert [n for n in vars(audit.AuditStore) if not n.startswith("_")] == ["READS", "events", "users", "actions"]
