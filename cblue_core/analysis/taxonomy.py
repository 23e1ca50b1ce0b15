"""Error taxonomy: one :class:`ErrorRow` per gold/predicted item, with the example it concerns.

Each row names its ``category`` and the example index (and dialogue turn, ``-1`` elsewhere),
so a page can count categories and click through to the examples behind each one; ``tags``
carry the cross-cutting facts (nesting, schema violations, combined triples, terms not in the
ICD list) that make slices of their own. ``gold`` and ``pred`` hold the items compared (None
on the side that has none): :class:`~cblue_core.records.Span` for spans,
:class:`~cblue_core.records.Triple` for relations, the string for CDN terms and labels.

**Spans** (:func:`span_errors`; duplicates within an example collapsed, as the scorer does).
Per example, gold and predicted spans are paired one-to-one in stages, each stage only among
the spans not paired yet:

1. ``correct``: same start, end and type;
2. ``wrong_type``: same boundaries, other type;
3. ``wrong_boundary``: overlapping, same type (largest overlap first);
4. ``wrong_both``: overlapping, other type (largest overlap first);

then the unpaired gold spans are ``missed`` and the unpaired predictions ``spurious``. Nesting
tags, for each gold nested pair (one contains the other): ``inner_found_outer_missed`` on the
outer span's row when the inner one is ``correct`` and the outer one ``missed``, and
``outer_found_inner_missed`` on the inner span's row in the converse case.

**Relations** (:func:`relation_errors`; triples compared after the scorer's normalisation):
``correct``; ``wrong_predicate`` (same subject and object); ``swapped`` (subject and object
exchanged; tag ``predicate_differs`` when the predicate differs too); ``argument_boundary``
(same predicate, each argument equal to the gold one or containing / contained in it as a
string, not both equal; tags ``subject_boundary`` / ``object_boundary``); ``missed``;
``spurious``. Tags: ``schema_violation`` on a row whose predicted (subject_type, predicate,
object_type) is not in the given schema set; ``combined`` when the triple (the gold one, else
the predicted one) has ``Combined: true``.

**CDN terms** (:func:`term_errors`): ``correct_term``, ``missing_term``, ``extra_term``; tag
``term_not_in_icd`` when the row's term is not in the given ICD term set.

**Classification** (:func:`label_errors`): one row per scored example (per turn for dialogue
acts): ``correct`` or ``confusion`` with the gold and predicted labels (the cell
``gold->pred``); tag ``no_prediction`` when the prediction has no label. A gold ``NA`` is read
as ``0`` as in the scorer.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..records import Example, Span, Triple
from ..tasks import TaskSpec, get_task

__all__ = [
    "LABEL_CATEGORIES",
    "RELATION_CATEGORIES",
    "SPAN_CATEGORIES",
    "TAXONOMIES",
    "TERM_CATEGORIES",
    "ErrorRow",
    "categorize",
    "category_counts",
    "dialogue_act_errors",
    "dialogue_span_errors",
    "examples_by_category",
    "label_errors",
    "relation_errors",
    "span_errors",
    "term_errors",
]

SPAN_CATEGORIES = ("correct", "wrong_type", "wrong_boundary", "wrong_both", "missed", "spurious")
RELATION_CATEGORIES = ("correct", "wrong_predicate", "swapped", "argument_boundary", "missed",
                       "spurious")
TERM_CATEGORIES = ("correct_term", "missing_term", "extra_term")
LABEL_CATEGORIES = ("correct", "confusion")


@dataclass(frozen=True, kw_only=True)
class ErrorRow:
    """One row of the taxonomy: a gold item, a predicted item or a pair of them (see the
    module doc for the categories and tags of each kind)."""

    example: int
    turn: int = -1
    category: str
    tags: tuple[str, ...] = ()
    gold: Span | Triple | str | None
    pred: Span | Triple | str | None

    @property
    def term(self) -> str:
        """A CDN term row's term: the gold one, else the predicted one."""
        item = self.gold if self.gold is not None else self.pred
        return item if isinstance(item, str) else ""

    @property
    def cell(self) -> str:
        """A label row's confusion-matrix cell, ``gold->pred``."""
        return f"{self.gold}->{self.pred}"


