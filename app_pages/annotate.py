"""Annotate: correct the gold of one example at a time (entity spans, CMeIE triples, labels,
CHIP-CDN terms), with every saved edit kept as an event (who, when, why); named gold versions,
a review queue, agreement between annotators, re-scoring runs on corrected gold, and export.

URL query parameters ``task``, ``split`` and ``example`` open one example, as on Datasets.

The page keeps, per example, a *draft* in the session: the annotation being edited and the
revision it was loaded at (``base``). A save names that revision; when someone saved the
example meanwhile the core raises ``EditConflict`` and the page shows both versions and asks
which to keep. Nothing here writes SQL or parses files: widgets -> ``cblue_core`` -> rendering.

Unsaved edits also survive a page reload: the span editor reports an id of the browser (kept in
the browser's localStorage), and the page keeps the latest unsaved draft per (browser, workspace,
dataset, example) in a bounded store in the server's memory (``cblue_core.annotation.drafts``);
a new session that reports the same id gets the draft back, until it is saved or discarded.

Adjudication saves on the revision the comparison was opened at, so that an edit saved by
someone else meanwhile is a conflict, never overwritten. In read-only mode
(``CBLUE_STUDIO_READONLY=1``) every control that would write is disabled. Failures the page
expects (an edit conflict, an invalid edit) are shown with their message; anything else is
logged with its traceback (``page_failure``) and shown as one line.
"""
from __future__ import annotations

import json
import tempfile
import zlib
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pandas as pd
import streamlit as st

from app_pages.common import (
    EXPECTED_FAILURES,
    db_path,
    md,
    page_failure,
    read_only,
    read_only_notice,
    run_label,
    selected,
    user_name,
    workspace,
)
from app_pages.components.span_editor import editor_value, span_editor
from app_pages.html_view import show_html
from cblue_core.annotation.drafts import DraftStore, saved_time, valid_browser_id
from cblue_core.annotation.model import Annotation, EditConflict, annotation_field
from cblue_core.annotation.validation import allowed_predicates, combined_for, schema_types
from cblue_core.records import Span, Triple
from cblue_core.render.example import example_html
from cblue_core.tasks import REGISTRY, get_task

TABS = ["Edit", "Versions", "Review queue", "Agreement", "Re-score", "Export"]
EDITOR = "ann_editor"          # one editor instance for every example: its frame keeps focus
CURRENT = "(current)"
ORIGINAL = "original"
KIND_NAMES = {"spans": "entity spans", "triples": "CMeIE triples", "label": "label",
              "terms": "normalised ICD-10 terms"}

def page_ws():
    """The workspace on this script run's cursor (see :func:`app_pages.common.workspace`)."""
    return workspace()


@st.cache_resource
def draft_store() -> DraftStore:
    """The process's unsaved drafts, per browser (bounded: see cblue_core.annotation.drafts)."""
    return DraftStore()


