"""Exports of a split at any gold version, each with a reader so that an export reads back.

- :func:`export_official`: the task's own file format. Records whose gold is the ingested one
  are written from their ``raw`` record (same content as the original); edited records are
  encoded by the task's codec (:mod:`cblue_core.io.writers`), in the file's offset convention,
  keeping every other field of their input record (CHIP-STS's ``category``, fields a file adds).
  The file gets the line ending the ingested file had (CRLF files come back CRLF).
- brat standoff (:func:`to_brat` / :func:`from_brat`): one ``.txt`` and one ``.ann`` per
  example; ``T`` lines for spans, ``R`` lines for CMeIE relations (their mentions placed at
  their first occurrence), ``A`` lines for CMeIE's ``Combined`` flag; plus ``annotation.conf``
  (entity types, ``<OVERLAP>`` so that nested and overlapping spans are valid, CMeIE relations
  with their argument types from the 53 schemas) and ``visual.conf`` (the Chinese names as
  display labels). brat type names must match ``[A-Za-z0-9_-]+``: see :func:`brat_type_id`.
- doccano JSONL (:func:`to_doccano` / :func:`from_doccano`): ``{"text", "label": [[start, end,
  type]]}`` for spans, ``{"text", "label": [labels]}`` for labels and CDN terms, doccano's
  ``entities`` / ``relations`` for CMeIE; :func:`doccano_readme` says which project settings
  the import needs (overlapping spans, relation labeling).
- Label Studio JSON (:func:`to_label_studio` / :func:`from_label_studio`): tasks whose
  ``annotations`` (gold) and ``predictions`` (a run, optional) hold results of type
  ``labels`` (spans, CMeIE mentions), ``relation`` (CMeIE) or ``choices`` (labels, terms);
  :func:`label_studio_config` is the labeling config they validate against.

Offsets are half-open everywhere here, as in the core (brat, doccano and Label Studio all use
end-exclusive offsets, in Unicode code points). Exported records carry ``cblue_index`` (and
``cblue_key`` when the task matches records on an id) so that readers restore each example's
identity. :func:`export_dataset` writes any of the four formats to disk (the CLI's ``export``).
"""
from __future__ import annotations

import io
import json
import re
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from ..io.offsets import EXCLUSIVE, INCLUSIVE
from ..io.writers import dumps_records, encode_records, write_text
from ..records import Example, Span, Triple
from ..tasks import TaskSpec, get_task
from .model import annotation_field
from .validation import combined_for

FORMATS = ("official", "brat", "doccano", "label-studio")

_CONTAINERS = {"array": "json", "lines": "jsonl", "object": "dialogs", "tsv": "tsv"}


# ------------------------------------------------------------------------------ official


def official_records(task: TaskSpec, gold: Sequence[Example], originals: Sequence[Example],
                     convention: str = INCLUSIVE) -> list[Any]:
    """Records of the split: the original record where ``raw`` is kept, else the codec's, laid
    out like the original record and keeping its other fields."""
    raw_by_idx = {o.index: o.raw for o in originals}
    return encode_records(task, gold, use_raw=True, convention=convention, inputs=raw_by_idx)


def _dataset(ws, dataset_id: int):
    info = ws.datasets.get(dataset_id)
    if info is None:
        raise ValueError(f"no dataset {dataset_id} in the workspace")
    return info, get_task(info.task)


def export_official(ws, dataset_id: int, version: str | None, path: str | Path) -> Path:
    """Write the split at ``version`` in the task's official format. ``path`` is a file, or an
    existing folder (the task's official file name for the split is used). The file has the
    line ending recorded when the dataset was ingested (LF when unknown)."""
    info, task = _dataset(ws, dataset_id)
    gold = ws.annotations.gold_examples(dataset_id, version)
    originals = ws.datasets.examples(dataset_id) if any(ex.raw is None for ex in gold) else gold
    conv = info.offset_convention if info.offset_convention in (INCLUSIVE, EXCLUSIVE) else INCLUSIVE
    records = official_records(task, gold, originals, conv)
    container = _CONTAINERS.get(ws.datasets.container(dataset_id) or "", task.container)
    spec = replace(task, container=container) if container != task.container else task
    target = Path(path)
    if target.is_dir():
        target = target / (task.files.get(info.split) or f"{task.name}_{info.split}.json")
    return write_text(target, dumps_records(spec, records, [ex.key for ex in gold]),
                      ws.datasets.line_ending(dataset_id))


# ------------------------------------------------------------------------------ shared


def _kind(task: TaskSpec, allowed: Iterable[str], fmt: str) -> str:
    kind = annotation_field(task)
    if kind is None or kind not in allowed:
        what = {"spans": "entity spans", "triples": "CMeIE triples", "label": "labels",
                "terms": "CDN terms"}
        holds = " and ".join(what[k] for k in allowed)
        raise ValueError(f"{fmt} export holds {holds}; {task.name} gold is not supported")
    return kind


def _identity(task: TaskSpec, ex: Example) -> dict[str, Any]:
    out: dict[str, Any] = {"cblue_index": ex.index}
    if task.key_field != "text":
        out["cblue_key"] = ex.key
    return out


def _example(task: TaskSpec, rec: dict, pos: int, text: str, text2: str = "", **fields) -> Example:
    index = rec.get("cblue_index")
    index = int(index) if isinstance(index, (int, str)) and str(index).isdigit() else pos
    key = rec.get("cblue_key")
    if key is None:
        key = text if task.key_field == "text" else str(index)
    meta = rec.get("cblue_meta")
    return Example(key=str(key), index=index, text=text, text2=text2,
                   meta=dict(meta) if isinstance(meta, dict) else {}, **fields)


