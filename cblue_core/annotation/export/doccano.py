"""doccano JSONL (:func:`to_doccano` / :func:`from_doccano`): ``{"text", "label": [[start, end,
type]]}`` for spans, ``{"text", "label": [labels]}`` for labels and CDN terms, doccano's
``entities`` / ``relations`` for CMeIE; :func:`doccano_readme` says which project settings
the import needs (overlapping spans, relation labeling).

JSON escapes every character, so nothing is refused: one record a line, with U+0085, U+2028
and U+2029 written as ``\\u`` escapes (:func:`~.characters.json_text`), and read back split at
``\\n`` only (a doccano export may hold them raw inside its strings).
"""
from __future__ import annotations

import json
from collections.abc import Sequence

from ...io.bounded_json import loads as bounded_loads
from ...records import Example, Span
from ...tasks import TaskSpec
from .brat_ids import CMEIE_TYPE_IDS
from .characters import json_text, visible
from .common import gold_kind, identity, place_mentions, read_choices, read_example, read_triple, texts


def to_doccano(task: TaskSpec, examples: Sequence[Example]) -> str:
    """doccano JSONL, one example a line."""
    kind = gold_kind(task, ("spans", "triples", "label", "terms"), "doccano")
    lines = []
    for ex in examples:
        rec = texts(task, ex)
        if kind == "spans":
            rec["label"] = [[s.start, s.end, s.type] for s in ex.spans]
        elif kind == "triples":
            ents, where, _ = place_mentions(ex)
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
        rec.update(identity(task, ex))
        if ex.meta:
            rec["cblue_meta"] = ex.meta
        lines.append(json_text(rec))
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
    kind = gold_kind(task, ("spans", "triples", "label", "terms"), "doccano")
    out = []
    lines = [ln for ln in text.split("\n") if ln.strip()]
    for pos, line in enumerate(lines):
        where = f"doccano line {pos + 1}"
        try:
            rec = bounded_loads(line, where)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            raise ValueError(f"{where}: expected an object with a 'text' string")
        body = rec["text"]
        text2 = rec.get("text2") or ""
        if kind == "spans":
            out.append(read_example(task, rec, pos, body, spans=_doccano_spans(rec, body, where)))
        elif kind == "triples":
            ents = {}
            for e in rec.get("entities") or []:
                s, t = int(e["start_offset"]), int(e["end_offset"])
                ents[e["id"]] = Span(s, t, str(e["label"]), body[s:t])
            triples = []
            for r in rec.get("relations") or []:
                if r["from_id"] not in ents or r["to_id"] not in ents:
                    raise ValueError(f"{where}: relation {r.get('id')} points to a missing entity")
                triples.append(read_triple(body, ents[r["from_id"]], str(r["type"]), ents[r["to_id"]],
                                       r.get("combined")))
            out.append(read_example(task, rec, pos, body, triples=triples))
        else:
            labels = rec.get("label", rec.get("labels", []))
            labels = [labels] if isinstance(labels, (str, int)) else list(labels or [])
            out.append(read_choices(task, kind, rec, pos, body, text2, [str(x) for x in labels], where,
                                    "labels"))
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
    kind = gold_kind(task, ("spans", "triples", "label", "terms"), "doccano")
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
                ents, _, placed = place_mentions(ex, strict=False)
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
                "first under Labels to choose their colours): " + ", ".join(map(visible, types))]
        if kind == "triples":
            out += ["", "Relation labels (Labels > Relation): " + ", ".join(map(visible, preds))]
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
                + ", ".join(map(visible, labels[:200])) + (" ..." if len(labels) > 200 else "")]
    out += ["", "To read the annotations back: export the project from doccano as "
            + ('"JSONL(Relation)"' if kind == "triples" else '"JSONL"')
            + " and load it with CBLUE Studio (cblue_core.annotation.export.from_doccano).", ""]
    return "\n".join(out)


def doccano_files(task: TaskSpec, examples: Sequence[Example], name: str) -> dict[str, str]:
    """The doccano export as files: ``NAME.jsonl`` and the ``NAME.README.txt`` that says which
    project settings its import needs (see :func:`doccano_readme`)."""
    return {f"{name}.jsonl": to_doccano(task, examples),
            f"{name}.README.txt": doccano_readme(task, examples, f"{name}.jsonl")}
