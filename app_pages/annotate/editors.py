"""The editor of each kind of gold, on the Edit tab: entity spans (the span editor), CMeIE
triples (mentions marked in the span editor, related below), a label, CHIP-CDN terms. Each
changes the example's draft in place; the Edit tab saves it."""
from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import replace

import streamlit as st

from app_pages.annotate import session as S
from app_pages.annotate.context import Context
from app_pages.common import md
from app_pages.components.span_editor import span_editor
from app_pages.keys import Annotate as K
from cblue_core.annotation.changes import mention_marks
from cblue_core.annotation.provenance import Suggestion
from cblue_core.annotation.validation import allowed_predicates, combined_for, schema_types
from cblue_core.records import Example, Triple

SHORTCUTS = ("Ctrl+S saves (with the reason below), Ctrl+Z undoes, Alt+→ / Alt+← move to the next / "
             "previous example.")


def _span_editor(ctx: Context, ex: Example, marks: list, types: list[str], doc: str,
                 suggested: Sequence[Suggestion] = ()) -> None:
    span_editor(ex.text, marks, types, key=K.EDITOR, big=st.session_state.get(K.BIG, False), doc=doc,
                browser=S.browser_id(), readonly=ctx.read_only, offsets=ctx.info.offset_convention or "exclusive",
                notice=S.editor_notice(doc), suggestions=suggested)


def edit_spans(ctx: Context, ex: Example, d: S.Draft, doc: str, suggested: Sequence[Suggestion] = ()) -> None:
    st.caption("Drag over characters to mark a span, then pick its type (click or 1-9); click a span "
               "to retype it (1-9) or delete it (Delete). " + SHORTCUTS
               + (" Suggestions are dashed: click one, then Enter/A accepts it, X rejects it; Shift+A "
                  "accepts all." if suggested else ""))
    _span_editor(ctx, ex, list(d["ann"].spans), list(ctx.task.labels), doc, suggested)


def _entity_types(ctx: Context, d: S.Draft) -> list[str]:
    subj_types, obj_types = schema_types(ctx.ws.resources.schemas())
    types = list(dict.fromkeys(subj_types + obj_types))
    for t in d["ann"].triples:
        for typ in (t.subject_type, t.object_type):
            if typ and typ not in types:
                types.append(typ)
    return types


def edit_triples(ctx: Context, ex: Example, d: S.Draft, doc: str) -> None:
    schemas = ctx.ws.resources.schemas()
    ent_types = _entity_types(ctx, d)
    marks = S.mentions()
    if doc not in marks:
        marks[doc] = mention_marks(ex.text, d["ann"].triples)
    st.caption("Mark mentions in the text (drag, then pick a type; they stay in this session), then "
               "relate a subject and an object below. Only predicates the CMeIE schemas allow for the "
               "two types are offered; Combined is computed from the text. " + SHORTCUTS)
    _span_editor(ctx, ex, marks[doc], ent_types, doc)

    options = _mention_options(ex, d, marks[doc], doc)
    _add_mention(ctx, ex, ent_types, doc)
    st.markdown("**Add a triple**")
    if not options:
        st.info("No mentions yet: mark some in the text above.")
    else:
        _add_triple(ctx, ex, d, doc, options, schemas)
    st.markdown("**Triples**")
    if not d["ann"].triples:
        st.caption("none")
    for i, t in enumerate(d["ann"].triples):
        r1, r2 = st.columns([8, 1])
        r1.text(f"{i + 1}. {t.subject} ({t.subject_type}) —{ctx.task.display_label(t.predicate)}→ "
                f"{t.object} ({t.object_type}) · Combined {t.combined}")
        if r2.button("Remove", key=K.remove_triple(doc, d["gen"], i), disabled=ctx.read_only):
            d["ann"] = replace(d["ann"], triples=d["ann"].triples[:i] + d["ann"].triples[i + 1:])
            st.rerun()


def _mention_options(ex: Example, d: S.Draft, marks: list[dict], doc: str) -> list[tuple[str, str]]:
    """(mention, type) pairs to relate: marked in the editor, in the triples, or added by string."""
    found: dict[tuple[str, str], None] = {}
    for s in marks:
        found.setdefault((ex.text[s["start"]:s["end"]], s["type"]), None)
    for t in d["ann"].triples:
        found.setdefault((t.subject, t.subject_type), None)
        found.setdefault((t.object, t.object_type), None)
    for m in st.session_state.setdefault(K.FREE_MENTIONS, {}).get(doc, []):
        found.setdefault(tuple(m), None)
    return list(found)


