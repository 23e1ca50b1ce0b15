"""CBLUE 1.0 leaderboard metrics on aligned gold / predicted examples.

``gold`` and ``pred`` are lists of :class:`~cblue_core.records.Example` of the same length and
order (matching predictions to gold by key is done before; a missing prediction is an empty
Example, or one whose ``label`` is None). Definitions (docs/metrics.md section 1):

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
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

import numpy as np

from ..records import Example, Triple
from ..tasks import TaskSpec
from .types import (
    LABEL_METRICS,
    PRF,
    ExampleStats,
    TaskScore,
    evaluate,
    micro_f1,
    micro_precision,
    micro_recall,
)

__all__ = [
    "check_aligned",
    "cmeie_normalise",
    "label_score",
    "micro_from_sets",
    "score_accuracy",
    "score_cmeie",
    "score_macro_f1",
    "score_spans",
    "score_terms",
]

H = TypeVar("H", bound=Hashable)


# ---------------------------------------------------------------------- shared helpers

def check_aligned(gold: Sequence[Example], pred: Sequence[Example]) -> list[str]:
    """Check that gold and predictions are aligned by position.

    Args:
        gold: the gold examples.
        pred: the predictions, one per gold example, in the same order.

    Returns:
        Notes for the TaskScore: one when some non-empty predicted keys differ from their gold
        keys (the lists are scored by position regardless), else none.

    Raises:
        ValueError: when the lists differ in length.

    Examples:
        >>> from cblue_core.records import Example
        >>> check_aligned([Example("a", 0)], [Example("a", 0)])
        []
        >>> check_aligned([Example("a", 0)], [Example("b", 0)])
        ["1 prediction(s) carry a key other than their gold example's; scored by position as given"]
    """
    if len(gold) != len(pred):
        raise ValueError(f"gold and predictions must be aligned: {len(gold)} gold vs "
                         f"{len(pred)} predicted examples")
    bad = sum(1 for g, p in zip(gold, pred) if p.key and g.key and p.key != g.key)
    if bad:
        return [(f"{bad} prediction(s) carry a key other than their gold example's; scored by "
                "position as given")]
    return []


def micro_from_sets(task: str, gold_sets: Sequence[set[H]], pred_sets: Sequence[set[H]],
                    label_of: Callable[[H], str] | None = None,
                    notes: Iterable[str] = ()) -> TaskScore:
    """Micro P/R/F over per-example sets of hashable items, with per-label counts.

    Args:
        task: the task name the score is reported under.
        gold_sets: per example, the set of gold items.
        pred_sets: per example, the set of predicted items (aligned with ``gold_sets``).
        label_of: maps an item to the label its per-label counts go to (None: no per-label counts).
        notes: notes to carry in the result.

    Returns:
        A TaskScore with headline ``f1`` (metrics ``precision``, ``recall``, ``f1``), per-label
        :class:`~cblue_core.metrics.types.PRF` counts, per-example ``counts`` statistics and the
        summed ``tp`` / ``fp`` / ``fn`` in ``extra``.

    Examples:
        >>> ts = micro_from_sets("demo", [{("a", "x"), ("b", "y")}, set()], [{("a", "x")}, {("c", "y")}],
        ...                      label_of=lambda item: item[1])
        >>> ts.metrics
        {'precision': 0.5, 'recall': 0.5, 'f1': 0.5}
        >>> ts.per_label
        {'x': PRF(tp=1, fp=0, fn=0), 'y': PRF(tp=0, fp=1, fn=1)}
    """
    n = len(gold_sets)
    tp = np.zeros(n, dtype=np.int64)
    fp = np.zeros(n, dtype=np.int64)
    fn = np.zeros(n, dtype=np.int64)
    ltp: Counter[str] = Counter()
    lfp: Counter[str] = Counter()
    lfn: Counter[str] = Counter()
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

    Units whose gold label is None or "" are not scored. A missing prediction (None or "") is
    wrong and a false negative of its gold label, but is not a label of its own.

    Args:
        task: the task name the score is reported under.
        gold: the gold label of each unit.
        pred: the predicted label of each unit.
        headline: the headline metric, ``"accuracy"`` or ``"macro_f1"``.
        notes: notes to carry in the result.
        unit: the example of each unit, when an example holds several labelled units (dialogue
            turns); the bootstrap then resamples examples.
        n_examples: the number of examples ``unit`` refers to.

    Returns:
        A TaskScore with ``accuracy``, ``macro_f1``, ``macro_precision`` and ``macro_recall``,
        per-label counts and the confusion pairs in ``extra["confusion"]``.

    Examples:
        Labels ``0`` (F1 = 2*1/(2+2)) and ``1`` (F1 = 2*1/(2+1)); the missing prediction is wrong:

        >>> ts = label_score("demo", ["1", "1", "0", "0"], ["1", "0", "0", None], "macro_f1")
        >>> ts.metrics["accuracy"], ts.metrics["macro_precision"], ts.metrics["macro_recall"]
        (0.5, 0.75, 0.5)
        >>> round(ts.value, 4)   # (1/2 + 2/3) / 2
        0.5833
    """
    notes = list(notes)
    # None and "" are the only falsy labels: "no label".
    keep = [i for i, g in enumerate(gold) if g]
    if len(keep) != len(gold):
        notes.append(f"{len(gold) - len(keep)} unit(s) without a gold label are not scored")
        if unit is None:
            unit = list(range(len(gold)))
            n_examples = len(gold)
    g_lab = [g for g in gold if g]
    p_lab = [pred[i] or None for i in keep]
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
    """CMeEE: micro P/R/F over (sentence, start, end, type) entity tuples, exact match.

    Nested entities count separately; a (start, end, type) repeated within a sentence counts once.

    Args:
        task: the task (``get_task("CMeEE")`` or ``"CMeEE-V2"``).
        gold: the gold examples (their ``spans``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``f1`` and per-type counts.

    Examples:
        >>> from cblue_core.records import Example, Span
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("s1", 0, "呼吸肌麻痹", spans=[Span(0, 3, "bod"), Span(0, 5, "sym")])]
        >>> pred = [Example("s1", 0, "呼吸肌麻痹", spans=[Span(0, 3, "bod"), Span(0, 5, "dis")])]
        >>> ts = score_spans(get_task("CMeEE"), gold, pred)
        >>> ts.metrics
        {'precision': 0.5, 'recall': 0.5, 'f1': 0.5}
        >>> ts.per_label["sym"]
        PRF(tp=0, fp=0, fn=1)
    """
    notes = check_aligned(gold, pred)
    gs = [{(s.start, s.end, s.type) for s in ex.spans} for ex in gold]
    ps = [{(s.start, s.end, s.type) for s in ex.spans} for ex in pred]
    dup = sum(len(ex.spans) - len(s) for ex, s in zip(gold, gs)) + \
        sum(len(ex.spans) - len(s) for ex, s in zip(pred, ps))
    notes.append("micro-F1 over (sentence, start, end, type), exact match; nested entities count "
                 "separately; a repeated (start, end, type) within a sentence counts once "
                 "(leaderboard scorer unpublished: docs/metrics.md section 1)")
    if dup:
        notes.append(f"{dup} duplicated entity tuple(s) collapsed")
    return micro_from_sets(task.name, gs, ps, label_of=lambda t: t[2], notes=notes)


