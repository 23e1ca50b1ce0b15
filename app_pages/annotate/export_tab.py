"""The Export tab: the split at a gold version in the official format or for an annotation tool
(brat, doccano, Label Studio), the same files as ``python -m cblue_core export``. A file is built
when its button is clicked, never on a rerun (four exports of a 5,000-example split took seconds);
what a format would refuse is checked once per gold state and said instead of its button."""
from __future__ import annotations

from functools import partial

import streamlit as st

from app_pages.annotate.context import CURRENT, ORIGINAL, Context, version_arg
from app_pages.common import db_path, md, shared_workspace
from app_pages.keys import Annotate as K
from cblue_core.annotation import export as exporter


def exported(path: str, dataset_id: int, fmt: str, version: str | None) -> bytes:
    """The download's bytes. Streamlit calls it on a thread of its own when the button is
    clicked: a cursor of its own."""
    return exporter.export_download(shared_workspace(path).cursor(), dataset_id, fmt, version).data


@st.cache_data(max_entries=16, show_spinner=False)
def refusals(path: str, dataset_id: int, version: str | None, head_event: int) -> dict[str, str | None]:
    """Why each format cannot hold the split at ``version`` (a character it can neither hold nor
    escape, named by example and field), once per gold state (``head_event``: the newest
    annotation event): the button's own build would only fail with Streamlit's generic error."""
    return exporter.export_refusals(shared_workspace(path).cursor(), dataset_id, version)


def render(ctx: Context) -> None:
    did = ctx.dataset_id
    version = version_arg(st.selectbox("Gold version", ctx.version_names(first=(CURRENT, ORIGINAL), last=()),
                                       key=K.EXPORT_VERSION))
    edited = ctx.ws.annotations.edited_indices(did, version)
    st.caption(f"{ctx.info.records:d} examples; {len(edited):d} edited since ingest.")
    refused = refusals(db_path(), did, version, ctx.ws.annotations.head_event(did))
    for n, fmt in enumerate(exporter.FORMATS):
        title = exporter.FORMAT_TITLES[fmt]
        if refused[fmt] is not None:
            st.warning(f"{md(title)}: not available for {md(ctx.task.name)}: {md(refused[fmt])}")
            continue
        file_name, mime = exporter.download_name(ctx.task, ctx.info.split, fmt, version)
        st.download_button(f"Download {md(title)}", partial(exported, db_path(), did, fmt, version),
                           file_name=file_name, mime=mime, key=K.export_button(n), on_click="ignore")
