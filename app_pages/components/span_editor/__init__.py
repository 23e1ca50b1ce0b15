"""The span editor: a Streamlit custom component served from local files (no CDN, no build).

``span_editor(text, spans, types, *, key, big=False, doc=None, browser=None, readonly=False,
offsets="exclusive", notice=None, suggestions=()) -> dict | None`` (see ``docs/annotation-api.md``). The frontend (``frontend/``: hand-written HTML, CSS and JavaScript)
speaks the component protocol itself with ``window.parent.postMessage``. It draws nested spans
as stacked layers, creates a span from a mouse selection, retypes or deletes a clicked span, and
keeps a local undo stack; keys: 1-9 type, Delete/Backspace, Ctrl+S save, Ctrl+Z undo,
Alt+→ / Alt+← next / previous example.

The value returned is ``{"spans": [{"start", "end", "type"}, ...], "action": "change" | "save" |
"next" | "prev" | "undo" | "hello" | "accept" | "reject", "nonce": n, "doc": d, "browser": b,
"accepted": [...], "rejected": [...]}``; ``nonce`` grows with
every action, so the page acts on a value once (a rerun returns the same value with the same
nonce); ``doc`` is the ``doc`` argument of the call the editor was showing when the action
happened (None if not given).

``browser`` identifies the browser (not the session): 32 random hex digits the frontend makes
once and keeps in the browser's ``localStorage`` (the component's frame is same-origin with the
app), or None where the browser keeps no storage for it. It is untrusted input: a value that is
not 32 lowercase hex digits becomes None. When the page does not know the id yet (its
``browser`` argument differs), the editor sends a ``"hello"`` value (its spans unchanged) as
soon as it is first drawn, so that a reloaded page can find the unsaved draft of this browser.

``readonly=True`` shows the spans but refuses every edit and the save (next / previous work).

``suggestions`` (``{"start", "end", "type", "score"}``, ``score`` a confidence or None) are drawn
dashed, apart from the spans, with their score in the label; each is accepted (it becomes an
ordinary span: ``"accept"``) or rejected (it disappears: ``"reject"``) with a click or a key
(Enter/A accept, X/Backspace reject the focused one, Shift+A accepts all). ``accepted`` and
``rejected`` in the value list the suggestions accepted and rejected since the editor last
started on the document (``{"start", "end", "type"}``; absent from older values: read as []).

The page should read the value *before* it draws the editor (:func:`editor_value`, or
``st.session_state[key]``) and pass the spans it keeps back in: the editor treats spans equal
to its own last value as an echo (it keeps its undo stack), and any other spans as a reload.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import streamlit.components.v1 as components

from cblue_core.annotation.drafts import valid_browser_id
from cblue_core.render.palette import color_for

FRONTEND = Path(__file__).resolve().parent / "frontend"
ACTIONS = ("change", "save", "next", "prev", "undo", "hello", "accept", "reject")



@functools.cache
def _component():
    """The editor, declared in the first script run that shows it: a component declared at import
    is registered with no server's runtime when the module is imported before one runs
    (``serve.py`` imports the pages while the server starts), and every page then showed
    "Component not found" in its place."""
    return components.declare_component("span_editor", path=str(FRONTEND))


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def normalise_spans(spans: Iterable[Any] | None, length: int | None = None) -> list[dict]:
    """Plain ``{"start", "end", "type"}`` dicts (from dicts or ``Span`` records), sorted by
    (start, -end, type), duplicates and malformed or out-of-range spans dropped."""
    out: dict[tuple[int, int, str], None] = {}
    for s in spans or ():
        a, b, t = _int(_field(s, "start")), _int(_field(s, "end")), _field(s, "type")
        if a is None or b is None or t is None or not 0 <= a < b:
            continue
        if length is not None and b > length:
            continue
        out.setdefault((a, b, str(t)), None)
    return [{"start": a, "end": b, "type": t} for a, b, t in sorted(out, key=lambda k: (k[0], -k[1], k[2]))]


def _score(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return round(float(v), 4)


def normalise_suggestions(items: Iterable[Any] | None, length: int | None = None) -> list[dict]:
    """``{"start", "end", "type", "score"}`` dicts from dicts, or ``Suggestion`` records holding
    a ``Span`` (``.item``, ``.score``), checked as :func:`normalise_spans` checks spans."""
    scores: dict[tuple[int, int, str], float | None] = {}
    plain = []
    for s in items or ():
        item = getattr(s, "item", s)
        plain.append(item)
        a, b, t = _int(_field(item, "start")), _int(_field(item, "end")), _field(item, "type")
        if a is not None and b is not None and t is not None:
            scores.setdefault((a, b, str(t)), _score(_field(s, "score")))
    return [{**s, "score": scores.get((s["start"], s["end"], s["type"]))} for s in normalise_spans(plain, length)]


def editor_types(types: Iterable[Any]) -> list[dict]:
    """``{"code", "zh", "en", "colour"}`` per type; ``colour`` is the palette index that
    :func:`cblue_core.render.palette.color_for` gives the type in this order (same colours as
    the read-only renderer)."""
    rows = []
    for t in types:
        if isinstance(t, str):
            rows.append({"code": t, "zh": t, "en": ""})
        else:
            code = str(_field(t, "code"))
            rows.append({"code": code, "zh": str(_field(t, "zh") or code), "en": str(_field(t, "en") or "")})
    order = [r["code"] for r in rows]
    for r in rows:
        r["colour"] = color_for(r["code"], order).index
    return rows


def parse_value(value: Any, length: int | None = None) -> dict | None:
    """The component's value checked and normalised, or None when it is not one."""
    if not isinstance(value, Mapping):
        return None
    action, nonce = value.get("action"), _int(value.get("nonce"))
    if action not in ACTIONS or nonce is None or not isinstance(value.get("spans"), list):
        return None
    doc = value.get("doc")
    listed = {name: normalise_spans(value.get(name) if isinstance(value.get(name), list) else (), length)
              for name in ("accepted", "rejected")}
    return {"spans": normalise_spans(value["spans"], length), "action": action, "nonce": nonce,
            "doc": doc if isinstance(doc, str) else None, "browser": valid_browser_id(value.get("browser")),
            **listed}


