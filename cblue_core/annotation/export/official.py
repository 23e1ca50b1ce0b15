"""The task's own file format (:func:`export_official`).

Records whose gold is the ingested one are written from their ``raw`` record; edited records
are encoded by the task's codec (:mod:`cblue_core.io.writers`) in the file's offset convention,
keeping every other field of their input record. JSON is written with U+0085, U+2028, U+2029
and lone surrogates as ``\\u`` escapes (readers that split JSON lines with ``splitlines``, ours
included, would cut a record there; ``json.dumps`` leaves them raw).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...io.offsets import EXCLUSIVE, INCLUSIVE
from ...io.writers import dumps_records, encode_records, write_text
from ...records import Example
from ...tasks import TaskSpec
from .characters import escape_json_breaks
from .common import dataset_task

_CONTAINERS = {"array": "json", "lines": "jsonl", "object": "dialogs", "tsv": "tsv"}


def official_records(task: TaskSpec, gold: Sequence[Example], originals: Sequence[Example],
                     convention: str = INCLUSIVE) -> list[Any]:
    """Records of the split: the original record where ``raw`` is kept, else the codec's, laid
    out like the original record and keeping its other fields."""
    raw_by_idx = {o.index: o.raw for o in originals}
    return encode_records(task, gold, use_raw=True, convention=convention, inputs=raw_by_idx)


def export_official(ws, dataset_id: int, version: str | None, path: str | Path) -> Path:
    """Write the split at ``version`` in the task's official format. ``path`` is a file, or an
    existing folder (the task's official file name for the split is used). The file has the
    line ending recorded when the dataset was ingested (LF when unknown)."""
    info, task = dataset_task(ws, dataset_id)
    gold = ws.annotations.gold_examples(dataset_id, version)
    originals = ws.datasets.examples(dataset_id) if any(ex.raw is None for ex in gold) else gold
    conv = info.offset_convention if info.offset_convention in (INCLUSIVE, EXCLUSIVE) else INCLUSIVE
    records = official_records(task, gold, originals, conv)
    container = _CONTAINERS.get(ws.datasets.container(dataset_id) or "", task.container)
    spec = replace(task, container=container) if container != task.container else task
    text = dumps_records(spec, records, [ex.key for ex in gold])
    if container != "tsv":
        text = escape_json_breaks(text)
    target = Path(path)
    if target.is_dir():
        target = target / (task.files.get(info.split) or f"{task.name}_{info.split}.json")
    return write_text(target, text, ws.datasets.line_ending(dataset_id))
