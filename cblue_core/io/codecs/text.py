"""Codecs of the CBLUE records that annotate one text (or one pair of texts): entities, relation
triples, normalized terms, labels, events, decision trees and causal relations."""
from __future__ import annotations

from typing import ClassVar

from ...records import Event, Example, Span, Triple
from ...tasks import TaskSpec
from ..offsets import INCLUSIVE, OffsetItem, from_half_open, to_half_open
from .base import Codec, DecodeContext, Record, RecordError
from .fields import as_record, describe, get, get_id, label_str, list_of


class EntitiesCodec(Codec):
    """CMeEE / CMeEE-V2: ``{"text", "entities": [{"start_idx","end_idx","type","entity"}]}``."""

    GOLD = "entities"

    def offset_items(self, rec: object, index: int, task: TaskSpec) -> list[OffsetItem]:
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            return []
        out = []
        for i, ent in enumerate(list_of(rec.get("entities"))):
            if isinstance(ent, dict) and isinstance(ent.get("start_idx"), int) and isinstance(
                    ent.get("end_idx"), int) and isinstance(ent.get("entity"), str):
                out.append(OffsetItem(index, f"entities[{i}]", rec["text"], ent["start_idx"],
                                      ent["end_idx"], ent["entity"]))
        return out

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        text = get(rec, "text", str)
        ents = get(rec, "entities", list, required=False, default=[])
        spans = []
        for i, ent in enumerate(ents):
            p = f"entities[{i}]"
            s = get(ent, "start_idx", int, f"{p}.start_idx")
            e = get(ent, "end_idx", int, f"{p}.end_idx")
            typ = get(ent, "type", str, f"{p}.type")
            mention = get(ent, "entity", str, f"{p}.entity", required=False)
            ctx.check_label(typ, f"{p}.type")
            start, end = to_half_open(s, e, ctx.convention)
            if end <= start or start < 0 or end > len(text):
                ctx.warn(f"span {s}..{e} is empty, reversed or outside the text (length {len(text)})",
                         field=p, expected="0 <= start_idx <= end_idx < len(text)", code="bad_offsets")
            elif mention is not None and text[start:end] != mention:
                ctx.warn(f"mention {mention!r} is not the text slice {text[start:end]!r}",
                         field=f"{p}.entity", code="mention_mismatch")
            spans.append(Span(start, end, typ, mention if mention is not None else text[start:end]))
        return Example(key=text, index=index, text=text, spans=spans, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        ents = []
        for sp in ex.spans:
            s, e = from_half_open(sp.start, sp.end, convention)
            ents.append({"start_idx": s, "end_idx": e, "type": sp.type, "entity": sp.text})
        return {"text": ex.text, "entities": ents}


class SpoCodec(Codec):
    """CMeIE: ``{"text", "spo_list": [{"Combined","predicate","subject","subject_type",
    "object": {"@value"}, "object_type": {"@value"}}]}`` with string mentions."""

    GOLD = "spo_list"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        text = get(rec, "text", str)
        spo = get(rec, "spo_list", list, required=False, default=[])
        triples = []
        for i, t in enumerate(spo):
            p = f"spo_list[{i}]"
            pred = get(t, "predicate", str, f"{p}.predicate")
            subj = get(t, "subject", str, f"{p}.subject")
            obj = get(t, "object", dict, f"{p}.object")
            obj_v = get(obj, "@value", str, f"{p}.object.@value")
            stype = get(t, "subject_type", str, f"{p}.subject_type", required=False, default="")
            otype_d = get(t, "object_type", dict, f"{p}.object_type", required=False, default={})
            otype = get(otype_d, "@value", str, f"{p}.object_type.@value", required=False, default="")
            comb = get(t, "Combined", bool, f"{p}.Combined", required=False)
            ctx.check_label(pred, f"{p}.predicate")
            for role, mention in (("subject", subj), ("object.@value", obj_v)):
                if mention and mention not in text:
                    ctx.warn(f"{role.split('.')[0]} {mention!r} does not occur in the text",
                             field=f"{p}.{role}", code="mention_mismatch")
            triples.append(Triple(subj, pred, obj_v, stype, otype, comb))
        return Example(key=text, index=index, text=text, triples=triples, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        spo = []
        for t in ex.triples:
            item: Record = {}
            if t.combined is not None:
                item["Combined"] = t.combined
            item.update({"predicate": t.predicate, "subject": t.subject,
                         "subject_type": t.subject_type, "object": {"@value": t.object},
                         "object_type": {"@value": t.object_type}})
            spo.append(item)
        return {"text": ex.text, "spo_list": spo}


class TermsCodec(Codec):
    """CHIP-CDN: ``{"text", "normalized_result": "term1##term2"}``."""

    GOLD = "normalized_result"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        text = get(rec, "text", str)
        norm = get(rec, "normalized_result", str, required=False, default=None)
        terms = norm.split("##") if norm else []
        if any(not t.strip() for t in terms):
            ctx.warn("empty term between '##' separators", field="normalized_result", code="empty_term")
        return Example(key=text, index=index, text=text, terms=terms, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return {"text": ex.text, "normalized_result": "##".join(ex.terms)}


class SingleLabelCodec(Codec):
    """CHIP-CTC / KUAKE-QIC: ``{"id", text-field, "label"}``."""

    GOLD = "label"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        tf = ctx.task.fields.get("text", "text")
        rid = get_id(rec, "id")
        text = get(rec, tf, str)
        label = label_str(rec, "label", required=False)
        if label is not None:
            ctx.check_label(label, "label")
        return Example(key=str(rid), index=index, text=text, label=label, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        tf = task.fields.get("text", "text")
        return {"id": ex.key, tf: ex.text, "label": ex.label}


class PairLabelCodec(Codec):
    """CHIP-STS / KUAKE-QTR / KUAKE-QQR: ``{"id", first, second, "label"}``."""

    GOLD = "label"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        f1, f2 = ctx.task.fields["text"], ctx.task.fields["text2"]
        rid = get_id(rec, "id")
        t1, t2 = get(rec, f1, str), get(rec, f2, str)
        label = label_str(rec, "label", required=False)
        if label is not None:
            ctx.check_label(label, "label")
        meta = {}
        extra = ctx.task.fields.get("extra")
        obj = as_record(rec)
        if extra and extra in obj:
            meta[extra] = obj[extra]
        return Example(key=str(rid), index=index, text=t1, text2=t2, label=label, meta=meta, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        f1, f2 = task.fields["text"], task.fields["text2"]
        out = {"id": ex.key, f1: ex.text, f2: ex.text2, "label": ex.label}
        extra = task.fields.get("extra")
        if extra and extra in ex.meta:
            out[extra] = ex.meta[extra]
        return out


class EventsCodec(Codec):
    """CHIP-CDEE: ``{"id", "text", "event": [{"core_name","tendency","character","anatomy_list"}]}``."""

    GOLD = "event"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        rid = get_id(rec, "id")
        text = get(rec, "text", str)
        events = []
        for i, ev in enumerate(get(rec, "event", list, required=False, default=[])):
            p = f"event[{i}]"
            core = get(ev, "core_name", str, f"{p}.core_name")
            tend = get(ev, "tendency", str, f"{p}.tendency", required=False, default="")
            char = get(ev, "character", list, f"{p}.character", required=False, default=[])
            anat = get(ev, "anatomy_list", list, f"{p}.anatomy_list", required=False, default=[])
            for name, values in (("character", char), ("anatomy_list", anat)):
                for j, v in enumerate(values):
                    if not isinstance(v, str):
                        raise RecordError(f"{p}.{name}[{j}]", f"is {describe(v)}", "a string")
            ctx.check_label(tend, f"{p}.tendency")
            events.append(Event(core, tend, tuple(char), tuple(anat)))
        return Example(key=str(rid), index=index, text=text, events=events, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        raw_id = ex.raw.get("id", ex.key) if isinstance(ex.raw, dict) else ex.key
        return {"id": raw_id, "text": ex.text,
                "event": [{"core_name": e.core_name, "tendency": e.tendency,
                           "character": list(e.character), "anatomy_list": list(e.anatomy)}
                          for e in ex.events]}


class TreeCodec(Codec):
    """Text2DT: ``{"text", "tree": [{"role": "C"|"D", "triples": [[s, r, o]], "logical_rel"}]}``."""

    GOLD = "tree"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        text = get(rec, "text", str)
        tree = get(rec, "tree", list, required=False, default=[])
        triples = []
        for i, node in enumerate(tree):
            role = get(node, "role", str, f"tree[{i}].role")
            if role not in ("C", "D"):
                ctx.warn(f"role {role!r}", field=f"tree[{i}].role", expected="C or D", code="unknown_label")
            for j, tr in enumerate(get(node, "triples", list, f"tree[{i}].triples", required=False, default=[])):
                if not (isinstance(tr, list) and len(tr) == 3 and all(isinstance(x, str) for x in tr)):
                    raise RecordError(f"tree[{i}].triples[{j}]", f"is {describe(tr)}", "[subject, relation, object]")
                ctx.check_label(tr[1], f"tree[{i}].triples[{j}][1]")
                triples.append(Triple(tr[0], tr[1], tr[2]))
        return Example(key=text, index=index, text=text, triples=triples, meta={"tree": tree}, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return {"text": ex.text, "tree": ex.meta.get("tree", [])}


class CausalCodec(Codec):
    """CMedCausal: ``{"text", "relation_of_mention": [{"head": mention, "relation": 1|2|3, "tail": ...}]}``."""

    GOLD = "relation_of_mention"
    REL: ClassVar[dict[int, str]] = {1: "因果", 2: "条件", 3: "上下位"}

    def offset_items(self, rec: object, index: int, task: TaskSpec) -> list[OffsetItem]:
        out: list[OffsetItem] = []
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            return out
        for i, r in enumerate(list_of(rec.get("relation_of_mention"))):
            for m, path in _causal_mentions(r, f"relation_of_mention[{i}]"):
                if isinstance(m.get("start_idx"), int) and isinstance(m.get("end_idx"), int) and isinstance(m.get("mention"), str):
                    out.append(OffsetItem(index, path, rec["text"], m["start_idx"], m["end_idx"], m["mention"]))
        return out

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        text = get(rec, "text", str)
        rels = get(rec, "relation_of_mention", list, required=False, default=[])
        triples, spans = [], []
        for i, r in enumerate(rels):
            p = f"relation_of_mention[{i}]"
            rel = get(r, "relation", int, f"{p}.relation")
            ctx.check_label(str(rel), f"{p}.relation")
            head = get(r, "head", dict, f"{p}.head")
            tail = get(r, "tail", dict, f"{p}.tail")
            for m, path in _causal_mentions(r, p):
                mention = get(m, "mention", str, f"{path}.mention")
                s = get(m, "start_idx", int, f"{path}.start_idx", required=False)
                e = get(m, "end_idx", int, f"{path}.end_idx", required=False)
                if s is not None and e is not None:
                    hs, he = to_half_open(s, e, ctx.convention)
                    if text[hs:he] != mention:
                        ctx.warn(f"mention {mention!r} is not the text slice {text[hs:he]!r}",
                                 field=path, code="mention_mismatch")
                    spans.append(Span(hs, he, "mention", mention))
            obj = tail.get("mention", "") if tail.get("type") != "relation" else (
                f"({_mention_of(tail.get('head'))} {self._relation_name(tail.get('relation'))} "
                f"{_mention_of(tail.get('tail'))})")
            triples.append(Triple(head.get("mention", ""), self.REL.get(rel, str(rel)), obj))
        unique = sorted(set(spans))
        return Example(key=text, index=index, text=text, triples=triples, spans=unique, raw=rec)

    def _relation_name(self, rel: object) -> object:
        # A nested relation's code is not checked by decode, and a list or an object cannot be
        # a dict key: compare instead (as a lookup would, 1.0 and true name relation 1).
        for code, name in self.REL.items():
            if isinstance(rel, (int, float)) and rel == code:
                return name
        return rel

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        raw = ex.raw if isinstance(ex.raw, dict) else {}
        return {"text": ex.text, "relation_of_mention": raw.get("relation_of_mention", [])}


def _mention_of(node: object) -> object:
    return node.get("mention", "") if isinstance(node, dict) else ""


def _causal_mentions(r: object, p: str) -> list[tuple[Record, str]]:
    out: list[tuple[Record, str]] = []
    if not isinstance(r, dict):
        return out
    if isinstance(r.get("head"), dict):
        out.append((r["head"], f"{p}.head"))
    tail = r.get("tail")
    if isinstance(tail, dict):
        if tail.get("type") == "relation":
            for side in ("head", "tail"):
                if isinstance(tail.get(side), dict):
                    out.append((tail[side], f"{p}.tail.{side}"))
        else:
            out.append((tail, f"{p}.tail"))
    return out

