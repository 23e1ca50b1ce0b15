"""The Agreement tab: two annotators compared on the examples both saved (Cohen's kappa for
labels, item F1 for spans, triples and terms), and adjudication of an example where they differ.

Adjudication saves on the revision the adjudicator was shown, recorded when the comparison
opens, so that an edit saved by someone else meanwhile is a conflict, never overwritten. Below
the curator role the tab is a blind first pass (cblue_core.annotation.blind): the user is
annotator A, and the others' work shows only on the examples they have saved themselves."""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

from app_pages.annotate.actions import failure, on_blind_mode
from app_pages.annotate.context import Context, show_annotation
from app_pages.annotate.session import doc_key
from app_pages.common import md, user_name
from app_pages.keys import Annotate as K
from app_pages.permissions import allowed, role, why_not
from cblue_core.annotation.agreement import (
    AnnotatorComparison,
    adjudicate,
    compare_annotators,
    disputed_items,
)
from cblue_core.annotation.blind import blind_view
from cblue_core.annotation.model import Annotation, EditConflict
from cblue_core.auth.roles import Role


def render(ctx: Context) -> None:
    did = ctx.dataset_id
    _blind_switch(ctx)
    authors = ctx.ws.annotations.authors(did)
    if len(authors) < 2:
        st.info("Agreement compares the saved edits of two annotators on this split; so far: "
                f"{md(', '.join(authors) or 'nobody')}. Each annotator, signed in as themselves, "
                "saves their version of the same examples.")
        return
    saved = {x: ctx.ws.annotations.by_author(did, x) for x in authors}
    now = role()
    if now is None or now < Role.CURATOR:
        me = user_name()
        if me not in saved:
            st.info("Blind first pass: the others' work shows here on the examples you have saved "
                    "yourself; you have saved none on this split yet.")
            return
        view = blind_view(saved, me)
        saved, authors = view.work, [me, *(x for x in authors if x != me)]
        if view.hidden:
            st.caption(f"Blind first pass: {view.hidden:d} examples the others saved stay hidden until "
                       "you save yours (curators see everything).")
    g1, g2 = st.columns(2)
    a_name = g1.selectbox("Annotator A", authors[:1] if now is None or now < Role.CURATOR else authors,
                          index=0, key=K.ANNOTATOR_A)
    ma = saved[a_name]
    others = [x for x in authors if x != a_name]
    shared = {x: len(set(ma) & set(saved[x])) for x in others}
    b_name = g2.selectbox("Annotator B", others, key=K.ANNOTATOR_B,
                          index=others.index(max(others, key=lambda x: shared[x])),
                          format_func=lambda x: f"{x} ({shared[x]} examples in common)")
    mb = saved[b_name]
    comparison = compare_annotators(ma, mb, labels=ctx.kind == "label")
    if not comparison.common:
        st.info(f"{md(a_name)} and {md(b_name)} have saved no example in common.")
        return
    _figures(ctx, comparison, a_name, b_name)
    st.markdown("**Adjudication**")
    if not comparison.differ:
        st.success("The two annotators agree on every common example.")
        return
    if not ctx.read_only and not allowed("gold.adjudicate"):    # read-only mode: shown, disabled
        st.caption(f"{len(comparison.differ):d} examples differ; a curator adjudicates them.")
        return
    _adjudicate(ctx, comparison, (a_name, ma), (b_name, mb))


def _blind_switch(ctx: Context) -> None:
    """Whether the split is in a blind pass (each annotator on their own copy), and the
    curator's control to start or end it."""
    setting = ctx.ws.blind.setting(ctx.dataset_id)
    s1, s2 = st.columns([3, 1])
    if setting is None:
        s1.caption("Blind double annotation is off: everyone edits the shared gold.")
    else:
        s1.caption(f"Blind double annotation is on (set by {md(setting.set_by)}, {md(setting.set_at)} UTC): "
                   "below the curator role each annotator edits their own copy, compared here; a curator "
                   "adjudicates into the gold.")
    may = allowed("gold.blind_mode")
    s2.button("Turn blind double annotation " + ("on" if setting is None else "off"), key=K.BLIND_SWITCH,
              on_click=on_blind_mode, args=(ctx.dataset_id, setting is None), disabled=not may,
              help=md(why_not("gold.blind_mode", "Annotators below the curator role then edit their own copy")))
    note = why_not("gold.blind_mode")    # empty in read-only mode, which says so itself
    if not may and note:
        s1.caption(f"Only a curator or an admin turns it on or off: {md(note)}")


