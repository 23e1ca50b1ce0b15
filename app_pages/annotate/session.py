"""The Annotate page's session state: per example a *draft* (the annotation being edited and
the revision it was loaded at), edit conflicts, messages for the next run, and the drafts kept
across a page reload.

A draft is a dict: ``ann`` (being edited), ``loaded`` (the gold at ``base``, the revision the
edit started from), ``head`` (the example's current gold and revision), ``gen`` (changes when
the draft is reset, so that per-example widgets start again). A draft without changes follows
the store. "The gold" here is the layer the user edits (:func:`editing`): the shared gold, or
their own copy in a blind pass.

Unsaved edits survive a reload: the span editor reports an id of the browser (kept in its
localStorage), and the latest unsaved draft per (browser, workspace, dataset, example) is kept in
a bounded store in the server's memory (:mod:`cblue_core.annotation.drafts`); a new session that
reports the same id gets it back until it is saved or discarded.
"""
from __future__ import annotations

import json
from typing import Any

import streamlit as st

from app_pages.common import db_path, read_only, workspace
from app_pages.keys import Annotate as K
from cblue_core.annotation.changes import gold_at_revision, settled
from cblue_core.annotation.drafts import DraftStore, valid_browser_id
from cblue_core.annotation.model import Annotation, EditConflict
from cblue_core.annotation.provenance import Suggestion
from cblue_core.store.own_copies import EditLayer
from cblue_core.store.workspace import Workspace

Draft = dict[str, Any]


@st.cache_resource
def draft_store() -> DraftStore:
    """The process's unsaved drafts, per browser (bounded: see cblue_core.annotation.drafts)."""
    return DraftStore()


def page_ws() -> Workspace:
    """The workspace on this script run's cursor (see :func:`app_pages.common.workspace`)."""
    return workspace()


def doc_key(dataset_id: int, idx: int) -> str:
    return f"{dataset_id}:{idx}"


def parse_doc(doc: object) -> tuple[int, int] | None:
    try:
        a, b = str(doc).split(":")
        return int(a), int(b)
    except (TypeError, ValueError):
        return None


def flash(kind: str, message: str) -> None:
    """A message (``st.<kind>``) shown at the top of the next run."""
    st.session_state.setdefault(K.FLASH, []).append((kind, message))


def editor_notice(doc: str, message: str | None = None, is_error: bool = False) -> tuple[str, bool] | None:
    """The span editor's notice for an example: set it (``message``) or read it. The editor's
    own status line said "save requested" until something else happened; the page tells it how
    the save ended."""
    notices = st.session_state.setdefault(K.EDITOR_NOTICES, {})
    if message is not None:
        notices[doc] = (message, is_error)
    return notices.get(doc)


def take_flashes() -> list[tuple[str, str]]:
    return st.session_state.pop(K.FLASH, [])


def drafts() -> dict[str, Draft]:
    return st.session_state.setdefault(K.DRAFTS, {})


def conflicts() -> dict[str, EditConflict]:
    return st.session_state.setdefault(K.CONFLICTS, {})


def mentions() -> dict[str, list[dict]]:
    """CMeIE mentions marked in the editor, per example (kept in the session only)."""
    return st.session_state.setdefault(K.MENTIONS, {})


def new_gen() -> int:
    st.session_state[K.GEN] = st.session_state.get(K.GEN, 0) + 1
    return st.session_state[K.GEN]


def current_example() -> int:
    return int(st.session_state.get(K.EXAMPLE, 0))


def step_example(delta: int, records: int) -> None:
    st.session_state[K.EXAMPLE] = min(max(current_example() + delta, 0), max(records - 1, 0))


def goto(idx: int, tab: str = "Edit") -> None:
    st.session_state[K.EXAMPLE] = int(idx)
    st.session_state[K.TAB] = tab


def goto_next_run(idx: int, tab: str = "Edit") -> None:
    """Open ``idx`` on the next run (a widget keyed on the example is already drawn in this one)."""
    st.session_state[K.GOTO] = (idx, tab)


def apply_goto() -> None:
    if K.GOTO in st.session_state:
        goto(*st.session_state.pop(K.GOTO))


# Widgets of the Edit tab whose value outlives the tab: the example shown, the suggestion source.
KEPT_WHILE_HIDDEN = (K.EXAMPLE, K.SUGGEST_SOURCE)


def keep_edit_widgets() -> None:
    """Keep the Edit tab's widgets while another tab is open: Streamlit drops the state of a
    widget that a run does not draw, and the Edit tab would come back on example 0."""
    for key in KEPT_WHILE_HIDDEN:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


# ---------------------------------------------------------------------- the draft of an example

def editing(ws: Workspace, dataset_id: int) -> EditLayer:
    """What the user edits on the dataset: their own copy in a blind pass, else the gold. Every
    read and write of the Edit tab goes through it."""
    return ws.own.editing(dataset_id)


