"""An uploaded file is validated once per upload, not on every rerun of the page, and what the
session keeps of it is bounded.

Streamlit reruns the whole page on every click; validating a large upload each time cost half
a minute and gigabytes per click, so the validation of the session's current upload is kept in
its session state, keyed by the upload's id and the task it was validated for. But the
validated records take six to ten times the file's size (a 195 MiB upload kept 1.9 GB), and
Streamlit already keeps the upload's bytes: so the records are kept only for uploads up to
KEEP_RECORDS_BYTES, and a larger upload keeps its report alone and is read once more, from the
bytes Streamlit holds, when it is stored.
"""
from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from app_pages.keys import Datasets
from cblue_core.io.validate import LoadedDataset, ValidationReport, validate

SESSION_KEY = Datasets.VALIDATED_UPLOAD
KEEP_RECORDS_BYTES = 4 << 20       # records take about 9 times the file: at most ~40 MB a session


@dataclass(frozen=True)
class CheckedUpload:
    """What a session keeps of its current upload: the report, and the validated records when
    the upload is small enough to keep them (None otherwise)."""

    report: ValidationReport
    dataset: LoadedDataset | None


def upload_limit_bytes() -> int:
    """The server's upload limit (``server.maxUploadSize``, in MB), for the validator too."""
    import streamlit as st

    return int(st.get_option("server.maxUploadSize")) * 1024 * 1024


def validated_upload(session: MutableMapping[str, Any], file_id: str, data: Callable[[], bytes],
                     task: str | None, name: str, max_bytes: int) -> CheckedUpload:
    """The validation of this upload for ``task``: computed on the first call, then reused.
    Only the current upload is kept, so a session holds one checked file at most."""
    key = (file_id, task, name)
    cached = session.get(SESSION_KEY)
    if cached is not None and cached[0] == key:
        return cached[1]
    session.pop(SESSION_KEY, None)          # free the previous one before parsing the next
    raw = data()
    loaded = validate(raw, task, name=name, max_bytes=max_bytes)
    checked = CheckedUpload(loaded.report, loaded if len(raw) <= KEEP_RECORDS_BYTES else None)
    session[SESSION_KEY] = (key, checked)
    return checked


def dataset_to_store(checked: CheckedUpload, data: Callable[[], bytes], name: str,
                     max_bytes: int) -> LoadedDataset:
    """The validated records to store: the kept ones, or the upload validated again (for the
    task its report names) when the session kept only the report."""
    if checked.dataset is not None:
        return checked.dataset
    return validate(data(), checked.report.task, name=name, max_bytes=max_bytes)
