"""Record codecs: one official record <-> one :class:`Example`, per record shape.

A task names its codec in the registry. ``decode`` raises :class:`RecordError` for structural
problems (missing field, wrong type) and reports annotation-level defects (a mention that is
not the text slice, an unknown label) through ``ctx.warn`` while keeping the record as read.
``encode`` writes the official (submission) form; for an unchanged example it returns the raw
record, so reading then writing gives back the same records.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar, overload

from ..records import Event, Example, Span, Triple, Turn
from ..tasks import CLIMEDBENCH_SCENARIOS, MRG_SECTIONS, PROMPT_TASKS, TaskSpec, canonical_prompt_task
from .errors import Defect
from .offsets import INCLUSIVE, OffsetItem, from_half_open, to_half_open

Record: TypeAlias = dict[str, Any]
"""One official record as JSON gives it (a KUAKE-IR record is its list of TSV columns)."""

T = TypeVar("T")
D = TypeVar("D")


class RecordError(ValueError):
    def __init__(self, field: str | None, message: str, expected: str | None = None):
        super().__init__(message)
        self.field, self.message, self.expected = field, message, expected


@dataclass
class DecodeContext:
    file: str
    task: TaskSpec
    convention: str = INCLUSIVE
    record: int = 0
    line: int | None = None
    warnings: list[Defect] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._labels = frozenset(self.task.label_codes)

    def warn(self, message: str, field: str | None = None, expected: str | None = None,
             code: str = "annotation") -> None:
        self.warnings.append(Defect(self.file, message, record=self.record, line=self.line,
                                    field=field, expected=expected, code=code))

    def check_label(self, value: str, field: str) -> None:
        if self._labels and value not in self._labels:
            self.warn(f"unknown label {value!r}", field=field,
                      expected=f"one of the {len(self._labels)} {self.task.name} labels",
                      code="unknown_label")


# ---------------------------------------------------------------- field helpers

def _record(rec: object) -> Record:
    """``rec`` as a JSON object, or the structural error every codec reports for it."""
    if not isinstance(rec, dict):
        raise RecordError(None, f"record is a {type(rec).__name__}", "a JSON object")
    return rec


@overload
def _get(rec: object, name: str, typ: type[T], path: str | None = None,
         required: Literal[True] = True) -> T: ...
@overload
def _get(rec: object, name: str, typ: type[T], path: str | None = None, *,
         required: Literal[False], default: D) -> T | D: ...
@overload
def _get(rec: object, name: str, typ: type[T], path: str | None = None, *,
         required: Literal[False]) -> T | None: ...
def _get(rec: object, name: str, typ: type[T], path: str | None = None,
         required: bool = True, default: object = None) -> object:
    label = path or name
    obj = _record(rec)
    if name not in obj or (obj[name] is None and not required):
        if required:
            raise RecordError(label, "missing required field", _typename(typ))
        return default
    value = obj[name]
    if isinstance(value, bool) and typ is int:
        raise RecordError(label, f"is a boolean ({value})", "an integer")
    if not isinstance(value, typ):
        raise RecordError(label, f"is {_describe(value)}", _typename(typ))
    return value


def _get_id(rec: object, name: str, path: str | None = None, required: bool = True,
            default: str | int | None = None) -> str | int | None:
    """An identifier: a string or an integer (booleans pass, as they always have)."""
    label = path or name
    obj = _record(rec)
    if name not in obj or (obj[name] is None and not required):
        if required:
            raise RecordError(label, "missing required field", _ID_TYPES)
        return default
    value = obj[name]
    if not isinstance(value, (str, int)):
        raise RecordError(label, f"is {_describe(value)}", _ID_TYPES)
    return value


_ID_TYPES = "a string or an integer"
_TYPE_NAMES: dict[type, str] = {str: "a string", int: "an integer", list: "a list", dict: "an object",
                                bool: "true or false"}


def _typename(typ: type) -> str:
    return _TYPE_NAMES.get(typ, typ.__name__)


def _describe(value: object) -> str:
    if value is None:
        return "null"
    kind = {str: "a string", int: "an integer", float: "a number", list: "a list",
            dict: "an object", bool: "a boolean"}.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} {text[:40]}" if len(text) <= 40 else f"{kind}"


def _label_str(rec: object, name: str, required: bool) -> str | None:
    value = _get_id(rec, name, required=required)
    return None if value is None else str(value)


def _list_of(value: object) -> list[Any]:
    """``value`` when it is a list, else no items (offset scans skip what decode will refuse)."""
    return value if isinstance(value, list) else []


# ---------------------------------------------------------------- codecs


class Codec:
    """Base codec; subclasses implement decode/encode and, where mentions carry offsets,
    ``offset_items`` so that the file's convention can be detected before decoding.

    ``GOLD`` names the field a record holds its gold annotations in (None: a predictions
    codec, nothing to check); a train or dev split where no record has it carries no gold.
    """

    GOLD: ClassVar[str | None] = None

    def offset_items(self, rec: object, index: int, task: TaskSpec) -> list[OffsetItem]:
        return []

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        raise NotImplementedError

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record | str:
        raise NotImplementedError

    def key(self, rec: object, task: TaskSpec) -> str:
        return str(rec.get(task.key_field, "")) if isinstance(rec, dict) else ""

    def gold_field(self, task: TaskSpec) -> str | None:
        """Where a record of ``task`` holds its gold annotations, as messages name it."""
        return self.GOLD

    def carries_gold(self, rec: object, task: TaskSpec) -> bool:
        """Whether ``rec`` has the gold field at all (an empty list counts: no entities)."""
        gold = self.gold_field(task)
        return gold is None or (isinstance(rec, dict) and gold in rec)


class EntitiesCodec(Codec):
    """CMeEE / CMeEE-V2: ``{"text", "entities": [{"start_idx","end_idx","type","entity"}]}``."""

    GOLD = "entities"

    def offset_items(self, rec: object, index: int, task: TaskSpec) -> list[OffsetItem]:
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            return []
        out = []
        for i, ent in enumerate(_list_of(rec.get("entities"))):
            if isinstance(ent, dict) and isinstance(ent.get("start_idx"), int) and isinstance(
                    ent.get("end_idx"), int) and isinstance(ent.get("entity"), str):
                out.append(OffsetItem(index, f"entities[{i}]", rec["text"], ent["start_idx"],
                                      ent["end_idx"], ent["entity"]))
        return out

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        text = _get(rec, "text", str)
        ents = _get(rec, "entities", list, required=False, default=[])
        spans = []
        for i, ent in enumerate(ents):
            p = f"entities[{i}]"
            s = _get(ent, "start_idx", int, f"{p}.start_idx")
            e = _get(ent, "end_idx", int, f"{p}.end_idx")
            typ = _get(ent, "type", str, f"{p}.type")
            mention = _get(ent, "entity", str, f"{p}.entity", required=False)
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
        text = _get(rec, "text", str)
        spo = _get(rec, "spo_list", list, required=False, default=[])
        triples = []
        for i, t in enumerate(spo):
            p = f"spo_list[{i}]"
            pred = _get(t, "predicate", str, f"{p}.predicate")
            subj = _get(t, "subject", str, f"{p}.subject")
            obj = _get(t, "object", dict, f"{p}.object")
            obj_v = _get(obj, "@value", str, f"{p}.object.@value")
            stype = _get(t, "subject_type", str, f"{p}.subject_type", required=False, default="")
            otype_d = _get(t, "object_type", dict, f"{p}.object_type", required=False, default={})
            otype = _get(otype_d, "@value", str, f"{p}.object_type.@value", required=False, default="")
            comb = _get(t, "Combined", bool, f"{p}.Combined", required=False)
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
        text = _get(rec, "text", str)
        norm = _get(rec, "normalized_result", str, required=False, default=None)
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
        rid = _get_id(rec, "id")
        text = _get(rec, tf, str)
        label = _label_str(rec, "label", required=False)
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
        rid = _get_id(rec, "id")
        t1, t2 = _get(rec, f1, str), _get(rec, f2, str)
        label = _label_str(rec, "label", required=False)
        if label is not None:
            ctx.check_label(label, "label")
        meta = {}
        extra = ctx.task.fields.get("extra")
        obj = _record(rec)
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
        rid = _get_id(rec, "id")
        text = _get(rec, "text", str)
        events = []
        for i, ev in enumerate(_get(rec, "event", list, required=False, default=[])):
            p = f"event[{i}]"
            core = _get(ev, "core_name", str, f"{p}.core_name")
            tend = _get(ev, "tendency", str, f"{p}.tendency", required=False, default="")
            char = _get(ev, "character", list, f"{p}.character", required=False, default=[])
            anat = _get(ev, "anatomy_list", list, f"{p}.anatomy_list", required=False, default=[])
            for name, values in (("character", char), ("anatomy_list", anat)):
                for j, v in enumerate(values):
                    if not isinstance(v, str):
                        raise RecordError(f"{p}.{name}[{j}]", f"is {_describe(v)}", "a string")
            ctx.check_label(tend, f"{p}.tendency")
            events.append(Event(core, tend, tuple(char), tuple(anat)))
        return Example(key=str(rid), index=index, text=text, events=events, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        raw_id = ex.raw.get("id", ex.key) if isinstance(ex.raw, dict) else ex.key
        return {"id": raw_id, "text": ex.text,
                "event": [{"core_name": e.core_name, "tendency": e.tendency,
                           "character": list(e.character), "anatomy_list": list(e.anatomy)}
                          for e in ex.events]}


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
        return any(isinstance(t, dict) and gold in t for t in _list_of(rec.get("dialogue")))

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        obj = _record(rec)
        did = obj.get("__key__")
        if did is None:
            did = _get_id(obj, "dialog_id")
        turns_raw = _get(obj, "dialogue", list)
        view = ctx.task.fields.get("view", "ner")
        turns = []
        for i, t in enumerate(turns_raw):
            p = f"dialogue[{i}]"
            sent = _get(t, "sentence", str, f"{p}.sentence")
            speaker = _get(t, "speaker", str, f"{p}.speaker", required=False, default="")
            sid = str(_get_id(t, "sentence_id", f"{p}.sentence_id", required=False, default=i + 1))
            act = _get(t, "dialogue_act", str, f"{p}.dialogue_act", required=False, default="")
            spans: tuple[Span, ...] = ()
            bio = _get(t, "BIO_label", str, f"{p}.BIO_label", required=False, default="")
            if bio:
                tags = bio.split()
                if len(tags) != len(sent):
                    ctx.warn(f"{len(tags)} BIO tags for a sentence of {len(sent)} characters",
                             field=f"{p}.BIO_label", expected="one tag per character", code="bio_length")
                spans = tuple(_bio_to_spans(tags[: len(sent)], sent))
            norms = _get(t, "symptom_norm", list, f"{p}.symptom_norm", required=False, default=[])
            stypes = _get(t, "symptom_type", list, f"{p}.symptom_type", required=False, default=[])
            if len(norms) != len(stypes):
                ctx.warn(f"{len(norms)} symptoms but {len(stypes)} symptom types",
                         field=f"{p}.symptom_type", code="length_mismatch")
            symptoms = tuple((str(n), str(s)) for n, s in zip(norms, stypes))
            if view == "dac" and act:
                ctx.check_label(act, f"{p}.dialogue_act")
            turns.append(Turn(speaker, sent, sid, act, spans, symptoms))
        report = _list_of(obj.get("report"))
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
            isinstance(t, dict) and "ner" in t for t in _list_of(rec.get("dialog_info")))

    def offset_items(self, rec: object, index: int, task: TaskSpec) -> list[OffsetItem]:
        out: list[OffsetItem] = []
        if not isinstance(rec, dict):
            return out
        for i, t in enumerate(_list_of(rec.get("dialog_info"))):
            if not isinstance(t, dict) or not isinstance(t.get("sentence"), str):
                continue
            for j, n in enumerate(_list_of(t.get("ner"))):
                r = n.get("range") if isinstance(n, dict) else None
                if isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r) \
                        and isinstance(n.get("mention"), str):
                    out.append(OffsetItem(index, f"dialog_info[{i}].ner[{j}]", t["sentence"], r[0], r[1], n["mention"]))
        return out

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        did = _get_id(rec, "dialog_id")
        turns = []
        for i, t in enumerate(_get(rec, "dialog_info", list)):
            p = f"dialog_info[{i}]"
            # Submission files carry no sentence text, only ranges and attributes.
            sent = _get(t, "sentence", str, f"{p}.sentence", required=False, default="")
            spans = []
            for j, n in enumerate(_get(t, "ner", list, f"{p}.ner", required=False, default=[])):
                q = f"{p}.ner[{j}]"
                r = _get(n, "range", list, f"{q}.range")
                if len(r) != 2 or not all(isinstance(x, int) for x in r):
                    raise RecordError(f"{q}.range", f"is {_describe(r)}", "[start, end] integers")
                attr = _get(n, "attr", str, f"{q}.attr", required=False, default="")
                mention = _get(n, "mention", str, f"{q}.mention", required=False, default="")
                typ = _get(n, "type", str, f"{q}.type", required=False, default="")
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


class RetrievalCodec(Codec):
    """KUAKE-IR (our documented TSV shape): ``query_id<TAB>query[<TAB>doc_id,doc_id...]``."""

    GOLD: ClassVar[str | None] = "column 3 (relevant doc ids)"

    def carries_gold(self, rec: object, task: TaskSpec) -> bool:
        return isinstance(rec, list) and len(rec) > 2

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        cols = _columns(rec)
        if len(cols) < 2:
            raise RecordError(None, "fewer than 2 tab-separated columns", "query_id, query[, doc ids]")
        qid, query = cols[0].strip(), cols[1].strip()
        docs = [d.strip() for d in cols[2].split(",") if d.strip()] if len(cols) > 2 else []
        return Example(key=qid, index=index, text=query, terms=docs, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> str:
        return f"{ex.key}\t{','.join(ex.terms)}"

    def key(self, rec: object, task: TaskSpec) -> str:
        cols = _columns(rec)
        return cols[0].strip() if cols else ""


def _columns(rec: object) -> list[str]:
    """A TSV record's columns; nothing for anything else (a stored record comes back from JSON)."""
    return [str(c) for c in rec] if isinstance(rec, list) else []


