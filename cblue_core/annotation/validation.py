"""Validation of an edit before it is saved, and the CMeIE helpers the Annotate page uses.

Only what the edit adds is checked (new spans and triples, a changed label, new terms): defects
already in the ingested data are reported by validation at ingest (and shown in the review
queue), and must not block an unrelated correction of the same example. Every problem is a
``ValueError`` whose message names the item and what was expected.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from ..records import Example, Span, Triple
from ..tasks import TaskSpec
from .model import Annotation, annotation_field

SENTENCE_END = "。"


def combined_for(text: str, subject: str, object: str) -> bool:
    """CMeIE's ``Combined`` flag as the data define it: True when no ``。``-separated sentence
    of ``text`` contains both the subject and the object."""
    return not any(subject in s and object in s for s in text.split(SENTENCE_END))


def _schema_tuple(s: Any) -> tuple[str, str, str]:
    if isinstance(s, dict):
        return (s["subject_type"], s["predicate"], s["object_type"])
    if hasattr(s, "subject_type"):
        return (s.subject_type, s.predicate, s.object_type)
    return tuple(s)  # type: ignore[return-value]


def allowed_predicates(schemas: Iterable[Any], subject_type: str | None,
                       object_type: str | None) -> list[str]:
    """Predicates the schemas allow between a subject type and an object type, in schema order.
    An empty or None type matches any type."""
    out: dict[str, None] = {}
    for s in schemas:
        st, p, ot = _schema_tuple(s)
        if (not subject_type or st == subject_type) and (not object_type or ot == object_type):
            out.setdefault(p, None)
    return list(out)


def schema_types(schemas: Iterable[Any]) -> tuple[list[str], list[str]]:
    """(subject types, object types) the schemas use, in first-seen order."""
    subj: dict[str, None] = {}
    obj: dict[str, None] = {}
    for s in schemas:
        st, _, ot = _schema_tuple(s)
        subj.setdefault(st, None)
        obj.setdefault(ot, None)
    return list(subj), list(obj)


def _span_key(s: Span) -> tuple[int, int, str]:
    return (s.start, s.end, s.type)


def _triple_key(t: Triple) -> tuple[str, str, str, str, str]:
    return (t.subject, t.predicate, t.object, t.subject_type, t.object_type)


_FIELD_NAMES = {"spans": "entity spans", "triples": "triples", "label": "a label",
                "terms": "normalised terms"}


def validate_annotation(task: TaskSpec, example: Example, after: Annotation, *,
                        before: Annotation | None = None, schemas: Sequence[Any] | None = None,
                        icd_terms: Iterable[str] | None = None) -> Annotation:
    """Check ``after`` as the new gold of ``example``; return it normalised (span texts set to
    the text slice, CMeIE ``Combined`` computed for new triples). Raises ValueError.

    ``before``: the example's current gold (what is new is judged against it; default: the
    example's own); ``schemas``: CMeIE (subject_type, predicate, object_type) schemas, checked
    when given and not empty; ``icd_terms``: the standard term list new CDN terms must be in.
    """
    if not isinstance(after, Annotation):
        raise ValueError(f"expected an Annotation, got {type(after).__name__}")
    kind = annotation_field(task)
    if kind is None:
        raise ValueError(f"{task.name} gold cannot be edited here: annotation supports entity "
                         "spans, CMeIE triples, class labels and CDN terms")
    before = before if before is not None else Annotation.from_example(example)
    for name in ("spans", "triples", "terms"):
        if name != kind and getattr(after, name):
            raise ValueError(f"{task.name} annotations hold {_FIELD_NAMES[kind]}, not {_FIELD_NAMES[name]}")
    if kind != "label" and after.label not in (None, "") and after.label != before.label:
        raise ValueError(f"{task.name} annotations hold {_FIELD_NAMES[kind]}, not a label")
    if kind == "spans":
        return replace(after, spans=_check_spans(task, example.text, after.spans, before.spans))
    if kind == "triples":
        return replace(after, triples=_check_triples(task, example.text, after.triples,
                                                     before.triples, schemas))
    if kind == "terms":
        _check_terms(after.terms, before.terms, icd_terms)
        return after
    _check_label(task, after.label, before.label)
    return after


def _check_spans(task: TaskSpec, text: str, spans: Sequence[Span], old: Sequence[Span]) -> tuple[Span, ...]:
    known = {_span_key(s): s for s in reversed(old)}
    codes = task.label_codes
    seen: set = set()
    out = []
    for i, s in enumerate(spans):
        if not isinstance(s, Span):
            raise ValueError(f"span {i + 1} is a {type(s).__name__}, not a Span")
        key = _span_key(s)
        if key in seen:
            raise ValueError(f"span {s.start}-{s.end} {s.type!r} appears twice")
        seen.add(key)
        if key in known:          # as stored (its mention text), whatever text the caller gave
            out.append(known[key])
            continue
        if not (isinstance(s.start, int) and isinstance(s.end, int)) or isinstance(s.start, bool):
            raise ValueError(f"span {i + 1}: start and end must be integers")
        if not 0 <= s.start < s.end <= len(text):
            raise ValueError(f"span {s.start}-{s.end} is empty, reversed or outside the text "
                             f"(expected 0 <= start < end <= {len(text)}, end exclusive)")
        if codes and s.type not in codes:
            raise ValueError(f"unknown entity type {s.type!r} for span {text[s.start:s.end]!r} "
                             f"(expected one of {', '.join(codes)})")
        piece = text[s.start:s.end]
        if s.text and s.text != piece:
            raise ValueError(f"span {s.start}-{s.end}: mention {s.text!r} is not the text slice {piece!r}")
        out.append(s if s.text == piece else replace(s, text=piece))
    return tuple(out)


def _check_triples(task: TaskSpec, text: str, triples: Sequence[Triple], old: Sequence[Triple],
                   schemas: Sequence[Any] | None) -> tuple[Triple, ...]:
    known = {_triple_key(t): t for t in reversed(old)}
    codes = task.label_codes
    allowed = {_schema_tuple(s) for s in schemas} if schemas else None
    seen: set = set()
    out = []
    for i, t in enumerate(triples):
        if not isinstance(t, Triple):
            raise ValueError(f"triple {i + 1} is a {type(t).__name__}, not a Triple")
        key = _triple_key(t)
        name = f"triple ({t.subject}, {t.predicate}, {t.object})"
        if key in seen:
            raise ValueError(f"{name} appears twice")
        seen.add(key)
        if key in known:          # as stored (its Combined flag)
            out.append(known[key])
            continue
        if codes and t.predicate not in codes:
            raise ValueError(f"{name}: unknown predicate {t.predicate!r} "
                             f"(expected one of the {len(codes)} {task.name} predicates)")
        for role, mention in (("subject", t.subject), ("object", t.object)):
            if not mention or not mention.strip():
                raise ValueError(f"{name}: the {role} is empty")
            if mention not in text:
                raise ValueError(f"{name}: the {role} {mention!r} does not occur in the text")
        if allowed is not None:
            if not t.subject_type or not t.object_type:
                raise ValueError(f"{name}: subject_type and object_type are required")
            if (t.subject_type, t.predicate, t.object_type) not in allowed:
                ok = allowed_predicates(schemas or (), t.subject_type, t.object_type)
                hint = (f"allowed between {t.subject_type} and {t.object_type}: {', '.join(ok)}"
                        if ok else f"no schema relates a {t.subject_type} subject to a "
                                   f"{t.object_type} object")
                raise ValueError(f"{name}: ({t.subject_type}, {t.predicate}, {t.object_type}) "
                                 f"is not one of the CMeIE schemas ({hint})")
        out.append(replace(t, combined=combined_for(text, t.subject, t.object)))
    return tuple(out)


def _check_terms(terms: Sequence[str], old: Sequence[str], icd_terms: Iterable[str] | None) -> None:
    if old and not terms:
        raise ValueError("at least one normalised term is required")
    icd = set(icd_terms) if icd_terms is not None else None
    seen: set = set()
    for term in terms:
        if not isinstance(term, str) or not term.strip():
            raise ValueError("a normalised term is empty")
        if term in seen:
            raise ValueError(f"term {term!r} appears twice")
        seen.add(term)
        if term in old:
            continue
        if term != term.strip():
            raise ValueError(f"term {term!r} has leading or trailing spaces")
        if "##" in term:
            raise ValueError(f"term {term!r} contains '##', the separator between terms: "
                             "give each term separately")
        if icd is not None and term not in icd:
            raise ValueError(f"term {term!r} is not in the workspace's ICD-10 term list")


def _check_label(task: TaskSpec, label: str | None, old: str | None) -> None:
    if label == old:
        return
    if label in (None, ""):
        raise ValueError(f"a {task.name} label is required")
    codes = task.label_codes
    if codes and label not in codes:
        shown = ", ".join(task.display_label(c) for c in codes[:12])
        more = f" (+{len(codes) - 12} more)" if len(codes) > 12 else ""
        raise ValueError(f"unknown {task.name} label {label!r} (expected one of: {shown}{more})")