# ---------------------------------------------------------------------- spans

def _unique_spans(spans: Iterable[Span]) -> list[Span]:
    seen: dict[tuple[int, int, str], Span] = {}
    for s in spans:
        seen.setdefault((s.start, s.end, s.type), s)
    return list(seen.values())


def _pair_overlapping(gs: list[Span], ps: list[Span], same_type: bool) -> list[tuple[Span, Span]]:
    cands: list[tuple[int, int, int, int, int]] = []
    for i, g in enumerate(gs):
        for j, p in enumerate(ps):
            if g.start < p.end and p.start < g.end and (g.type == p.type) == same_type:
                ov = min(g.end, p.end) - max(g.start, p.start)
                cands.append((-ov, g.start, p.start, i, j))
    if not cands:
        return []
    cands.sort()
    used_g: set[int] = set()
    used_p: set[int] = set()
    pairs: list[tuple[Span, Span]] = []
    for _, _, _, i, j in cands:
        if i not in used_g and j not in used_p:
            used_g.add(i)
            used_p.add(j)
            pairs.append((gs[i], ps[j]))
    return pairs


def _span_rows(example: int, gold: Iterable[Span], pred: Iterable[Span], turn: int = -1) -> list[ErrorRow]:
    gs = _unique_spans(gold)
    ps = _unique_spans(pred)
    pkeys = {(p.start, p.end, p.type): p for p in ps}
    cat: dict[Span, str] = {}
    pairs: list[tuple[str, Span | None, Span | None]] = []
    rest_g: list[Span] = []
    for g in gs:
        p = pkeys.pop((g.start, g.end, g.type), None)
        if p is not None:
            cat[g] = "correct"
            pairs.append(("correct", g, p))
        else:
            rest_g.append(g)
    rest_p = list(pkeys.values())
    if rest_g and rest_p:
        # 2. same boundaries, other type
        by_bounds: dict[tuple[int, int], list[Span]] = {}
        for p in rest_p:
            by_bounds.setdefault((p.start, p.end), []).append(p)
        still_g = []
        for g in rest_g:
            lst = by_bounds.get((g.start, g.end))
            if lst:
                p = lst.pop(0)
                cat[g] = "wrong_type"
                pairs.append(("wrong_type", g, p))
            else:
                still_g.append(g)
        rest_p = [p for lst in by_bounds.values() for p in lst]
        rest_g = still_g
        # 3./4. overlapping, same type then other type
        for name, same in (("wrong_boundary", True), ("wrong_both", False)):
            if not rest_g or not rest_p:
                break
            matched = _pair_overlapping(rest_g, rest_p, same)
            if matched:
                mg = {id(g) for g, _ in matched}
                mp = {id(p) for _, p in matched}
                for g, p in matched:
                    cat[g] = name
                    pairs.append((name, g, p))
                rest_g = [g for g in rest_g if id(g) not in mg]
                rest_p = [p for p in rest_p if id(p) not in mp]
    for g in rest_g:
        cat[g] = "missed"
        pairs.append(("missed", g, None))
    for p in rest_p:
        pairs.append(("spurious", None, p))
    # nesting tags
    tags: dict[Span, list[str]] = {}
    if len(gs) > 1:
        for outer in gs:
            for inner in gs:
                if outer is inner or not outer.contains(inner):
                    continue
                co, ci = cat[outer], cat[inner]
                if ci == "correct" and co == "missed":
                    tags.setdefault(outer, []).append("inner_found_outer_missed")
                elif co == "correct" and ci == "missed":
                    tags.setdefault(inner, []).append("outer_found_inner_missed")

    def position(pair: tuple[str, Span | None, Span | None]) -> tuple[int, int, bool]:
        _, g, p = pair
        span = g if g is not None else p
        assert span is not None, "every pair has a gold or a predicted span"
        return span.start, span.end, g is None

    pairs.sort(key=position)
    return [ErrorRow(example=example, turn=turn, category=name, gold=g, pred=p,
                     tags=tuple(dict.fromkeys(tags.get(g, ()))) if g is not None else ())
            for name, g, p in pairs]