class DialogueGenerationCodec(Codec):
    """MedDG (our documented shape): ``{"id", "history": [{"speaker","sentence"}|str], "output"}``."""

    GOLD = "output"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        rid = _get_id(rec, "id")
        turns = []
        for i, h in enumerate(_get(rec, "history", list, required=False, default=[])):
            if isinstance(h, str):
                turns.append(Turn("", h, str(i + 1)))
            else:
                turns.append(Turn(str(_get(h, "speaker", str, f"history[{i}].speaker", required=False, default="")),
                                  _get(h, "sentence", str, f"history[{i}].sentence"), str(i + 1)))
        out = _get(rec, "output", str, required=False, default="")
        return Example(key=str(rid), index=index, turns=turns, target=out, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return {"id": ex.key, "output": ex.target}


class TreeCodec(Codec):
    """Text2DT: ``{"text", "tree": [{"role": "C"|"D", "triples": [[s, r, o]], "logical_rel"}]}``."""

    GOLD = "tree"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        text = _get(rec, "text", str)
        tree = _get(rec, "tree", list, required=False, default=[])
        triples = []
        for i, node in enumerate(tree):
            role = _get(node, "role", str, f"tree[{i}].role")
            if role not in ("C", "D"):
                ctx.warn(f"role {role!r}", field=f"tree[{i}].role", expected="C or D", code="unknown_label")
            for j, tr in enumerate(_get(node, "triples", list, f"tree[{i}].triples", required=False, default=[])):
                if not (isinstance(tr, list) and len(tr) == 3 and all(isinstance(x, str) for x in tr)):
                    raise RecordError(f"tree[{i}].triples[{j}]", f"is {_describe(tr)}", "[subject, relation, object]")
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
        for i, r in enumerate(_list_of(rec.get("relation_of_mention"))):
            for m, path in _causal_mentions(r, f"relation_of_mention[{i}]"):
                if isinstance(m.get("start_idx"), int) and isinstance(m.get("end_idx"), int) and isinstance(m.get("mention"), str):
                    out.append(OffsetItem(index, path, rec["text"], m["start_idx"], m["end_idx"], m["mention"]))
        return out

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        text = _get(rec, "text", str)
        rels = _get(rec, "relation_of_mention", list, required=False, default=[])
        triples, spans = [], []
        for i, r in enumerate(rels):
            p = f"relation_of_mention[{i}]"
            rel = _get(r, "relation", int, f"{p}.relation")
            ctx.check_label(str(rel), f"{p}.relation")
            head = _get(r, "head", dict, f"{p}.head")
            tail = _get(r, "tail", dict, f"{p}.tail")
            for m, path in _causal_mentions(r, p):
                mention = _get(m, "mention", str, f"{path}.mention")
                s = _get(m, "start_idx", int, f"{path}.start_idx", required=False)
                e = _get(m, "end_idx", int, f"{path}.end_idx", required=False)
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


class PromptCodec(Codec):
    """PromptCBLUE: ``{"input","target","answer_choices","task_type","task_dataset","sample_id"}``."""

    GOLD = "target"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        inp = _get(rec, "input", str)
        target = _get(rec, "target", str, required=False, default="")
        choices = _get(rec, "answer_choices", list, required=False, default=None) or []
        task_dataset = _get(rec, "task_dataset", str)
        task_type = _get(rec, "task_type", str, required=False, default="")
        sid = _get(rec, "sample_id", str, required=False, default="xxxx")
        canonical = canonical_prompt_task(task_dataset)
        if canonical not in PROMPT_TASKS:
            ctx.warn(f"unknown task_dataset {task_dataset!r}", field="task_dataset",
                     expected="one of the 18 PromptCBLUE tasks (or CMeIE)", code="unknown_label")
        return Example(key=sid, index=index, text=inp, label=canonical, target=target,
                       choices=[str(c) for c in choices],
                       meta={"task_dataset": task_dataset, "task_type": task_type}, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        raw: Record = dict(ex.raw) if isinstance(ex.raw, dict) else {}
        raw.update({"input": ex.text, "target": ex.target, "sample_id": ex.key,
                    "task_dataset": ex.meta.get("task_dataset", ex.label)})
        # A model's prediction carries no record of its own: keep the fields post-processing reads.
        if "answer_choices" not in raw and ex.choices:
            raw["answer_choices"] = list(ex.choices)
        if "task_type" not in raw and ex.meta.get("task_type"):
            raw["task_type"] = ex.meta["task_type"]
        return raw


_SCENARIOS = {s.code: s for s in CLIMEDBENCH_SCENARIOS}
_MAX_OPTIONS = 26  # a list of options is lettered A, B, C...


class ClimedbenchCodec(Codec):
    """CliMedBench item (documented shape; the real questions are not public):
    ``{"id","scenario","dimension","prompt","input","options": {"A": ...},"reference"}``."""

    GOLD = "reference"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        obj = _record(rec)
        rid = _get_id(obj, "id")
        scen = _get(obj, "scenario", str)
        scenario = _SCENARIOS.get(scen)
        if scenario is None:
            ctx.warn(f"unknown scenario {scen!r}", field="scenario",
                     expected="one of " + ", ".join(_SCENARIOS), code="unknown_label")
        dim = _get(obj, "dimension", str, required=False, default=scenario.dimension if scenario else "")
        options = _options(obj.get("options"))
        ref = _get(obj, "reference", str, required=False, default="")
        return Example(key=str(rid), index=index, text=_get(obj, "input", str, required=False, default=""),
                       label=scen, target=ref,
                       choices=[f"{k}: {v}" for k, v in options.items()],
                       meta={"scenario": scen, "dimension": dim,
                             "prompt": _get(obj, "prompt", str, required=False, default=""),
                             "options": options}, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return {"id": ex.key, "prediction": ex.target}


def _options(value: object) -> dict[str, Any]:
    """CliMedBench options: an object keyed by letter, or a list lettered A, B, C..."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    if not isinstance(value, list):
        raise RecordError("options", f"is {_describe(value)}", "an object or a list")
    if len(value) > _MAX_OPTIONS:
        raise RecordError("options", f"is a list of {len(value)} options",
                          f"at most {_MAX_OPTIONS} options, lettered A to Z")
    return {chr(65 + i): str(o) for i, o in enumerate(value)}


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
                    raise RecordError(sid, f"is {_describe(value)}", "a string of BIO tags")
                tags = value.split()
                turns.append(Turn("", "", str(sid), spans=tuple(_bio_to_spans(tags, "?" * len(tags)))))
            elif view == "dac":
                if not isinstance(value, str):
                    raise RecordError(sid, f"is {_describe(value)}", "a dialogue act")
                ctx.check_label(value, sid)
                turns.append(Turn("", "", str(sid), act=value))
            else:
                if not isinstance(value, dict):
                    raise RecordError(sid, f"is {_describe(value)}", "an object {symptom: status}")
                turns.append(Turn("", "", str(sid), symptoms=tuple((str(k), str(v)) for k, v in value.items())))
        return Example(key=did, index=index, turns=turns, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return ImcsCodec().encode(ex, task, convention)

    def key(self, rec: object, task: TaskSpec) -> str:
        return str(rec.get("__key__", "")) if isinstance(rec, dict) else ""


class RetrievalPredictionCodec(RetrievalCodec):
    """KUAKE-IR submission: ``query_id<TAB>doc1,doc2,...,doc10`` (ranked)."""

    GOLD = None

    def carries_gold(self, rec: object, task: TaskSpec) -> bool:
        return True

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        cols = _columns(rec)
        if len(cols) < 2:
            raise RecordError(None, "fewer than 2 tab-separated columns", "query_id and ranked doc ids")
        docs = [d.strip() for d in cols[1].split(",") if d.strip()]
        if len(docs) != 10:
            ctx.warn(f"{len(docs)} doc ids", field="column 2", expected="exactly 10 comma-separated doc ids",
                     code="format")
        return Example(key=cols[0].strip(), index=index, terms=docs, raw=rec)


class ClimedbenchPredictionCodec(Codec):
    """CliMedBench predictions: ``{"id", "prediction": the model's raw text}``."""

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        rid = _get_id(rec, "id")
        return Example(key=str(rid), index=index, target=_get(rec, "prediction", str), raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return {"id": ex.key, "prediction": ex.target}


CODECS: dict[str, Codec] = {
    "entities": EntitiesCodec(),
    "spo": SpoCodec(),
    "terms": TermsCodec(),
    "single_label": SingleLabelCodec(),
    "pair_label": PairLabelCodec(),
    "events": EventsCodec(),
    "imcs": ImcsCodec(),
    "mdcfnpc": MdcfnpcCodec(),
    "retrieval": RetrievalCodec(),
    "dialogue_generation": DialogueGenerationCodec(),
    "tree": TreeCodec(),
    "causal": CausalCodec(),
    "prompt": PromptCodec(),
    "climedbench": ClimedbenchCodec(),
    "imcs_prediction": ImcsPredictionCodec(),
    "retrieval_prediction": RetrievalPredictionCodec(),
    "climedbench_prediction": ClimedbenchPredictionCodec(),
}


def codec_for(task: TaskSpec, predictions: bool = False) -> Codec:
    """The codec for the task's data files, or for its predictions (submission) files."""
    return CODECS[(task.pred_codec or task.codec) if predictions else task.codec]
