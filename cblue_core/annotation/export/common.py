"""What the export formats share: which gold a format holds, each example's identity, CMeIE
mentions placed in the text, and the examples and triples a reader rebuilds."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...records import Example, Span, Triple
from ...tasks import TaskSpec, get_task
from ..model import annotation_field
from ..validation import combined_for


def dataset_task(ws, dataset_id: int):
    """The dataset's info and its task; ValueError for an unknown dataset."""
    info = ws.datasets.get(dataset_id)
    if info is None:
        raise ValueError(f"no dataset {dataset_id} in the workspace")
    return info, get_task(info.task)


def gold_kind(task: TaskSpec, allowed: Iterable[str], fmt: str) -> str:
    """The task's annotation field when ``fmt`` holds it (one of ``allowed``), else ValueError."""
    kind = annotation_field(task)
    if kind is None or kind not in allowed:
        what = {"spans": "entity spans", "triples": "CMeIE triples", "label": "labels",
                "terms": "CDN terms"}
        holds = " and ".join(what[k] for k in allowed)
        raise ValueError(f"{fmt} export holds {holds}; {task.name} gold is not supported")
    return kind


def decimal_index(value: Any) -> int | None:
    """A non-negative index written in ASCII digits (an int, or text such as a file stem), else
    None: ``str.isdigit`` also accepts ``²``, which ``int`` refuses."""
    text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    return int(text) if text.isascii() and text.isdigit() else None


def identity(task: TaskSpec, ex: Example) -> dict[str, Any]:
    out: dict[str, Any] = {"cblue_index": ex.index}
    if task.key_field != "text":
        out["cblue_key"] = ex.key
    return out


def texts(task: TaskSpec, ex: Example) -> dict[str, Any]:
    out: dict[str, Any] = {"text": ex.text}
    if ex.text2 or task.fields.get("text2"):   # a pair task's config shows $text2: always there
        out["text2"] = ex.text2
    return out


def read_example(task: TaskSpec, rec: dict, pos: int, text: str, text2: str = "", **fields) -> Example:
    index = decimal_index(rec.get("cblue_index"))
    index = pos if index is None else index
    key = rec.get("cblue_key")
    if key is None:
        key = text if task.key_field == "text" else str(index)
    meta = rec.get("cblue_meta")
    return Example(key=str(key), index=index, text=text, text2=text2,
                   meta=dict(meta) if isinstance(meta, dict) else {}, **fields)


def read_choices(task: TaskSpec, kind: str, rec: dict, pos: int, body: str, text2: str,
                 values: list[str], where: str, noun: str) -> Example:
    """A labels example (at most one of ``values``, else ValueError naming ``where``) or a CDN
    terms example (all of them)."""
    if kind == "label":
        if len(values) > 1:
            raise ValueError(f"{where}: {len(values)} {noun} for a single-label task")
        return read_example(task, rec, pos, body, text2, label=values[0] if values else None)
    return read_example(task, rec, pos, body, text2, terms=values)


def place_mentions(ex: Example, strict: bool = True
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


def read_triple(text: str, subj: Span, pred: str, obj: Span, combined: Any) -> Triple:
    s, o = text[subj.start:subj.end], text[obj.start:obj.end]
    comb = combined if isinstance(combined, bool) else combined_for(text, s, o)
    return Triple(s, pred, o, subj.type, obj.type, comb)