# ---------------------------------------------------------------------- CMeIE

def _del_bookname(s: str) -> str:
    return s[1:-1] if s.startswith("《") and s.endswith("》") else s


def cmeie_normalise(t: Triple) -> tuple[str, str, str]:
    """(subject, predicate, object) as the CHIP-2020 CMeIE script compares them.

    Args:
        t: a triple.

    Returns:
        Subject and object lower-cased and stripped of one surrounding 《》; the predicate as is.

    Examples:
        >>> cmeie_normalise(Triple("《HIV感染》", "病因", "HIV"))
        ('hiv感染', '病因', 'hiv')
    """
    return (_del_bookname(t.subject.lower()), t.predicate, _del_bookname(t.object).lower())


def _round_official(tp: int, n_pred: int, n_gold: int) -> dict[str, float]:
    p = tp / n_pred if n_pred > 0 else 0.0
    r = tp / n_gold if n_gold > 0 else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}


def score_cmeie(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """CMeIE: micro P/R/F over (subject, predicate, object) triples, normalised as the CHIP-2020
    CMeIE script does (:func:`cmeie_normalise`; duplicates within an example removed).

    Args:
        task: the task (``get_task("CMeIE")`` or ``"CMeIE-V2"``).
        gold: the gold examples (their ``triples``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``f1``, per-predicate counts, and the script's P, R and F
        rounded to 4 decimals in ``extra["official_rounded"]``.

    Examples:
        >>> from cblue_core.records import Example, Triple
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("t1", 0, triples=[Triple("《糖尿病》", "药物治疗", "二甲双胍")])]
        >>> pred = [Example("t1", 0, triples=[Triple("糖尿病", "药物治疗", "二甲双胍"),
        ...                                   Triple("糖尿病", "并发症", "酮症酸中毒")])]
        >>> ts = score_cmeie(get_task("CMeIE"), gold, pred)
        >>> ts.metrics["precision"], ts.metrics["recall"], round(ts.value, 4)
        (0.5, 1.0, 0.6667)
        >>> ts.extra["official_rounded"]
        {'precision': 0.5, 'recall': 1.0, 'f1': 0.6667}
    """
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
    """CHIP-CDN: micro P/R/F over (text, standard term) pairs.

    Terms are stripped of surrounding whitespace, empty terms dropped and repeats counted once.
    F1 is also given by the number of gold terms of the example (1, 2, 3+).

    Args:
        task: the task (``get_task("CHIP-CDN")``).
        gold: the gold examples (their ``terms``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``f1``, per-term counts and ``f1[gold_terms=...]``.

    Examples:
        >>> from cblue_core.records import Example
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("左膝退变", 0, terms=["高血压", "2型糖尿病"])]
        >>> pred = [Example("左膝退变", 0, terms=["高血压 ", "糖尿病"])]
        >>> score_terms(get_task("CHIP-CDN"), gold, pred).metrics
        {'precision': 0.5, 'recall': 0.5, 'f1': 0.5, 'f1[gold_terms=2]': 0.5}
    """
    notes = check_aligned(gold, pred)
    gs = [_terms(ex) for ex in gold]
    ps = [_terms(ex) for ex in pred]
    notes.append("micro-F1 over (text, standard term) pairs, exact strings after stripping "
                 "whitespace; repeated terms count once (leaderboard scorer unpublished)")
    ts = micro_from_sets(task.name, gs, ps, label_of=lambda t: t, notes=notes)
    stats = ts.stats
    assert stats is not None, "micro_from_sets always attaches its per-example counts"
    counts = np.array([len(g) for g in gs])
    for name, mask in (("1", counts == 1), ("2", counts == 2), ("3+", counts >= 3)):
        if mask.any():
            sub = stats.subset(np.flatnonzero(mask))
            ts.metrics[f"f1[gold_terms={name}]"] = evaluate(sub, micro_f1)
            ts.extra[f"examples[gold_terms={name}]"] = int(mask.sum())
    return ts


# ---------------------------------------------------------------------- classification

def _gold_labels(task: TaskSpec, gold: Sequence[Example], notes: list[str]) -> list[str | None]:
    codes = set(task.label_codes)
    out: list[str | None] = []
    na = 0
    unknown: Counter[str] = Counter()
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


def _classification(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example],
                    headline: str) -> TaskScore:
    notes = check_aligned(gold, pred)
    g = _gold_labels(task, gold, notes)
    p = _pred_labels(task, pred, notes)
    notes.append("macro P/R/F as scikit-learn precision_recall_fscore_support(average='macro'), "
                 "default zero_division: labels = sorted union of gold and predicted labels")
    return label_score(task.name, g, p, headline, notes)