def load_draft(ws: Workspace, dataset_id: int, idx: int, *, force: bool = False) -> Draft:
    """This session's draft of one example (made from the store when new, forced or clean and
    behind the store)."""
    doc = doc_key(dataset_id, idx)
    current, rev = editing(ws, dataset_id).current(idx)
    d = drafts().get(doc)
    clean = d is not None and d["ann"] == d["loaded"]
    if d is None or force or (clean and (d["base"] != rev or d["loaded"] != current)):
        d = {"base": rev, "loaded": current, "ann": current, "gen": new_gen()}
        drafts()[doc] = d
        mentions().pop(doc, None)
    d["head"] = (current, rev)
    return d


def settle(d: Draft) -> None:
    """The draft's items back in their loaded order: an undone edit is no change."""
    d["ann"] = settled(d["ann"], d["loaded"])


def is_dirty(d: Draft) -> bool:
    return d["ann"] != d["loaded"]


def dirty_elsewhere(dataset_id: int, idx: int) -> list[int]:
    """Other examples of the dataset with unsaved edits in this session."""
    own = doc_key(dataset_id, idx)
    return sorted(int(k.split(":")[1]) for k, v in drafts().items()
                  if k.startswith(f"{dataset_id}:") and k != own and is_dirty(v))


# ---------------------------------------------------------------------- drafts across reloads

def browser_id() -> str | None:
    """This browser's id, as its span editor reported it (None until it did)."""
    return valid_browser_id(st.session_state.get(K.BROWSER))


def note_browser(value: dict) -> None:
    b = value.get("browser")
    if b is not None and b != st.session_state.get(K.BROWSER):
        st.session_state[K.BROWSER] = b
        st.session_state[K.DRAFT_CHECKED] = set()       # look for this browser's drafts afresh


def draft_json(d: Draft) -> dict[str, Any]:
    """What the draft store keeps of a draft: the annotation (``Annotation.to_json()``) and the
    suggestions accepted in it, per source (the server wrote them: they hold the offered scores)."""
    accepted = {k: [s.to_json() for s in v] for k, v in (d.get("accepted") or {}).items()}
    return {**d["ann"].to_json(), **({"accepted": accepted} if accepted else {})}


def sync_draft(dataset_id: int, idx: int, d: Draft) -> None:
    """Keep the session's draft of the example for a reload of this browser: stored while it
    has changes, dropped when it has none (after this session stored or restored it)."""
    browser = browser_id()
    if browser is None or read_only():
        return
    store = draft_store()
    if is_dirty(d):
        d["kept"] = store.put(browser, db_path(), dataset_id, idx, base_revision=d["base"],
                              data=json.dumps(draft_json(d), ensure_ascii=False))
        d["synced"] = True
    else:
        stored = d.pop("synced", False)
        if d.pop("restored", None) is not None or stored:
            store.clear(browser, db_path(), dataset_id, idx)


def forget_draft(dataset_id: int, idx: int) -> None:
    """The edit of the example was saved or discarded: no draft to restore any more."""
    browser = browser_id()
    if browser is not None:
        draft_store().clear(browser, db_path(), dataset_id, idx)
    d = drafts().get(doc_key(dataset_id, idx))
    if d is not None:
        d.pop("synced", None)
        d.pop("restored", None)


def restore_draft(ws: Workspace, dataset_id: int, idx: int, d: Draft) -> None:
    """Once per example and browser in a session: the unsaved draft this browser left (before a
    reload) becomes the session's draft, unless the session has changes of its own."""
    from cblue_core.annotation.drafts import saved_time

    browser = browser_id()
    if browser is None or read_only():
        return
    doc = doc_key(dataset_id, idx)
    checked = st.session_state.setdefault(K.DRAFT_CHECKED, set())
    if doc in checked:
        return
    checked.add(doc)
    if is_dirty(d):
        return
    store = draft_store()
    saved = store.get(browser, db_path(), dataset_id, idx)
    if saved is None:
        return
    try:
        kept = json.loads(saved.data)
        ann = Annotation.from_json(kept)
        accepted = {k: [Suggestion.from_json(s) for s in v] for k, v in (kept.get("accepted") or {}).items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        ann = None
    head, head_rev = d["head"]
    loaded = None
    if ann is not None:
        events = [] if saved.base_revision == head_rev else editing(ws, dataset_id).events(idx)
        loaded = gold_at_revision(head, head_rev, events, saved.base_revision)
    if ann is None or loaded is None or ann == loaded:   # unreadable, from another history, or no change
        store.clear(browser, db_path(), dataset_id, idx)
        return
    d.update(base=saved.base_revision, loaded=loaded, ann=ann, accepted=accepted, gen=new_gen(),
             restored=saved_time(saved), synced=True)
    mentions().pop(doc, None)