def _add_mention(ctx: Context, ex: Example, ent_types: list[str], doc: str) -> None:
    with st.expander("Add a mention by its string (it must occur in the text)"):
        f1, f2, f3 = st.columns([3, 2, 1])
        text = f1.text_input("Mention", key=K.free_text(doc), disabled=ctx.read_only)
        typ = f2.selectbox("Type", ent_types or ["?"], key=K.free_type(doc), disabled=ctx.read_only)
        if f3.button("Add mention", key=K.free_add(doc), disabled=ctx.read_only):
            if not text.strip() or text not in ex.text:
                st.error(f"{md(repr(text))} does not occur in the text.")
            else:
                st.session_state[K.FREE_MENTIONS].setdefault(doc, []).append([text, typ])
                st.rerun()


def _add_triple(ctx: Context, ex: Example, d: S.Draft, doc: str, options: list[tuple[str, str]],
                schemas: list) -> None:
    def shown(m: tuple[str, str]) -> str:
        return f"{m[0]} · {m[1]}"

    a, b, c = st.columns(3)
    subj = a.selectbox("Subject", options, format_func=shown, key=K.subject(doc, d["gen"]))
    obj = c.selectbox("Object", options, format_func=shown, key=K.object(doc, d["gen"]),
                      index=min(1, len(options) - 1))
    preds = allowed_predicates(schemas, subj[1], obj[1]) if schemas else list(ctx.task.label_codes)
    pred = None
    if preds:
        pred = b.selectbox("Predicate (allowed for these types)", preds, format_func=ctx.task.display_label,
                           key=K.predicate(doc, d["gen"]))
    else:
        b.warning(f"No CMeIE schema relates a {md(subj[1])} subject to a {md(obj[1])} object.")
    combined = combined_for(ex.text, subj[0], obj[0])
    st.caption(f"Combined: **{md(combined)}** (true when no 。-sentence holds both mentions)")
    if st.button("Add triple", disabled=pred is None or ctx.read_only, key=K.add_triple(doc)):
        new = Triple(subj[0], pred, obj[0], subj[1], obj[1], combined)
        if any((t.subject, t.predicate, t.object) == (new.subject, new.predicate, new.object)
               for t in d["ann"].triples):
            st.warning("This triple is already there.")
        else:
            d["ann"] = replace(d["ann"], triples=d["ann"].triples + (new,))
            st.rerun()


def edit_label(ctx: Context, ex: Example, d: S.Draft, doc: str) -> None:
    codes = list(ctx.task.label_codes)
    cur = d["ann"].label
    if cur not in (None, "") and cur not in codes:
        codes.append(cur)
    choice = st.selectbox("Label", codes, index=codes.index(cur) if cur in codes else None,
                          format_func=ctx.task.display_label, key=K.label(doc, d["gen"]),
                          placeholder="no label", disabled=ctx.read_only)
    if choice is not None and choice != cur:
        d["ann"] = replace(d["ann"], label=choice)


def edit_terms(ctx: Context, ex: Example, d: S.Draft, doc: str) -> None:
    icd = ctx.ws.resources.icd_terms()
    cur = list(d["ann"].terms)
    q = st.text_input("Search the ICD-10 list (term or code)", key=K.ICD_QUERY, placeholder="e.g. 糖尿病 or E11")
    matches: list[str] = []
    if q.strip():
        needle = q.strip()
        matches = [t.term for t in icd if needle in t.term or needle.upper() in t.code.upper()][:200]
        st.caption(f"{len(matches):d} matching terms" + (" (first 200)" if len(matches) == 200 else ""))
    elif not icd:
        st.caption("No ICD-10 list in the workspace: any term is accepted.")
    options = list(dict.fromkeys(cur + matches))
    picked = st.multiselect("Normalised terms (the search adds candidates)", options, default=cur,
                            key=K.terms(doc, d["gen"], zlib.crc32(q.encode())),
                            accept_new_options=not icd, disabled=ctx.read_only)
    if list(picked) != cur:
        d["ann"] = replace(d["ann"], terms=tuple(picked))


EDITORS = {"spans": edit_spans, "triples": edit_triples, "label": edit_label, "terms": edit_terms}
IN_SPAN_EDITOR = frozenset({"spans", "triples"})   # kinds edited in the span editor (its own Prev/Next/Save)
