"""Per-sample sufficient statistics of the official metrics, for cheap bootstrap resampling.

:func:`official_sample_stats` turns one task's gold and predicted lists into one statistic per
sample; :func:`official_metric_from_stats` turns any list of them (e.g. a bootstrap
resample) into the task's :class:`~.official.TaskScore`. On the original list the result is
identical (bit for bit) to :func:`~.official.score_task`, because the statistics are summed
in the same order as the official code sums them.

Statistic per sample, by task kind:

* IE tasks: :class:`IECounts` ``(tp, fp, fn)`` of the per-sample sets;
* classification: :class:`LabelPair` ``(gold, pred)``, the prediction after the
  empty -> first-label fallback (the report needs the pairs, not counts, because its classes
  are the labels that occur);
* MedDG: a 1-tuple of :class:`~.rouge.RougeF`; IMCS-V2-MRG: one ``RougeF`` per gold section
  (the task mean runs over all sections of all samples);
* Text2DT: :class:`~.text2dt.TreeCounts`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from . import official as _off
from .rouge import RougeF, rouge_avg
from .tasks import CLS_LABELS, MACRO_CLS_TASKS, canonical_task, task_kind
from .text2dt import TreeCounts, aggregate

__all__ = ["IECounts", "LabelPair", "official_metric_from_stats", "official_sample_stats"]


class IECounts(NamedTuple):
    tp: int
    fp: int
    fn: int


class LabelPair(NamedTuple):
    gold: Any
    pred: Any


def official_sample_stats(task: str, gold: Sequence[Mapping[str, Any]],
                          pred: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """One statistic per sample (see the module doc); raises what the official metric raises."""
    task = canonical_task(task)
    kind = task_kind(task)
    _off._check_lengths(gold, pred)
    if kind == "ie":
        out: list[tuple[Any, ...]] = []
        for g, p in zip(gold, pred):
            _off._check_ids(g, p)
            _off._check_type(g["answer"], p["answer"], list)
            out.append(IECounts(*_off.ie_sample_counts(g["answer"], p["answer"])))
        return out
    if kind == "cls":
        labels = list(CLS_LABELS[task])
        return [LabelPair(*_off.cls_pair(g, p, labels)) for g, p in zip(gold, pred)]
    if kind == "nlg":
        return [_off.nlg_sample_scores(g, p) for g, p in zip(gold, pred)]
    if kind == "nlg_sections":
        return [_off.mrg_sample_scores(g, p) for g, p in zip(gold, pred)]
    return [_off.text2dt_sample_counts(g, p) for g, p in zip(gold, pred)]


def official_metric_from_stats(task: str, stats: Sequence[tuple[Any, ...]]) -> _off.TaskScore:
    """The official task score from per-sample statistics (any subset or resample)."""
    task = canonical_task(task)
    kind = task_kind(task)
    if kind == "ie":
        tp = fp = fn = 0
        for s in stats:
            tp, fp, fn = tp + s[0], fp + s[1], fn + s[2]
        values: Sequence[float] = _off.ie_prf(tp, fp, fn)
    elif kind == "cls":
        values = _off.cls_scores([tuple(s) for s in stats], task in MACRO_CLS_TASKS)
    elif kind in ("nlg", "nlg_sections"):
        values = tuple(rouge_avg([RougeF(*r) for s in stats for r in s]))
    else:
        agg = aggregate([TreeCounts(*s) for s in stats])
        values = (agg["tree_lenv_radio"], agg["node_f1"], agg["path_f1"])
    return _off.make_task_score(task, values)
