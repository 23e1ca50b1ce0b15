"""The Export tab: the split at a gold version in the official format or for an annotation tool
(brat, doccano, Label Studio), the same files as ``python -m cblue_core export``."""
from __future__ import annotations

import streamlit as st

from app_pages.annotate.actions import failure
from app_pages.annotate.context import CURRENT, ORIGINAL, Context, version_arg
from app_pages.common import md
from app_pages.keys import Annotate as K
from cblue_core.annotation import export as exporter


def render(ctx: Context) -> None:
    did = ctx.dataset_id
    version = st.selectbox("Gold version", ctx.version_names(first=(CURRENT, ORIGINAL), last=()),
                           key=K.EXPORT_VERSION)
    edited = ctx.ws.annotations.edited_indices(did, version_arg(version))
    st.caption(f"{ctx.info.records:d} examples; {len(edited):d} edited since ingest.")
    for n, fmt in enumerate(exporter.FORMATS):
        title = exporter.FORMAT_TITLES[fmt]
        try:
            download = exporter.export_download(ctx.ws, did, fmt, version_arg(version))
        except Exception as exc:  # noqa: BLE001 - ValueError: format refused; the others logged
            st.warning(f"{md(title)}: not available for {md(ctx.task.name)}: {md(failure(f'Export {title}', exc))}")
            continue
        st.download_button(f"Download {md(title)}", download.data, file_name=download.file_name, mime=download.mime,
                           key=K.export_button(n), on_click="ignore")
