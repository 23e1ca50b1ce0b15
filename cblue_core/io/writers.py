"""Writers for the official formats: datasets as read (export) and submission files.

``use_raw`` writes each record exactly as it was read (the export of an untouched split);
otherwise every example is encoded from its typed fields by the task's codec (submissions,
corrected gold). The container (JSON array, JSON lines, dialogue object, TSV) and the file
name come from the registry.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..records import Example
from ..tasks import TaskSpec
from .codecs import codec_for
from .offsets import INCLUSIVE


def encode_records(task: TaskSpec, examples: Iterable[Example], use_raw: bool = False,
                   convention: str = INCLUSIVE) -> list[Any]:
    codec = codec_for(task)
    out = []
    for ex in examples:
        if use_raw and ex.raw is not None:
            rec = ex.raw
        else:
            rec = codec.encode(ex, task, convention)
        out.append(rec)
    return out


def dumps_records(task: TaskSpec, records: list[Any], keys: list[str] | None = None) -> str:
    """Serialise records in the task's container."""
    if task.container == "tsv":
        return "".join((r if isinstance(r, str) else "\t".join(r)) + "\n" for r in records)
    if task.container == "dialogs":
        obj = {}
        for i, r in enumerate(records):
            r = dict(r)
            key = r.pop("__key__", None) or (keys[i] if keys else str(i))
            obj[key] = r
        return json.dumps(obj, ensure_ascii=False, indent=2)
    if task.container == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return json.dumps(records, ensure_ascii=False, indent=2)


def write_dataset(task: TaskSpec, examples: list[Example], path: str | Path, use_raw: bool = True,
                  convention: str = INCLUSIVE) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    records = encode_records(task, examples, use_raw, convention)
    path.write_text(dumps_records(task, records, [ex.key for ex in examples]), encoding="utf-8")
    return path


def submission_path(task: TaskSpec, out_dir: str | Path) -> Path:
    """Where the official format checker expects the task's submission file."""
    return Path(out_dir) / task.submission_file


def write_submission(task: TaskSpec, examples: list[Example], out_dir: str | Path,
                     convention: str = INCLUSIVE) -> Path:
    """Write predictions as the official submission file (name fixed by the format checker),
    offsets in ``convention`` (the gold file's)."""
    return write_dataset(task, examples, submission_path(task, out_dir), use_raw=False,
                         convention=convention)
