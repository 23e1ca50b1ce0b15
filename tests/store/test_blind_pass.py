"""The blind pass switch: only a curator starts or ends a dataset's pass, and it is audited."""
from __future__ import annotations

import pytest

from cblue_core.auth.roles import PermissionDenied
from cblue_core.store.audit import AuditFilter
from tests.store import test_own_copies

team = test_own_copies.team      # the fixture: a dataset, two annotators and a curator


def test_the_switch_needs_a_curator_and_is_audited(team):
    ws, did, h = team
    with pytest.raises(PermissionDenied, match="gold.blind_mode"):
        h["ann"].blind.set_blind(did, True)
    assert ws.blind.setting(did) is None
    h["cur"].blind.set_blind(did, True)
    assert ws.blind.setting(did).set_by == "cur"
    h["cur"].blind.set_blind(did, False)
    assert ws.blind.setting(did) is None
    trail = sorted((e.user, e.outcome, e.detail) for e in ws.audit.events(AuditFilter(action="gold.blind_mode")))
    assert [t[:2] for t in trail] == [("ann", "refused"), ("cur", "done"), ("cur", "done")]
    assert sorted(t[2] for t in trail[1:]) == ["off", "on"]
    with pytest.raises(ValueError):
        h["cur"].blind.set_blind(did + 99, True)
