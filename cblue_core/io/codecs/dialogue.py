"""Codecs of dialogue records: IMCS-V2 (its four views and their submission files), CHIP-MDCFNPC
and MedDG."""
from __future__ import annotations

from typing import Any

from ...records import Example, Span, Turn
from ...tasks import MRG_SECTIONS, TaskSpec
from ..offsets import INCLUSIVE, OffsetItem, from_half_open, to_half_open
from .base import Codec, DecodeContext, Record, RecordError
from .fields import as_record, describe, get, get_id, list_of


def _bio_to_spans(tags: list[str], text: str) -> list[Span]:
    spans: list[Span] = []
    start: int | None = None
    typ: str | None = None
    for i, tag in enumerate([*tags, "O"]):
        if tag.startswith("B-") or tag == "O" or (tag.startswith("I-") and tag[2:] != typ):
            if start is not None and typ is not None:
                spans.append(Span(start, i, typ, text[start:i]))
            start, typ = None, None
            if tag.startswith(("B-", "I-")):
                start, typ = i, tag[2:]
    return spans


# IMCS-V2 views: where each keeps its gold in a dialogue.
_IMCS_TURN_GOLD = {"ner": "BIO_label", "dac": "dialogue_act", "sr": "symptom_norm"}


class ImcsCodec(Codec):
    """IMCS-V2: one JSON object ``{dialog_id: {"dialogue": [...], "report": [...], ...}}``.

    The four IMCS-V2 tasks read the same dialogues; each keeps the annotations of its view
    (``fields["view"]``: ner, dac, sr, mrg) as gold, the dialogue text being shared.
    """

    def gold_field(self, task: TaskSpec) -> str | None:
        view = task.fields.get("view", "ner")
        return f"dialogue[].{_IMCS_TURN_GOLD[view]}" if view in _IMCS_TURN_GOLD else "report"

    def carries_gold(self, rec: object, task: TaskSpec) -> bool:
        if not isinstance(rec, dict):
            return False
        view = task.fields.get("view", "ner")
        if view not in _IMCS_TURN_GOLD:
            return "report" in rec
        if view == "sr" and "implicit_info" in rec:
            return True
        gold = _IMCS_TURN_GOLD[view]
        return any(isinstance(t, dict) and gold in t for t in list_of(rec.get("dialogue")))

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        obj = as_record(rec)
        did = obj.get("__key__")
        if did is None:
            did = get_id(obj, "dialog_id")
        turns_raw = get(obj, "dialogue", list)
        view = ctx.task.fields.get("view", "ner")
        turns = []
        for i, t in enumerate(turns_raw):
            p = f"dialogue[{i}]"
            sent = get(t, "sentence", str, f"{p}.sentence")
            speaker = get(t, "speaker", str, f"{p}.speaker", required=False, default="")
            sid = str(get_id(t, "sentence_id", f"{p}.sentence_id", required=False, default=i + 1))
            act = get(t, "dialogue_act", str, f"{p}.dialogue_act", required=False, default="")
            spans: tuple[Span, ...] = ()
            bio = get(t, "BIO_label", str, f"{p}.BIO_label", required=False, default="")
            if bio:
                tags = bio.split()
                if len(tags) != len(sent):
                    ctx.warn(f"{len(tags)} BIO tags for a sentence of {len(sent)} characters",
                             field=f"{p}.BIO_label", expected="one tag per character", code="bio_length")
                spans = tuple(_bio_to_spans(tags[: len(sent)], sent))
            norms = get(t, "symptom_norm", list, f"{p}.symptom_norm", required=False, default=[])
            stypes = get(t, "symptom_type", list, f"{p}.symptom_type", required=False, default=[])
            if len(norms) != len(stypes):
                ctx.warn(f"{len(norms)} symptoms but {len(stypes)} symptom types",
                         field=f"{p}.symptom_type", code="length_mismatch")
            symptoms = tuple((str(n), str(s)) for n, s in zip(norms, stypes))
            if view == "dac" and act:
                ctx.check_label(act, f"{p}.dialogue_act")
            turns.append(Turn(speaker, sent, sid, act, spans, symptoms))
        report = list_of(obj.get("report"))
        target = ""
        if view == "mrg" and report and isinstance(report[0], dict):
            target = "\n".join(f"{k}：{report[0].get(k, '')}" for k in MRG_SECTIONS)
        meta: dict[str, Any] = {k: obj[k] for k in ("diagnosis", "self_report") if k in obj}
        ex = Example(key=str(did), index=index, text=str(obj.get("self_report", "")), turns=turns,
                     target=target, meta=meta, raw=rec)
        if view == "ner":
            ex.spans = []  # spans live on the turns
        elif view == "sr":
            info = obj.get("implicit_info")
            implicit = (info.get("Symptom") if isinstance(info, dict) else None) or {}
            ex.terms = [f"{k}:{v}" for k, v in implicit.items()] if isinstance(implicit, dict) else []
        return ex

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        view = task.fields.get("view", "ner")
        if view == "ner":
            return {t.turn_id: " ".join(_spans_to_bio(list(t.spans), len(t.text))) for t in ex.turns}
        if view == "dac":
            return {t.turn_id: t.act for t in ex.turns}
        if view == "sr":
            return {t.turn_id: dict(t.symptoms) for t in ex.turns}
        sections: dict[str, str] = {}
        for line in ex.target.splitlines():
            if "：" in line:
                name, text = line.split("：", 1)
                sections[name] = text
        return {k: sections.get(k, "") for k in MRG_SECTIONS}

    def key(self, rec: object, task: TaskSpec) -> str:
        return str(rec.get("__key__", rec.get("dialog_id", ""))) if isinstance(rec, dict) else ""


