"""The Edit tab: one example's gold in its editor, the edit's state (unsaved, restored after a
reload, saved meanwhile by someone else, in conflict), Save / Discard / Undo, and its history.
In a blind pass, below the curator role, all of it is the user's own copy (session.editing).

One Previous/Next set and one Save: for spans and CMeIE triples they are the span editor's own
(with its shortcuts); for labels and terms, which have no span editor, the page's."""
from __future__ import annotations

import streamlit as st

from app_pages.annotate import actions as A
from app_pages.annotate import session as S
from app_pages.annotate import suggest
from app_pages.annotate.context import Context, events_frame, show_annotation
from app_pages.annotate.editors import EDITORS, IN_SPAN_EDITOR, edit_spans
from app_pages.common import md, user_name
from app_pages.keys import Annotate as K
from app_pages.keys import Param
from cblue_core.annotation.changes import change_summary
from cblue_core.annotation.drafts import DraftOutcome
from cblue_core.annotation.model import EditConflict
from cblue_core.records import Example

# who else saves the layer edited: anyone in the gold; only the user, in another tab, in their own copy
_BY_OTHERS = {False: "by someone else", True: "in another tab of yours"}


def render(ctx: Context) -> None:
    idx = _navigation(ctx)
    st.query_params.update({Param.TASK: ctx.task.name, Param.SPLIT: ctx.info.split, Param.EXAMPLE: str(idx)})
    ex = ctx.ws.datasets.example(ctx.dataset_id, idx)
    if ex is None:
        st.warning("No such example.")
        return
    with A.guard("Loading the example's annotation"):
        _example(ctx, ex, idx)


def _navigation(ctx: Context) -> int:
    records, here = ctx.info.records, S.current_example()
    with_buttons = ctx.kind not in IN_SPAN_EDITOR
    if with_buttons:
        n1, n2, n3, n4 = st.columns([1, 1, 3, 2])
        n1.button("◀ Previous", on_click=S.step_example, args=(-1, records), key=K.PREV, disabled=here <= 0)
        n2.button("Next ▶", on_click=S.step_example, args=(1, records), key=K.NEXT,
                  disabled=here >= records - 1)
    else:
        n3, n4 = st.columns([3, 2])
    idx = int(n3.number_input("Record number (0-based)", min_value=0, max_value=max(records - 1, 0), step=1,
                              key=K.EXAMPLE))
    n4.toggle("Large type", key=K.BIG)
    return idx


def _example(ctx: Context, ex: Example, idx: int) -> None:
    did, task = ctx.dataset_id, ctx.task
    doc = S.doc_key(did, idx)
    layer = S.editing(ctx.ws, did)
    d = S.load_draft(ctx.ws, did, idx)
    S.restore_draft(ctx.ws, did, idx, d)
    _head, rev = d["head"]
    conflict = S.conflicts().get(doc)
    with st.container():                # always there: a message never moves the editor's frame
        if layer.own:
            st.info("Blind pass: you edit your own copy, which starts from the example as ingested. The "
                    "others' work shows on the Agreement tab once you saved this example; a curator "
                    "merges into the gold.", icon=":material/visibility_off:")
        if d.get("restored") and S.is_dirty(d) and conflict is None:
            st.info(f"Restored your unsaved changes from {md(d['restored'])} (kept for this browser when "
                    "the page was closed or reloaded); Save or Discard them.", icon=":material/history:")
        if conflict is not None:
            _conflict(ctx, ex, conflict, idx, own=layer.own)

    st.markdown(f"**Example {idx:d}** of {ctx.info.records:d} · revision {rev:d}"
                + (f" · key {md(ex.key)}" if ex.key and ex.key != ex.text else ""))
    with st.container():                # always there: the editor's frame keeps its place
        sugg = suggest.offered(ctx, ex, d, doc)
    if ctx.kind == "spans":
        edit_spans(ctx, ex, d, doc, suggest.pending(sugg.spans, d, doc) if sugg is not None else ())
    else:
        EDITORS[ctx.kind](ctx, ex, d, doc)
    if sugg is not None and ctx.kind in suggest.PANELS:
        suggest.PANELS[ctx.kind](ctx, d, doc, sugg)
    if ctx.kind != "spans":
        show_annotation(ex, d["ann"], task, big=st.session_state.get(K.BIG, False))
    S.settle(d)
    dirty = S.is_dirty(d)
    S.sync_draft(did, idx, d)
    if dirty:
        st.warning("Unsaved changes: " + md(change_summary(d["loaded"], d["ann"], task, limit=8)))
        if d.get("kept") is DraftOutcome.TOO_LARGE:
            st.caption("This edit is too large to be kept across a page reload: save it.")
        elif d.get("kept") is DraftOutcome.STORE_FULL:
            st.caption("The server keeps no more unsaved drafts for now (its draft store is full): "
                       "this edit is not kept across a page reload, so save it.")
    if rev != d["base"] and conflict is None:
        st.warning(f"Saved meanwhile {md(_BY_OTHERS[layer.own])} (revision {rev:d}, you started from {d['base']:d}): "
                   "saving will ask which version to keep.")
    elsewhere = S.dirty_elsewhere(did, idx)
    if elsewhere:
        st.caption("Unsaved edits in this session also on example(s) "
                   + ", ".join(f"{i:d}" for i in elsewhere[:20]) + ": go back to save them.")
    st.text_input("Reason for the edit (kept with it)", key=K.REASON,
                  placeholder="e.g. boundary: include 无力; wrong type", disabled=ctx.read_only)
    events = layer.events(idx)
    _buttons(ctx, idx, dirty, mine=any(e.author == user_name() for e in events))
    _history(ctx, idx, events, dirty, own=layer.own)


