"""Suggestions on the Edit tab: the source selector (a run of this split or a model predicted
live), what it suggests for the example, and accepting or rejecting it.

The source is ``st.session_state[Annotate.SUGGEST_SOURCE]`` (``"run:ID"`` / ``"model:NAME"``,
None for none): the Review tab's queues set it (with ``Annotate.GOTO``) to open an example with
its suggestion ready. Spans are accepted in the span editor (their values come back through
:func:`note_editor`), triples and labels below it. An accepted item is an ordinary edit of the
draft; the draft also remembers it (``d["accepted"]``: source key -> suggestions), so that the
save records where it came from (:func:`provenance`). Rejected items stay hidden for the example
in this session. Nothing is written before Save.
"""
from __future__ import annotations

from dataclasses import replace

import streamlit as st

from app_pages.annotate import session as S
from app_pages.annotate.context import Context
from app_pages.common import device_choice, load_model, md, model_dirs, model_failure
from app_pages.keys import Annotate as K
from cblue_core.annotation.model import Annotation
from cblue_core.annotation.provenance import Provenance, Suggestion, SuggestionSource, kept_provenance
from cblue_core.annotation.suggestions import Suggestions, model_suggestions, run_sources, run_suggestions
from cblue_core.records import Example, Triple

KINDS = frozenset({"spans", "triples", "label"})     # what a source can suggest (not CHIP-CDN terms)
CACHE_SIZE = 64          # suggestions kept per session: a live model predicts each example once


@st.cache_data(ttl=60, show_spinner=False, max_entries=32)
def _task_models(task: str, folders: tuple[str, ...]) -> dict[str, str]:
    """Name -> folder of the usable models of ``task`` (listing reads every model card: ~20 ms,
    too much for every rerun of the Edit tab; a new folder shows within a minute)."""
    from cblue_core.models.registry import list_models

    return {m.name: str(m.path) for m in list_models(list(folders)) if m.ok and m.task == task}


def _sources(ctx: Context) -> dict[str, str]:
    """Source key -> its name in the selector: the dataset's runs, then the task's models."""
    out = {}
    for r in run_sources(ctx.ws.runs, ctx.dataset_id):
        out[f"run:{r.run_id}"] = f"run {r.run_id} · {r.name}" + (f" ({r.model})" if r.model else "")
    for name in _task_models(ctx.task.name, tuple(model_dirs())):
        out[f"model:{name}"] = f"model {name} (predicted live on the example)"
    return out


def pick_source(ctx: Context) -> SuggestionSource | None:
    if ctx.kind not in KINDS:
        return None
    options = _sources(ctx)
    wanted = st.session_state.get(K.SUGGEST_SOURCE)
    if wanted is not None and wanted not in options:
        st.warning(f"No suggestions from {md(str(wanted))}: it is not a run of this split (same version) "
                   "nor a model of this task.")
        st.session_state[K.SUGGEST_SOURCE] = None
    choice = st.selectbox("Suggestions from", [None, *options], key=K.SUGGEST_SOURCE,
                          format_func=lambda k: "none" if k is None else options[k], placeholder="none",
                          help="A run of this split, or a model predicted live on the example: what it "
                               "predicts beyond the gold is offered, to accept or reject. Nothing is "
                               "saved before Save.")
    return SuggestionSource.parse(choice)


def _cache() -> dict[tuple, Suggestions]:
    return st.session_state.setdefault(K.SUGGESTED, {})


def _compute(ctx: Context, source: SuggestionSource, ex: Example, gold: Annotation) -> Suggestions:
    if source.kind == "run":
        return run_suggestions(ctx.ws.runs, source, ctx.dataset_id, ex.index, gold)
    path = _task_models(ctx.task.name, tuple(model_dirs())).get(source.name)
    if path is None:
        raise ValueError(f"no model {source.name!r} for {ctx.task.name} in the model folders")
    predictor, _ = load_model(path, ctx.task.name, device_choice())
    with st.spinner(f"Predicting with {md(source.name)}…"):
        return model_suggestions(predictor, source, ex, gold)


def offered(ctx: Context, ex: Example, d: S.Draft, doc: str) -> Suggestions | None:
    """The selector, and what its source suggests for the example (computed once per source,
    example and gold revision), with a word on what it lacks."""
    source = pick_source(ctx)
    if source is None:
        return None
    key = (source.key, doc, d["base"])
    cache = _cache()
    got = cache.get(key)
    if got is None:
        try:
            got = _compute(ctx, source, ex, d["loaded"])
        except ValueError as exc:
            st.warning(md(str(exc)))
            return None
        except Exception as exc:  # noqa: BLE001 - a model that fails to load or run: logged by model_failure
            st.warning(md(model_failure(exc, device_choice())))
            return None
        while len(cache) >= CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = got
    if not got.predicted:
        st.caption(f"{md(str(source))} has no prediction for this example.")
    elif not got.items:
        st.caption(f"{md(str(source))} suggests nothing beyond the gold here.")
    elif not got.scored:
        st.caption(f"{md(str(source))} gives no confidence for its suggestions: none is shown (?).")
    return got


