"""CBLUE 1.0 leaderboard metrics on aligned gold / predicted examples.

``gold`` and ``pred`` are lists of :class:`~cblue_core.records.Example` of the same length and
order (matching predictions to gold by key is done before; a missing prediction is an empty
Example, or one whose ``label`` is None). Definitions (benchmarks.md 1.2-1.5):

* **CMeEE** (``spans``): micro P/R/F over (example, start, end, type) tuples, exact match.
  Nested entities are separate tuples; a tuple repeated within one sentence (same offsets and
  type) counts once, in gold and in predictions (the leaderboard scorer is unpublished and
  its duplicate handling unknown; sets are the natural reading of "micro F1 over entities").
  Offsets are the core's half-open ones; since both sides use the same convention the counts
  equal those on the file's inclusive offsets.
* **CMeIE** (``cmeie_triples``): micro P/R/F over (subject, predicate, object) triples
  normalised as the CHIP-2020 organisers' CMeIE script does: subject and object lower-cased,
  one surrounding 《》 stripped, exact duplicates removed per example. The unrounded values are
  the metrics; the script's P, R and F (F from the unrounded P and R) rounded to 4 decimals are
  in ``extra["official_rounded"]``.
* **CHIP-CDN** (``terms``): micro P/R/F over (example, standard term) pairs; terms are
  stripped of surrounding whitespace, empty terms dropped, repeats counted once. Also F1 by
  the number of gold terms (1, 2, 3+).
* **CHIP-CTC / CHIP-STS** (``macro_f1``) and **KUAKE-QIC / QTR / QQR** (``accuracy``): accuracy
  and macro P/R/F exactly as scikit-learn ``precision_recall_fscore_support(average='macro')``
  with default ``zero_division``: the label set is the sorted union of the gold and predicted
  labels, a label never predicted has precision 0 and one never in gold recall 0, both still
  averaged. A missing prediction (label None or "") is wrong for accuracy and a false negative
  of its gold label, but is not itself a label. A gold ``NA`` (KUAKE-QQR dev record ``s9``) is
  read as ``0``, as the CBLUE baseline loader does.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Hashable, Iterable, Sequence

import numpy as np

from ..records import Example, Triple
from ..tasks import TaskSpec
from .types import (LABEL_METRICS, PRF, ExampleStats, TaskScore, evaluate, micro_f1,
                    micro_precision, micro_recall)

__all__ = ["score_spans", "score_cmeie", "score_terms", "score_macro_f1", "score_accuracy",
           "cmeie_normalise", "micro_from_sets", "label_score", "check_aligned"]


# ---------------------------------------------------------------------- shared helpers

def check_aligned(gold: Sequence[Example], pred: Sequence[Example]) -> list[str]:
    """Raise when the lists differ in length; a note when some non-empty predicted keys differ
    from their gold keys (the lists are scored by position regardless)."""
    if len(gold) != len(pred):
        raise ValueError(f"gold and predictions must be aligned: {len(gold)} gold vs "
                         f"{len(pred)} predicted examples")
    bad = sum(1 for g, p in zip(gold, pred) if p.key and g.key and p.key != g.key)
    if bad:
        return [f"{bad} prediction(s) carry a key other than their gold example's; scored by "
                "position as given"]
    return []


def micro_from_sets(task: str, gold_sets: Sequence[set], pred_sets: Sequence[set],
                    label_of: Callable[[Hashable], str] | None = None,
                    notes: Iterable[str] = ()) -> TaskScore:
    """Micro P/R/F over per-example sets of hashable items, with per-label counts."""
    n = len(gold_sets)
    tp = np.zeros(n, dtype=np.int64)
    fp = np.zeros(n, dtype=np.int64)
    fn = np.zeros(n, dtype=np.int64)
    ltp: Counter = Counter()
    lfp: Counter = Counter()
    lfn: Counter = Counter()
    for i, (g, p) in enumerate(zip(gold_sets, pred_sets)):
        both = g & p
        k = len(both)
        tp[i], fp[i], fn[i] = k, len(p) - k, len(g) - k
        if label_of is not None:
            for item in both:
                ltp[label_of(item)] += 1
            if k != len(p):
                for item in p - both:
                    lfp[label_of(item)] += 1
            if k != len(g):
                for item in g - both:
                    lfn[label_of(item)] += 1
    stats = ExampleStats.from_counts(tp, fp, fn)
    agg = stats.aggregate()
    metrics = {"precision": float(micro_precision(agg)[0]), "recall": float(micro_recall(agg)[0]),
               "f1": float(micro_f1(agg)[0])}
    per_label = {lab: PRF(ltp[lab], lfp[lab], lfn[lab])
                 for lab in sorted(set(ltp) | set(lfp) | set(lfn))}
    extra = {"tp": int(tp.sum()), "fp": int(fp.sum()), "fn": int(fn.sum()), "examples": n}
    return TaskScore(task, "f1", metrics, per_label, stats, list(notes), extra=extra)


def label_score(task: str, gold: Sequence[str | None], pred: Sequence[str | None], headline: str,
                notes: Iterable[str] = (), unit: Sequence[int] | None = None,
                n_examples: int | None = None) -> TaskScore:
    """Accuracy and scikit-learn macro P/R/F over (gold, pred) label pairs.

    Units whose gold label is None or "" are not scored. ``unit`` maps each pair to its example
    when an example holds several labelled units (dialogue turns).
    """
    notes = list(notes)
    keep = [i for i, g in enumerate(gold) if g not in (None, "")]
    if len(keep) != len(gold):
        notes.append(f"{len(gold) - len(keep)} unit(s) without a gold label are not scored")
        if unit is None:
            unit = list(range(len(gold)))
            n_examples = len(gold)
    g_lab = [gold[i] for i in keep]
    p_lab = [pred[i] if pred[i] not in (None, "") else None for i in keep]
    missing = sum(1 for p in p_lab if p is None)
    if missing:
        notes.append(f"{missing} unit(s) without a prediction: counted wrong (a false negative "
                     "of the gold label), not as a label of their own")
    labels = tuple(sorted(set(g_lab) | {p for p in p_lab if p is not None}))
    ids = {lab: i for i, lab in enumerate(labels)}
    g_id = np.array([ids[x] for x in g_lab], dtype=np.int64)
    p_id = np.array([ids[x] if x is not None else -1 for x in p_lab], dtype=np.int64)
    if unit is None:
        stats = ExampleStats.from_labels(g_id, p_id, labels)
    else:
        u = np.asarray([unit[i] for i in keep], dtype=np.int64)
        stats = ExampleStats.from_labels(g_id, p_id, labels, n=n_examples, unit=u)
    metrics = {name: evaluate(stats, fn) for name, fn in LABEL_METRICS.items()}
    nl = len(labels)
    gc = np.bincount(g_id, minlength=nl)
    pc = np.bincount(p_id[p_id >= 0], minlength=nl)
    cc = np.bincount(g_id[g_id == p_id], minlength=nl)
    per_label = {lab: PRF(int(cc[i]), int(pc[i] - cc[i]), int(gc[i] - cc[i]))
                 for i, lab in enumerate(labels)}
    confusion = Counter(zip(g_lab, p_lab))
    extra = {"units": len(keep), "missing_predictions": missing,
             "confusion": [[gl, pl, c] for (gl, pl), c in sorted(
                 confusion.items(), key=lambda kv: (-kv[1], str(kv[0])))]}
    return TaskScore(task, headline, metrics, per_label, stats, notes, extra=extra)


# ---------------------------------------------------------------------- CMeEE

def score_spans(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred)
    gs = [{(s.start, s.end, s.type) for s in ex.spans} for ex in gold]
    ps = [{(s.start, s.end, s.type) for s in ex.spans} for ex in pred]
    dup = sum(len(ex.spans) - len(s) for ex, s in zip(gold, gs)) + \
        sum(len(ex.spans) - len(s) for ex, s in zip(pred, ps))
    notes.append("micro-F1 over (sentence, start, end, type), exact match; nested entities count "
                 "separately; a repeated (start, end, type) within a sentence counts once "
                 "(leaderboard scorer unpublished: benchmarks.md 1.3)")
    if dup:
        notes.append(f"{dup} duplicated entity tuple(s) collapsed")
    return micro_from_sets(task.name, gs, ps, label_of=lambda t: t[2], notes=notes)


# ---------------------------------------------------------------------- CMeIE

def _del_bookname(s: str) -> str:
    return s[1:-1] if s.startswith("《") and s.endswith("》") else s


def cmeie_normalise(t: Triple) -> tuple[str, str, str]:
    """(subject, predicate, object) as the CHIP-2020 CMeIE script compares them."""
    return (_del_bookname(t.subject.lower()), t.predicate, _del_bookname(t.object).lower())


def _round_official(tp: int, n_pred: int, n_gold: int) -> dict[str, float]:
    p = tp / n_pred if n_pred > 0 else 0.0
    r = tp / n_gold if n_gold > 0 else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}


def score_cmeie(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred)
    gs = [{cmeie_normalise(t) for t in ex.triples} for ex in gold]
    ps = [{cmeie_normalise(t) for t in ex.triples} for ex in pred]
    notes.append("micro-F1 over (subject, predicate, object) normalised as the CHIP-2020 CMeIE "
                 "organisers' script (lower-case, strip surrounding 《》, per-example dedupe): the "
                 "best public definition of the leaderboard metric, not verified against it")
    ts = micro_from_sets(task.name, gs, ps, label_of=lambda t: t[1], notes=notes)
    ex = ts.extra
    ts.extra["official_rounded"] = _round_official(ex["tp"], ex["tp"] + ex["fp"], ex["tp"] + ex["fn"])
    return ts


# ---------------------------------------------------------------------- CHIP-CDN

def _terms(ex: Example) -> set[str]:
    return {t.strip() for t in ex.terms if t.strip()}


def score_terms(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred)
    gs = [_terms(ex) for ex in gold]
    ps = [_terms(ex) for ex in pred]
    notes.append("micro-F1 over (text, standard term) pairs, exact strings after stripping "
                 "whitespace; repeated terms count once (leaderboard scorer unpublished)")
    ts = micro_from_sets(task.name, gs, ps, label_of=lambda t: t, notes=notes)
    counts = np.array([len(g) for g in gs])
    for name, mask in (("1", counts == 1), ("2", counts == 2), ("3+", counts >= 3)):
        if mask.any():
            sub = ts.stats.subset(np.flatnonzero(mask))
            ts.metrics[f"f1[gold_terms={name}]"] = evaluate(sub, micro_f1)
            ts.extra[f"examples[gold_terms={name}]"] = int(mask.sum())
    return ts


# ---------------------------------------------------------------------- classification

def _gold_labels(task: TaskSpec, gold: Sequence[Example], notes: list[str]) -> list[str | None]:
    codes = set(task.label_codes)
    out: list[str | None] = []
    na = 0
    unknown: Counter = Counter()
    for ex in gold:
        lab = ex.label
        if lab == "NA" and "0" in codes:
            lab, na = "0", na + 1
        elif lab not in (None, "") and codes and lab not in codes:
            unknown[lab] += 1
        out.append(lab)
    if na:
        notes.append(f"{na} gold label(s) 'NA' read as '0', as the CBLUE baseline loader does")
    if unknown:
        notes.append("gold labels outside the task's label set kept as they are: "
                     + ", ".join(f"{k!r} x{v}" for k, v in unknown.most_common()))
    return out


def _pred_labels(task: TaskSpec, pred: Sequence[Example], notes: list[str]) -> list[str | None]:
    codes = set(task.label_codes)
    out = [ex.label for ex in pred]
    unknown = Counter(p for p in out if p not in (None, "") and codes and p not in codes)
    if unknown:
        notes.append("predicted labels outside the task's label set (scored as labels, always "
                     "wrong): " + ", ".join(f"{k!r} x{v}" for k, v in unknown.most_common(10)))
    return out


def _classification(task: TaskSpec, gold, pred, headline: str) -> TaskScore:
    notes = check_aligned(gold, pred)
    g = _gold_labels(task, gold, notes)
    p = _pred_labels(task, pred, notes)
    notes.append("macro P/R/F as scikit-learn precision_recall_fscore_support(average='macro'), "
                 "default zero_division: labels = sorted union of gold and predicted labels")
    return label_score(task.name, g, p, headline, notes)


def score_macro_f1(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """CHIP-CTC, CHIP-STS: headline macro-F1 (accuracy beside it)."""
    return _classification(task, gold, pred, "macro_f1")


def score_accuracy(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """KUAKE-QIC, KUAKE-QTR, KUAKE-QQR: headline accuracy (macro-F1 beside it)."""
    return _classification(task, gold, pred, "accuracy")
