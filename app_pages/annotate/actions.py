"""What the Annotate page does on a click or an editor action: save, discard, revert, undo,
keep mine / keep theirs after a conflict, move between examples. Callbacks run before the page
is drawn, so their outcome is a message for the run that follows (``session.flash``)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import streamlit as st

from app_pages.annotate import session as S
from app_pages.annotate import suggest
from app_pages.common import EXPECTED_FAILURES, md, page_failure, read_only, user_name
from app_pages.keys import Annotate as K
from cblue_core.annotation.changes import spans_from_offsets
from cblue_core.annotation.model import Annotation, EditConflict, annotation_field
from cblue_core.store.workspace import Workspace
from cblue_core.tasks import get_task


@contextmanager
def guard(what: str) -> Iterator[None]:
    """Any failure of ``what`` inside becomes a message in the page (never a stack trace): an
    expected one (an edit conflict, a refused value) with its message, anything else logged with
    its traceback (``page_failure``). StopException / RerunException are BaseException: they pass."""
    try:
        yield
    except EditConflict as exc:
        st.error(f"{md(what)} failed: {md(exc)}")
    except Exception as exc:  # noqa: BLE001 - the unexpected ones are logged by page_failure
        shown = page_failure(what, exc)
        st.error(md(f"{what} failed: {shown}" if isinstance(exc, EXPECTED_FAILURES) else shown))


def failure(where: str, exc: Exception) -> str:
    """An invalid edit (ValueError) with its whole message; anything else through
    ``page_failure`` (expected failures: their first line; the others logged)."""
    return str(exc) if isinstance(exc, ValueError) else page_failure(where, exc)


def writable(what: str) -> bool:
    """False (with a message) in read-only mode, where nothing is written."""
    if read_only():
        S.flash("error", f"{what}: read-only mode, nothing is written on this server.")
        return False
    return True


def reason() -> str:
    return st.session_state.get(K.REASON, "") or ""


NOT_SAVED = "未保存 / not saved: see the message above"


def do_save(dataset_id: int, idx: int, *, ann: Annotation | None = None, base: int | None = None) -> bool:
    """Save the example's draft (or ``ann`` on ``base``); outcome as a message. Runs before the
    reason widget is drawn (callbacks, editor actions), so it may clear the reason."""
    if not writable("Not saved"):
        return False
    ws = S.page_ws()
    doc = S.doc_key(dataset_id, idx)
    d = S.drafts().get(doc) or S.load_draft(ws, dataset_id, idx)
    S.settle(d)
    mine = d["ann"] if ann is None else ann
    layer = S.editing(ws, dataset_id)
    try:
        ev = layer.save(idx, mine, reason=reason(),
                                            base_revision=d["base"] if base is None else base,
                                            provenance=suggest.provenance(d, mine))
    except EditConflict as exc:
        S.conflicts()[doc] = exc
        S.flash("error", f"Not saved: {exc}")
        S.editor_notice(doc, NOT_SAVED, is_error=True)
        return False
    except Exception as exc:  # noqa: BLE001 - ValueError: an invalid edit; the others are logged
        S.flash("error", f"Not saved: {failure('Saving an annotation', exc)}")
        S.editor_notice(doc, NOT_SAVED, is_error=True)
        return False
    S.conflicts().pop(doc, None)
    S.forget_draft(dataset_id, idx)
    S.load_draft(ws, dataset_id, idx, force=True)
    st.session_state[K.REASON] = ""
    S.flash("success", f"Saved example {idx}{' in your own copy' if layer.own else ''} as event #{ev.event_id} "
                       f"(revision {ev.revision}) by {ev.author}.")
    S.editor_notice(doc, f"已保存 / saved: event #{ev.event_id}, revision {ev.revision}")
    return True


def on_save(dataset_id: int, idx: int) -> None:
    do_save(dataset_id, idx)


def on_keep_mine(dataset_id: int, idx: int) -> None:
    exc = S.conflicts().get(S.doc_key(dataset_id, idx))
    if exc is not None:
        do_save(dataset_id, idx, ann=exc.mine, base=exc.current_revision)


def _reload(dataset_id: int, idx: int) -> None:
    try:
        S.load_draft(S.page_ws(), dataset_id, idx, force=True)
    except Exception as exc:  # noqa: BLE001 - logged with its traceback by page_failure
        S.flash("error", f"Could not reload example {idx}: {page_failure('Reloading an example', exc)}")


def drop_edit(dataset_id: int, idx: int, message: str) -> None:
    """Keep theirs / discard: the example's unsaved edit is dropped and the gold reloaded."""
    S.conflicts().pop(S.doc_key(dataset_id, idx), None)
    S.forget_draft(dataset_id, idx)
    _reload(dataset_id, idx)
    S.flash("info", message)