def _entities(ex: Example, strict: bool = True
              ) -> tuple[list[tuple[str, str, int]], dict[tuple[str, str], int], list[Triple]]:
    """CMeIE mentions placed at their first occurrence: [(mention, type, start)], the position
    of each (mention, type) in that list, and the triples placed. A mention not in the text
    raises ValueError (``strict``, gold) or leaves its triple out (predictions)."""
    ents: list[tuple[str, str, int]] = []
    where: dict[tuple[str, str], int] = {}
    placed = []
    for t in ex.triples:
        ok = True
        for mention, typ, role in ((t.subject, t.subject_type, "subject"), (t.object, t.object_type, "object")):
            if (mention, typ) in where:
                continue
            start = ex.text.find(mention) if mention else -1
            if start < 0:
                if strict:
                    raise ValueError(f"example {ex.index}: the {role} {mention!r} does not occur in the "
                                     "text, so it has no offsets to export (correct it first)")
                ok = False
                continue
            where[(mention, typ)] = len(ents)
            ents.append((mention, typ, start))
        if ok:
            placed.append(t)
    return ents, where, placed


def _triple(text: str, subj: Span, pred: str, obj: Span, combined: Any) -> Triple:
    s, o = text[subj.start:subj.end], text[obj.start:obj.end]
    comb = combined if isinstance(combined, bool) else combined_for(text, s, o)
    return Triple(s, pred, o, subj.type, obj.type, comb)


# ------------------------------------------------------------------------------ brat

# brat stores type names in the .ann files and the configuration, where they must match
# [A-Za-z0-9_-]+ (brat's "storage form"); the Chinese names go to visual.conf as display labels.
# The ids are fixed here, so that an export reads the same whatever the data or the registry:
#
# - CMeEE entity types are ASCII codes already (dis, sym, ...): kept as they are.
# - CMeIE entity types: E + two digits (in the order the types first appear in the official
#   53_schemas.json) + an English gloss.
# - CMeIE predicates: P + two digits (the order of the official 53_schemas.json, which the task
#   registry follows) + the registry's English gloss.
# - Any other name that is not valid ASCII (a type an annotator added, an empty type): X_ + the
#   hex of its UTF-8 bytes (疾患 -> X_e796bee682a3, "" -> X_), which decodes back exactly.
CMEIE_TYPE_IDS: dict[str, str] = {
    "疾病": "E01_disease", "其他": "E02_other", "其他治疗": "E03_other_treatment",
    "手术治疗": "E04_surgical_treatment", "检查": "E05_examination", "流行病学": "E06_epidemiology",
    "症状": "E07_symptom", "社会学": "E08_sociology", "药物": "E09_drug", "部位": "E10_site",
    "预后": "E11_prognosis",
}
# (predicate, brat id, object type): the subject type is 疾病 except for 同义词, which links two
# mentions of the same type (CMEIE_SYNONYM_TYPES); together the 53 schemas.
_CMEIE_PREDICATES: tuple[tuple[str, str, str], ...] = (
    ("预防", "P01_prevention", "其他"),
    ("阶段", "P02_stage", "其他"),
    ("就诊科室", "P03_department", "其他"),
    ("同义词", "P04_synonym", ""),
    ("辅助治疗", "P05_adjuvant_therapy", "其他治疗"),
    ("化疗", "P06_chemotherapy", "其他治疗"),
    ("放射治疗", "P07_radiotherapy", "其他治疗"),
    ("手术治疗", "P08_surgery", "手术治疗"),
    ("实验室检查", "P09_laboratory_test", "检查"),
    ("影像学检查", "P10_imaging", "检查"),
    ("辅助检查", "P11_auxiliary_examination", "检查"),
    ("组织学检查", "P12_histology", "检查"),
    ("内窥镜检查", "P13_endoscopy", "检查"),
    ("筛查", "P14_screening", "检查"),
    ("多发群体", "P15_affected_population", "流行病学"),
    ("发病率", "P16_incidence", "流行病学"),
    ("发病年龄", "P17_age_of_onset", "流行病学"),
    ("多发地区", "P18_affected_region", "流行病学"),
    ("发病性别倾向", "P19_sex_predilection", "流行病学"),
    ("死亡率", "P20_mortality", "流行病学"),
    ("多发季节", "P21_season", "流行病学"),
    ("传播途径", "P22_transmission", "流行病学"),
    ("并发症", "P23_complication", "疾病"),
    ("病理分型", "P24_pathological_type", "疾病"),
    ("相关（导致）", "P25_related_causes", "疾病"),
    ("鉴别诊断", "P26_differential_diagnosis", "疾病"),
    ("相关（转化）", "P27_related_transforms", "疾病"),
    ("相关（症状）", "P28_related_symptom", "疾病"),
    ("临床表现", "P29_clinical_manifestation", "症状"),
    ("治疗后症状", "P30_post_treatment_symptom", "症状"),
    ("侵及周围组织转移的症状", "P31_invasion_symptom", "症状"),
    ("病因", "P32_cause", "社会学"),
    ("高危因素", "P33_risk_factor", "社会学"),
    ("风险评估因素", "P34_risk_assessment_factor", "社会学"),
    ("病史", "P35_history", "社会学"),
    ("遗传因素", "P36_genetic_factor", "社会学"),
    ("发病机制", "P37_pathogenesis", "社会学"),
    ("病理生理", "P38_pathophysiology", "社会学"),
    ("药物治疗", "P39_drug_therapy", "药物"),
    ("发病部位", "P40_site", "部位"),
    ("转移部位", "P41_metastasis_site", "部位"),
    ("外侵部位", "P42_invasion_site", "部位"),
    ("预后状况", "P43_prognosis", "预后"),
    ("预后生存率", "P44_survival_rate", "预后"),
)
CMEIE_PREDICATE_IDS: dict[str, str] = {p: pid for p, pid, _ in _CMEIE_PREDICATES}
CMEIE_SYNONYM_TYPES = ("其他", "其他治疗", "手术治疗", "检查", "流行病学", "疾病", "症状", "社会学", "药物",
                       "部位")