def _spans_to_bio(spans: list[Span], n: int) -> list[str]:
    tags = ["O"] * n
    for sp in sorted(spans, key=lambda s: (s.start, -s.end)):
        if sp.start < n:
            tags[sp.start] = f"B-{sp.type}"
            for i in range(sp.start + 1, min(sp.end, n)):
                tags[i] = f"I-{sp.type}"
    return tags


class MdcfnpcCodec(Codec):
    """CHIP-MDCFNPC: ``{"dialog_id", "dialog_info": [{"sentence_id","speaker","sentence",
    "ner": [{"mention","type","range": [s, e],"attr"}]}]}``; the range convention is detected."""

    GOLD = "dialog_info[].ner"

    def carries_gold(self, rec: object, task: TaskSpec) -> bool:
        return isinstance(rec, dict) and any(
            isinstance(t, dict) and "ner" in t for t in list_of(rec.get("dialog_info")))

    def offset_items(self, rec: object, index: int, task: TaskSpec) -> list[OffsetItem]:
        out: list[OffsetItem] = []
        if not isinstance(rec, dict):
            return out
        for i, t in enumerate(list_of(rec.get("dialog_info"))):
            if not isinstance(t, dict) or not isinstance(t.get("sentence"), str):
                continue
            for j, n in enumerate(list_of(t.get("ner"))):
                r = n.get("range") if isinstance(n, dict) else None
                if isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r) \
                        and isinstance(n.get("mention"), str):
                    out.append(OffsetItem(index, f"dialog_info[{i}].ner[{j}]", t["sentence"], r[0], r[1], n["mention"]))
        return out

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        did = get_id(rec, "dialog_id")
        turns = []
        for i, t in enumerate(get(rec, "dialog_info", list)):
            p = f"dialog_info[{i}]"
            # Submission files carry no sentence text, only ranges and attributes.
            sent = get(t, "sentence", str, f"{p}.sentence", required=False, default="")
            spans = []
            for j, n in enumerate(get(t, "ner", list, f"{p}.ner", required=False, default=[])):
                q = f"{p}.ner[{j}]"
                r = get(n, "range", list, f"{q}.range")
                if len(r) != 2 or not all(isinstance(x, int) for x in r):
                    raise RecordError(f"{q}.range", f"is {describe(r)}", "[start, end] integers")
                attr = get(n, "attr", str, f"{q}.attr", required=False, default="")
                mention = get(n, "mention", str, f"{q}.mention", required=False, default="")
                typ = get(n, "type", str, f"{q}.type", required=False, default="")
                if attr:
                    ctx.check_label(attr, f"{q}.attr")
                s, e = to_half_open(r[0], r[1], ctx.convention)
                if mention and sent and sent[s:e] != mention:
                    ctx.warn(f"mention {mention!r} is not the text slice {sent[s:e]!r}", field=q,
                             code="mention_mismatch")
                spans.append(Span(s, e, attr or typ, mention or sent[s:e]))
            turns.append(Turn(str(t.get("speaker", "")), sent, str(t.get("sentence_id", i + 1)),
                              spans=tuple(spans)))
        return Example(key=str(did), index=index, turns=turns, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        info = []
        for t in ex.turns:
            ner = []
            for sp in t.spans:
                s, e = from_half_open(sp.start, sp.end, convention)
                ner.append({"mention": sp.text, "range": [s, e], "attr": sp.type})
            info.append({"sentence_id": t.turn_id, "ner": ner})
        return {"dialog_id": ex.key, "dialog_info": info}

class DialogueGenerationCodec(Codec):
    """MedDG (our documented shape): ``{"id", "history": [{"speaker","sentence"}|str], "output"}``."""

    GOLD = "output"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        rid = get_id(rec, "id")
        turns = []
        for i, h in enumerate(get(rec, "history", list, required=False, default=[])):
            if isinstance(h, str):
                turns.append(Turn("", h, str(i + 1)))
            else:
                turns.append(Turn(str(get(h, "speaker", str, f"history[{i}].speaker", required=False, default="")),
                                  get(h, "sentence", str, f"history[{i}].sentence"), str(i + 1)))
        out = get(rec, "output", str, required=False, default="")
        return Example(key=str(rid), index=index, turns=turns, target=out, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return {"id": ex.key, "output": ex.target}

class ImcsPredictionCodec(Codec):
    """IMCS-V2 submission files: ``{dialog_id: {sentence_id: value}}`` where the value is the
    BIO string (NER), the act (DAC) or ``{symptom: status}`` (SR); MRG: ``{dialog_id: {section: text}}``."""

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        if not isinstance(rec, dict) or "__key__" not in rec:
            raise RecordError(None, "not an entry of a {dialog_id: {...}} object", "a JSON object keyed by dialog id")
        did = str(rec["__key__"])
        view = ctx.task.fields.get("view", "ner")
        body = {k: v for k, v in rec.items() if k != "__key__"}
        if view == "mrg":
            target = "\n".join(f"{k}：{body.get(k, '')}" for k in MRG_SECTIONS if k in body)
            return Example(key=did, index=index, target=target, raw=rec)
        turns = []
        for sid, value in body.items():
            if view == "ner":
                if not isinstance(value, str):
                    raise RecordError(sid, f"is {describe(value)}", "a string of BIO tags")
                tags = value.split()
                turns.append(Turn("", "", str(sid), spans=tuple(_bio_to_spans(tags, "?" * len(tags)))))
            elif view == "dac":
                if not isinstance(value, str):
                    raise RecordError(sid, f"is {describe(value)}", "a dialogue act")
                ctx.check_label(value, sid)
                turns.append(Turn("", "", str(sid), act=value))
            else:
                if not isinstance(value, dict):
                    raise RecordError(sid, f"is {describe(value)}", "an object {symptom: status}")
                turns.append(Turn("", "", str(sid), symptoms=tuple((str(k), str(v)) for k, v in value.items())))
        return Example(key=did, index=index, turns=turns, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return ImcsCodec().encode(ex, task, convention)

    def key(self, rec: object, task: TaskSpec) -> str:
        return str(rec.get("__key__", "")) if isinstance(rec, dict) else ""

