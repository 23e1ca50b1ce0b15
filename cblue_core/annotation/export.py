"""Exports of a split at any gold version, each with a reader so that an export reads back.

- :func:`export_official`: the task's own file format. Records whose gold is the ingested one
  are written from their ``raw`` record (same content as the original); edited records are
  encoded by the task's codec (:mod:`cblue_core.io.writers`), in the file's offset convention.
- brat standoff (:func:`to_brat` / :func:`from_brat`): one ``.txt`` and one ``.ann`` per
  example; ``T`` lines for spans, ``R`` lines for CMeIE relations (their mentions placed at
  their first occurrence), ``A`` lines for CMeIE's ``Combined`` flag; plus ``annotation.conf``.
- doccano JSONL (:func:`to_doccano` / :func:`from_doccano`): ``{"text", "label": [[start, end,
  type]]}`` for spans, ``{"text", "label": [labels]}`` for labels and CDN terms, doccano's
  ``entities`` / ``relations`` for CMeIE.
- Label Studio JSON (:func:`to_label_studio` / :func:`from_label_studio`): tasks whose
  ``annotations`` (gold) and ``predictions`` (a run, optional) hold results of type
  ``labels`` (spans), ``relation`` (CMeIE) or ``choices`` (labels, terms).

Offsets are half-open everywhere here, as in the core (brat, doccano and Label Studio all use
end-exclusive offsets). Exported records carry ``cblue_index`` (and ``cblue_key`` when the task
matches records on an id) so that readers restore each example's identity.
"""
from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from ..io.offsets import EXCLUSIVE, INCLUSIVE
from ..io.writers import dumps_records, encode_records
from ..records import Example, Span, Triple
from ..tasks import TaskSpec, get_task
from .model import annotation_field
from .validation import combined_for

_CONTAINERS = {"array": "json", "lines": "jsonl", "object": "dialogs", "tsv": "tsv"}


# ------------------------------------------------------------------------------ official


def _like_raw(encoded: Any, raw: Any) -> Any:
    """An encoded record laid out like the original one: its key order, its id's JSON type."""
    if not isinstance(encoded, dict) or not isinstance(raw, dict):
        return encoded
    out = {k: encoded[k] for k in raw if k in encoded}
    out.update({k: v for k, v in encoded.items() if k not in out})
    for k in ("id",):
        if k in raw and k in out and str(raw[k]) == str(out[k]):
            out[k] = raw[k]
    return out


def official_records(task: TaskSpec, gold: Sequence[Example], originals: Sequence[Example],
                     convention: str = INCLUSIVE) -> list[Any]:
    """Records of the split: the original record where ``raw`` is kept, else the codec's."""
    raw_by_idx = {o.index: o.raw for o in originals}
    out = []
    for ex in gold:
        if ex.raw is not None:
            out.append(ex.raw)
        else:
            rec = encode_records(task, [ex], use_raw=False, convention=convention)[0]
            out.append(_like_raw(rec, raw_by_idx.get(ex.index)))
    return out


