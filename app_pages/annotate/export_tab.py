"""The Export tab: the split at a gold version in the official format or for an annotation tool
(brat, doccano, Label Studio), the same files as ``python -m cblue_core export``. A file is built
when its button is clicked, never on a rerun (four exports of a 5,000-example split took seconds)."""
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


def render(ctx: Context) -> None:
    did = ctx.dataset_id
    version = version_arg(st.selectbox("Gold version", ctx.version_names(first=(CURRENT, ORIGINAL), last=()),
                                       key=K.EXPORT_VERSION))
    edited = ctx.ws.annotations.edited_indices(did, version)
    st.caption(f"{ctx.info.records:d} examples; {len(edited):d} edited since ingest.")
    for n, fmt in enumerate(exporter.FORMATS):
        title = exporter.FORMAT_TITLES[fmt]
        refusal = exporter.format_refusal(ctx.task, fmt)
        if refusal is not None:
            st.warning(f"{md(title)}: not available for {md(ctx.task.name)}: {md(refusal)}")
            continue
        file_name, mime = exporter.download_name(ctx.task, ctx.info.split, fmt, version)
        st.download_button(f"Download {md(title)}", partial(exported, db_path(), did, fmt, version),
                           file_name=file_name, mime=mime, key=K.export_button(n), on_click="ignore")
