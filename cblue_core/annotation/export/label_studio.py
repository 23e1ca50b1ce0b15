"""Label Studio JSON (:func:`to_label_studio` / :func:`from_label_studio`): tasks whose
``annotations`` (gold) and ``predictions`` (a run, optional) hold results of type ``labels``
(spans, CMeIE mentions), ``relation`` (CMeIE) or ``choices`` (labels, terms);
:func:`label_studio_config` is the labeling config they validate against.

The tasks are JSON, which escapes anything. The config is XML 1.0, which cannot hold most C0
controls, U+FFFE or U+FFFF even as character references: a type, predicate, label or term
holding one is refused, naming the example and the field that use it (the tasks must use the
config's values exactly, so such a value cannot be renamed silently).
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any
from xml.sax.saxutils import quoteattr

from ...io.bounded_json import loads as bounded_loads
from ...records import Example, Span, Triple
from ...tasks import TaskSpec
from .brat_ids import CMEIE_TYPE_IDS
from .characters import check_xml, json_text
from .common import gold_kind, identity, place_mentions, read_choices, read_example, read_triple, texts


def _ls_results(task: TaskSpec, kind: str, ex: Example, strict: bool = True) -> list[dict]:
    results: list[dict] = []
    if kind == "spans":
        for n, s in enumerate(ex.spans, 1):
            results.append({"id": f"T{n}", "from_name": "label", "to_name": "text", "type": "labels",
                            "value": {"start": s.start, "end": s.end, "text": ex.text[s.start:s.end],
                                      "labels": [s.type]}})
    elif kind == "triples":
        ents, where, placed = place_mentions(ex, strict)
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
    kind = gold_kind(task, ("spans", "triples", "label", "terms"), "Label Studio")
    preds = {p.index: p for p in predictions} if predictions is not None else {}
    tasks = []
    for n, ex in enumerate(examples, 1):
        data = texts(task, ex)
        data.update(identity(task, ex))
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
    return json_text(tasks, indent=1)


def from_label_studio(task: TaskSpec, text: str, *, source: str = "annotations") -> list[Example]:
    """Examples from Label Studio JSON: each task's latest non-cancelled annotation (or, with
    ``source="predictions"``, its latest prediction); a task with none is unannotated."""
    kind = gold_kind(task, ("spans", "triples", "label", "terms"), "Label Studio")
    if source not in ("annotations", "predictions"):
        raise ValueError("source must be 'annotations' or 'predictions'")
    try:
        tasks = bounded_loads(text, "Label Studio export")
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
                triples.append(read_triple(body, a, str(labels[0]), b, r.get("combined")))
        text2 = data.get("text2") or ""
        if kind == "spans":
            out.append(read_example(task, data, pos, body, spans=list(regions.values())))
        elif kind == "triples":
            out.append(read_example(task, data, pos, body, triples=triples))
        else:
            out.append(read_choices(task, kind, data, pos, body, text2, choices, where, "choices"))
    return out


def _config_values(kind: str, examples: Sequence[Example]) -> Iterator[tuple[str, str, str]]:
    """(example, field, value) of every value the labeling config declares for ``examples``."""
    for ex in examples:
        where = f"example {ex.index}"
        if kind == "spans":
            for k, s in enumerate(ex.spans):
                yield where, f"spans[{k}].type", s.type
        elif kind == "triples":
            for k, t in enumerate(ex.triples):
                yield where, f"triples[{k}].subject_type", t.subject_type
                yield where, f"triples[{k}].object_type", t.object_type
                yield where, f"triples[{k}].predicate", t.predicate
        elif kind == "label":
            if ex.label not in (None, ""):
                yield where, "label", str(ex.label)
        else:
            for k, term in enumerate(ex.terms):
                yield where, f"terms[{k}]", term


def check_label_studio(task: TaskSpec, examples: Sequence[Example]) -> None:
    """Raise the ValueError :func:`label_studio_config` would raise for the values ``examples``
    use, building nothing."""
    kind = gold_kind(task, ("spans", "triples", "label", "terms"), "Label Studio")
    for where, field, value in _config_values(kind, examples):
        check_xml(where, field, value, "Label Studio's labeling config")


def label_studio_config(task: TaskSpec, choices: Sequence[str] = (),
                        examples: Sequence[Example] = ()) -> str:
    """A Label Studio labeling config that :func:`to_label_studio`'s results validate against:
    the entity types as ``<Labels>`` (spans; CMeIE mentions, with the 44 predicates as
    ``<Relation>`` values of ``<Relations>``), the labels or CDN terms as ``<Choices>``.

    The values are the task's own (``choices`` when given instead: entity types for spans and
    CMeIE, labels or terms otherwise) followed by those ``examples`` use, so that every exported
    task validates (an unknown label such as KUAKE-QQR's ``NA``, the CDN terms of the split).
    Raises ValueError, naming the example and field, for a value XML 1.0 cannot hold."""
    kind = gold_kind(task, ("spans", "triples", "label", "terms"), "Label Studio")
    given = (("the choices given", f"choices[{k}]", str(c)) for k, c in enumerate(choices))
    for where, field, value in given:
        check_xml(where, field, value, "Label Studio's labeling config")
    check_label_studio(task, examples)
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