def export_official(ws, dataset_id: int, version: str | None, path: str | Path) -> Path:
    """Write the split at ``version`` in the task's official format. ``path`` is a file, or an
    existing folder (the task's official file name for the split is used)."""
    info = ws.datasets.get(dataset_id)
    if info is None:
        raise ValueError(f"no dataset {dataset_id} in the workspace")
    task = get_task(info.task)
    gold = ws.annotations.gold_examples(dataset_id, version)
    originals = ws.datasets.examples(dataset_id) if any(ex.raw is None for ex in gold) else gold
    conv = info.offset_convention if info.offset_convention in (INCLUSIVE, EXCLUSIVE) else INCLUSIVE
    records = official_records(task, gold, originals, conv)
    container = _CONTAINERS.get(ws.datasets.container(dataset_id) or "", task.container)
    spec = replace(task, container=container) if container != task.container else task
    target = Path(path)
    if target.is_dir():
        target = target / (task.files.get(info.split) or f"{task.name}_{info.split}.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dumps_records(spec, records, [ex.key for ex in gold]), encoding="utf-8")
    return target


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


def _brat_type(name: str) -> str:
    if not name or re.search(r"\s", name):
        raise ValueError(f"brat type names cannot be empty or hold spaces: {name!r}")
    return name


def brat_conf(task: TaskSpec, examples: Sequence[Example] = ()) -> str:
    """A brat ``annotation.conf`` for the task's types (and the types the examples use)."""
    kind = _kind(task, ("spans", "triples"), "brat")
    if kind == "spans":
        types = list(dict.fromkeys(list(task.label_codes) + [s.type for ex in examples for s in ex.spans]))
        return "[entities]\n" + "".join(f"{t}\n" for t in types) + "\n[relations]\n\n[events]\n\n[attributes]\n"
    types = list(dict.fromkeys(x for ex in examples for t in ex.triples for x in (t.subject_type, t.object_type) if x))
    preds = list(dict.fromkeys(list(task.label_codes) + [t.predicate for ex in examples for t in ex.triples]))
    return ("[entities]\n" + "".join(f"{t}\n" for t in types) + "\n[relations]\n"
            + "".join(f"{p}\tArg1:<ENTITY>, Arg2:<ENTITY>\n" for p in preds)
            + "\n[events]\n\n[attributes]\nCombined\tArg:<RELATION>, Value:true|false\n")


def to_brat(task: TaskSpec, examples: Sequence[Example]) -> dict[str, str]:
    """brat standoff: ``{NNNNNN.txt: text, NNNNNN.ann: annotations, annotation.conf: ...}``
    (NNNNNN = the example's index)."""
    kind = _kind(task, ("spans", "triples"), "brat")
    files: dict[str, str] = {}
    for ex in examples:
        lines = []
        if kind == "spans":
            for n, s in enumerate(ex.spans, 1):
                if not 0 <= s.start < s.end <= len(ex.text):
                    raise ValueError(f"example {ex.index}: span {s.start}-{s.end} is outside the text")
                shown = ex.text[s.start:s.end].replace("\n", " ")
                lines.append(f"T{n}\t{_brat_type(s.type)} {s.start} {s.end}\t{shown}")
        else:
            ents, where, _ = _entities(ex)
            for n, (mention, typ, start) in enumerate(ents, 1):
                lines.append(f"T{n}\t{_brat_type(typ)} {start} {start + len(mention)}\t"
                             + mention.replace("\n", " "))
            attr = 0
            for k, t in enumerate(ex.triples, 1):
                a, b = where[(t.subject, t.subject_type)] + 1, where[(t.object, t.object_type)] + 1
                lines.append(f"R{k}\t{_brat_type(t.predicate)} Arg1:T{a} Arg2:T{b}")
                if t.combined is not None:
                    attr += 1
                    lines.append(f"A{attr}\tCombined R{k} {'true' if t.combined else 'false'}")
        stem = f"{ex.index:06d}"
        files[f"{stem}.txt"] = ex.text
        files[f"{stem}.ann"] = "".join(line + "\n" for line in lines)
    files["annotation.conf"] = brat_conf(task, examples)
    return files


def from_brat(task: TaskSpec, files: dict[str, str | bytes]) -> list[Example]:
    """Examples from brat standoff files (``.txt`` + ``.ann`` pairs; other files ignored)."""
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
        for ln, line in enumerate(ann.splitlines(), 1):
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
                spans[ident] = Span(start, end, parts[0], text[start:end])
            elif ident.startswith("R"):
                m = re.fullmatch(r"(\S+) Arg1:(\S+) Arg2:(\S+)", rest.strip())
                if not m:
                    raise ValueError(f"{where}: malformed relation {rest!r} (expected 'TYPE Arg1:T1 Arg2:T2')")
                rels[ident] = (m.group(1), m.group(2), m.group(3))
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


def zip_files(files: dict[str, str | bytes]) -> bytes:
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
    if ex.text2:
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


def label_studio_config(task: TaskSpec, choices: Sequence[str] = ()) -> str:
    """A Label Studio labeling config that matches :func:`to_label_studio`'s results."""
    kind = _kind(task, ("spans", "triples", "label", "terms"), "Label Studio")
    q = quoteattr
    text = '  <Text name="text" value="$text"/>\n'
    if kind in ("spans", "triples"):
        types = list(dict.fromkeys(list(choices) or list(task.label_codes)))
        if kind == "triples":
            rel = "".join(f"    <Relation value={q(p)}/>\n" for p in task.label_codes)
            return ("<View>\n  <Relations>\n" + rel + "  </Relations>\n  <Labels name=\"label\" toName=\"text\">\n"
                    + "".join(f"    <Label value={q(t)}/>\n" for t in types) + "  </Labels>\n" + text + "</View>\n")
        return ("<View>\n  <Labels name=\"label\" toName=\"text\">\n"
                + "".join(f"    <Label value={q(t)}/>\n" for t in types) + "  </Labels>\n" + text + "</View>\n")
    opts = list(choices) or list(task.label_codes)
    mode = "single" if kind == "label" else "multiple"
    second = '  <Text name="text2" value="$text2"/>\n' if task.fields.get("text2") else ""
    return (f"<View>\n{text}{second}  <Choices name=\"label\" toName=\"text\" choice=\"{mode}\">\n"
            + "".join(f"    <Choice value={q(c)}/>\n" for c in opts) + "  </Choices>\n</View>\n")
