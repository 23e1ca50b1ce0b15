"""A grid of clickable cells (the confusion matrix) drawn from server-made, escaped HTML in an
``st.components.v2`` component: no iframe and no chart library, so it draws at once.

``cell_grid(html, version, picked, *, key)`` mounts it; its value, read with
:func:`picked_value`, is the ``data-pick`` of the last cell clicked (or None). The browser rings a clicked cell at once and
the page confirms it with ``picked`` (the key of the cell its filter names, ringed on every
draw); the grid's HTML is replaced only when ``version`` changes. Read the value before
mounting (:func:`picked_value`), as the page acts on the click in the same run.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from app_pages.confusion_html import CSS

# The value is untrusted (it comes from the browser): the page maps it back to a cell of its own
# grid or ignores it (ConfusionGrid.pick).
_JS = """
function ring(wrap, key) {
  wrap.querySelectorAll('.cbr-cm-picked').forEach((e) => e.classList.remove('cbr-cm-picked'));
  if (!key) return;
  const cell = wrap.querySelector('[data-pick="' + CSS.escape(String(key)) + '"]');
  if (cell) cell.classList.add('cbr-cm-picked');
}
export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let wrap = parentElement.querySelector('.cbr-cm-wrap');
  if (!wrap) {
    wrap = document.createElement('div');
    wrap.className = 'cbr-cm-wrap';
    parentElement.appendChild(wrap);
    wrap.addEventListener('click', (event) => {
      const cell = event.target.closest('[data-pick]');
      if (!cell) return;
      ring(wrap, cell.dataset.pick);
      wrap.setPick(cell.dataset.pick);
    });
  }
  wrap.setPick = (value) => setStateValue('pick', value);
  if (wrap.dataset.version !== data.version) {
    wrap.innerHTML = data.html;
    wrap.dataset.version = data.version;
  }
  ring(wrap, data.picked);
}
"""

_component = st.components.v2.component("cblue_cell_grid", css=CSS, js=_JS)


def picked_value(key: str) -> Any:
    """The last cell clicked in the grid ``key`` as the browser reported it (None before any)."""
    state = st.session_state.get(key)
    try:
        return state.get("pick") if state is not None else None
    except AttributeError:
        return getattr(state, "pick", None)


def cell_grid(html: str, version: str, picked: str | None, *, key: str) -> None:
    """Mount the grid (see the module's docstring)."""
    _component(data={"html": html, "version": version, "picked": picked}, key=key,
               on_pick_change=lambda: None)
