"""Roles in the app (issue 22): the Admin page, a refused save, an annotator's name on their
save, and the blind first pass. The signed-in user is simulated by replacing
app_pages.identity.current_user (how the user is known is the identity module's business)."""
from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

import app_pages.identity
from app_pages.keys import Sidebar
from cblue_core.auth import PermissionDenied, Role, User, local_user
from cblue_core.store.audit import AuditFilter
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from cblue_core.tasks import get_task
from tests.app_pages.conftest import APP
from tests.conftest import SAMPLE_DATA


@pytest.fixture(scope="module")
def roles_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("roles") / "roles.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    ws.users.set_role("ada", Role.ADMIN)
    ws.users.set_role("ann", Role.ANNOTATOR)
    ws.users.set_role("bea", Role.ANNOTATOR)
    ws.close()
    return db


@pytest.fixture
def open_as(roles_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(roles_db))
    monkeypatch.delenv("CBLUE_STUDIO_READONLY", raising=False)
    monkeypatch.delenv("CBLUE_STUDIO_ADMINS", raising=False)

    def open_as(name: str, page: str, query: dict | None = None) -> AppTest:
        monkeypatch.setattr(app_pages.identity, "current_user", lambda: User(name, "proxy"))
        at = AppTest.from_file(APP, default_timeout=60)
        at.run()
        at.switch_page(page)
        for k, v in (query or {}).items():
            at.query_params[k] = str(v)
        return ok(at.run())
    return open_as


def owner(db):
    """The page's own connection to the file, acting as the file's owner."""
    from app_pages.common import shared_workspace

    return shared_workspace(str(db)).cursor(actor=local_user("cli"))


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text).replace("\u200b", "")


def button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def test_an_admin_gives_roles_and_reads_the_audit_trail(open_as, roles_db):
    at = open_as("ada", "pages/admin.py")
    assert [t.label for t in at.tabs] == ["Users", "Audit"]
    assert not at.text_input(key=Sidebar.DB_PATH).disabled        # an admin may switch workspace
    at.text_input(key="adm_user_name").input("cat")
    at.selectbox(key="adm_user_role").set_value("curator")
    ok(button(at, "adm_set_role").click().run())
    assert any("cat is now curator" in plain(s.value) for s in at.success)
    assert owner(roles_db).users.role_of("cat") is Role.CURATOR
    trail = at.dataframe[-1].value
    assert trail.iloc[0]["action"] == "role.set" and trail.iloc[0]["user"] == "ada"
    at.selectbox(key="adm_audit_user").set_value("ada")
    at.selectbox(key="adm_audit_outcome").set_value("done")
    trail = ok(at.run()).dataframe[-1].value
    assert set(trail["user"]) == {"ada"} and list(trail["target"]) == ["user cat"]


def test_a_viewer_sees_no_admin_controls(open_as):
    at = open_as("vic", "pages/admin.py")
    assert not at.tabs and not at.button and not at.dataframe
    assert any("Only admins" in i.value for i in at.info)
    assert at.text_input(key=Sidebar.DB_PATH).disabled            # and may not switch workspace


def _label_doc(at: AppTest, ws, task: str, idx: int) -> tuple[int, str, str, str]:
    did = ws.datasets.find(task, "dev").dataset_id
    doc = f"{did}:{idx}"
    key = f"ann_label::{doc}::{at.session_state['ann_drafts'][doc]['gen']}"
    old = at.selectbox(key=key).value
    return did, doc, key, next(c for c in get_task(task).label_codes if c != old)


def test_a_refused_save_says_so_and_is_audited_and_an_annotators_save_carries_their_name(open_as, roles_db):
    ws = owner(roles_db)
    at = open_as("ann", "pages/annotate.py", {"task": "KUAKE-QQR", "split": "dev", "example": 2})
    did, _doc, key, new = _label_doc(at, ws, "KUAKE-QQR", 2)
    before = ws.annotations.current(did, 2)
    ok(at.selectbox(key=key).select(new).run())
    ws.users.set_role("ann", Role.VIEWER)       # demoted while the page shows an enabled Save
    try:
        ok(button(at, "ann_save").click().run())
    finally:
        ws.users.set_role("ann", Role.ANNOTATOR)
    assert any("gold.save refused for ann (viewer): it needs the annotator role" in plain(e.value)
               for e in at.error), [e.value for e in at.error]
    assert ws.annotations.current(did, 2) == before
    [refused] = ws.audit.events(AuditFilter(user="ann", outcome="refused"))
    assert (refused.action, refused.target) == ("gold.save", f"dataset {did} example 2")

    ok(at.run())                                  # an annotator again: the draft is still there,
    ok(button(at, "ann_save").click().run())      # and saved under their name
    [event] = ws.annotations.events(did, 2)
    assert event.author == "ann" and event.after.label == new
    assert ws.audit.events(AuditFilter(user="ann", action="gold.save", outcome="done"))[0].target == (
        f"dataset {did} example 2")


def test_a_viewer_gets_a_read_only_editor(open_as):
    at = open_as("vic", "pages/annotate.py", {"task": "KUAKE-QQR", "split": "dev", "example": 1})
    assert any("annotator role" in plain(i.value) for i in at.info)
    assert button(at, "ann_save").disabled


def test_the_blind_first_pass(open_as, roles_db):
    ws = owner(roles_db)
    did = ws.datasets.find("CHIP-STS", "dev").dataset_id
    task = get_task("CHIP-STS")
    ws.users.set_role("dee", Role.ANNOTATOR)
    for who, idx in (("bea", 0), ("bea", 1), ("dee", 0)):
        current, rev = ws.annotations.current(did, idx)
        other = next(c for c in task.label_codes if c != current.label)
        ws.annotations.save(did, idx, current.__class__(label=other), author=who, base_revision=rev)

    def agreement(name: str) -> AppTest:
        at = open_as(name, "pages/annotate.py", {"task": "CHIP-STS", "split": "dev", "example": 0})
        at.session_state["ann_tab"] = "Agreement"
        return ok(at.run())

    at = agreement("ann")       # has saved nothing: sees nothing of bea's
    assert any("Blind first pass" in i.value for i in at.info) and not at.metric
    current, rev = ws.annotations.current(did, 1)
    ws.annotations.save(did, 1, current.__class__(label=next(c for c in task.label_codes if c != current.label)),
                        author="ann", base_revision=rev)
    at = agreement("ann")       # saved example 1: compared with bea there only
    assert at.selectbox(key="ann_ag_a").options == ["ann"]
    assert any("1 examples the others saved stay hidden" in plain(c.value) for c in at.caption)
    assert at.selectbox(key="ann_ag_b").value == "bea"
    assert not [b for b in at.button if b.key == "ann_adj_save"]   # a curator adjudicates
    ws.users.set_role("cur", Role.CURATOR)
    at = agreement("cur")       # a curator sees everyone's work
    assert set(at.selectbox(key="ann_ag_a").options) == {"ann", "bea", "dee"}
    assert not any("Blind first pass" in c.value for c in at.caption)


def test_the_apps_shared_connection_acts_for_nobody(roles_db, monkeypatch):
    """Only a session's cursor, bound to its signed-in user, can write; the process's shared
    handle (what cached readers use) cannot."""
    from app_pages.common import shared_workspace

    monkeypatch.delenv("CBLUE_STUDIO_READONLY", raising=False)
    shared = shared_workspace(str(roles_db))
    assert shared.actor is None and shared.cursor().actor is None
    with pytest.raises(PermissionDenied, match="no signed-in user"):
        shared.cursor().slices.save("x", "idx > 0")