def span_errors(gold: Sequence[Example], pred: Sequence[Example]) -> list[ErrorRow]:
    """Span error rows for aligned examples (CMeEE-style ``spans``)."""
    _check(gold, pred)
    out: list[ErrorRow] = []
    for i, (g, p) in enumerate(zip(gold, pred)):
        if g.spans or p.spans:
            out.extend(_span_rows(i, g.spans, p.spans))
    return out


def _turn_maps(g: Example, p: Example) -> tuple[list[str], list[str]]:
    from ..metrics.cblue2 import turn_keys
    return turn_keys(g, p)


def dialogue_span_errors(gold: Sequence[Example], pred: Sequence[Example]) -> list[ErrorRow]:
    """Span error rows per dialogue turn (``turn`` = the gold turn's position; a predicted turn
    with no gold counterpart keeps its own position)."""
    _check(gold, pred)
    out: list[ErrorRow] = []
    for i, (g, p) in enumerate(zip(gold, pred)):
        gk, pk = _turn_maps(g, p)
        pturns = dict(zip(pk, p.turns))
        for ti, (k, t) in enumerate(zip(gk, g.turns)):
            pt = pturns.pop(k, None)
            pspans = pt.spans if pt is not None else ()
            if t.spans or pspans:
                out.extend(_span_rows(i, t.spans, pspans, ti))
        for k, pt in pturns.items():
            if pt.spans:
                out.extend(_span_rows(i, (), pt.spans, pk.index(k)))
    return out


# ---------------------------------------------------------------------- relations

def _plain(t: Triple) -> tuple[str, str, str]:
    return (t.subject, t.predicate, t.object)


def _schema_set(schemas: Iterable[Any] | None) -> set[tuple[str, str, str]] | None:
    if schemas is None:
        return None
    out: set[tuple[str, str, str]] = set()
    for s in schemas:
        if isinstance(s, dict):
            out.add((s["subject_type"], s["predicate"], s["object_type"]))
        elif hasattr(s, "subject_type"):
            out.add((s.subject_type, s.predicate, s.object_type))
        else:
            out.add(tuple(s))
    return out