def editor_value(key: str, length: int | None = None) -> dict | None:
    """The editor's latest value from the session state (readable before the editor is drawn
    in this run), checked and normalised; None when there is none."""
    import streamlit as st

    return parse_value(st.session_state.get(key), length)


def span_editor(text: str, spans: Iterable[Any], types: Iterable[Any], *, key: str,
                big: bool = False, doc: str | None = None, browser: str | None = None,
                readonly: bool = False, offsets: str = "exclusive",
                notice: tuple[str, bool] | None = None, suggestions: Iterable[Any] = ()) -> dict | None:
    """Show the editor; return its latest value (see the module docstring) or None.

    ``spans``: dicts or ``Span`` records (half-open offsets over the text's characters);
    ``types``: ``{"code", "zh", "en"}`` dicts, ``Label`` records or codes (1-9 pick the first
    nine); ``doc``: an identity of the document (dataset and example), so that the editor
    starts afresh (empty undo stack) when it changes even if the text does not; ``browser``:
    the browser id the page already knows (the editor says "hello" when its own differs);
    ``readonly``: no edit and no save from the editor; ``offsets``: how offsets are shown,
    ``"inclusive"`` (``[18, 21]``, CMeEE's convention) or half-open ``[18, 22)``; ``notice``:
    (message, is_error) of what the page did with the editor's last action (a save's outcome),
    shown in the editor's status line once, when it changes; ``suggestions``: spans a model or
    run suggests (dicts or ``Suggestion`` records, see the module docstring), drawn apart.
    """
    import streamlit as st

    text = "" if text is None else str(text)
    shown = normalise_spans(spans, len(text))
    last = parse_value(st.session_state.get(key), len(text))
    # The page passes back the editor's own last state (an echo) or a state from elsewhere
    # (another example, a reload after save or revert): the editor keeps its undo stack on an
    # echo and starts again from the spans given otherwise.
    echo = last["nonce"] if last is not None and last["spans"] == shown else None
    value = _component()(text=text, spans=shown, types=editor_types(types), big=bool(big),
                       doc=doc, echo=echo, browser=valid_browser_id(browser), readonly=bool(readonly),
                       offsets="inclusive" if offsets == "inclusive" else "exclusive",
                       notice=None if notice is None else [str(notice[0]), bool(notice[1])],
                       suggestions=normalise_suggestions(suggestions, len(text)), key=key, default=None)
    return parse_value(value, len(text))