def _buttons(ctx: Context, idx: int, dirty: bool, *, mine: bool) -> None:
    did = ctx.dataset_id
    with_save = ctx.kind not in IN_SPAN_EDITOR          # the span editor has its own Save (Ctrl+S)
    *first, b2, b3 = st.columns(3 if with_save else 2)
    if with_save:
        first[0].button("Save", type="primary", on_click=A.on_save, args=(did, idx), key=K.SAVE,
                  disabled=not dirty or ctx.read_only)
    b2.button("Discard unsaved changes", on_click=A.on_discard, args=(did, idx), key=K.DISCARD,
              disabled=not dirty)
    b3.button("Undo my last saved edit", on_click=A.on_undo_mine, args=(did, idx), key=K.UNDO_MINE,
              disabled=not mine or dirty or ctx.read_only,
              help="Reverts your latest event on this example (a new event)")


def _history(ctx: Context, idx: int, events: list, dirty: bool, *, own: bool) -> None:
    st.subheader("Your history of this example (own copy)" if own else "History of this example")
    if not events:
        st.caption("No edits of yours yet: your copy is as ingested (revision 0)." if own
                   else "No edits yet: the gold is as ingested (revision 0).")
        return
    st.dataframe(events_frame(events[::-1], ctx.task), hide_index=True, width="stretch")
    st.caption("Revert restores the gold an event replaced, as a new event; an event whose result was "
               "changed since needs those later changes reverted first.")
    for e in events[::-1][:20]:
        h1, h2 = st.columns([6, 1])
        taken = "".join(f" · suggestions of {p.summary()}" for p in e.provenance)
        h1.caption(f"#{e.event_id:d} · {md(e.author)} · {md(e.created_at)} · {md(e.kind)} · "
                   f"{md(e.reason or '(no reason)')}{md(taken)}")
        h2.button("Revert", key=K.revert(e.event_id), on_click=A.on_revert, args=(e.event_id, ctx.dataset_id, idx),
                  disabled=dirty or ctx.read_only,
                  help="Save or discard your unsaved changes first" if dirty else None)


def _conflict(ctx: Context, ex: Example, exc: EditConflict, idx: int, *, own: bool) -> None:
    """Both versions side by side, and the choice: keep mine (save again on their revision) or
    keep theirs (reload)."""
    did, task = ctx.dataset_id, ctx.task
    st.error(f"Edit conflict on example {idx:d}: it was saved {md(_BY_OTHERS[own])} while you edited it "
             f"(now revision {exc.current_revision:d}). Which version do you keep?")
    m1, m2 = st.columns(2)
    with m1:
        st.markdown("**Mine (not saved)**")
        show_annotation(ex, exc.mine, task)
        st.button("Keep mine (save over their version)", type="primary", on_click=A.on_keep_mine,
                  args=(did, idx), key=K.KEEP_MINE, disabled=ctx.read_only)
    with m2:
        st.markdown(f"**Theirs (saved, revision {exc.current_revision:d})**")
        show_annotation(ex, exc.current, task)
        st.button("Keep theirs (reload, drop mine)", on_click=A.on_keep_theirs, args=(did, idx),
                  key=K.KEEP_THEIRS)
    st.caption("Differences (theirs → mine): " + md(change_summary(exc.current, exc.mine, task, limit=12)))
    if exc.theirs:
        st.dataframe(events_frame(exc.theirs, task), hide_index=True, width="stretch")
