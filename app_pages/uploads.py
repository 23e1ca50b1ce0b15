"""An uploaded file is validated once per upload, not on every rerun of the page.

Streamlit reruns the whole page on every click; validating a large upload each time cost half
a minute and gigabytes per click. The validated dataset of the session's current upload is
kept in its session state, keyed by the upload's id and the task it was validated for.
"""
from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from app_pages.keys import Datasets
from cblue_core.io.validate import LoadedDataset, validate

SESSION_KEY = Datasets.VALIDATED_UPLOAD


def upload_limit_bytes() -> int:
    """The server's upload limit (``server.maxUploadSize``, in MB), for the validator too."""
    import streamlit as st

    return int(st.get_option("server.maxUploadSize")) * 1024 * 1024


def validated_upload(session: MutableMapping[str, Any], file_id: str, data: Callable[[], bytes],
                     task: str | None, name: str, max_bytes: int) -> LoadedDataset:
    """The validation of this upload for ``task``: computed on the first call, then reused.
    Only the current upload is kept, so a session holds one validated file at most."""
    key = (file_id, task, name)
    cached = session.get(SESSION_KEY)
    if cached is not None and cached[0] == key:
        return cached[1]
    session.pop(SESSION_KEY, None)          # free the previous one before parsing the next
    loaded = validate(data(), task, name=name, max_bytes=max_bytes)
    session[SESSION_KEY] = (key, loaded)
    return loaded
