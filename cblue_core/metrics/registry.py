"""Scorer registry: the task's ``scorer`` name -> scoring function, and :func:`score`.

Every scorer takes ``(task, gold, pred)`` with aligned lists of Examples (same length, same
order) and returns a :class:`~cblue_core.metrics.types.TaskScore`. ``promptcblue`` is scored
by :mod:`cblue_core.metrics.promptcblue` and is not in :data:`SCORERS`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ..records import Example
from ..tasks import TaskSpec, get_task
from . import cblue, cblue2, climedbench
from .bootstrap import bootstrap_intervals
from .types import TaskScore, metric_fn_for

__all__ = ["INTERVAL_METRICS", "SCORERS", "score", "scorer_for"]

Scorer = Callable[[TaskSpec, Sequence[Example], Sequence[Example]], TaskScore]

SCORERS: dict[str, Scorer] = {
    "spans": cblue.score_spans,
    "cmeie_triples": cblue.score_cmeie,
    "terms": cblue.score_terms,
    "macro_f1": cblue.score_macro_f1,
    "accuracy": cblue.score_accuracy,
    "events": cblue2.score_events,
    "dialogue_spans": cblue2.score_dialogue_spans,
    "dialogue_acts": cblue2.score_dialogue_acts,
    "dialogue_symptoms": cblue2.score_dialogue_symptoms,
    "report_rouge": cblue2.score_report_rouge,
    "generation_rouge": cblue2.score_generation_rouge,
    "mrr10": cblue2.score_mrr10,
    "text2dt": cblue2.score_text2dt,
    "causal_triples": cblue2.score_causal,
    "climedbench": climedbench.score_climedbench,
}

# Metrics that get an interval besides the headline, per statistics kind.
INTERVAL_METRICS = {"counts": ("precision", "recall", "f1"),
                    "labels": ("accuracy", "macro_f1"),
                    "scores": ()}


def scorer_for(task: TaskSpec | str) -> Scorer:
    spec = get_task(task) if isinstance(task, str) else task
    try:
        return SCORERS[spec.scorer]
    except KeyError:
        if spec.scorer == "promptcblue":
            raise KeyError(f"{spec.name} is scored by cblue_core.metrics.promptcblue") from None
        raise KeyError(f"no scorer {spec.scorer!r} for task {spec.name}") from None


def score(task: TaskSpec | str, gold: Sequence[Example], pred: Sequence[Example], *,
          intervals: bool = True, n_boot: int = 1000, seed: int = 0,
          alpha: float = 0.05) -> TaskScore:
    """Score aligned gold and predicted examples with the task's scorer.

    Args:
        task: the task, or its name (e.g. ``"CMeEE"``); PromptCBLUE is scored by
            :mod:`cblue_core.metrics.promptcblue` instead.
        gold: the gold examples.
        pred: the predictions, aligned with ``gold`` (same length and order).
        intervals: fill ``TaskScore.intervals`` with (1 - alpha) percentile bootstrap intervals
            for the headline metric, and P/R/F or accuracy / macro-F1 where the task has them.
        n_boot: the number of bootstrap resamples of the examples.
        seed: the seed of the resampling generator.
        alpha: 1 - the coverage of the intervals.

    Returns:
        The scorer's TaskScore (metrics on the 0-1 scale), with intervals when asked for.

    Raises:
        KeyError: for a task without a scorer here.

    Examples:
        >>> from cblue_core.records import Example
        >>> gold = [Example(str(i), i, label=x) for i, x in enumerate(["病因分析", "治疗方案", "其他", "其他"])]
        >>> pred = [Example(str(i), i, label=x) for i, x in enumerate(["病因分析", "治疗方案", "其他", "治疗方案"])]
        >>> ts = score("KUAKE-QIC", gold, pred, n_boot=200)
        >>> ts.headline, ts.value
        ('accuracy', 0.75)
        >>> low, high = ts.intervals["accuracy"]
        >>> 0.0 <= low <= 0.75 <= high <= 1.0
        True
    """
    spec = get_task(task) if isinstance(task, str) else task
    result = scorer_for(spec)(spec, list(gold), list(pred))
    if intervals and result.stats is not None and n_boot > 0:
        names = [result.headline] + [m for m in INTERVAL_METRICS.get(result.stats.kind, ())
                                     if m != result.headline and m in result.metrics]
        fns = {}
        for name in names:
            fn = metric_fn_for(result.stats, name)
            if fn is not None:
                fns[name] = fn
        if fns:
            result.intervals.update(bootstrap_intervals(result.stats, fns, n=n_boot, seed=seed,
                                                        alpha=alpha))
            result.extra["bootstrap"] = {"resamples": n_boot, "seed": seed, "alpha": alpha,
                                         "unit": "example"}
    return result