def render() -> None:
    # ====================================================================== helpers
    @contextmanager
    def guard(what: str):
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
            flash("error", f"{what}: read-only mode, nothing is written on this server.")
            return False
        return True

    def flash(kind: str, message: str) -> None:
        st.session_state.setdefault("ann_flash", []).append((kind, message))

    def doc_key(dataset_id: int, idx: int) -> str:
        return f"{dataset_id}:{idx}"

    def parse_doc(doc: str | None) -> tuple[int, int] | None:
        try:
            a, b = str(doc).split(":")
            return int(a), int(b)
        except (TypeError, ValueError):
            return None

    def version_arg(name: str) -> str | None:
        return None if name == CURRENT else name

    def new_gen() -> int:
        st.session_state.ann_gen = st.session_state.get("ann_gen", 0) + 1
        return st.session_state.ann_gen

    def drafts() -> dict:
        return st.session_state.setdefault("ann_drafts", {})

    def conflicts() -> dict:
        return st.session_state.setdefault("ann_conflicts", {})

    # ====================================================================== drafts across reloads
    def browser_id() -> str | None:
        """This browser's id, as its span editor reported it (None until it did)."""
        return valid_browser_id(st.session_state.get("ann_browser"))

    def note_browser(value: dict) -> None:
        b = value.get("browser")
        if b is not None and b != st.session_state.get("ann_browser"):
            st.session_state.ann_browser = b
            st.session_state.ann_draft_checked = set()        # look for this browser's drafts afresh

    def draft_scope() -> str:
        return db_path()

    def gold_at(ws, dataset_id: int, idx: int, revision: int, head: tuple[Annotation, int]) -> Annotation | None:
        """The example's gold at ``revision`` (None when it never had that revision)."""
        current, rev = head
        if revision == rev:
            return current
        for e in ws.annotations.events(dataset_id, idx):
            if e.revision == revision + 1:
                return e.before
        return None

    def sync_draft(dataset_id: int, idx: int, d: dict) -> None:
        """Keep the session's draft of the example for a reload of this browser: stored while it
        has changes, dropped when it has none (after this session stored or restored it)."""
        browser = browser_id()
        if browser is None or read_only():
            return
        store = draft_store()
        if d["ann"] != d["loaded"]:
            d["kept"] = store.put(browser, draft_scope(), dataset_id, idx, base_revision=d["base"],
                                  data=json.dumps(d["ann"].to_json(), ensure_ascii=False))
            d["synced"] = True
        else:
            stored = d.pop("synced", False)
            if d.pop("restored", None) is not None or stored:
                store.clear(browser, draft_scope(), dataset_id, idx)

    def forget_draft(dataset_id: int, idx: int) -> None:
        """The edit of the example was saved or discarded: no draft to restore any more."""
        browser = browser_id()
        if browser is not None:
            draft_store().clear(browser, draft_scope(), dataset_id, idx)
        d = drafts().get(doc_key(dataset_id, idx))
        if d is not None:
            d.pop("synced", None)
            d.pop("restored", None)

    def restore_draft(ws, dataset_id: int, idx: int, d: dict) -> None:
        """Once per example and browser in a session: the unsaved draft this browser left (before a
        reload) becomes the session's draft, unless the session has changes of its own."""
        browser = browser_id()
        if browser is None or read_only():
            return
        doc = doc_key(dataset_id, idx)
        checked = st.session_state.setdefault("ann_draft_checked", set())
        if doc in checked:
            return
        checked.add(doc)
        if d["ann"] != d["loaded"]:
            return
        store = draft_store()
        saved = store.get(browser, draft_scope(), dataset_id, idx)
        if saved is None:
            return
        try:
            ann = Annotation.from_json(json.loads(saved.data))
        except (ValueError, KeyError, TypeError):
            ann = None
        loaded = gold_at(ws, dataset_id, idx, saved.base_revision, d["head"])
        if ann is None or loaded is None or ann == loaded:   # unreadable, from another history, or no change
            store.clear(browser, draft_scope(), dataset_id, idx)
            return
        d.update(base=saved.base_revision, loaded=loaded, ann=ann, gen=new_gen(), restored=saved_time(saved),
                 synced=True)
        st.session_state.setdefault("ann_mentions", {}).pop(doc, None)

    def load_draft(ws, dataset_id: int, idx: int, *, force: bool = False) -> dict:
        """This session's draft of one example: ``ann`` (being edited), ``loaded`` (the gold at
        ``base``, the revision the edit started from) and ``gen`` (changes when the draft is reset,
        so per-example widgets start again). A draft without changes follows the store."""
        doc = doc_key(dataset_id, idx)
        current, rev = ws.annotations.current(dataset_id, idx)
        d = drafts().get(doc)
        clean = d is not None and d["ann"] == d["loaded"]
        if d is None or force or (clean and (d["base"] != rev or d["loaded"] != current)):
            d = {"base": rev, "loaded": current, "ann": current, "gen": new_gen()}
            drafts()[doc] = d
            st.session_state.setdefault("ann_mentions", {}).pop(doc, None)
        d["head"] = (current, rev)
        return d

    def keep_order(new: list, old: tuple) -> tuple:
        """``new`` items in the order of ``old`` for those ``old`` has, the others after them (so
        that an edit which only reorders nothing is no change)."""
        rest = list(new)
        out = []
        for item in old:
            if item in rest:
                out.append(item)
                rest.remove(item)
        return tuple(out + rest)

    def settle(d: dict) -> None:
        """Put the draft's items in the loaded order (new items after), so that undoing an edit
        leaves no change and a save stores only what changed."""
        ann, loaded = d["ann"], d["loaded"]
        d["ann"] = replace(ann, spans=keep_order(list(ann.spans), loaded.spans),
                           triples=keep_order(list(ann.triples), loaded.triples),
                           terms=keep_order(list(ann.terms), loaded.terms))

    def spans_from_editor(text: str, spans: list[dict], old: tuple[Span, ...]) -> tuple[Span, ...]:
        made = [Span(s["start"], s["end"], s["type"], text[s["start"]:s["end"]]) for s in spans]
        by_key = {(s.start, s.end, s.type): s for s in old}
        return tuple(by_key.get((s.start, s.end, s.type), s) for s in made)  # keep recorded mentions

    def item_lines(a: Annotation, b: Annotation, task) -> list[str]:
        """What changes from ``a`` to ``b``, one line per item (for tables and captions)."""
        out = []
        sa, sb = set(a.spans), set(b.spans)
        out += [f"− {s.type} {s.text or ''} [{s.start},{s.end})" for s in a.spans if s not in sb]
        out += [f"+ {s.type} {s.text or ''} [{s.start},{s.end})" for s in b.spans if s not in sa]
        ta, tb = set(a.triples), set(b.triples)
        out += [f"− ({t.subject}, {t.predicate}, {t.object})" for t in a.triples if t not in tb]
        out += [f"+ ({t.subject}, {t.predicate}, {t.object})" for t in b.triples if t not in ta]
        out += [f"− {t}" for t in a.terms if t not in b.terms]
        out += [f"+ {t}" for t in b.terms if t not in a.terms]
        if a.label != b.label:
            out.append(f"label {task.display_label(a.label or '∅')} → {task.display_label(b.label or '∅')}")
        return out

    def change_summary(a: Annotation, b: Annotation, task, limit: int = 4) -> str:
        lines = item_lines(a, b, task)
        return "; ".join(lines[:limit]) + (f" (+{len(lines) - limit})" if len(lines) > limit else "") \
            if lines else "no change"

    def show_annotation(ex, ann: Annotation, task, *, big: bool = False) -> None:
        show_html(example_html(ann.apply_to(ex), task, big=big))

    def events_frame(events, task) -> pd.DataFrame:
        return pd.DataFrame([{
            "event": e.event_id, "revision": e.revision, "who": e.author, "when": e.created_at,
            "kind": e.kind + (f" of #{e.reverts}" if e.reverts else ""), "reason": e.reason,
            "change": change_summary(e.before, e.after, task)} for e in events])

    # ====================================================================== actions
    def do_save(dataset_id: int, idx: int, *, ann: Annotation | None = None, base: int | None = None) -> bool:
        """Save the example's draft (or ``ann`` on ``base``); outcome as a message. Runs before the
        reason widget is drawn (callbacks, editor actions), so it may clear the reason."""
        if not writable("Not saved"):
            return False
        ws = page_ws()
        doc = doc_key(dataset_id, idx)
        d = drafts().get(doc) or load_draft(ws, dataset_id, idx)
        settle(d)
        after = d["ann"] if ann is None else ann
        base_rev = d["base"] if base is None else base
        try:
            ev = ws.annotations.save(dataset_id, idx, after, author=user_name(),
                                    reason=st.session_state.get("ann_reason", "") or "",
                                    base_revision=base_rev)
        except EditConflict as exc:
            conflicts()[doc] = exc
            flash("error", f"Not saved: {exc}")
            return False
        except Exception as exc:  # noqa: BLE001 - ValueError: an invalid edit; the others are logged
            flash("error", f"Not saved: {failure('Saving an annotation', exc)}")
            return False
        conflicts().pop(doc, None)
        forget_draft(dataset_id, idx)
        load_draft(ws, dataset_id, idx, force=True)
        st.session_state.ann_reason = ""
        flash("success", f"Saved example {idx} as event #{ev.event_id} (revision {ev.revision}) by "
                         f"{ev.author}.")
        return True

    def on_save(dataset_id: int, idx: int) -> None:
        do_save(dataset_id, idx)

    def on_keep_mine(dataset_id: int, idx: int) -> None:
        exc = conflicts().get(doc_key(dataset_id, idx))
        if exc is not None:
            do_save(dataset_id, idx, ann=exc.mine, base=exc.current_revision)

    def on_keep_theirs(dataset_id: int, idx: int) -> None:
        conflicts().pop(doc_key(dataset_id, idx), None)
        forget_draft(dataset_id, idx)
        with_ws_reload(dataset_id, idx)
        flash("info", f"Reloaded example {idx}: your unsaved changes were dropped.")

    def with_ws_reload(dataset_id: int, idx: int) -> None:
        try:
            load_draft(page_ws(), dataset_id, idx, force=True)
        except Exception as exc:  # noqa: BLE001 - logged with its traceback by page_failure
            flash("error", f"Could not reload example {idx}: {page_failure('Reloading an example', exc)}")

    def on_discard(dataset_id: int, idx: int) -> None:
        conflicts().pop(doc_key(dataset_id, idx), None)
        forget_draft(dataset_id, idx)
        with_ws_reload(dataset_id, idx)
        flash("info", f"Unsaved changes of example {idx} discarded.")

    def on_revert(event_id: int, dataset_id: int, idx: int) -> None:
        if not writable(f"Event #{event_id} not reverted"):
            return
        ws = page_ws()
        try:
            ev = ws.annotations.revert(event_id, author=user_name(),
                                 reason=st.session_state.get("ann_reason", "") or f"revert event {event_id}")
        except EditConflict as exc:
            flash("error", f"Event #{event_id} not reverted: {exc} Later edits must be reverted first.")
            return
        except Exception as exc:  # noqa: BLE001 - ValueError: refused; the others are logged
            flash("error", f"Event #{event_id} not reverted: {failure('Reverting an event', exc)}")
            return
        conflicts().pop(doc_key(dataset_id, idx), None)
        with_ws_reload(dataset_id, idx)
        st.session_state.ann_reason = ""
        flash("success", f"Reverted event #{event_id}: new event #{ev.event_id} (revision {ev.revision}).")

    def on_undo_mine(dataset_id: int, idx: int) -> None:
        if not writable("Nothing undone"):
            return
        mine = page_ws().annotations.events(dataset_id, idx, author=user_name())
        if not mine:
            flash("info", f"{user_name()} has no saved edit on example {idx}.")
            return
        on_revert(mine[-1].event_id, dataset_id, idx)

    def on_goto(idx: int, tab: str = "Edit") -> None:
        st.session_state.ann_example = int(idx)
        st.session_state.ann_tab = tab

    def on_step(delta: int, records: int) -> None:
        cur = int(st.session_state.get("ann_example", 0))
        st.session_state.ann_example = min(max(cur + delta, 0), max(records - 1, 0))

    def handle_editor(ws, value: dict) -> None:
        """Act on a new value of the span editor (before any widget of the example is drawn)."""
        where = parse_doc(value.get("doc"))
        if where is None:
            return
        did, idx = where
        info = ws.datasets.get(did)
        ex = ws.datasets.example(did, idx) if info is not None else None
        if ex is None:
            return
        task = get_task(info.task)
        action = value["action"]
        if action == "hello":      # a (reloaded) editor says which browser it runs in: nothing to apply
            return
        if read_only():            # the editor refuses edits there; a forged value changes nothing
            if action in ("next", "prev") and st.session_state.get("ann_dataset") == did:
                on_step(1 if action == "next" else -1, info.records)
            return
        d = drafts().get(value["doc"]) or load_draft(ws, did, idx)
        if annotation_field(task) == "spans":
            d["ann"] = replace(d["ann"], spans=spans_from_editor(ex.text, value["spans"],
                                                                 d["loaded"].spans + d["ann"].spans))
            settle(d)
            sync_draft(did, idx, d)
        else:  # CMeIE: the spans are mentions marked for triples, kept in the session only
            st.session_state.setdefault("ann_mentions", {})[value["doc"]] = value["spans"]
        if action == "save":
            do_save(did, idx)
        elif action in ("next", "prev") and st.session_state.get("ann_dataset") == did:
            on_step(1 if action == "next" else -1, info.records)

    # ====================================================================== page
    ws = page_ws()

    st.title("Annotate")

    st.caption("Correct gold spans, triples, labels and terms; every save is kept with its author, "
               f"time and reason. Annotating as **{md(user_name())}** (set your name in the sidebar).")

    READ_ONLY = read_only()

    read_only_notice("editing")

    datasets = [d for d in ws.datasets.all() if annotation_field(get_task(d.task)) is not None]

    if not datasets:
        st.info("No editable split in the workspace: annotation covers entity spans (CMeEE), CMeIE "
                "triples, classification and pair labels, and CHIP-CDN terms. Ingest one on Datasets.")
        st.stop()

    # ---------------------------------------------------------------- deep link -> widget state
    params = st.query_params

    tasks = sorted({d.task for d in datasets}, key=list(REGISTRY).index)

    if "ann_linked" not in st.session_state:
        st.session_state.ann_linked = True
        if params.get("task") in tasks:
            st.session_state.ann_task = params["task"]
            if params.get("split"):
                st.session_state.ann_split = params["split"]
            if str(params.get("example", "")).isdigit():
                st.session_state.ann_example = int(params["example"])

    # ---------------------------------------------------------------- pending actions
    value = editor_value(EDITOR)

    # An always-there container: a failure message of the editor's action moves no element below
    # (a moved component frame is reloaded and loses the keyboard focus).
    with st.container():
        if value is not None and value["nonce"] != st.session_state.get("ann_editor_nonce"):
            st.session_state.ann_editor_nonce = value["nonce"]
            note_browser(value)
            with guard("The editor's action"):
                handle_editor(ws, value)

    if "ann_goto" in st.session_state:
        on_goto(*st.session_state.pop("ann_goto"))

    c1, c2 = st.columns(2)

    task_name = c1.selectbox("Task", tasks, key="ann_task",
                             format_func=lambda t: f"{t} · {KIND_NAMES[annotation_field(get_task(t))]}")

    splits = [d.split for d in datasets if d.task == task_name]

    if st.session_state.get("ann_split") not in splits:
        st.session_state.ann_split = "dev" if "dev" in splits else splits[0]

    split = c2.selectbox("Split", splits, key="ann_split")

    task = get_task(task_name)

    info = ws.datasets.find(task_name, split)

    did = info.dataset_id

    kind = annotation_field(task)

    if st.session_state.get("ann_dataset") != did:
        if "ann_dataset" in st.session_state:  # another split was picked: start at its first example
            st.session_state.ann_example = 0
        st.session_state.ann_dataset = did

    if not 0 <= int(st.session_state.get("ann_example", 0)) < max(info.records, 1):
        st.session_state.ann_example = 0

    # Messages go in containers that are always there, so that the elements below keep their place
    # in the page (a moved component frame is reloaded, and would lose the keyboard focus).
    with st.container():
        for level, message in st.session_state.pop("ann_flash", []):
            getattr(st, level)(md(message))

    tabs = st.tabs(TABS, key="ann_tab", on_change="rerun")

    tab = dict(zip(TABS, tabs))

    def is_open(name: str) -> bool:
        # .open is None when the tabs track no state (then every tab runs, as in plain st.tabs)
        return tab[name].open is not False

    # ====================================================================== Edit
    def mention_spans(text: str, triples) -> list[dict]:
        """CMeIE mentions (first occurrence in the text) as typed spans, for the editor."""
        out = []
        for t in triples:
            for m, typ in ((t.subject, t.subject_type), (t.object, t.object_type)):
                i = text.find(m) if m else -1
                if i >= 0:
                    out.append({"start": i, "end": i + len(m), "type": typ or "?"})
        return out

    def edit_spans(ex, d: dict, doc: str) -> None:
        st.caption("Drag over characters to mark a span, then pick its type (click or 1-9); click a "
                   "span to retype it (1-9) or delete it (Delete). Ctrl+S saves (with the reason "
                   "below), Ctrl+Z undoes, Alt+→ / Alt+← move to the next / previous example.")
        span_editor(ex.text, list(d["ann"].spans), list(task.labels), key=EDITOR,
                    big=st.session_state.get("ann_big", False), doc=doc, browser=browser_id(),
                    readonly=READ_ONLY)

    def edit_triples(ex, d: dict, doc: str) -> None:
        schemas = ws.resources.schemas()
        subj_types, obj_types = schema_types(schemas)
        ent_types = list(dict.fromkeys(subj_types + obj_types))
        for t in d["ann"].triples:
            for typ in (t.subject_type, t.object_type):
                if typ and typ not in ent_types:
                    ent_types.append(typ)
        marks = st.session_state.setdefault("ann_mentions", {})
        if doc not in marks:
            marks[doc] = mention_spans(ex.text, d["ann"].triples)
        st.caption("Mark mentions in the text (drag, then pick a type; they stay in this session), "
                   "then relate a subject and an object below. Only predicates the CMeIE schemas "
                   "allow for the two types are offered; Combined is computed from the text.")
        span_editor(ex.text, marks[doc], ent_types, key=EDITOR,
                    big=st.session_state.get("ann_big", False), doc=doc, browser=browser_id(),
                    readonly=READ_ONLY)

        mentions: dict[tuple[str, str], None] = {}
        for s in marks[doc]:
            mentions.setdefault((ex.text[s["start"]:s["end"]], s["type"]), None)
        for t in d["ann"].triples:
            mentions.setdefault((t.subject, t.subject_type), None)
            mentions.setdefault((t.object, t.object_type), None)
        for m in st.session_state.setdefault("ann_free_mentions", {}).get(doc, []):
            mentions.setdefault(tuple(m), None)
        options = list(mentions)

        with st.expander("Add a mention by its string (it must occur in the text)"):
            f1, f2, f3 = st.columns([3, 2, 1])
            ftext = f1.text_input("Mention", key=f"ann_free_text::{doc}", disabled=READ_ONLY)
            ftype = f2.selectbox("Type", ent_types or ["?"], key=f"ann_free_type::{doc}", disabled=READ_ONLY)
            if f3.button("Add mention", key=f"ann_free_add::{doc}", disabled=READ_ONLY):
                if not ftext.strip() or ftext not in ex.text:
                    st.error(f"{md(repr(ftext))} does not occur in the text.")
                else:
                    st.session_state.ann_free_mentions.setdefault(doc, []).append([ftext, ftype])
                    st.rerun()

        st.markdown("**Add a triple**")
        if not options:
            st.info("No mentions yet: mark some in the text above.")
        else:
            fmt = lambda m: f"{m[0]} · {m[1]}"
            a, b, c = st.columns(3)
            subj = a.selectbox("Subject", options, format_func=fmt, key=f"ann_subj::{doc}::{d['gen']}")
            obj = c.selectbox("Object", options, format_func=fmt, key=f"ann_obj::{doc}::{d['gen']}",
                              index=min(1, len(options) - 1))
            preds = allowed_predicates(schemas, subj[1], obj[1]) if schemas else list(task.label_codes)
            pred = None
            if preds:
                pred = b.selectbox("Predicate (allowed for these types)", preds,
                                   format_func=task.display_label, key=f"ann_pred::{doc}::{d['gen']}")
            else:
                b.warning(f"No CMeIE schema relates a {md(subj[1])} subject to a {md(obj[1])} object.")
            combined = combined_for(ex.text, subj[0], obj[0])
            st.caption(f"Combined: **{md(combined)}** (true when no 。-sentence holds both mentions)")
            if st.button("Add triple", disabled=pred is None or READ_ONLY, key=f"ann_add_triple::{doc}"):
                new = Triple(subj[0], pred, obj[0], subj[1], obj[1], combined)
                if any((t.subject, t.predicate, t.object) == (new.subject, new.predicate, new.object)
                       for t in d["ann"].triples):
                    st.warning("This triple is already there.")
                else:
                    d["ann"] = replace(d["ann"], triples=d["ann"].triples + (new,))
                    st.rerun()

        st.markdown("**Triples**")
        if not d["ann"].triples:
            st.caption("none")
        for i, t in enumerate(d["ann"].triples):
            r1, r2 = st.columns([8, 1])
            r1.text(f"{i + 1}. {t.subject} ({t.subject_type}) —{task.display_label(t.predicate)}→ "
                    f"{t.object} ({t.object_type}) · Combined {t.combined}")
            if r2.button("Remove", key=f"ann_trm::{doc}::{d['gen']}::{i}", disabled=READ_ONLY):
                d["ann"] = replace(d["ann"], triples=d["ann"].triples[:i] + d["ann"].triples[i + 1:])
                st.rerun()

    def edit_label(ex, d: dict, doc: str) -> None:
        codes = list(task.label_codes)
        cur = d["ann"].label
        if cur not in (None, "") and cur not in codes:
            codes.append(cur)
        choice = st.selectbox("Label", codes, index=codes.index(cur) if cur in codes else None,
                              format_func=task.display_label, key=f"ann_label::{doc}::{d['gen']}",
                              placeholder="no label", disabled=READ_ONLY)
        if choice is not None and choice != cur:
            d["ann"] = replace(d["ann"], label=choice)

    def edit_terms(ex, d: dict, doc: str) -> None:
        icd = ws.resources.icd_terms()
        cur = list(d["ann"].terms)
        q = st.text_input("Search the ICD-10 list (term or code)", key="ann_icd_q",
                          placeholder="e.g. 糖尿病 or E11")
        matches: list[str] = []
        if q.strip():
            needle = q.strip()
            matches = [t.term for t in icd if needle in t.term or needle.upper() in t.code.upper()][:200]
            st.caption(f"{len(matches):d} matching terms" + (" (first 200)" if len(matches) == 200 else ""))
        elif not icd:
            st.caption("No ICD-10 list in the workspace: any term is accepted.")
        options = list(dict.fromkeys(cur + matches))
        picked = st.multiselect("Normalised terms (the search adds candidates)", options, default=cur,
                                key=f"ann_terms::{doc}::{d['gen']}::{zlib.crc32(q.encode())}",
                                accept_new_options=not icd, disabled=READ_ONLY)
        if list(picked) != cur:
            d["ann"] = replace(d["ann"], terms=tuple(picked))

    def show_conflict(ex, exc: EditConflict, dataset_id: int, idx: int) -> None:
        """Both versions side by side, and the choice: keep mine (save again on their revision) or
        keep theirs (reload)."""
        st.error(f"Edit conflict on example {idx:d}: it was saved by someone else while you edited it "
                 f"(now revision {exc.current_revision:d}). Which version do you keep?")
        m1, m2 = st.columns(2)
        with m1:
            st.markdown("**Mine (not saved)**")
            show_annotation(ex, exc.mine, task)
            st.button("Keep mine (save over their version)", type="primary", on_click=on_keep_mine,
                      args=(dataset_id, idx), key="ann_keep_mine", disabled=READ_ONLY)
        with m2:
            st.markdown(f"**Theirs (saved, revision {exc.current_revision:d})**")
            show_annotation(ex, exc.current, task)
            st.button("Keep theirs (reload, drop mine)", on_click=on_keep_theirs, args=(dataset_id, idx),
                      key="ann_keep_theirs")
        st.caption("Differences (theirs → mine): " + md(change_summary(exc.current, exc.mine, task, limit=12)))
        if exc.theirs:
            st.dataframe(events_frame(exc.theirs, task), hide_index=True, width="stretch")

    EDITORS = {"spans": edit_spans, "triples": edit_triples, "label": edit_label, "terms": edit_terms}

    with tab["Edit"]:
        if is_open("Edit"):
            n1, n2, n3, n4 = st.columns([1, 1, 3, 2])
            n1.button("◀ Previous", on_click=on_step, args=(-1, info.records), key="ann_prev",
                      disabled=int(st.session_state.get("ann_example", 0)) <= 0)
            n2.button("Next ▶", on_click=on_step, args=(1, info.records), key="ann_next",
                      disabled=int(st.session_state.get("ann_example", 0)) >= info.records - 1)
            idx = int(n3.number_input("Record number (0-based)", min_value=0,
                                      max_value=max(info.records - 1, 0), step=1, key="ann_example"))
            n4.toggle("Large type", key="ann_big")
            st.query_params.update({"task": task_name, "split": split, "example": str(idx)})
            ex = ws.datasets.example(did, idx)
            if ex is None:
                st.warning("No such example.")
            else:
                doc = doc_key(did, idx)
                with guard("Loading the example's annotation"):
                    d = load_draft(ws, did, idx)
                    restore_draft(ws, did, idx, d)
                    _head, rev = d["head"]
                    dirty = d["ann"] != d["loaded"]

                    exc = conflicts().get(doc)
                    with st.container():                # always there: see the flash messages
                        if d.get("restored") and dirty and exc is None:
                            st.info(f"Restored your unsaved changes from {md(d['restored'])} (kept for this "
                                    "browser when the page was closed or reloaded); Save or Discard them.",
                                    icon=":material/history:")
                        if exc is not None:
                            show_conflict(ex, exc, did, idx)

                    st.markdown(f"**Example {idx:d}** of {info.records:d} · revision {rev:d}"
                                + (f" · key {md(ex.key)}" if ex.key and ex.key != ex.text else ""))
                    EDITORS[kind](ex, d, doc)
                    if kind != "spans":
                        show_annotation(ex, d["ann"], task, big=st.session_state.get("ann_big", False))
                    settle(d)
                    dirty = d["ann"] != d["loaded"]
                    sync_draft(did, idx, d)
                    if dirty:
                        st.warning("Unsaved changes: " + md(change_summary(d["loaded"], d["ann"], task, limit=8)))
                        if d.get("kept") is False:
                            st.caption("This edit is too large to be kept across a page reload: save it.")
                    if rev != d["base"] and exc is None:
                        st.warning(f"Saved meanwhile by someone else (revision {rev:d}, you started from "
                                   f"{d['base']:d}): saving will ask which version to keep.")

                    elsewhere = sorted(int(k.split(":")[1]) for k, v in drafts().items()
                                       if k.startswith(f"{did}:") and k != doc and v["ann"] != v["loaded"])
                    if elsewhere:
                        st.caption("Unsaved edits in this session also on example(s) "
                                   + ", ".join(f"{i:d}" for i in elsewhere[:20]) + ": go back to save them.")
                    st.text_input("Reason for the edit (kept with it)", key="ann_reason",
                                  placeholder="e.g. boundary: include 无力; wrong type", disabled=READ_ONLY)
                    b1, b2, b3 = st.columns(3)
                    b1.button("Save", type="primary", on_click=on_save, args=(did, idx), key="ann_save",
                              disabled=not dirty or READ_ONLY, help="Ctrl+S in the span editor")
                    b2.button("Discard unsaved changes", on_click=on_discard, args=(did, idx),
                              key="ann_discard", disabled=not dirty)
                    events = ws.annotations.events(did, idx)
                    mine = [e for e in events if e.author == user_name()]
                    b3.button("Undo my last saved edit", on_click=on_undo_mine, args=(did, idx),
                              key="ann_undo_mine", disabled=not mine or dirty or READ_ONLY,
                              help="Reverts your latest event on this example (a new event)")

                    st.subheader("History of this example")
                    if not events:
                        st.caption("No edits yet: the gold is as ingested (revision 0).")
                    else:
                        st.dataframe(events_frame(events[::-1], task), hide_index=True, width="stretch")
                        st.caption("Revert restores the gold an event replaced, as a new event; an event "
                                   "whose result was changed since needs those later changes reverted first.")
                        for e in events[::-1][:20]:
                            h1, h2 = st.columns([6, 1])
                            h1.caption(f"#{e.event_id:d} · {md(e.author)} · {md(e.created_at)} · {md(e.kind)} · "
                                       f"{md(e.reason or '(no reason)')}")
                            h2.button("Revert", key=f"ann_revert::{e.event_id}", on_click=on_revert,
                                      args=(e.event_id, did, idx), disabled=dirty or READ_ONLY,
                                      help="Save or discard your unsaved changes first" if dirty else None)

    # ====================================================================== Versions
    with tab["Versions"]:
        if is_open("Versions"):
            with guard("Versions"):
                versions = ws.annotations.versions(did)
                v1, v2 = st.columns([3, 1])
                vname = v1.text_input("Name of a new snapshot of the current gold", key="ann_ver_name",
                                      placeholder="e.g. reviewed-2024-06", disabled=READ_ONLY)
                if v2.button("Create version", key="ann_ver_create", disabled=READ_ONLY) and not READ_ONLY:
                    try:
                        made = ws.annotations.create_version(did, vname, user_name())
                        st.success(f"Created version {md(repr(made.name))} (events up to #{made.last_event_id:d}).")
                        versions = ws.annotations.versions(did)
                    except Exception as exc:  # noqa: BLE001 - ValueError: refused; the others are logged
                        st.error(f"Not created: {md(failure('Creating a version', exc))}")
                if versions:
                    st.dataframe(pd.DataFrame([{"name": v.name, "author": v.author, "created": v.created_at,
                                                "last event": v.last_event_id, "edited examples": v.edited}
                                               for v in versions]), hide_index=True, width="stretch")
                else:
                    st.caption("No named versions yet.")
                names = [ORIGINAL] + [v.name for v in versions] + [CURRENT]
                st.markdown("**Differences between two versions**")
                d1, d2 = st.columns(2)
                va = d1.selectbox("From", names, index=0, key="ann_diff_a")
                vb = d2.selectbox("To", names, index=len(names) - 1, key="ann_diff_b")
                diffs = ws.annotations.diff_versions(did, version_arg(va), version_arg(vb))
                if not diffs:
                    st.info(f"No example differs between {md(va)} and {md(vb)}.")
                else:
                    frame = pd.DataFrame([{"idx": x.idx, "change": change_summary(x.before, x.after, task)}
                                          for x in diffs])
                    ev = st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                                      selection_mode="single-row", key="ann_diff_table")
                    rows = selected(ev)
                    pick = st.selectbox("Show an example", [x.idx for x in diffs], key="ann_diff_pick")
                    if rows:
                        pick = int(frame.iloc[rows[0]]["idx"])
                    diff = next(x for x in diffs if x.idx == pick)
                    ex = ws.datasets.example(did, pick)
                    p1, p2 = st.columns(2)
                    with p1:
                        st.markdown(f"**{md(va)}**")
                        show_annotation(ex, diff.before, task)
                    with p2:
                        st.markdown(f"**{md(vb)}**")
                        show_annotation(ex, diff.after, task)
                    st.button("Open this example in the editor", key="ann_diff_open", on_click=on_goto,
                              args=(pick,))

    # ====================================================================== Review queue
    with tab["Review queue"]:
        if is_open("Review queue"):
            with guard("Review queue"):
                from cblue_core.annotation.review import review_queue

                items = review_queue(ws, did, limit=100)
                if not items:
                    st.info("Nothing to review: no validation defect, no example every run gets wrong, "
                            "no disagreement between runs, no mention typed inconsistently.")
                else:
                    st.caption("Examples whose gold deserves a second look, most suspicious first. "
                               "Select a row (or pick one below) to open it in the editor.")
                    frame = pd.DataFrame([{"idx": it.idx, "reason": it.reason, "score": round(it.score, 3),
                                           "detail": it.detail} for it in items])
                    ev = st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                                      selection_mode="single-row", key="ann_rq_table")
                    rows = selected(ev)
                    if rows and rows != st.session_state.get("ann_rq_last"):
                        st.session_state.ann_rq_last = rows
                        st.session_state.ann_goto = (int(frame.iloc[rows[0]]["idx"]), "Edit")
                        st.rerun()
                    st.session_state.ann_rq_last = rows
                    r1, r2 = st.columns([3, 1])
                    choice = r1.selectbox("Item", range(len(items)), key="ann_rq_pick",
                                          format_func=lambda i: f"#{items[i].idx} · {items[i].reason} · "
                                                                f"{items[i].detail[:80]}")
                    r2.button("Open in the editor", key="ann_rq_open", on_click=on_goto,
                              args=(items[choice].idx,))

    # ====================================================================== Agreement
    with tab["Agreement"]:
        if is_open("Agreement"):
            with guard("Agreement"):
                from cblue_core.annotation.agreement import adjudicate, cohen_kappa, span_agreement

                authors = ws.annotations.authors(did)
                if len(authors) < 2:
                    st.info("Agreement compares the saved edits of two annotators on this split; "
                            f"so far: {md(', '.join(authors) or 'nobody')}. Each annotator sets a name in "
                            "the sidebar and saves their version of the same examples.")
                else:
                    g1, g2 = st.columns(2)
                    a_name = g1.selectbox("Annotator A", authors, index=0, key="ann_ag_a")
                    ma = ws.annotations.by_author(did, a_name)
                    others = [x for x in authors if x != a_name]
                    shared = {x: len(set(ma) & set(ws.annotations.by_author(did, x))) for x in others}
                    b_name = g2.selectbox("Annotator B", others, key="ann_ag_b",
                                          index=others.index(max(others, key=lambda x: shared[x])),
                                          format_func=lambda x: f"{x} ({shared[x]} examples in common)")
                    mb = ws.annotations.by_author(did, b_name)
                    common = sorted(set(ma) & set(mb))
                    if not common:
                        st.info(f"{md(a_name)} and {md(b_name)} have saved no example in common.")
                    else:
                        if kind == "label":
                            la, lb = [ma[i].label for i in common], [mb[i].label for i in common]
                            kappa = cohen_kappa(la, lb)
                            same = sum(x == y for x, y in zip(la, lb))
                            k1, k2 = st.columns(2)
                            k1.metric("Cohen's kappa", f"{kappa:.3f}")
                            k2.metric("Raw agreement", f"{same / len(common):.3f}", help=f"{len(common):d} examples")
                            differ = [i for i, x, y in zip(common, la, lb) if x != y]
                        else:
                            ag = span_agreement([ma[i] for i in common], [mb[i] for i in common])
                            k1, k2, k3, k4 = st.columns(4)
                            k1.metric("F1", f"{ag.f1:.3f}")
                            k2.metric(f"Precision ({md(b_name)} vs {md(a_name)})", f"{ag.precision:.3f}")
                            k3.metric("Recall", f"{ag.recall:.3f}")
                            k4.metric("Examples", ag.examples)
                            if ag.per_type:
                                st.dataframe(pd.DataFrame([{"type": task.display_label(t), **p.to_dict()}
                                                           for t, p in ag.per_type.items()]),
                                             hide_index=True, width="stretch")
                            differ = [common[p] for p in ag.disagreements]
                        st.markdown("**Adjudication**")
                        if not differ:
                            st.success("The two annotators agree on every common example.")
                        else:
                            pick = st.selectbox("Example where they differ", differ, key="ann_adj_idx")
                            ex = ws.datasets.example(did, pick)
                            # The revision the adjudicator sees, recorded when the comparison opens:
                            # the save names it, so an edit saved meanwhile is a conflict.
                            adj_doc = doc_key(did, pick)
                            _gold_now, rev_now = ws.annotations.current(did, pick)
                            seen = st.session_state.get("ann_adj_seen")
                            if not seen or seen[0] != adj_doc:
                                seen = (adj_doc, rev_now)
                                st.session_state.ann_adj_seen = seen
                            seen_rev = seen[1]
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
                                    "Label to keep", ["a", "b"], horizontal=True, key=f"ann_adj_label::{pick}",
                                    format_func=lambda w: f"{md(a_name if w == 'a' else b_name)}: "
                                    f"{md(task.display_label((a_ann if w == 'a' else b_ann).label or '∅'))}")
                            disputed = []
                            for field_name in ("spans", "triples", "terms"):
                                xa, xb = getattr(a_ann, field_name), getattr(b_ann, field_name)
                                if field_name == "spans":
                                    ka = {(s.start, s.end, s.type) for s in xa}
                                    kb = {(s.start, s.end, s.type) for s in xb}
                                    key_of = lambda s: (s.start, s.end, s.type)
                                    show = lambda s: f"{s.type} {ex.text[s.start:s.end]} [{s.start},{s.end})"
                                elif field_name == "triples":
                                    ka = {(t.subject, t.predicate, t.object) for t in xa}
                                    kb = {(t.subject, t.predicate, t.object) for t in xb}
                                    key_of = lambda t: (t.subject, t.predicate, t.object)
                                    show = lambda t: f"({t.subject}, {t.predicate}, {t.object})"
                                else:
                                    ka, kb = set(xa), set(xb)
                                    key_of = lambda t: t
                                    show = str
                                seen = set()
                                for item in list(xa) + list(xb):
                                    k = key_of(item)
                                    if k in seen or (k in ka and k in kb):
                                        continue
                                    seen.add(k)
                                    disputed.append((item, k in ka, show(item)))
                            if disputed:
                                st.caption("Items only one annotator has: tick those to keep (items both "
                                           "have are kept).")
                            for n, (item, in_a, shown) in enumerate(disputed):
                                who = a_name if in_a else b_name
                                keep[item] = st.checkbox(f"{md(shown)} — only {md(who)}", value=in_a,
                                                         key=f"ann_adj::{pick}::{n}")
                            result = adjudicate(a_ann, b_ann, keep)
                            st.markdown("**Adjudicated**")
                            show_annotation(ex, result, task)
                            if rev_now != seen_rev:
                                st.warning(f"Example {pick:d} was saved meanwhile (now revision {rev_now:d}; "
                                           f"the comparison was opened at revision {seen_rev:d}): saving "
                                           "will be refused. Reopen the comparison to adjudicate on it.")
                                st.button("Reopen the comparison on the current gold", key="ann_adj_reload",
                                          on_click=lambda: st.session_state.pop("ann_adj_seen", None))
                            st.caption(f"Saved on revision {seen_rev:d} of example {pick:d}, the one shown.")
                            if st.button("Save the adjudicated version", type="primary", key="ann_adj_save",
                                         disabled=READ_ONLY) and not READ_ONLY:
                                try:
                                    adj_ev = ws.annotations.save(
                                        did, pick, result, author=user_name(), base_revision=seen_rev,
                                        reason=f"adjudication of {a_name} and {b_name}")
                                except EditConflict as exc:
                                    st.error(f"Edit conflict: not saved: {md(exc)}")
                                except Exception as exc:  # noqa: BLE001 - ValueError: refused; the others logged
                                    st.error(f"Not saved: {md(failure('Saving an adjudication', exc))}")
                                else:
                                    st.session_state.pop("ann_adj_seen", None)   # next view: the new revision
                                    st.success(f"Saved example {pick:d} as event #{adj_ev.event_id:d}.")

    # ====================================================================== Re-score
    with tab["Re-score"]:
        if is_open("Re-score"):
            with guard("Re-score"):
                from cblue_core.annotation.rescore import error_changes

                runs = ws.runs.all(did)
                if not runs:
                    st.info(f"No runs on {md(task_name)} {md(split)}: import a predictions file on the Runs page.")
                else:
                    by_id = {r.run_id: r for r in runs}
                    names = [ORIGINAL] + [v.name for v in ws.annotations.versions(did)] + [CURRENT]
                    s1, s2, s3 = st.columns([3, 1, 1])
                    run_id = s1.selectbox("Run", list(by_id), format_func=lambda i: run_label(by_id[i]),
                                          key="ann_rs_run")
                    base = s2.selectbox("Scored on", names, index=0, key="ann_rs_base")
                    target = s3.selectbox("Re-scored on", names, index=len(names) - 1, key="ann_rs_version")
                    events_now = ws.annotations.events(did)
                    stamp = (run_id, base, target, max((e.event_id for e in events_now), default=0))
                    cached = st.session_state.get("ann_rs_cache")
                    if not cached or cached[0] != stamp:
                        with st.spinner("Re-scoring…"):
                            cached = (stamp, error_changes(ws, run_id, version_arg(target), base=version_arg(base)))
                        st.session_state.ann_rs_cache = cached
                    ch = cached[1]
                    fmt = (lambda v: "n/a" if v is None else f"{v:.4f}")
                    m1, m2, m3 = st.columns(3)
                    m1.metric(f"{md(ch.headline)} on {md(base)}", fmt(ch.before))
                    m2.metric(f"{md(ch.headline)} on {md(target)}", fmt(ch.after),
                              delta=None if ch.delta is None else f"{ch.delta:+.4f}")
                    m3.metric("Examples whose errors changed", len(ch.examples))
                    cols = ["idx", "category", "gold_label", "pred_label", "gold_text", "pred_text"]
                    for title, rows in ((f"Errors that disappear on {target} ({len(ch.fixed)})", ch.fixed),
                                        (f"Errors that appear on {target} ({len(ch.new)})", ch.new)):
                        st.markdown(f"**{md(title)}**")
                        if rows:
                            frame = pd.DataFrame(rows)
                            st.dataframe(frame[[c for c in cols if c in frame.columns] or list(frame.columns)],
                                         hide_index=True, width="stretch")
                        else:
                            st.caption("none")
                    if ch.examples:
                        o1, o2 = st.columns([3, 1])
                        go = o1.selectbox("Open a changed example", list(ch.examples), key="ann_rs_pick")
                        o2.button("Open in the editor", key="ann_rs_open", on_click=on_goto, args=(go,))

    # ====================================================================== Export
    with tab["Export"]:
        if is_open("Export"):
            with guard("Export"):
                from cblue_core.annotation import export as exporter

                names = [CURRENT, ORIGINAL] + [v.name for v in ws.annotations.versions(did)]
                version = st.selectbox("Gold version", names, key="ann_exp_version")
                stem = f"{task_name}_{split}" + ("" if version == CURRENT else f"_{version}")
                gold = ws.annotations.gold_examples(did, version_arg(version))
                st.caption(f"{len(gold):d} examples; {len(ws.annotations.edited_indices(did, version_arg(version))):d} "
                           "edited since ingest.")

                def build_official() -> bytes:
                    with tempfile.TemporaryDirectory() as tmp:
                        return exporter.export_official(ws, did, version_arg(version), Path(tmp)).read_bytes()

                formats = [
                    ("Official format", build_official, task.files.get(split) or f"{stem}.json",
                     "application/json"),
                    ("brat (zip of .txt/.ann + annotation.conf)",
                     lambda: exporter.zip_files(exporter.to_brat(task, gold)), f"{stem}_brat.zip",
                     "application/zip"),
                    ("doccano (zip of the JSONL and a README on the project settings it needs)",
                     lambda: exporter.zip_files(exporter.doccano_files(task, gold, f"{stem}_doccano")),
                     f"{stem}_doccano.zip", "application/zip"),
                    ("Label Studio (zip of the tasks and their labeling config)",
                     lambda: exporter.zip_files(exporter.label_studio_files(task, gold, f"{stem}_label_studio")),
                     f"{stem}_label_studio.zip", "application/zip"),
                ]
                for n, (label, build, file_name, mime) in enumerate(formats):
                    try:
                        data = build()
                    except Exception as exc:  # noqa: BLE001 - ValueError: format refused; the others logged
                        st.warning(f"{label}: not available for {md(task_name)}: "
                                   f"{md(failure(f'Export {label}', exc))}")
                        continue
                    st.download_button(f"Download {label}", data, file_name=file_name, mime=mime,
                                       key=f"ann_exp_{n}", on_click="ignore")
