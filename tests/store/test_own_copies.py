"""Own copies: in a blind pass each annotator's saves go to their own copy, which starts from the
example as ingested and conflicts only with itself; the gold changes only by a curator; agreement
sees the own copies."""
from __future__ import annotations

import pytest

from cblue_core.annotation import Annotation, EditConflict
from cblue_core.auth.roles import Role
from cblue_core.auth.user import User
from cblue_core.store.audit import AuditFilter
from cblue_core.store.ingest import ingest_file


@pytest.fixture
def team(memory_ws, cmeee_file):
    """A dataset, an annotator pair and a curator, each on their own handle."""
    ingest_file(memory_ws, cmeee_file)
    did = memory_ws.datasets.all()[0].dataset_id
    for name, role in (("ann", Role.ANNOTATOR), ("bob", Role.ANNOTATOR), ("cur", Role.CURATOR)):
        memory_ws.users.set_role(name, role)
    handles = {n: memory_ws.acting_as(User(n, "oidc")) for n in ("ann", "bob", "cur")}
    return memory_ws, did, handles


def drop_first(ann: Annotation) -> Annotation:
    return Annotation(ann.spans[1:])


def test_without_a_pass_everyone_edits_the_gold(team):
    ws, did, h = team
    layer = h["ann"].own.editing(did)
    assert not layer.own
    layer.save(0, drop_first(layer.current(0)[0]), reason="", base_revision=0)
    assert ws.annotations.current(did, 0)[1] == 1


def test_a_blind_save_goes_to_the_own_copy_and_leaves_the_gold_unchanged(team):
    ws, did, h = team
    original = ws.annotations.current(did, 0)
    h["cur"].blind.set_blind(did, True)
    layer = h["ann"].own.editing(did)
    assert layer.own
    ev = layer.save(0, drop_first(original[0]), reason="boundary", base_revision=0)
    assert (ev.author, ev.revision) == ("ann", 1)
    assert ws.annotations.current(did, 0) == original and ws.annotations.events(did) == []
    assert layer.current(0) == (drop_first(original[0]), 1)
    with pytest.raises(ValueError, match="blind pass"):       # the gold itself is refused too
        h["ann"].annotations.save(did, 0, drop_first(original[0]), base_revision=0)
    assert ws.annotations.events(did) == []


def test_the_own_copy_starts_from_the_original_even_after_another_annotators_save(team):
    ws, did, h = team
    original, _ = ws.annotations.current(did, 1)
    h["bob"].annotations.save(did, 1, drop_first(original), base_revision=0)   # before the pass: gold
    h["cur"].blind.set_blind(did, True)
    h["bob"].own.editing(did).save(1, Annotation(original.spans[:1]), reason="", base_revision=0)
    mine = h["ann"].own.editing(did)
    assert mine.current(1) == (original, 0)
    assert mine.events(1) == []            # no foreign history either


def test_curators_edit_the_gold_in_a_pass(team):
    ws, did, h = team
    h["cur"].blind.set_blind(did, True)
    layer = h["cur"].own.editing(did)
    assert not layer.own
    gold, _ = ws.annotations.current(did, 0)
    layer.save(0, drop_first(gold), reason="", base_revision=0)
    assert ws.annotations.current(did, 0) == (drop_first(gold), 1)


def test_by_author_and_authors_include_the_own_copies(team):
    ws, did, h = team
    h["cur"].blind.set_blind(did, True)
    gold0, _ = ws.annotations.current(did, 0)
    h["ann"].own.editing(did).save(0, drop_first(gold0), reason="", base_revision=0)
    h["bob"].own.editing(did).save(0, Annotation(gold0.spans[:1]), reason="", base_revision=0)
    assert ws.annotations.authors(did) == ["ann", "bob"]
    assert ws.annotations.by_author(did, "ann") == {0: drop_first(gold0)}
    assert ws.annotations.by_author(did, "bob") == {0: Annotation(gold0.spans[:1])}
    # the curator settles the gold with the existing adjudication (a gold write)
    h["cur"].annotations.adjudicate(did, 0, drop_first(gold0), between=("ann", "bob"), base_revision=0)
    assert ws.annotations.current(did, 0) == (drop_first(gold0), 1)


def test_revisions_count_per_author_and_conflict_only_within_one_copy(team):
    ws, did, h = team
    h["cur"].blind.set_blind(did, True)
    gold0, _ = ws.annotations.current(did, 0)
    ann, bob = h["ann"].own.editing(did), h["bob"].own.editing(did)
    ann.save(0, drop_first(gold0), reason="", base_revision=0)
    bob.save(0, drop_first(gold0), reason="", base_revision=0)     # bob's copy: no conflict with ann's
    with pytest.raises(EditConflict) as caught:                    # ann's other tab, still on revision 0
        ann.save(0, Annotation(gold0.spans[:1]), reason="", base_revision=0)
    assert caught.value.current_revision == 1 and [e.author for e in caught.value.theirs] == ["ann"]
    second = ann.save(0, Annotation(gold0.spans[:1]), reason="", base_revision=1)
    assert second.revision == 2
    undone = ann.revert(second.event_id, reason="")
    assert (undone.kind, undone.revision, ann.current(0)) == ("revert", 3, (drop_first(gold0), 3))
    with pytest.raises(ValueError, match="no event"):              # bob cannot revert ann's event
        h["bob"].own.revert(second.event_id)


def test_own_saves_are_audited(team):
    ws, did, h = team
    h["cur"].blind.set_blind(did, True)
    gold0, _ = ws.annotations.current(did, 0)
    h["ann"].own.editing(did).save(0, drop_first(gold0), reason="why", base_revision=0)
    [event] = ws.audit.events(AuditFilter(action="own.save"))
    assert (event.user, event.outcome, event.detail) == ("ann", "done", "why")