# The 53 (subject_type, predicate, object_type) schemas of CMeIE.
CMEIE_SCHEMAS: tuple[tuple[str, str, str], ...] = tuple(
    schema for p, _, o in _CMEIE_PREDICATES
    for schema in ([("疾病", p, o)] if o else [(t, p, t) for t in CMEIE_SYNONYM_TYPES]))

# Entity types and predicates have their own ids (手术治疗 is both: E04_surgical_treatment and
# P08_surgery); the ids themselves never collide, so one table reads both back.
_BRAT_NAMES = {v: k for k, v in [*CMEIE_TYPE_IDS.items(), *CMEIE_PREDICATE_IDS.items()]}
_BRAT_STORAGE = re.compile(r"[A-Za-z0-9_-]+")
_BRAT_HEX = re.compile(r"X_((?:[0-9a-f]{2})*)")
# brat's reserved names (special relation types, macros) cannot be type names.
_BRAT_RESERVED = {"ENTITY-NESTING", "Equiv", "Arg", "Arg1", "Arg2", "Value", "Combined"}
BRAT_OVERLAP = "<OVERLAP>\tArg1:<ENTITY>, Arg2:<ENTITY>, <OVL-TYPE>:<ANY>"


def brat_type_id(name: str, predicate: bool = False) -> str:
    """The brat type name of an entity type (or, with ``predicate``, a relation type): CMeIE's
    fixed ids (see the tables above), an ASCII name as it is, anything else ``X_`` + the hex of
    its UTF-8 bytes."""
    fixed = CMEIE_PREDICATE_IDS if predicate else CMEIE_TYPE_IDS
    if name in fixed:
        return fixed[name]
    if (_BRAT_STORAGE.fullmatch(name) and name not in _BRAT_NAMES and not _BRAT_HEX.fullmatch(name)
            and name not in _BRAT_RESERVED):
        return name
    return "X_" + name.encode("utf-8").hex()


def brat_type_name(type_id: str) -> str:
    """The type or predicate a brat type name stands for (the inverse of :func:`brat_type_id`;
    a name it did not make, e.g. a Chinese type in an older export, is returned as it is)."""
    if type_id in _BRAT_NAMES:
        return _BRAT_NAMES[type_id]
    m = _BRAT_HEX.fullmatch(type_id)
    if m:
        try:
            return bytes.fromhex(m.group(1)).decode("utf-8")
        except UnicodeDecodeError:
            return type_id
    return type_id


def _brat_names(task: TaskSpec, examples: Sequence[Example]
                ) -> tuple[list[str], list[str], list[tuple[str, str, str]]]:
    """Entity types, predicates and (subject type, predicate, object type) schemas of an export:
    the task's own (CMeIE: the 53 schemas) and then those the examples use, in first-seen order."""
    kind = _kind(task, ("spans", "triples"), "brat")
    if kind == "spans":
        types = list(dict.fromkeys(list(task.label_codes) + [s.type for ex in examples for s in ex.spans]))
        return types, [], []
    schemas = list(dict.fromkeys(list(CMEIE_SCHEMAS) + [
        (t.subject_type, t.predicate, t.object_type) for ex in examples for t in ex.triples]))
    types = list(dict.fromkeys([s for s, _, _ in schemas] + [o for _, _, o in schemas]))
    types = list(dict.fromkeys(list(CMEIE_TYPE_IDS) + types))
    preds = list(dict.fromkeys(list(task.label_codes) + [p for _, p, _ in schemas]))
    return types, preds, schemas


def brat_conf(task: TaskSpec, examples: Sequence[Example] = ()) -> str:
    """A brat ``annotation.conf`` for the task's types (and the types the examples use): ASCII
    type names, any overlap of entities allowed (CMeEE nests its entities; CMeIE mentions overlap
    and one mention may carry two types), CMeIE relations with their argument types."""
    types, preds, schemas = _brat_names(task, examples)
    head = ("# brat annotation.conf written by CBLUE Studio for " + task.name + ".\n"
            "# Type names are ASCII ids (brat requires [A-Za-z0-9_-]); visual.conf shows their\n"
            "# Chinese names. CMeIE: E01-E11 entity types, P01-P44 predicates (the official\n"
            "# 53_schemas.json order); other names: X_ + the hex of their UTF-8 bytes.\n\n")
    ents = "[entities]\n" + "".join(f"{brat_type_id(t)}\n" for t in types)
    rels = "\n[relations]\n# nested, equal and crossing entity spans are all allowed\n" + BRAT_OVERLAP + "\n"
    attrs = "\n[events]\n\n[attributes]\n"
    if preds:
        by_pred: dict[str, list[tuple[str, str]]] = {p: [] for p in preds}
        for s, p, o in schemas:
            by_pred.setdefault(p, []).append((s, o))
        for p in preds:
            for s, o in by_pred[p]:
                rels += f"{brat_type_id(p, True)}\tArg1:{brat_type_id(s)}, Arg2:{brat_type_id(o)}\n"
        attrs += "Combined\tArg:<RELATION>, Value:true|false\n"
    return head + ents + rels + attrs


