from __future__ import annotations

import pytest

from cblue_core.auth.roles import PermissionDenied, Role
from cblue_core.auth.user import User


def test_roles_are_stored_changed_and_removed(memory_ws):
    me = memory_ws.actor.name
    assert memory_ws.users.all() == [] and memory_ws.users.role_of("ann") is None
    memory_ws.users.set_role(" ann ", Role.ANNOTATOR)
    memory_ws.users.set_role("cu", Role.CURATOR)
    memory_ws.users.set_role("ann", Role.CURATOR)
    assert [(u.name, u.role, u.granted_by) for u in memory_ws.users.all()] == [
        ("ann", Role.CURATOR, me), ("cu", Role.CURATOR, me)]
    assert memory_ws.users.remove("ann") and not memory_ws.users.remove("ann")
    assert memory_ws.acting_as(User("ann", "proxy")).role() is Role.VIEWER
    assert [u.to_json() for u in memory_ws.users.all()] == [{"name": "cu", "role": "curator"}]


def test_a_bad_name_or_role_changes_nothing(memory_ws):
    with pytest.raises(ValueError, match="a user needs a name"):
        memory_ws.users.set_role("  ", Role.ADMIN)
    with pytest.raises(ValueError, match="not a role"):
        memory_ws.users.set_role("x", "admin")
    assert memory_ws.users.all() == []


def test_only_an_admin_gives_roles(memory_ws):
    memory_ws.users.set_role("cu", Role.CURATOR)
    curator = memory_ws.acting_as(User("cu", "proxy"))
    with pytest.raises(PermissionDenied, match="role.set refused for cu"):
        curator.users.set_role("cu", Role.ADMIN)
    assert memory_ws.users.role_of("cu") is Role.CURATOR