def _figures(ctx: Context, c: AnnotatorComparison, a_name: str, b_name: str) -> None:
    if c.items is None:
        k1, k2 = st.columns(2)
        k1.metric("Cohen's kappa", f"{c.kappa:.3f}")
        k2.metric("Raw agreement", f"{c.raw_agreement:.3f}", help=f"{len(c.common):d} examples")
        return
    ag = c.items
    k1, k2, k3, k4 = st.columns(4)
    k1.metric("F1", f"{ag.f1:.3f}")
    k2.metric(f"Precision ({md(b_name)} vs {md(a_name)})", f"{ag.precision:.3f}")
    k3.metric("Recall", f"{ag.recall:.3f}")
    k4.metric("Examples", ag.examples)
    if ag.per_type:
        st.dataframe(pd.DataFrame([{"type": ctx.task.display_label(t), **p.to_dict()} for t, p in ag.per_type.items()]),
                     hide_index=True, width="stretch")


def _seen_revision(ctx: Context, pick: int, rev_now: int) -> int:
    """The revision of ``pick`` the adjudicator was shown (recorded when the comparison opened)."""
    seen = st.session_state.get(K.ADJ_SEEN)
    if not seen or seen[0] != doc_key(ctx.dataset_id, pick):
        seen = (doc_key(ctx.dataset_id, pick), rev_now)
        st.session_state[K.ADJ_SEEN] = seen
    return seen[1]


def _adjudicate(ctx: Context, c: AnnotatorComparison, a: tuple[str, Mapping[int, Annotation]],
                b: tuple[str, Mapping[int, Annotation]]) -> None:
    (a_name, ma), (b_name, mb) = a, b
    did, task = ctx.dataset_id, ctx.task
    pick = st.selectbox("Example where they differ", list(c.differ), key=K.ADJ_EXAMPLE)
    ex = ctx.ws.datasets.example(did, pick)
    _gold_now, rev_now = ctx.ws.annotations.current(did, pick)
    seen_rev = _seen_revision(ctx, pick, rev_now)
    a_ann, b_ann = ma[pick], mb[pick]
    j1, j2 = st.columns(2)
    with j1:
        st.markdown(f"**A: {md(a_name)}**")
        show_annotation(ex, a_ann, task)
    with j2:
        st.markdown(f"**B: {md(b_name)}**")
        show_annotation(ex, b_ann, task)

    keep: dict = {}
    if a_ann.label != b_ann.label:
        keep["label"] = st.radio(
            "Label to keep", ["a", "b"], horizontal=True, key=K.adj_label(pick),
            format_func=lambda w: f"{md(a_name if w == 'a' else b_name)}: "
                                  f"{md(task.display_label((a_ann if w == 'a' else b_ann).label or '∅'))}")
    disputed = disputed_items(a_ann, b_ann, ex.text)
    if disputed:
        st.caption("Items only one annotator has: tick those to keep (items both have are kept).")
    for n, item in enumerate(disputed):
        who = a_name if item.in_a else b_name
        keep[item.item] = st.checkbox(f"{md(item.shown)} — only {md(who)}", value=item.in_a,
                                      key=K.adj_item(pick, n))
    result = adjudicate(a_ann, b_ann, keep)
    st.markdown("**Adjudicated**")
    show_annotation(ex, result, task)
    if rev_now != seen_rev:
        st.warning(f"Example {pick:d} was saved meanwhile (now revision {rev_now:d}; the comparison was "
                   f"opened at revision {seen_rev:d}): saving will be refused. Reopen the comparison to "
                   "adjudicate on it.")
        st.button("Reopen the comparison on the current gold", key=K.ADJ_RELOAD,
                  on_click=lambda: st.session_state.pop(K.ADJ_SEEN, None))
    st.caption(f"Saved on revision {seen_rev:d} of example {pick:d}, the one shown.")
    if st.button("Save the adjudicated version", type="primary", key=K.ADJ_SAVE,
                 disabled=ctx.read_only) and not ctx.read_only:
        try:
            ev = ctx.ws.annotations.adjudicate(did, pick, result, between=(a_name, b_name),
                                               base_revision=seen_rev)
        except EditConflict as exc:
            st.error(f"Edit conflict: not saved: {md(exc)}")
        except Exception as exc:  # noqa: BLE001 - ValueError: refused; the others logged
            st.error(f"Not saved: {md(failure('Saving an adjudication', exc))}")
        else:
            st.session_state.pop(K.ADJ_SEEN, None)   # next view: the new revision
            st.success(f"Saved example {pick:d} as event #{ev.event_id:d}.")