def _short(name: str, type_id: str) -> str:
    stem = type_id.split("_", 1)[0]
    return stem if stem not in ("", "X") else (name[:4] or "(none)")


def brat_visual_conf(task: TaskSpec, examples: Sequence[Example] = ()) -> str:
    """A brat ``visual.conf`` showing each ASCII type id by its Chinese name:
    ``ascii_id | 中文 | short`` lines (CMeEE: ``dis | 疾病 | dis``)."""
    types, preds, _ = _brat_names(task, examples)
    zh = {label.code: label.zh for label in task.labels}
    lines = []
    for name, tid in [(t, brat_type_id(t)) for t in types] + [(p, brat_type_id(p, True)) for p in preds]:
        shown = (zh.get(name) or name or "(none)").replace("|", "/")
        lines.append(f"{tid} | {shown} | {_short(shown, tid)}")
    return ("# brat visual.conf written by CBLUE Studio for " + task.name + ": the Chinese names\n"
            "# of the ASCII type ids (id | display name | short form).\n\n[labels]\n"
            + "".join(line + "\n" for line in lines)
            + "\n[drawing]\nSPAN_DEFAULT\tfgColor:black, bgColor:lightgreen, borderColor:darken\n"
            "ARC_DEFAULT\tcolor:black, arrowHead:triangle-5\n")


def to_brat(task: TaskSpec, examples: Sequence[Example]) -> dict[str, str]:
    """brat standoff: ``{NNNNNN.txt: text, NNNNNN.ann: annotations, annotation.conf: ...,
    visual.conf: ...}`` (NNNNNN = the example's index)."""
    kind = _kind(task, ("spans", "triples"), "brat")
    files: dict[str, str] = {}
    for ex in examples:
        lines = []
        if kind == "spans":
            for n, s in enumerate(ex.spans, 1):
                if not 0 <= s.start < s.end <= len(ex.text):
                    raise ValueError(f"example {ex.index}: span {s.start}-{s.end} is outside the text")
                shown = ex.text[s.start:s.end].replace("\n", " ")
                lines.append(f"T{n}\t{brat_type_id(s.type)} {s.start} {s.end}\t{shown}")
        else:
            ents, where, _ = _entities(ex)
            for n, (mention, typ, start) in enumerate(ents, 1):
                lines.append(f"T{n}\t{brat_type_id(typ)} {start} {start + len(mention)}\t"
                             + mention.replace("\n", " "))
            attr = 0
            for k, t in enumerate(ex.triples, 1):
                a, b = where[(t.subject, t.subject_type)] + 1, where[(t.object, t.object_type)] + 1
                lines.append(f"R{k}\t{brat_type_id(t.predicate, True)} Arg1:T{a} Arg2:T{b}")
                if t.combined is not None:
                    attr += 1
                    lines.append(f"A{attr}\tCombined R{k} {'true' if t.combined else 'false'}")
        stem = f"{ex.index:06d}"
        files[f"{stem}.txt"] = ex.text
        files[f"{stem}.ann"] = "".join(line + "\n" for line in lines)
    files["annotation.conf"] = brat_conf(task, examples)
    files["visual.conf"] = brat_visual_conf(task, examples)
    return files


def from_brat(task: TaskSpec, files: dict[str, str | bytes]) -> list[Example]:
    """Examples from brat standoff files (``.txt`` + ``.ann`` pairs; other files ignored). Type
    names are read back through :func:`brat_type_name`."""
    kind = _kind(task, ("spans", "triples"), "brat")

    def text_of(v: str | bytes) -> str:
        return v.decode("utf-8") if isinstance(v, bytes) else v

    stems = sorted(name[:-4] for name in files if name.endswith(".txt"))
    out = []
    for pos, stem in enumerate(stems):
        text = text_of(files[f"{stem}.txt"])
        ann = text_of(files.get(f"{stem}.ann", ""))
        spans: dict[str, Span] = {}
        rels: dict[str, tuple[str, str, str]] = {}
        combined: dict[str, bool] = {}
        for ln, line in enumerate(ann.split("\n"), 1):
            line = line.rstrip("\r")
            if not line.strip() or line.startswith("#"):
                continue
            ident, _, rest = line.partition("\t")
            where = f"{stem}.ann line {ln}"
            if ident.startswith("T"):
                head = rest.split("\t", 1)[0]
                parts = head.split(" ")
                if ";" in head or len(parts) != 3:
                    raise ValueError(f"{where}: discontinuous or malformed span {head!r} "
                                     "(expected 'TYPE START END')")
                try:
                    start, end = int(parts[1]), int(parts[2])
                except ValueError:
                    raise ValueError(f"{where}: offsets {parts[1]!r} {parts[2]!r} are not integers") from None
                if not 0 <= start < end <= len(text):
                    raise ValueError(f"{where}: span {start}-{end} is outside the text (length {len(text)})")
                spans[ident] = Span(start, end, brat_type_name(parts[0]), text[start:end])
            elif ident.startswith("R"):
                m = re.fullmatch(r"(\S+) Arg1:(\S+) Arg2:(\S+)", rest.strip())
                if not m:
                    raise ValueError(f"{where}: malformed relation {rest!r} (expected 'TYPE Arg1:T1 Arg2:T2')")
                rels[ident] = (brat_type_name(m.group(1)), m.group(2), m.group(3))
            elif ident.startswith("A"):
                bits = rest.split()
                if len(bits) >= 2 and bits[0] == "Combined":
                    combined[bits[1]] = len(bits) < 3 or bits[2].lower() == "true"
        index = int(stem) if stem.isdigit() else pos
        rec = {"cblue_index": index}
        if kind == "spans":
            out.append(_example(task, rec, pos, text, spans=list(spans.values())))
            continue
        triples = []
        for rid, (pred, a, b) in rels.items():
            if a not in spans or b not in spans:
                raise ValueError(f"{stem}.ann: relation {rid} points to a missing span ({a}, {b})")
            triples.append(_triple(text, spans[a], pred, spans[b], combined.get(rid)))
        out.append(_example(task, rec, pos, text, triples=triples))
    return out


