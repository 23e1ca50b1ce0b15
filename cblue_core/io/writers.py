"""Writers for the official formats: datasets as read (export) and submission files.

``use_raw`` writes each record exactly as it was read (the export of an untouched split);
otherwise every example is encoded from its typed fields by the task's codec (submissions,
corrected gold). The container (JSON array, JSON lines, dialogue object, TSV) and the file
name come from the registry.

An encoded record keeps every field of its input record that the codec does not write (CHIP-STS's
``category``, any field a file adds), in the input's key order: the example's own ``raw``, or
the input record given in ``inputs`` (the split a model predicted). Only codecs whose encoded
record has the input's shape do so (:data:`KEEPS_INPUT_FIELDS`): a submission of another shape
(IMCS-V2's per-sentence maps, CliMedBench's ``{"id", "prediction"}``) is never mixed with an
input record, which could carry the gold answer.

Files are written with the line ending of the file they came from when it is known
(:func:`detect_line_ending` at ingest): ``"lf"``, ``"crlf"`` or ``"cr"``.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..records import Example
from ..tasks import TaskSpec
from .atomic import write_text_atomic
from .codecs import codec_for
from .offsets import INCLUSIVE

# Codecs whose encode gives a record of the data file's shape, writing every gold field itself
# (so keeping the other input fields adds inputs only, never a gold answer).
KEEPS_INPUT_FIELDS = frozenset({"entities", "spo", "terms", "single_label", "pair_label", "events"})

LINE_ENDINGS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


def detect_line_ending(data: bytes | str) -> str | None:
    """The line ending of a file's content: ``"lf"``, ``"crlf"`` or ``"cr"`` (the most frequent
    when they are mixed), None when it has no line break."""
    if isinstance(data, str):
        crlf, lf, cr = data.count("\r\n"), data.count("\n"), data.count("\r")
    else:
        crlf, lf, cr = data.count(b"\r\n"), data.count(b"\n"), data.count(b"\r")
    counts = {"crlf": crlf, "lf": lf - crlf, "cr": cr - crlf}
    best = max(counts, key=lambda k: counts[k])   # ties: crlf, then lf
    return best if counts[best] > 0 else None


def keep_input_fields(encoded: Any, original: Any) -> Any:
    """``encoded`` laid out like ``original`` (an input record): the original's key order, its
    fields the codec does not write, and its id's JSON type (``1`` stays ``1``, not ``"1"``)."""
    if not isinstance(encoded, dict) or not isinstance(original, dict):
        return encoded
    out = {k: (encoded[k] if k in encoded else original[k]) for k in original}
    out.update({k: v for k, v in encoded.items() if k not in out})
    if "id" in original and str(original["id"]) == str(out["id"]):
        out["id"] = original["id"]
    return out


def encode_records(task: TaskSpec, examples: Iterable[Example], use_raw: bool = False,
                   convention: str = INCLUSIVE,
                   inputs: Sequence[Example] | Mapping[int, Any] | None = None) -> list[Any]:
    """Each example's record: its ``raw`` record (``use_raw``) or the codec's encoding, which
    keeps the input record's other fields (see the module docstring). ``inputs``: the input
    examples (or records by example index) for examples that carry no ``raw`` of their own."""
    codec = codec_for(task)
    keep = task.codec in KEEPS_INPUT_FIELDS
    by_index: Mapping[int, Any] = {}
    if isinstance(inputs, Mapping):
        by_index = inputs
    elif inputs is not None:
        by_index = {ex.index: ex.raw for ex in inputs}
    out = []
    for ex in examples:
        if use_raw and ex.raw is not None:
            rec = ex.raw
        else:
            rec = codec.encode(ex, task, convention)
            if keep:
                rec = keep_input_fields(rec, ex.raw if ex.raw is not None else by_index.get(ex.index))
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


def write_text(path: str | Path, text: str, line_ending: str | None = None) -> Path:
    """Write ``text`` (lines ending in LF) as UTF-8 with ``line_ending`` ("lf", "crlf", "cr";
    None: LF), atomically (:mod:`.atomic`)."""
    if line_ending is not None and line_ending not in LINE_ENDINGS:
        raise ValueError(f"unknown line ending {line_ending!r} (expected one of {', '.join(LINE_ENDINGS)})")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, text, newline=LINE_ENDINGS[line_ending or "lf"])


def write_dataset(task: TaskSpec, examples: list[Example], path: str | Path, use_raw: bool = True,
                  convention: str = INCLUSIVE, *, inputs: Sequence[Example] | None = None,
                  line_ending: str | None = None) -> Path:
    records = encode_records(task, examples, use_raw, convention, inputs)
    return write_text(path, dumps_records(task, records, [ex.key for ex in examples]), line_ending)


def submission_path(task: TaskSpec, out_dir: str | Path) -> Path:
    """Where the official format checker expects the task's submission file."""
    return Path(out_dir) / task.submission_file


def run_file_name(task: TaskSpec, split: str) -> str:
    """The file name a run's predictions are offered under: the official submission name for a
    run on the test split (the leaderboard's checker requires it), and otherwise one that names
    the split, so that a dev run's file is neither taken for a test submission nor for gold.

    >>> from cblue_core.tasks import get_task
    >>> run_file_name(get_task("CMeIE"), "test"), run_file_name(get_task("CMeIE"), "dev")
    ('CMeIE_test.jsonl', 'CMeIE_dev_predictions.jsonl')
    >>> run_file_name(get_task("PromptCBLUE"), "dev"), run_file_name(get_task("CliMedBench"), "dev")
    ('dev_predictions.json', 'CliMedBench_dev_predictions.jsonl')
    """
    official = Path(task.submission_file)
    if split == "test":
        return official.name
    stem = official.stem
    if "test" in stem:
        stem = stem.replace("test", split if "predictions" in stem else f"{split}_predictions")
    elif "predictions" in stem:
        stem = stem.replace("predictions", f"{split}_predictions")
    else:
        stem = f"{stem}_{split}_predictions"
    return stem + official.suffix


def write_submission(task: TaskSpec, examples: list[Example], out_dir: str | Path,
                     convention: str = INCLUSIVE, *, inputs: Sequence[Example] | None = None,
                     line_ending: str | None = None) -> Path:
    """Write predictions as the official submission file (name fixed by the format checker),
    offsets in ``convention`` (the gold file's). ``inputs``: the predicted split's examples, whose
    other fields each prediction keeps (CHIP-STS's ``category``: the official example submission
    is the test record with its ``label`` added); ``line_ending``: the input file's."""
    return write_dataset(task, examples, submission_path(task, out_dir), use_raw=False,
                         convention=convention, inputs=inputs, line_ending=line_ending)
