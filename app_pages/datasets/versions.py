"""Which version of a task split this session opens: the workspace's default (the same for every
visitor), or another version this session chose or uploaded. An admin control makes the version
shown the default for everyone (disabled in read-only mode)."""
from __future__ import annotations

import duckdb
import streamlit as st

from app_pages.common import md, page_failure
from app_pages.keys import Datasets as K
from app_pages.permissions import allowed, why_not
from cblue_core.auth import PermissionDenied
from cblue_core.store.datasets import DatasetInfo
from cblue_core.store.workspace import Workspace, WorkspaceError


def _opened() -> dict[str, int]:
    """This session's choices: task split -> dataset id (kept while other splits are shown)."""
    opened: dict[str, int] = st.session_state.setdefault(K.OPENED, {})
    return opened


def _slot(task: str, split: str) -> str:
    return f"{task}\x00{split}"


def open_version(task: str, split: str, dataset_id: int) -> None:
    """Open ``dataset_id`` for ``task`` ``split`` in this session only (an upload, a choice)."""
    _opened()[_slot(task, split)] = dataset_id


def pick_version(ws: Workspace, task: str, split: str) -> DatasetInfo | None:
    """The dataset to show for a task split; with several versions, a picker and the admin control."""
    versions = ws.datasets.versions(task, split)
    default = ws.datasets.find(task, split)
    if default is None or len(versions) < 2:
        return default
    by_id = {d.dataset_id: d for d in versions}
    slot = _slot(task, split)
    wanted = _opened().get(slot, default.dataset_id)
    st.session_state[K.VERSION] = wanted if wanted in by_id else default.dataset_id

    def label(did: int) -> str:
        d = by_id[did]
        tag = " · default" if did == default.dataset_id else ""
        return f"#{did} {d.name} · {d.records:,} records · {d.created_at}{tag}"

    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    chosen = c1.selectbox("Version", list(by_id), key=K.VERSION, format_func=label,
                          on_change=lambda: open_version(task, split, st.session_state[K.VERSION]),
                          help="Every visitor opens the default; another version opens in this "
                               "session only.")
    if chosen != default.dataset_id and c2.button(
            "Make it the default", key=K.MAKE_DEFAULT, disabled=not allowed("dataset.make_default"),
            help=md(why_not("dataset.make_default", otherwise="Admin: every visitor opens this version "
                                                                     "of the split from now on (switched off in "
                                                                     "read-only mode)."))):
        try:
            ws.datasets.make_default(chosen)
        except (WorkspaceError, duckdb.Error, PermissionDenied) as exc:
            st.error(md(page_failure("choosing the default dataset", exc)))
        else:
            st.rerun()
    return by_id[chosen]