def zip_files(files: Mapping[str, str | bytes]) -> bytes:
    """A zip archive of named files (a brat export for download)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            zf.writestr(name, content.encode("utf-8") if isinstance(content, str) else content)
    return buf.getvalue()


def unzip_files(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n).decode("utf-8") for n in zf.namelist() if not n.endswith("/")}


# ------------------------------------------------------------------------------ doccano


def _texts(task: TaskSpec, ex: Example) -> dict[str, Any]:
    out: dict[str, Any] = {"text": ex.text}
    if ex.text2 or task.fields.get("text2"):   # a pair task's config shows $text2: always there
        out["text2"] = ex.text2
    return out


def to_doccano(task: TaskSpec, examples: Sequence[Example]) -> str:
    """doccano JSONL, one example a line."""
    kind = _kind(task, ("spans", "triples", "label", "terms"), "doccano")
    lines = []
    for ex in examples:
        rec = _texts(task, ex)
        if kind == "spans":
            rec["label"] = [[s.start, s.end, s.type] for s in ex.spans]
        elif kind == "triples":
            ents, where, _ = _entities(ex)
            rec["entities"] = [{"id": n, "label": typ, "start_offset": start,
                                "end_offset": start + len(mention)}
                               for n, (mention, typ, start) in enumerate(ents)]
            rels = []
            for k, t in enumerate(ex.triples):
                rel = {"id": k, "from_id": where[(t.subject, t.subject_type)],
                       "to_id": where[(t.object, t.object_type)], "type": t.predicate}
                if t.combined is not None:
                    rel["combined"] = t.combined
                rels.append(rel)
            rec["relations"] = rels
        elif kind == "label":
            rec["label"] = [ex.label] if ex.label not in (None, "") else []
        else:
            rec["label"] = list(ex.terms)
        rec.update(_identity(task, ex))
        if ex.meta:
            rec["cblue_meta"] = ex.meta
        lines.append(json.dumps(rec, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def _doccano_spans(rec: dict, text: str, where: str) -> list[Span]:
    raw = rec.get("label")
    if raw is None or (isinstance(raw, list) and raw and isinstance(raw[0], dict)):
        raw = [[e["start_offset"], e["end_offset"], e["label"]] for e in (raw or rec.get("entities") or [])]
    spans = []
    for item in raw:
        if not isinstance(item, (list, tuple)) or len(item) != 3:
            raise ValueError(f"{where}: label {item!r} is not [start, end, type]")
        s, e, typ = int(item[0]), int(item[1]), str(item[2])
        if not 0 <= s < e <= len(text):
            raise ValueError(f"{where}: span {s}-{e} is outside the text (length {len(text)})")
        spans.append(Span(s, e, typ, text[s:e]))
    return spans


def from_doccano(task: TaskSpec, text: str) -> list[Example]:
    """Examples from doccano JSONL (as written by :func:`to_doccano` or by doccano's export)."""
    kind = _kind(task, ("spans", "triples", "label", "terms"), "doccano")
    out = []
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for pos, line in enumerate(lines):
        where = f"doccano line {pos + 1}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            raise ValueError(f"{where}: expected an object with a 'text' string")
        body = rec["text"]
        text2 = rec.get("text2") or ""
        if kind == "spans":
            out.append(_example(task, rec, pos, body, spans=_doccano_spans(rec, body, where)))
        elif kind == "triples":
            ents = {}
            for e in rec.get("entities") or []:
                s, t = int(e["start_offset"]), int(e["end_offset"])
                ents[e["id"]] = Span(s, t, str(e["label"]), body[s:t])
            triples = []
            for r in rec.get("relations") or []:
                if r["from_id"] not in ents or r["to_id"] not in ents:
                    raise ValueError(f"{where}: relation {r.get('id')} points to a missing entity")
                triples.append(_triple(body, ents[r["from_id"]], str(r["type"]), ents[r["to_id"]],
                                       r.get("combined")))
            out.append(_example(task, rec, pos, body, triples=triples))
        else:
            labels = rec.get("label", rec.get("labels", []))
            labels = [labels] if isinstance(labels, (str, int)) else list(labels or [])
            labels = [str(x) for x in labels]
            if kind == "label":
                if len(labels) > 1:
                    raise ValueError(f"{where}: {len(labels)} labels for a single-label task")
                out.append(_example(task, rec, pos, body, text2, label=labels[0] if labels else None))
            else:
                out.append(_example(task, rec, pos, body, text2, terms=labels))
    return out


def _overlapping(spans: Sequence[tuple[int, int]]) -> int:
    """How many of the spans overlap (nest in, cross or equal) another one."""
    return sum(1 for i, (s, e) in enumerate(spans)
               if any(j != i and s < e2 and s2 < e for j, (s2, e2) in enumerate(spans)))


def doccano_readme(task: TaskSpec, examples: Sequence[Example] = (), file_name: str = "") -> str:
    """What a doccano project needs to import :func:`to_doccano`'s JSONL without losing anything,
    as a plain-text README shipped beside it (the CLI writes ``NAME.README.txt``): for spans and
    CMeIE, "Allow overlapping spans" (doccano drops overlapping spans otherwise) and, for CMeIE,
    "Use relation labeling" (the relations fail to import otherwise)."""
    kind = _kind(task, ("spans", "triples", "label", "terms"), "doccano")
    name = file_name or f"{task.name}.jsonl"
    n = len(examples)
    title = f"{task.name} for doccano: {name}"
    out = [title, "=" * len(title), "",
           f"{n:,} examples, one JSON object a line, written by CBLUE Studio. Offsets count Unicode",
           "code points and are end-exclusive. cblue_index (and cblue_key) identify each example so",
           "that CBLUE Studio reads doccano's export back: keep them (doccano keeps unknown fields",
           "as the example's metadata).", ""]
    if kind in ("spans", "triples"):
        nested = spans_over = 0
        types: list[str] = list(task.label_codes) if kind == "spans" else list(CMEIE_TYPE_IDS)
        preds: list[str] = list(task.label_codes) if kind == "triples" else []
        relations = 0
        for ex in examples:
            if kind == "spans":
                offsets = [(s.start, s.end) for s in ex.spans]
                types += [s.type for s in ex.spans]
            else:
                ents, _, placed = _entities(ex, strict=False)
                offsets = [(start, start + len(m)) for m, _, start in ents]
                types += [typ for _, typ, _ in ents]
                preds += [t.predicate for t in placed]
                relations += len(placed)
            k = _overlapping(offsets)
            spans_over += k
            nested += 1 if k else 0
        types, preds = list(dict.fromkeys(types)), list(dict.fromkeys(preds))
        out += ["Create the doccano project (doccano 1.6 or later: Projects > Create) with these",
                "settings. Set them when you create the project, before importing the file:", "",
                "  Project type: Sequence Labeling",
                "  [x] Allow overlapping spans        REQUIRED: "
                + (f"{nested:,} of the {n:,} examples hold nested or overlapping spans ({spans_over:,} spans)."
                   if n else "entities nest and overlap in this task."),
                "                                     Without it doccano drops overlapping spans on import."]
        if kind == "triples":
            out += ["  [x] Use relation labeling          REQUIRED: the file holds "
                    + (f"{relations:,} relations" if n else "relations") + " between its entities;",
                    "                                     without it they cannot be imported or shown."]
        out += ["  [ ] Count grapheme clusters as one character: leave it off (offsets count code points).",
                "", "Import: Dataset > Actions > Import Dataset, file format "
                + ('"JSONL(Relation)" (keys "entities" and "relations").' if kind == "triples"
                   else '"JSONL", column data "text", column label "label".'),
                "", "Span labels (entity types; doccano creates missing ones on import, or create them",
                "first under Labels to choose their colours): " + ", ".join(types)]
        if kind == "triples":
            out += ["", "Relation labels (Labels > Relation): " + ", ".join(preds)]
    else:
        labels = list(dict.fromkeys(list(task.label_codes) + [
            x for ex in examples for x in ([ex.label] if kind == "label" and ex.label not in (None, "")
                                          else ex.terms if kind == "terms" else [])]))
        out += ["Create the doccano project (Projects > Create) with:", "",
                "  Project type: Text Classification",
                "  [x] Allow single label" if kind == "label" else
                "  [ ] Allow single label             leave it off: an example may hold several terms."]
        if task.fields.get("text2"):
            out += ["", "doccano shows one text per example: the second text of each pair is in the field",
                    '"text2" (metadata), the first in "text".']
        out += ["", 'Import: Dataset > Actions > Import Dataset, file format "JSONL", column data "text",',
                'column label "label".', "",
                f"Labels ({len(labels):,}; doccano creates missing ones on import): "
                + ", ".join(labels[:200]) + (" ..." if len(labels) > 200 else "")]
    out += ["", "To read the annotations back: export the project from doccano as "
            + ('"JSONL(Relation)"' if kind == "triples" else '"JSONL"')
            + " and load it with CBLUE Studio (cblue_core.annotation.export.from_doccano).", ""]
    return "\n".join(out)


def doccano_files(task: TaskSpec, examples: Sequence[Example], name: str) -> dict[str, str]:
    """The doccano export as files: ``NAME.jsonl`` and the ``NAME.README.txt`` that says which
    project settings its import needs (see :func:`doccano_readme`)."""
    return {f"{name}.jsonl": to_doccano(task, examples),
            f"{name}.README.txt": doccano_readme(task, examples, f"{name}.jsonl")}


# ------------------------------------------------------------------------------ Label Studio


def _ls_results(task: TaskSpec, kind: str, ex: Example, strict: bool = True) -> list[dict]:
    results: list[dict] = []
    if kind == "spans":
        for n, s in enumerate(ex.spans, 1):
            results.append({"id": f"T{n}", "from_name": "label", "to_name": "text", "type": "labels",
                            "value": {"start": s.start, "end": s.end, "text": ex.text[s.start:s.end],
                                      "labels": [s.type]}})
    elif kind == "triples":
        ents, where, placed = _entities(ex, strict)
        for n, (mention, typ, start) in enumerate(ents, 1):
            results.append({"id": f"T{n}", "from_name": "label", "to_name": "text", "type": "labels",
                            "value": {"start": start, "end": start + len(mention), "text": mention,
                                      "labels": [typ]}})
        for t in placed:
            rel: dict[str, Any] = {"from_id": f"T{where[(t.subject, t.subject_type)] + 1}",
                   "to_id": f"T{where[(t.object, t.object_type)] + 1}",
                   "type": "relation", "direction": "right", "labels": [t.predicate]}
            if t.combined is not None:
                rel["combined"] = t.combined
            results.append(rel)
    elif kind == "label":
        if ex.label not in (None, ""):
            results.append({"id": "C1", "from_name": "label", "to_name": "text", "type": "choices",
                            "value": {"choices": [ex.label]}})
    elif ex.terms:
        results.append({"id": "C1", "from_name": "label", "to_name": "text", "type": "choices",
                        "value": {"choices": list(ex.terms)}})
    return results


def to_label_studio(task: TaskSpec, examples: Sequence[Example],
                    predictions: Sequence[Example] | None = None, *, model_version: str = "") -> str:
    """Label Studio tasks (JSON): the gold as ``annotations``; ``predictions`` (aligned with
    ``examples`` by index, e.g. a run's) as ``predictions``."""
    kind = _kind(task, ("spans", "triples", "label", "terms"), "Label Studio")
    preds = {p.index: p for p in predictions} if predictions is not None else {}
    tasks = []
    for n, ex in enumerate(examples, 1):
        data = _texts(task, ex)
        data.update(_identity(task, ex))
        if ex.meta:
            data["cblue_meta"] = ex.meta
        item: dict[str, Any] = {"id": n, "data": data,
                                "annotations": [{"result": _ls_results(task, kind, ex)}],
                                "predictions": []}
        if ex.index in preds:
            p = preds[ex.index]
            p = replace(p, text=ex.text) if not p.text else p
            item["predictions"].append({"model_version": model_version,
                                        "result": _ls_results(task, kind, p, strict=False)})
        tasks.append(item)
    return json.dumps(tasks, ensure_ascii=False, indent=1)


def from_label_studio(task: TaskSpec, text: str, *, source: str = "annotations") -> list[Example]:
    """Examples from Label Studio JSON: each task's latest non-cancelled annotation (or, with
    ``source="predictions"``, its latest prediction); a task with none is unannotated."""
    kind = _kind(task, ("spans", "triples", "label", "terms"), "Label Studio")
    if source not in ("annotations", "predictions"):
        raise ValueError("source must be 'annotations' or 'predictions'")
    try:
        tasks = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"Label Studio export is not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(tasks, dict):
        tasks = [tasks]
    out = []
    for pos, item in enumerate(tasks):
        where = f"Label Studio task {item.get('id', pos + 1) if isinstance(item, dict) else pos + 1}"
        data = item.get("data") if isinstance(item, dict) else None
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            raise ValueError(f"{where}: expected data.text")
        body = data["text"]
        done = [a for a in item.get(source) or [] if not a.get("was_cancelled")]
        results = done[-1].get("result", []) if done else []
        regions: dict[str, Span] = {}
        triples: list[Triple] = []
        choices: list[str] = []
        for r in results:
            rtype = r.get("type")
            if rtype == "labels":
                v = r["value"]
                s, e = int(v["start"]), int(v["end"])
                if not 0 <= s < e <= len(body):
                    raise ValueError(f"{where}: region {s}-{e} is outside the text")
                regions[r.get("id", f"r{len(regions)}")] = Span(s, e, str(v["labels"][0]), body[s:e])
            elif rtype == "choices":
                choices.extend(str(c) for c in r["value"].get("choices", []))
        for r in results:
            if r.get("type") == "relation":
                a, b = regions.get(r["from_id"]), regions.get(r["to_id"])
                if a is None or b is None:
                    raise ValueError(f"{where}: a relation points to a missing region")
                if r.get("direction") == "left":
                    a, b = b, a
                labels = r.get("labels") or [""]
                triples.append(_triple(body, a, str(labels[0]), b, r.get("combined")))
        text2 = data.get("text2") or ""
        if kind == "spans":
            out.append(_example(task, data, pos, body, spans=list(regions.values())))
        elif kind == "triples":
            out.append(_example(task, data, pos, body, triples=triples))
        elif kind == "label":
            if len(choices) > 1:
                raise ValueError(f"{where}: {len(choices)} choices for a single-label task")
            out.append(_example(task, data, pos, body, text2, label=choices[0] if choices else None))
        else:
            out.append(_example(task, data, pos, body, text2, terms=choices))
    return out


def label_studio_config(task: TaskSpec, choices: Sequence[str] = (),
                        examples: Sequence[Example] = ()) -> str:
    """A Label Studio labeling config that :func:`to_label_studio`'s results validate against:
    the entity types as ``<Labels>`` (spans; CMeIE mentions, with the 44 predicates as
    ``<Relation>`` values of ``<Relations>``), the labels or CDN terms as ``<Choices>``.

    The values are the task's own (``choices`` when given instead: entity types for spans and
    CMeIE, labels or terms otherwise) followed by those ``examples`` use, so that every exported
    task validates (an unknown label such as KUAKE-QQR's ``NA``, the CDN terms of the split)."""
    kind = _kind(task, ("spans", "triples", "label", "terms"), "Label Studio")
    q = quoteattr
    text = '  <Text name="text" value="$text"/>\n'
    if kind in ("spans", "triples"):
        if kind == "spans":
            base = list(choices) or list(task.label_codes)
            used = [s.type for ex in examples for s in ex.spans]
        else:
            base = list(choices) or list(CMEIE_TYPE_IDS)
            used = [x for ex in examples for t in ex.triples for x in (t.subject_type, t.object_type)]
        types = list(dict.fromkeys(base + used))
        labels = ('  <Labels name="label" toName="text">\n'
                  + "".join(f"    <Label value={q(t)}/>\n" for t in types) + "  </Labels>\n")
        if kind == "spans":
            return "<View>\n" + labels + text + "</View>\n"
        preds = list(dict.fromkeys(list(task.label_codes) + [t.predicate for ex in examples for t in ex.triples]))
        rel = "".join(f"    <Relation value={q(p)}/>\n" for p in preds)
        return "<View>\n  <Relations>\n" + rel + "  </Relations>\n" + labels + text + "</View>\n"
    if kind == "label":
        used = [ex.label for ex in examples if ex.label not in (None, "")]
    else:
        used = [t for ex in examples for t in ex.terms]
    opts = list(dict.fromkeys((list(choices) or list(task.label_codes)) + [str(x) for x in used]))
    mode = "single" if kind == "label" else "multiple"
    second = '  <Text name="text2" value="$text2"/>\n' if task.fields.get("text2") else ""
    return (f"<View>\n{text}{second}  <Choices name=\"label\" toName=\"text\" choice=\"{mode}\">\n"
            + "".join(f"    <Choice value={q(c)}/>\n" for c in opts) + "  </Choices>\n</View>\n")


def label_studio_files(task: TaskSpec, examples: Sequence[Example], name: str,
                       predictions: Sequence[Example] | None = None) -> dict[str, str]:
    """The Label Studio export as files: the tasks (``NAME.json``, to import) and the labeling
    config they validate against (``NAME.label_config.xml``, for the project's Labeling Setup >
    Code)."""
    return {f"{name}.json": to_label_studio(task, examples, predictions),
            f"{name}.label_config.xml": label_studio_config(
                task, examples=list(examples) + list(predictions or []))}


# ------------------------------------------------------------------------------ to disk


def export_stem(task: TaskSpec, split: str, version: str | None = None) -> str:
    """``TASK_SPLIT`` (plus ``_VERSION`` for a version other than the current gold): the file
    name stem of an export written to a folder."""
    stem = f"{task.name}_{split}"
    if version not in (None, "current"):
        stem += "_" + re.sub(r"[^\w.-]+", "_", str(version)).strip("_.")
    return stem


def _is_folder(path: Path) -> bool:
    return path.is_dir() or not path.suffix


def export_dataset(ws, dataset_id: int, out: str | Path, fmt: str = "official",
                   version: str | None = None) -> list[Path]:
    """Write the split at ``version`` (None or "current": the current gold, "original": as
    ingested, else a named version) in ``fmt`` and return the paths written:

    - ``official``: the task's file (``out`` a file, or a folder: the split's official name);
    - ``brat``: ``.txt`` / ``.ann`` pairs, ``annotation.conf`` and ``visual.conf`` in the folder
      ``out`` (or, for ``out`` ending in ``.zip``, one zip archive);
    - ``doccano``: ``NAME.jsonl`` and ``NAME.README.txt`` (``out`` is ``NAME.jsonl``, or a folder:
      NAME is ``TASK_SPLIT[_VERSION]``);
    - ``label-studio``: ``NAME.json`` (tasks) and ``NAME.label_config.xml``, named the same way.

    A path without a suffix is a folder (created). Raises ValueError for an unknown format or
    version, or a task the format cannot hold."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (expected one of {', '.join(FORMATS)})")
    version = None if version == "current" else version
    info, task = _dataset(ws, dataset_id)
    target = Path(out)
    if fmt == "official":
        if _is_folder(target):
            target.mkdir(parents=True, exist_ok=True)
        return [export_official(ws, dataset_id, version, target)]
    gold = ws.annotations.gold_examples(dataset_id, version)
    stem = export_stem(task, info.split, version)
    if fmt == "brat":
        files = format_files(task, gold, fmt, stem)
        if target.suffix.lower() == ".zip":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zip_files(dict(files)))
            return [target]
        target.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            (target / name).write_text(content, encoding="utf-8", newline="")
        return [target]
    folder, name = (target, stem) if _is_folder(target) else (target.parent, target.stem)
    built = format_files(task, gold, fmt, name)
    folder.mkdir(parents=True, exist_ok=True)
    return [write_text(folder / fname, content) for fname, content in built.items()]


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


@dataclass(frozen=True)
class Download:
    """One export as a browser download: a file name, its bytes and their media type."""

    file_name: str
    data: bytes
    mime: str


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


def format_refusal(task: TaskSpec, fmt: str) -> str | None:
    """Why ``fmt`` cannot hold ``task``'s gold (None when it can), without building anything."""
    if fmt not in FORMATS:
        return f"unknown export format {fmt!r} (expected one of {', '.join(FORMATS)})"
    if fmt == "official":
        return None
    try:
        _kind(task, FORMAT_HOLDS[fmt], _FORMAT_NAMES[fmt])
    except ValueError as exc:
        return str(exc)
    return None


def download_name(task: TaskSpec, split: str, fmt: str, version: str | None = None) -> tuple[str, str]:
    """(file name, media type) of the download of a split in ``fmt`` at ``version``."""
    stem = export_stem(task, split, None if version == "current" else version)
    if fmt == "official":
        return task.files.get(split) or f"{stem}.json", "application/json"
    return f"{stem}_{fmt.replace('-', '_')}.zip", "application/zip"


def export_download(ws, dataset_id: int, fmt: str, version: str | None = None) -> Download:
    """The split at ``version`` in ``fmt`` as one download: the official file itself (named as
    the official split file), or a zip of an annotation tool's files. Raises ValueError as
    :func:`export_dataset` does."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (expected one of {', '.join(FORMATS)})")
    version = None if version == "current" else version
    info, task = _dataset(ws, dataset_id)
    file_name, mime = download_name(task, info.split, fmt, version)
    if fmt == "official":
        with tempfile.TemporaryDirectory() as tmp:
            data = export_official(ws, dataset_id, version, Path(tmp)).read_bytes()
        return Download(file_name, data, mime)
    files = format_files(task, ws.annotations.gold_examples(dataset_id, version), fmt, Path(file_name).stem)
    return Download(file_name, zip_files(files), mime)
