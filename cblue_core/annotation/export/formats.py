"""The export formats: their names and titles, what each holds, why one cannot hold a task or
a split (without building it), the files of an annotation-tool export, and how an export is
named."""
from __future__ import annotations

import re
from collections.abc import Sequence

from ...records import Example
from ...tasks import TaskSpec
from .brat import check_brat, to_brat
from .common import dataset_task, gold_kind
from .doccano import doccano_files
from .label_studio import check_label_studio, label_studio_files

FORMATS = ("official", "brat", "doccano", "label-studio")

FORMAT_TITLES = {
    "official": "Official format",
    "brat": "brat (zip of .txt/.ann + annotation.conf)",
    "doccano": "doccano (zip of the JSONL and a README on the project settings it needs)",
    "label-studio": "Label Studio (zip of the tasks and their labeling config)",
}


# What each annotation-tool format can hold (the official format holds every task).
FORMAT_HOLDS = {"brat": ("spans", "triples"), "doccano": ("spans", "triples", "label", "terms"),
                "label-studio": ("spans", "triples", "label", "terms")}
_FORMAT_NAMES = {"brat": "brat", "doccano": "doccano", "label-studio": "Label Studio"}
# The formats that refuse some characters (see .characters), with the check that builds nothing;
# the official format and doccano escape everything in JSON.
FORMAT_CHECKS = {"brat": check_brat, "label-studio": check_label_studio}


def format_refusal(task: TaskSpec, fmt: str) -> str | None:
    """Why ``fmt`` cannot hold ``task``'s gold (None when it can), without building anything."""
    if fmt not in FORMATS:
        return f"unknown export format {fmt!r} (expected one of {', '.join(FORMATS)})"
    if fmt == "official":
        return None
    try:
        gold_kind(task, FORMAT_HOLDS[fmt], _FORMAT_NAMES[fmt])
    except ValueError as exc:
        return str(exc)
    return None


def content_refusal(task: TaskSpec, gold: Sequence[Example], fmt: str) -> str | None:
    """Why ``fmt`` cannot hold ``gold`` (its task, or a character of the examples it can neither
    hold nor escape, named by example and field); None when it can. Builds no file."""
    refusal = format_refusal(task, fmt)
    if refusal is None and fmt in FORMAT_CHECKS:
        try:
            FORMAT_CHECKS[fmt](task, gold)
        except ValueError as exc:
            return str(exc)
    return refusal


def format_files(task: TaskSpec, gold: Sequence[Example], fmt: str, name: str) -> dict[str, str]:
    """The files of an annotation-tool export (brat, doccano, label-studio): name -> content;
    ``name`` names the doccano and Label Studio files."""
    if fmt == "brat":
        return dict(to_brat(task, gold))
    if fmt == "doccano":
        return doccano_files(task, gold, name)
    if fmt == "label-studio":
        return label_studio_files(task, gold, name)
    raise ValueError(f"{fmt!r} is not an annotation-tool format (brat, doccano, label-studio)")


def export_stem(task: TaskSpec, split: str, version: str | None = None) -> str:
    """``TASK_SPLIT`` (plus ``_VERSION`` for a version other than the current gold): the file
    name stem of an export written to a folder."""
    stem = f"{task.name}_{split}"
    if version not in (None, "current"):
        stem += "_" + re.sub(r"[^\w.-]+", "_", str(version)).strip("_.")
    return stem


def download_name(task: TaskSpec, split: str, fmt: str, version: str | None = None) -> tuple[str, str]:
    """(file name, media type) of the download of a split in ``fmt`` at ``version``."""
    stem = export_stem(task, split, None if version == "current" else version)
    if fmt == "official":
        return task.files.get(split) or f"{stem}.json", "application/json"
    return f"{stem}_{fmt.replace('-', '_')}.zip", "application/zip"


def export_refusals(ws, dataset_id: int, version: str | None = None) -> dict[str, str | None]:
    """For each format, why it cannot hold the split at ``version`` (see
    :func:`content_refusal`), None when it can: what a page says before offering a
    download, reading the gold once and building no file."""
    _, task = dataset_task(ws, dataset_id)
    refusals = {fmt: format_refusal(task, fmt) for fmt in FORMATS}
    checked = [fmt for fmt in FORMAT_CHECKS if refusals[fmt] is None]
    if checked:     # the gold is read only when a format that refuses characters holds the task
        gold = ws.annotations.gold_examples(dataset_id, None if version == "current" else version)
        refusals.update({fmt: content_refusal(task, gold, fmt) for fmt in checked})
    return refusals