def on_keep_theirs(dataset_id: int, idx: int) -> None:
    drop_edit(dataset_id, idx, f"Reloaded example {idx}: your unsaved changes were dropped.")


def on_discard(dataset_id: int, idx: int) -> None:
    drop_edit(dataset_id, idx, f"Unsaved changes of example {idx} discarded.")


def on_revert(event_id: int, dataset_id: int, idx: int) -> None:
    if not writable(f"Event #{event_id} not reverted"):
        return
    try:
        ev = S.editing(S.page_ws(), dataset_id).revert(event_id, reason=reason() or f"revert event {event_id}")
    except EditConflict as exc:
        S.flash("error", f"Event #{event_id} not reverted: {exc} Later edits must be reverted first.")
        return
    except Exception as exc:  # noqa: BLE001 - ValueError: refused; the others are logged
        S.flash("error", f"Event #{event_id} not reverted: {failure('Reverting an event', exc)}")
        return
    S.conflicts().pop(S.doc_key(dataset_id, idx), None)
    _reload(dataset_id, idx)
    st.session_state[K.REASON] = ""
    S.flash("success", f"Reverted event #{event_id}: new event #{ev.event_id} (revision {ev.revision}).")


def on_blind_mode(dataset_id: int, on: bool) -> None:
    """A curator starts (``on``) or ends the split's blind pass."""
    if not writable("Blind double annotation not changed"):
        return
    try:
        S.page_ws().blind.set_blind(dataset_id, on)
    except Exception as exc:  # noqa: BLE001 - PermissionDenied / ValueError: refused; the others logged
        S.flash("error", f"Blind double annotation not changed: {failure('Setting blind double annotation', exc)}")
        return
    S.flash("success", "Blind double annotation is on: below the curator role, each annotator now edits "
                       "their own copy." if on else "Blind double annotation is off: everyone edits the gold.")


def on_undo_mine(dataset_id: int, idx: int) -> None:
    if not writable("Nothing undone"):
        return
    mine = S.editing(S.page_ws(), dataset_id).events(idx, author=user_name())
    if not mine:
        S.flash("info", f"{user_name()} has no saved edit on example {idx}.")
        return
    on_revert(mine[-1].event_id, dataset_id, idx)


def handle_editor(ws: Workspace, value: dict) -> None:
    """Act on a new value of the span editor (before any widget of the example is drawn): its
    marks become the draft's spans (CMeIE: the session's mentions), then save / next / previous."""
    where = S.parse_doc(value.get("doc"))
    if where is None:
        return
    did, idx = where
    info = ws.datasets.get(did)
    ex = ws.datasets.example(did, idx) if info is not None else None
    if info is None or ex is None:
        return
    action = value["action"]
    if action == "hello":      # a (reloaded) editor says which browser it runs in: nothing to apply
        return
    here = st.session_state.get(K.DATASET) == did
    if read_only():            # the editor refuses edits there; a forged value changes nothing
        if action in ("next", "prev") and here:
            S.step_example(1 if action == "next" else -1, info.records)
        return
    d = S.drafts().get(value["doc"]) or S.load_draft(ws, did, idx)
    if annotation_field(get_task(info.task)) == "spans":
        d["ann"] = replace(d["ann"], spans=spans_from_offsets(ex.text, value["spans"],
                                                              d["loaded"].spans + d["ann"].spans))
        S.settle(d)
        suggest.note_editor(value, d, value["doc"])
        S.sync_draft(did, idx, d)
    else:  # CMeIE: the spans are mentions marked for triples, kept in the session only
        S.mentions()[value["doc"]] = value["spans"]
    if action == "save":
        do_save(did, idx)
    elif action in ("next", "prev") and here:
        S.step_example(1 if action == "next" else -1, info.records)