def score_macro_f1(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """CHIP-CTC, CHIP-STS: headline macro-F1, accuracy beside it (see :func:`label_score`).

    Args:
        task: the task (``get_task("CHIP-CTC")`` or ``"CHIP-STS"``).
        gold: the gold examples (their ``label``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``macro_f1``.

    Examples:
        >>> from cblue_core.records import Example
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example(str(i), i, label=x) for i, x in enumerate(["1", "1", "0", "0"])]
        >>> pred = [Example(str(i), i, label=x) for i, x in enumerate(["1", "0", "0", None])]
        >>> ts = score_macro_f1(get_task("CHIP-STS"), gold, pred)
        >>> ts.headline, round(ts.value, 4), ts.metrics["accuracy"]
        ('macro_f1', 0.5833, 0.5)
    """
    return _classification(task, gold, pred, "macro_f1")


def score_accuracy(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """KUAKE-QIC, KUAKE-QTR, KUAKE-QQR: headline accuracy, macro-F1 beside it (see
    :func:`label_score`). A gold ``NA`` is read as ``0``, as the CBLUE baseline loader does.

    Args:
        task: the task (``get_task("KUAKE-QIC")``, ``"KUAKE-QTR"`` or ``"KUAKE-QQR"``).
        gold: the gold examples (their ``label``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``accuracy``.

    Examples:
        >>> from cblue_core.records import Example
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example(str(i), i, label=x) for i, x in enumerate(["0", "1", "2", "NA"])]
        >>> pred = [Example(str(i), i, label=x) for i, x in enumerate(["0", "1", "1", "0"])]
        >>> ts = score_accuracy(get_task("KUAKE-QQR"), gold, pred)
        >>> ts.value, round(ts.metrics["macro_f1"], 4)   # macro-F1: (1 + 2/3 + 0) / 3
        (0.75, 0.5556)
    """
    return _classification(task, gold, pred, "accuracy")
