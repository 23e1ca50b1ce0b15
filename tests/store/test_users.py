from __future__ import annotations

import pytest

from cblue_core.auth.roles import PermissionDenied, Role
from cblue_core.auth.user import User
from cblue_core.store.workspace import connect


@pytest.fixture
def ws():
    w = connect(":memory:")
    yield w
    w.close()


def test_roles_are_stored_changed_and_removed(ws):
    me = ws.actor.name
    assert ws.users.all() == [] and ws.users.role_of("ann") is None
    ws.users.set_role(" ann ", Role.ANNOTATOR)
    ws.users.set_role("cu", Role.CURATOR)
    ws.users.set_role("ann", Role.CURATOR)
    assert [(u.name, u.role, u.granted_by) for u in ws.users.all()] == [
        ("ann", Role.CURATOR, me), ("cu", Role.CURATOR, me)]
    assert ws.users.remove("ann") and not ws.users.remove("ann")
    assert ws.acting_as(User("ann", "proxy")).role() is Role.VIEWER
    assert [u.to_json() for u in ws.users.all()] == [{"name": "cu", "role": "curator"}]


def test_a_bad_name_or_role_changes_nothing(ws):
    with pytest.raises(ValueError, match="a user needs a name"):
        ws.users.set_role("  ", Role.ADMIN)
    with pytest.raises(ValueError, match="not a role"):
        ws.users.set_role("x", "admin")
    assert ws.users.all() == []


def test_only_an_admin_gives_roles(ws):
    ws.users.set_role("cu", Role.CURATOR)
    curator = ws.acting_as(User("cu", "proxy"))
    with pytest.raises(PermissionDenied, match="role.set refused for cu"):
        curator.users.set_role("cu", Role.ADMIN)
    assert ws.users.role_of("cu") is Role.CURATOR
