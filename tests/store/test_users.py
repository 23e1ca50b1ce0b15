from __future__ import annotations

import re
import unicodedata

import pytest

from cblue_core.auth.identity import IdentityConfig, proxy_user
from cblue_core.auth.names import MAX_NAME_LENGTH, NameRefused
from cblue_core.auth.roles import PermissionDenied, Role
from cblue_core.auth.user import User

PROXY = IdentityConfig("proxy", "X-Remote-User", "a-secret-of-16-characters-or-more")


def test_roles_are_stored_changed_and_removed(memory_ws):
    me = memory_ws.actor.name
    assert memory_ws.users.all() == [] and memory_ws.users.role_of("ann") is None
    memory_ws.users.set_role("ann", Role.ANNOTATOR)
    memory_ws.users.set_role("cu", Role.CURATOR)
    memory_ws.users.set_role("ann", Role.CURATOR)
    assert [(u.name, u.role, u.granted_by) for u in memory_ws.users.all()] == [
        ("ann", Role.CURATOR, me), ("cu", Role.CURATOR, me)]
    assert memory_ws.users.remove("ann") and not memory_ws.users.remove("ann")
    assert memory_ws.acting_as(User("ann", "proxy")).role() is Role.VIEWER
    assert [u.to_json() for u in memory_ws.users.all()] == [{"name": "cu", "role": "curator"}]


def test_a_bad_name_or_role_changes_nothing(memory_ws):
    with pytest.raises(ValueError, match="a user name is empty"):
        memory_ws.users.set_role("  ", Role.ADMIN)
    with pytest.raises(ValueError, match="not a role"):
        memory_ws.users.set_role("x", "admin")
    assert memory_ws.users.all() == []


@pytest.mark.parametrize(("name", "problem"), [
    (" ann ", "begins with a space"),       # not trimmed into "ann": refused, saying so
    ("ann\n2026-12-04 09:00:00 root done role.set user ann", "contains U+000A"),
    ("ann\u202e", "contains U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("ann\u2028x", "contains U+2028 LINE SEPARATOR"),
    ("x" * 257, "is longer than 256 characters"),
])
def test_names_the_sign_in_would_refuse_are_refused(memory_ws, name, problem):
    with pytest.raises(NameRefused, match=re.escape(f"a user name {problem}")):
        memory_ws.users.set_role(name, Role.ANNOTATOR)
    assert memory_ws.users.all() == []


def test_any_name_the_proxy_accepts_can_be_given_a_role(memory_ws):
    """The proxy and the store share one length limit: a 256-character name gets its role."""
    name = "李" * MAX_NAME_LENGTH
    user = proxy_user({"X-Remote-User": name.encode().decode("latin-1"), "X-Proxy-Secret": PROXY.proxy_secret},
                      PROXY)
    assert user == User(name, "proxy")
    memory_ws.users.set_role(name, Role.ANNOTATOR)
    assert memory_ws.acting_as(user).role() is Role.ANNOTATOR


def test_a_role_granted_to_a_composed_name_applies_to_the_decomposed_one(memory_ws):
    memory_ws.users.set_role("josé", Role.CURATOR)
    decomposed = unicodedata.normalize("NFD", "josé")
    assert memory_ws.users.role_of(decomposed) is Role.CURATOR
    assert [u.name for u in memory_ws.users.all()] == ["josé"]
    assert memory_ws.users.remove(decomposed)


def test_only_an_admin_gives_roles(memory_ws):
    memory_ws.users.set_role("cu", Role.CURATOR)
    curator = memory_ws.acting_as(User("cu", "proxy"))
    with pytest.raises(PermissionDenied, match="role.set refused for cu"):
        curator.users.set_role("cu", Role.ADMIN)
    assert memory_ws.users.role_of("cu") is Role.CURATOR