def _current(doc: str) -> Suggestions | None:
    """What the selected source offers for ``doc`` now (from the cache), for a callback."""
    try:
        source = SuggestionSource.parse(st.session_state.get(K.SUGGEST_SOURCE))
    except ValueError:           # set by another tab to something else: pick_source says so
        return None
    d = S.drafts().get(doc)
    if source is None or d is None:
        return None
    return _cache().get((source.key, doc, d["base"]))


def rejected(doc: str) -> set[tuple]:
    return st.session_state.setdefault(K.SUGGEST_REJECTED, {}).setdefault(doc, set())


def pending(items: tuple[Suggestion, ...], d: S.Draft, doc: str) -> list[Suggestion]:
    """Suggestions neither in the draft already nor rejected."""
    held = {Suggestion(s).identity for s in d["ann"].spans} | {Suggestion(t).identity for t in d["ann"].triples}
    gone = rejected(doc)
    return [s for s in items if s.identity not in held and s.identity not in gone]


def _remember(d: S.Draft, source: SuggestionSource, items: list[Suggestion]) -> None:
    d.setdefault("accepted", {}).setdefault(source.key, []).extend(items)


def provenance(d: S.Draft, saved: Annotation) -> tuple[Provenance, ...]:
    """What the draft accepted that ``saved`` still holds, per source."""
    accepted = d.get("accepted") or {}
    return kept_provenance({src: v for k, v in accepted.items() if (src := SuggestionSource.parse(k))}, saved)


def note_editor(value: dict, d: S.Draft, doc: str) -> None:
    """The span editor's accepted and rejected suggestions: the accepted ones (with the score
    the page offered, never one the browser sent) remembered in the draft, the rejected hidden."""
    sugg = _current(doc)
    if sugg is None:
        return
    by_id = {s.identity: s for s in sugg.spans}
    ids = [("span", s["start"], s["end"], s["type"]) for s in value.get("accepted", [])]
    known = {s.identity for s in d.get("accepted", {}).get(sugg.source.key, [])}
    _remember(d, sugg.source, [by_id[i] for i in dict.fromkeys(ids) if i in by_id and i not in known])
    rejected(doc).update(i for i in (("span", s["start"], s["end"], s["type"]) for s in value.get("rejected", []))
                         if i in by_id)


# ---------------------------------------------------------------------- triples and labels

def _accept_triples(doc: str, ids: list[tuple]) -> None:
    sugg, d = _current(doc), S.drafts().get(doc)
    if sugg is None or d is None:
        return
    held = {Suggestion(t).identity for t in d["ann"].triples}
    chosen = [s for s in sugg.triples if s.identity in set(ids) and s.identity not in held]
    d["ann"] = replace(d["ann"], triples=d["ann"].triples + tuple(s.item for s in chosen
                                                                  if isinstance(s.item, Triple)))
    _remember(d, sugg.source, chosen)


def _reject(doc: str, identity: tuple) -> None:
    rejected(doc).add(identity)


def _use_label(doc: str) -> None:
    sugg, d = _current(doc), S.drafts().get(doc)
    if sugg is None or d is None or sugg.label is None:
        return
    d["ann"] = replace(d["ann"], label=sugg.label.item)
    st.session_state[K.label(doc, d["gen"])] = sugg.label.item     # the label selector follows
    _remember(d, sugg.source, [sugg.label])


def _score(s: Suggestion) -> str:
    return "no confidence" if s.score is None else f"{s.score:.2f}"


def show_triples(ctx: Context, d: S.Draft, doc: str, sugg: Suggestions) -> None:
    todo = pending(sugg.triples, d, doc)
    if not todo:
        return
    h1, h2 = st.columns([5, 2])
    h1.markdown(f"**Suggested triples** ({len(todo):d}, from {md(str(sugg.source))})")
    h2.button("Accept all", key=K.SUGGEST_ALL_TRIPLES, on_click=_accept_triples,
              args=(doc, [s.identity for s in todo]), disabled=ctx.read_only)
    for n, s in enumerate(todo):
        t = s.item
        if not isinstance(t, Triple):
            continue
        r1, r2, r3 = st.columns([8, 1, 1])
        r1.text(f"{t.subject} ({t.subject_type}) —{ctx.task.display_label(t.predicate)}→ "
                f"{t.object} ({t.object_type}) · {_score(s)}")
        r2.button("Accept", key=K.suggested_triple(doc, n, True), on_click=_accept_triples, args=(doc, [s.identity]),
                  disabled=ctx.read_only)
        r3.button("Reject", key=K.suggested_triple(doc, n, False), on_click=_reject, args=(doc, s.identity))


def show_label(ctx: Context, d: S.Draft, doc: str, sugg: Suggestions) -> None:
    s = sugg.label
    if s is None or s.item == d["ann"].label or s.identity in rejected(doc):
        return
    c1, c2 = st.columns([5, 2])
    if s.score is None:
        c1.markdown(f"**Suggested label:** {md(ctx.task.display_label(str(s.item)))} · no confidence "
                    f"(from {md(str(sugg.source))})")
    else:
        c1.markdown(f"**Suggested label:** {md(ctx.task.display_label(str(s.item)))} · probability "
                    f"{s.score:.2f} (from {md(str(sugg.source))})")
    c2.button("Use suggestion", key=K.SUGGEST_USE_LABEL, on_click=_use_label, args=(doc,),
              disabled=ctx.read_only)


PANELS = {"triples": show_triples, "label": show_label}