def _related(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (a in b or b in a)


TripleKey = tuple[str, str, str]


def _relation_rows(example: int, gold: Sequence[Triple], pred: Sequence[Triple],
                   norm: Callable[[Triple], TripleKey],
                   schemas: set[TripleKey] | None) -> list[ErrorRow]:
    gd: dict[TripleKey, Triple] = {}
    for t in gold:
        gd.setdefault(norm(t), t)
    pd: dict[TripleKey, Triple] = {}
    for t in pred:
        pd.setdefault(norm(t), t)
    pairs: list[tuple[str, Triple | None, Triple | None, tuple[str, ...]]] = []
    rest_g: list[tuple[TripleKey, Triple]] = []
    for k, g in gd.items():
        if k in pd:
            pairs.append(("correct", g, pd.pop(k), ()))
        else:
            rest_g.append((k, g))
    rest_p = list(pd.items())

    def stage(name: str, match: Callable[[TripleKey, TripleKey], tuple[str, ...] | None]) -> None:
        nonlocal rest_g, rest_p
        if not rest_g or not rest_p:
            return
        keep_g = []
        for gk, g in rest_g:
            hit: tuple[int, Triple, tuple[str, ...]] | None = None
            for j, (pk, p) in enumerate(rest_p):
                tags = match(gk, pk)
                if tags is not None:
                    hit = (j, p, tags)
                    break
            if hit is None:
                keep_g.append((gk, g))
            else:
                j, p, tags = hit
                pairs.append((name, g, p, tags))
                rest_p = rest_p[:j] + rest_p[j + 1:]
        rest_g = keep_g

    stage("wrong_predicate", lambda g, p: () if (g[0], g[2]) == (p[0], p[2]) and g[1] != p[1] else None)
    stage("swapped", lambda g, p: (("predicate_differs",) if g[1] != p[1] else ())
          if (g[0], g[2]) == (p[2], p[0]) and g[0] != g[2] else None)

    def boundary(g: TripleKey, p: TripleKey) -> tuple[str, ...] | None:
        if g[1] != p[1]:
            return None
        s_ok = g[0] == p[0] or _related(g[0], p[0])
        o_ok = g[2] == p[2] or _related(g[2], p[2])
        if not (s_ok and o_ok) or (g[0] == p[0] and g[2] == p[2]):
            return None
        return tuple(t for t, bad in (("subject_boundary", g[0] != p[0]),
                                      ("object_boundary", g[2] != p[2])) if bad)

    stage("argument_boundary", boundary)
    pairs.extend(("missed", g, None, ()) for _, g in rest_g)
    pairs.extend(("spurious", None, p, ()) for _, p in rest_p)
    rows = []
    for name, gt, pt, tags in pairs:
        extra = list(tags)
        if schemas is not None and pt is not None and \
                (pt.subject_type, pt.predicate, pt.object_type) not in schemas:
            extra.append("schema_violation")
        comb = gt.combined if gt is not None else (pt.combined if pt is not None else None)
        if comb:
            extra.append("combined")
        rows.append(ErrorRow(example=example, category=name, gold=gt, pred=pt, tags=tuple(extra)))
    return rows


def relation_errors(gold: Sequence[Example], pred: Sequence[Example], *,
                    schemas: Iterable[Any] | None = None,
                    normalise: Callable[[Triple], TripleKey] | None = None
                    ) -> list[ErrorRow]:
    """Relation error rows; ``schemas``: (subject_type, predicate, object_type) triples, dicts or
    :class:`~cblue_core.io.resources.Schema`; ``normalise``: the scorer's triple key (default:
    the exact strings)."""
    _check(gold, pred)
    norm = normalise or _plain
    sset = _schema_set(schemas)
    out: list[ErrorRow] = []
    for i, (g, p) in enumerate(zip(gold, pred)):
        if g.triples or p.triples:
            out.extend(_relation_rows(i, g.triples, p.triples, norm, sset))
    return out


# ---------------------------------------------------------------------- CDN terms

def _icd_set(icd_terms: Iterable[Any] | None) -> set[str] | None:
    if icd_terms is None:
        return None
    return {(t.term if hasattr(t, "term") else str(t)).strip() for t in icd_terms}


def term_errors(gold: Sequence[Example], pred: Sequence[Example], *,
                icd_terms: Iterable[Any] | None = None) -> list[ErrorRow]:
    """CDN term rows; ``icd_terms``: strings or :class:`~cblue_core.io.resources.IcdTerm`."""
    _check(gold, pred)
    icd = _icd_set(icd_terms)
    out: list[ErrorRow] = []
    for i, (g, p) in enumerate(zip(gold, pred)):
        gs = list(dict.fromkeys(t.strip() for t in g.terms if t.strip()))
        ps = list(dict.fromkeys(t.strip() for t in p.terms if t.strip()))
        pset, gset = set(ps), set(gs)

        def tags(term: str) -> tuple[str, ...]:
            return ("term_not_in_icd",) if icd is not None and term not in icd else ()

        for t in gs:
            out.append(ErrorRow(example=i, category="correct_term" if t in pset else "missing_term",
                                gold=t, pred=t if t in pset else None, tags=tags(t)))
        for t in ps:
            if t not in gset:
                out.append(ErrorRow(example=i, category="extra_term", gold=None, pred=t, tags=tags(t)))
    return out


# ---------------------------------------------------------------------- classification

def _label_row(i: int, g: str, p: str | None, turn: int = -1) -> ErrorRow:
    if p in (None, ""):
        return ErrorRow(example=i, turn=turn, category="confusion", tags=("no_prediction",),
                        gold=g, pred=None)
    return ErrorRow(example=i, turn=turn, category="correct" if g == p else "confusion",
                    gold=g, pred=p)


def label_errors(gold: Sequence[Example], pred: Sequence[Example],
                 task: TaskSpec | None = None) -> list[ErrorRow]:
    """One row per example with a gold label."""
    _check(gold, pred)
    codes = set(task.label_codes) if task is not None else set()
    out = []
    for i, (g, p) in enumerate(zip(gold, pred)):
        lab = g.label
        if lab in (None, ""):
            continue
        if lab == "NA" and "0" in codes:
            lab = "0"
        out.append(_label_row(i, lab, p.label))
    return out


def dialogue_act_errors(gold: Sequence[Example], pred: Sequence[Example]) -> list[ErrorRow]:
    """One row per gold turn with a dialogue act."""
    _check(gold, pred)
    out = []
    for i, (g, p) in enumerate(zip(gold, pred)):
        gk, pk = _turn_maps(g, p)
        pacts = {k: t.act for k, t in zip(pk, p.turns)}
        for ti, (k, t) in enumerate(zip(gk, g.turns)):
            if t.act:
                out.append(_label_row(i, t.act, pacts.get(k), ti))
    return out


# ---------------------------------------------------------------------- dispatch

def _check(gold: Sequence[Example], pred: Sequence[Example]) -> None:
    if len(gold) != len(pred):
        raise ValueError(f"gold and predictions must be aligned: {len(gold)} vs {len(pred)}")


def _cmeie(gold: Sequence[Example], pred: Sequence[Example],
           schemas: Iterable[Any] | None = None) -> list[ErrorRow]:
    from ..metrics.cblue import cmeie_normalise
    return relation_errors(gold, pred, schemas=schemas, normalise=cmeie_normalise)


TAXONOMIES: dict[str, Callable[..., list[ErrorRow]]] = {
    "spans": lambda task, g, p, **kw: span_errors(g, p),
    "dialogue_spans": lambda task, g, p, **kw: dialogue_span_errors(g, p),
    "cmeie_triples": lambda task, g, p, schemas=None, **kw: _cmeie(g, p, schemas),
    "causal_triples": lambda task, g, p, schemas=None, **kw: relation_errors(g, p, schemas=schemas),
    "text2dt": lambda task, g, p, schemas=None, **kw: relation_errors(g, p, schemas=schemas),
    "terms": lambda task, g, p, icd_terms=None, **kw: term_errors(g, p, icd_terms=icd_terms),
    "macro_f1": lambda task, g, p, **kw: label_errors(g, p, task),
    "accuracy": lambda task, g, p, **kw: label_errors(g, p, task),
    "dialogue_acts": lambda task, g, p, **kw: dialogue_act_errors(g, p),
}


# The reference lists each taxonomy takes from the workspace (see cblue_core.runs.record.reference_lists):
# the others never read them, so they are not loaded for them (the ICD list alone is 40k terms).
REFERENCE_LISTS: dict[str, tuple[str, ...]] = {
    "cmeie_triples": ("schemas",), "causal_triples": ("schemas",), "text2dt": ("schemas",),
    "terms": ("icd_terms",),
}


def categorize(task: TaskSpec | str, gold: Sequence[Example], pred: Sequence[Example], *,
               schemas: Iterable[Any] | None = None,
               icd_terms: Iterable[Any] | None = None) -> list[ErrorRow]:
    """Error rows for a task, chosen by its scorer (see :data:`TAXONOMIES`); raises
    ValueError for a task without a taxonomy."""
    spec = get_task(task) if isinstance(task, str) else task
    fn = TAXONOMIES.get(spec.scorer)
    if fn is None:
        raise ValueError(f"no error taxonomy for task {spec.name} (scorer {spec.scorer!r}); "
                         f"available for scorers: {', '.join(TAXONOMIES)}")
    return fn(spec, gold, pred, schemas=schemas, icd_terms=icd_terms)


def category_counts(rows: Iterable[ErrorRow]) -> dict[str, int]:
    """Rows per category and per tag (tags as ``tag:<name>``)."""
    c: Counter[str] = Counter()
    for r in rows:
        c[r.category] += 1
        for t in r.tags:
            c[f"tag:{t}"] += 1
    return dict(c)


def examples_by_category(rows: Iterable[ErrorRow]) -> dict[str, list[int]]:
    """Sorted example indices per category and per tag (``tag:<name>``), for click-through."""
    out: dict[str, set[int]] = {}
    for r in rows:
        out.setdefault(r.category, set()).add(r.example)
        for t in r.tags:
            out.setdefault(f"tag:{t}", set()).add(r.example)
    return {k: sorted(v) for k, v in out.items()}
