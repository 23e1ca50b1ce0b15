"""Read and validate one dataset file: raw records -> offset convention -> typed examples + report.

Structural problems (not JSON, wrong encoding, wrong types, missing fields, inconsistent
offsets) refuse the file. Annotation-level defects in an otherwise sound file (a reversed span,
a mention that is not the text slice, an unknown label such as KUAKE-QQR's ``NA``, duplicated
keys) are listed as warnings and the record is kept as read; ``strict`` refuses the file instead.
Two defects of the file as a whole are warnings too, which ``strict`` does not refuse: a
container other than the task's official one (a CMeEE file holding JSON lines or a single
object), and a train or dev split in which no record has the task's annotation field.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records import Example
from ..tasks import CONTAINER_DESCRIPTIONS, REGISTRY, TaskSpec, get_task, infer_split, infer_task
from .codecs import Codec, DecodeContext, RecordError, codec_for
from .errors import Defect, FileRefused, short_error
from .jsonfile import RawFile, read_raw
from .limits import MAX_FILE_BYTES, record_over_limits
from .offsets import INCLUSIVE, NONE, OffsetItem, detect_convention

MAX_DEFECTS = 200  # per kind, so a broken 60k-record file still gives a readable report


@dataclass
class ValidationReport:
    file: str
    task: str
    split: str | None
    container: str = ""
    records: int = 0
    annotations: int = 0
    offset_convention: str = NONE
    label_distribution: dict[str, int] = field(default_factory=dict)
    max_nesting_depth: int = 0
    warnings: list[Defect] = field(default_factory=list)
    errors: list[Defect] = field(default_factory=list)
    sha256: str = ""
    strict: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file, "task": self.task, "split": self.split, "container": self.container,
            "records": self.records, "annotations": self.annotations,
            "offset_convention": self.offset_convention,
            "label_distribution": self.label_distribution,
            "max_nesting_depth": self.max_nesting_depth,
            "warnings": [str(d) for d in self.warnings],
            "errors": [str(d) for d in self.errors],
            "refused": not self.ok, "sha256": self.sha256,
        }

    def summary(self) -> str:
        status = "REFUSED" if not self.ok else "ok"
        return (f"{self.file}: {status}; task {self.task}, split {self.split or '?'}, "
                f"{self.records} records, {self.annotations} annotations, "
                f"offsets {self.offset_convention}, {len(self.warnings)} warning(s), "
                f"{len(self.errors)} error(s)")


@dataclass
class LoadedDataset:
    report: ValidationReport
    examples: list[Example]
    raw_texts: list[str] | None = None   # record index -> its JSON text in the file, when known

    @property
    def task(self) -> TaskSpec:
        return get_task(self.report.task)


def _guess_task_from_content(raw: RawFile) -> TaskSpec | None:
    first = raw.records[0] if raw.records else None
    if isinstance(first, dict):
        if "task_dataset" in first and "input" in first:
            return REGISTRY["PromptCBLUE"]
        if "scenario" in first and ("options" in first or "reference" in first):
            return REGISTRY["CliMedBench"]
        if "spo_list" in first:
            return REGISTRY["CMeIE"]
        if "entities" in first:
            return REGISTRY["CMeEE"]
        if "normalized_result" in first:
            return REGISTRY["CHIP-CDN"]
        if "event" in first:
            return REGISTRY["CHIP-CDEE"]
        if "dialogue" in first:
            return REGISTRY["IMCS-V2-NER"]
    return None


def resolve_task(path: str | Path, task: str | TaskSpec | None) -> TaskSpec | None:
    if isinstance(task, TaskSpec):
        return task
    if task:
        return get_task(task)
    return infer_task(path)


def validate(source: str | Path | bytes, task: str | TaskSpec | None = None, *,
             name: str | None = None, split: str | None = None, strict: bool = False,
             predictions: bool = False, default_convention: str = INCLUSIVE,
             max_bytes: int = MAX_FILE_BYTES) -> LoadedDataset:
    """Validate a dataset file; never raises for problems in the file (they are in the report).

    ``predictions`` reads a submission file with the task's prediction codec; offsets that carry
    no mention strings then follow ``default_convention`` (the gold file's). Files larger than
    ``max_bytes`` are refused unread (the app passes its upload limit).
    """
    label = name or (str(source) if not isinstance(source, (bytes, bytearray)) else "<upload>")
    spec = resolve_task(label, task)
    split = split or infer_split(label)
    report = ValidationReport(label, spec.name if spec else "?", split, strict=strict)
    try:
        raw = read_raw(source, label, spec.container if spec else "json", max_bytes=max_bytes)
    except FileRefused as refused:
        report.errors.extend(refused.defects)
        return LoadedDataset(report, [])
    if spec is None:
        spec = _guess_task_from_content(raw)
        if spec is None:
            report.errors.append(Defect(label, "cannot tell the task from the file name or content",
                                        code="task", expected="a CBLUE file name or --task NAME"))
            return LoadedDataset(report, [])
        report.task = spec.name
    report.container, report.records, report.sha256 = raw.container, len(raw.records), raw.sha256
    return _decode_all(raw, spec, report, predictions, default_convention)


def _decode_all(raw: RawFile, spec: TaskSpec, report: ValidationReport, predictions: bool = False,
                default_convention: str = INCLUSIVE) -> LoadedDataset:
    codec = codec_for(spec, predictions)
    report.warnings = file_warnings = _file_warnings(raw, spec, codec, report.split, predictions)
    items = _offset_items(raw, spec, codec)
    conv = detect_convention(items, default=default_convention)
    report.offset_convention = conv.convention if items else NONE
    if conv.convention == "mixed":
        minority = conv.first_exclusive if conv.exclusive <= conv.inclusive else conv.first_inclusive
        other = "exclusive" if minority is conv.first_exclusive else "inclusive"
        for it in minority:
            report.errors.append(Defect(
                raw.name, f"inconsistent offsets: {it.field} [{it.start}, {it.end}] fits only an "
                f"{other} end ({it.mention!r}) while {max(conv.inclusive, conv.exclusive)} "
                f"mentions fit the other convention", record=it.record, line=raw.lines[it.record],
                field=it.field, code="offsets", expected="one offset convention for the whole file"))
        return LoadedDataset(report, [])
    if conv.convention == "unknown":
        for it in conv.first_neither:
            report.errors.append(Defect(
                raw.name, f"offsets fit neither convention: text slice [{it.start}, {it.end}] "
                f"is not {it.mention!r}", record=it.record, line=raw.lines[it.record],
                field=it.field, code="offsets",
                expected="end_idx inclusive (text[s:e+1]) or exclusive (text[s:e])"))
        return LoadedDataset(report, [])

    ctx = DecodeContext(raw.name, spec, conv.convention if conv.convention != NONE else default_convention)
    examples: list[Example] = []
    labels: Counter[str] = Counter()
    keys: dict[str, int] = {}
    for i, rec in enumerate(raw.records):
        ctx.record, ctx.line = i, raw.lines[i]
        try:
            ex = codec.decode(rec, i, ctx)
        except RecordError as err:
            if len(report.errors) < MAX_DEFECTS:
                report.errors.append(Defect(raw.name, err.message, record=i, line=raw.lines[i],
                                            field=err.field, expected=err.expected, code="structure"))
            continue
        except _SHAPE_ERRORS as exc:
            # A shape the codec's checks did not foresee: the record is refused, with where it
            # is, instead of the whole request failing with a trace.
            if len(report.errors) < MAX_DEFECTS:
                report.errors.append(Defect(
                    raw.name, f"the record has an unexpected shape ({type(exc).__name__}: {short_error(exc)})",
                    record=i, line=raw.lines[i], code="structure", expected=f"a {spec.name} record"))
            continue
        over = record_over_limits(ex)
        if over:
            if len(report.errors) < MAX_DEFECTS:
                report.errors.append(Defect(
                    raw.name, "the record has " + ", ".join(f"{n:,} {what}" for what, n, _ in over),
                    record=i, line=raw.lines[i], field=codec.gold_field(spec), code="limit",
                    expected="; ".join(f"at most {limit:,} {what} per record" for what, _, limit in over)))
            continue
        examples.append(ex)
        _count_labels(ex, labels)
        report.annotations += ex.annotation_count
        report.max_nesting_depth = max(report.max_nesting_depth, ex.depth)
        if ex.key in keys and spec.key_field:
            ctx.warn(f"duplicate {spec.key_field} {ex.key[:40]!r} (first at record {keys[ex.key]})",
                     field=spec.key_field, code="duplicate_key")
        else:
            keys[ex.key] = i
    report.warnings = file_warnings + ctx.warnings[:MAX_DEFECTS] + (
        [Defect(raw.name, f"... and {len(ctx.warnings) - MAX_DEFECTS} more warnings")]
        if len(ctx.warnings) > MAX_DEFECTS else [])
    report.label_distribution = dict(labels.most_common())
    if report.strict and ctx.warnings:
        report.errors.append(Defect(raw.name, f"--strict: {len(ctx.warnings)} annotation defect(s), "
                                    f"first: {ctx.warnings[0]}", code="strict"))
    if report.errors:
        return LoadedDataset(report, [])
    return LoadedDataset(report, examples, raw.texts)


_SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError)


def _offset_items(raw: RawFile, spec: TaskSpec, codec: Codec) -> list[OffsetItem]:
    items: list[OffsetItem] = []
    for i, rec in enumerate(raw.records):
        try:
            items.extend(codec.offset_items(rec, i, spec))
        except _SHAPE_ERRORS:
            continue  # no offsets to learn the convention from; decoding reports the record
    return items


def _file_warnings(raw: RawFile, spec: TaskSpec, codec: Codec, split: str | None,
                   predictions: bool) -> list[Defect]:
    """Defects of the file as a whole: its container, and a labelled split without labels."""
    out = []
    official = spec.official_container
    if raw.container != official:
        found = ("a single JSON object" if raw.container == "lines" and len(raw.records) == 1
                 else CONTAINER_DESCRIPTIONS.get(raw.container, raw.container))
        out.append(Defect(
            raw.name, f"the file is {found}, not {CONTAINER_DESCRIPTIONS[official]} as official "
            f"{spec.name} files are", code="container",
            expected=f"{CONTAINER_DESCRIPTIONS[official]} (the official {spec.name} format)"))
    gold = codec.gold_field(spec)
    if not predictions and split in ("train", "dev") and gold is not None and not any(
            codec.carries_gold(rec, spec) for rec in raw.records):
        out.append(Defect(
            raw.name, f"no record has the annotation field {gold!r}: this {split} split carries "
            "no gold", field=gold, code="no_annotations",
            expected=f"{gold!r} in the records of a {split} split (only test splits come unlabelled)"))
    return out


def _count_labels(ex: Example, labels: Counter[str]) -> None:
    if ex.label not in (None, ""):
        labels[ex.label] += 1
    for s in ex.spans:
        labels[s.type] += 1
    for t in ex.triples:
        labels[t.predicate] += 1
    for ev in ex.events:
        labels[ev.tendency or "(present)"] += 1
    for turn in ex.turns:
        for s in turn.spans:
            labels[s.type] += 1
        if turn.act:
            labels[turn.act] += 1
    for term in ex.terms:
        labels[term] += 0  # terms are too many to count as labels; keep the key for search


def load(source: str | Path | bytes, task: str | TaskSpec | None = None, **kw: Any) -> LoadedDataset:
    """Like :func:`validate`, but raises :class:`FileRefused` when the file is refused."""
    ds = validate(source, task, **kw)
    if not ds.report.ok:
        raise FileRefused(ds.report.errors)
    return ds
