from __future__ import annotations

import pytest

from cblue_core.auth.roles import (
    ACTIONS,
    SYSTEM,
    PermissionDenied,
    Role,
    allows,
    configured_admins,
    effective_role,
    required,
)
from cblue_core.auth.user import User


def test_roles_are_ordered_and_parsed():
    assert Role.VIEWER < Role.ANNOTATOR < Role.CURATOR < Role.ADMIN
    assert Role.parse(" Curator ") is Role.CURATOR
    with pytest.raises(ValueError, match="unknown role 'boss'.*viewer, annotator, curator, admin"):
        Role.parse("boss")


def test_each_role_allows_what_the_issue_gives_it():
    assert allows(Role.ANNOTATOR, "gold.save") and not allows(Role.VIEWER, "gold.save")
    assert allows(Role.CURATOR, "gold.adjudicate") and not allows(Role.ANNOTATOR, "gold.adjudicate")
    for action in ("dataset.ingest", "run.create", "run.delete", "slice.save", "role.set"):
        assert not allows(Role.CURATOR, action) and allows(Role.ADMIN, action)
    assert allows(Role.VIEWER, "derived.put")    # a system write
    assert required("responses.put") is SYSTEM
    with pytest.raises(KeyError, match="undeclared action 'gold.burn'"):
        required("gold.burn")
    assert all(isinstance(v, Role) or v is SYSTEM for v in ACTIONS.values())


def test_the_effective_role():
    assert effective_role(User("me", "local"), None) is Role.ADMIN      # one user, no configuration
    assert effective_role(User("me", "cli"), Role.VIEWER) is Role.ADMIN   # the file's owner
    assert effective_role(User("x", "proxy"), None) is Role.VIEWER       # signed in, no role
    assert effective_role(User("x", "proxy"), Role.CURATOR) is Role.CURATOR
    assert effective_role(User("x", "oidc"), Role.VIEWER, frozenset({"x"})) is Role.ADMIN


def test_configured_admins():
    assert configured_admins({"CBLUE_STUDIO_ADMINS": " a, ,b "}) == {"a", "b"}
    assert configured_admins({}) == frozenset()


def test_a_refusal_message_names_who_what_and_the_need():
    assert str(PermissionDenied(User("v", "proxy"), Role.VIEWER, "gold.save", Role.ANNOTATOR)) == (
        "gold.save refused for v (viewer): it needs the annotator role")
    assert "no signed-in user" in str(PermissionDenied(None, None, "run.delete", Role.ADMIN))
