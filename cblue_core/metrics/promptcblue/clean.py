"""Clean PromptCBLUE scoring: the official parse, scored with plain, documented metrics.

The structured answers are exactly those of the official post-processor (:mod:`.parse`); only
the scoring differs. Scores are on the 0-1 scale in :class:`CleanTaskScore` (``.score`` is
0-100). How each task kind differs from the official scorer (:mod:`.official`):

**IE tasks** (CMeEE-V2, CMeIE-V2, CHIP-CDN, CHIP-CDEE, IMCS-V2-NER, CHIP-MDCFNPC, IMCS-V2-SR,
CMedCausal): true micro P/R/F1 over per-sample sets of instances, summed over samples.

* An instance is compared as a whole dict: key names count (official: only the values, in
  sorted-key order), nested dict key order does not (official: it does), and list values are
  compared as multisets (official: in order, so ``描述词 [a, b]`` != ``[b, a]``).
* Instances whose values are all empty (``""``/``[]``/None) are dropped on both sides: the
  all-empty CHIP-CDEE event that a blank or trailing line produces is a parse artefact.
* F1 = 2TP/(2TP+FP+FN). When gold and prediction are empty in every sample (TP=FP=FN=0)
  P = R = F1 = 1.0 (official: integer 0); any other 0/0 is 0.0.

**Classification** (CHIP-CTC, KUAKE-QIC, IMCS-V2-DAC, CHIP-STS, KUAKE-IR, KUAKE-QQR, KUAKE-QTR):
no empty -> first-label fallback (an empty prediction is simply wrong); classes are the
task's fixed label list (``tasks.CLS_LABELS``, plus any gold label outside it).

* ``accuracy`` = share of exact matches.
* ``micro_f1``: TP/FP/FN summed over the classes; a prediction outside the label list is an
  error (FN for the gold class) but not a false positive of any class, so micro-P can exceed
  micro-R. (Official "Micro-F1" of STS/IR/QQR/QTR is scikit-learn's *weighted* F1.)
* ``macro_f1``: mean per-class F1 = 2tp/(2tp+fp+fn) over the fixed classes that occur in the
  gold or the predictions (official: over the union of gold and predicted strings, so an
  invented label becomes a class).
* Main metric: ``macro_f1`` for CTC/QIC/DAC, ``micro_f1`` for STS/IR/QQR/QTR.
* ``invalid``: number of predictions outside the label list.

**ROUGE** (MedDG; IMCS-V2-MRG per gold section, as official): same BasicTokenizer tokens, no
``"无 。"`` substitution and no 1e-8 in the denominator (a perfect answer scores 1.0).
ROUGE-L F = 2·LCS/(len(hyp)+len(ref)); ROUGE-1/2 use clipped n-gram *counts* (official:
sets of unique n-grams). Both texts empty: 1.0; exactly one empty: 0.0; no n-grams on
either side (one-token texts for ROUGE-2): 1.0 if the token lists are equal, else 0.0.
The main metric is the mean ROUGE-L F.

**Text2DT**: same tree comparison, but malformed triples/nodes are dropped instead of failing,
an empty tree is the parser's default node, the counts start at 0 (official: 1e-6) and are
not smoothed, ``tree_edit_ratio`` = max(0, 1 − Σdistance/Σmaximum) (1.0 when both sums are 0,
0.0 when only the maximum is), and node/path/triple F1 = 2c/(p+g) (1.0 when p+g = 0).

**Parse failures** are counted per task (see :class:`~.parse.ParseIssue`): ``error`` (the
official post-processor would crash; the line was skipped), ``dropped`` (content silently
ignored) and ``invalid`` (a value outside the allowed options).

**Overall**: the mean of the main metrics of the tasks that have samples (official: the mean
over all 18 tasks, failing when one is missing).
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .basic_tokenizer import basic_tokenize
from .rouge import RougeF, lcs_length
from .tasks import CLS_LABELS, MACRO_CLS_TASKS, SCORER_TASKS, canonical_task, task_kind
from .text2dt import TreeCounts, sanitize_tree, tree_counts

__all__ = [
    "CleanScore",
    "CleanTaskScore",
    "clean_instance_key",
    "clean_metric_from_stats",
    "clean_rouge",
    "clean_sample_stats",
    "clean_scores",
    "clean_task_score",
]


@dataclass(frozen=True)
class CleanTaskScore:
    task: str
    metric: str                 # key of the main metric in ``details``
    details: dict[str, float]
    n: int                      # number of samples

    @property
    def value(self) -> float:
        return self.details[self.metric]

    @property
    def score(self) -> float:
        return self.value * 100

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "score": self.score, "n": self.n, **self.details}


@dataclass(frozen=True)
class CleanScore:
    per_task: dict[str, CleanTaskScore]
    parse_issues: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def score(self) -> float | None:
        """Mean of the per-task main metrics, 0-100; None when no task was scored."""
        if not self.per_task:
            return None
        return sum(s.value for s in self.per_task.values()) / len(self.per_task) * 100

    def to_json(self) -> dict[str, Any]:
        return {"score": self.score, "tasks": {t: s.to_json() for t, s in self.per_task.items()},
                "parse_failures": {t: dict(c) for t, c in self.parse_issues.items()}}


# --------------------------------------------------------------------------- IE


def _canon(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _canon(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_canon(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True))
    return value


def _is_empty_instance(inst: Mapping[str, Any]) -> bool:
    return all(v in ("", None) or v == [] for v in inst.values())


def clean_instance_key(inst: Any) -> str:
    """A whole instance, keys included, nested dicts key-sorted, lists order-free."""
    if not isinstance(inst, dict):
        raise TypeError(f"an IE instance must be a dict, not {type(inst).__name__}")
    return json.dumps(_canon(inst), ensure_ascii=False, sort_keys=True)


def _instance_set(answer: Any) -> set[str]:
    if not isinstance(answer, list):
        return set()
    return {clean_instance_key(i) for i in answer if isinstance(i, dict) and not _is_empty_instance(i)}


def _ratio(num: float, den: float, all_empty: bool) -> float:
    if den:
        return num / den
    return 1.0 if all_empty else 0.0


def _ie_metric(stats: Sequence[tuple[Any, ...]]) -> dict[str, float]:
    tp = sum(s[0] for s in stats)
    fp = sum(s[1] for s in stats)
    fn = sum(s[2] for s in stats)
    empty = tp + fp + fn == 0
    return {"precision": _ratio(tp, tp + fp, empty), "recall": _ratio(tp, tp + fn, empty),
            "f1": _ratio(2 * tp, 2 * tp + fp + fn, empty), "tp": tp, "fp": fp, "fn": fn}


# --------------------------------------------------------------------------- classification


def _cls_metric(task: str, stats: Sequence[tuple[Any, ...]]) -> dict[str, float]:
    n = len(stats)
    if n == 0:
        raise ValueError(f"{task}: no samples to score")
    labels = list(CLS_LABELS[task])
    for g, _ in stats:
        if g not in labels:
            labels.append(g)
    fixed = set(CLS_LABELS[task])
    tp_sum = fp_sum = fn_sum = 0
    f1s = []
    for c in labels:
        tp = sum(1 for g, p in stats if g == c and p == c)
        fp = sum(1 for g, p in stats if p == c and g != c)
        fn = sum(1 for g, p in stats if g == c and p != c)
        tp_sum, fp_sum, fn_sum = tp_sum + tp, fp_sum + fp, fn_sum + fn
        if tp + fp + fn:
            f1s.append(2 * tp / (2 * tp + fp + fn))
    correct = sum(1 for g, p in stats if g == p)
    return {
        "accuracy": correct / n,
        "micro_precision": tp_sum / (tp_sum + fp_sum) if tp_sum + fp_sum else 0.0,
        "micro_recall": tp_sum / (tp_sum + fn_sum) if tp_sum + fn_sum else 0.0,
        "micro_f1": 2 * tp_sum / (2 * tp_sum + fp_sum + fn_sum) if tp_sum + fp_sum + fn_sum else 1.0,
        "macro_f1": sum(f1s) / len(f1s) if f1s else 1.0,
        "invalid": sum(1 for _, p in stats if not (isinstance(p, str) and p in fixed)),
    }


# --------------------------------------------------------------------------- ROUGE


def _ngram_f1(hyp: list[str], ref: list[str], n: int) -> float:
    h = Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1))
    r = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
    total = sum(h.values()) + sum(r.values())
    if total == 0:
        return 1.0 if hyp == ref else 0.0
    return 2 * sum((h & r).values()) / total


def clean_rouge(hyp: str, ref: str) -> RougeF:
    """Plain ROUGE-1/2/L F1 on BasicTokenizer tokens (see the module doc)."""
    h, r = basic_tokenize(hyp), basic_tokenize(ref)
    if not h and not r:
        return RougeF(1.0, 1.0, 1.0)
    if not h or not r:
        return RougeF(0.0, 0.0, 0.0)
    return RougeF(_ngram_f1(h, r, 1), _ngram_f1(h, r, 2), 2 * lcs_length(h, r) / (len(h) + len(r)))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _rouge_metric(stats: Sequence[tuple[Any, ...]]) -> dict[str, float]:
    pairs = [r for s in stats for r in s]
    if not pairs:
        raise ValueError("no text pairs to score")
    return {"rouge1": sum(p[0] for p in pairs) / len(pairs), "rouge2": sum(p[1] for p in pairs) / len(pairs),
            "rougeL": sum(p[2] for p in pairs) / len(pairs), "pairs": len(pairs)}


# --------------------------------------------------------------------------- Text2DT


class CleanTreeStats(NamedTuple):
    counts: TreeCounts
    dropped: int


def _tree_metric(stats: Sequence[tuple[Any, ...]]) -> dict[str, float]:
    if not stats:
        raise ValueError("no trees to score")
    tot = [sum(s[0][i] for s in stats) for i in range(12)]
    c = TreeCounts(*tot)
    edit, max_edit = c.edit_dis, sum(TreeCounts(*s[0]).max_edit for s in stats)
    if max_edit:
        ratio = max(0.0, 1 - edit / max_edit)
    else:
        ratio = 1.0 if edit == 0 else 0.0

    def f1(correct: int, pred: int, gold: int) -> float:
        return 2 * correct / (pred + gold) if pred + gold else 1.0

    return {"tree_edit_ratio": ratio, "node_f1": f1(c.correct_node, c.predict_node, c.gold_node),
            "path_f1": f1(c.correct_path, c.predict_path, c.gold_path),
            "triplet_f1": f1(c.correct_triplet, c.predict_triplet, c.gold_triplet),
            "tree_acc": c.correct_tree / len(stats), "dropped": sum(s[1] for s in stats)}


# --------------------------------------------------------------------------- per task

_MAIN = {"ie": "f1", "nlg": "rougeL", "nlg_sections": "rougeL", "tree": "tree_edit_ratio"}


def _main_metric(task: str) -> str:
    kind = task_kind(task)
    if kind == "cls":
        return "macro_f1" if task in MACRO_CLS_TASKS else "micro_f1"
    return _MAIN[kind]


def clean_sample_stats(task: str, gold: Sequence[Mapping[str, Any]],
                       pred: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """One clean-mode statistic per sample: ``(tp, fp, fn)`` for IE, ``(gold, pred)`` for
    classification, a tuple of :class:`~.rouge.RougeF` for ROUGE tasks, ``CleanTreeStats``
    for Text2DT. Samples are aligned by position and must carry the same ``sample_id``."""
    task = canonical_task(task)
    kind = task_kind(task)
    if len(gold) != len(pred):
        raise ValueError(f"{task}: {len(gold)} gold vs {len(pred)} predicted samples")
    out: list[tuple[Any, ...]] = []
    for g, p in zip(gold, pred):
        if g.get("sample_id") != p.get("sample_id"):
            raise ValueError(f"{task}: sample ids differ: {g.get('sample_id')!r} vs {p.get('sample_id')!r}")
        ga, pa = g["answer"], p.get("answer")
        if kind == "ie":
            gs, ps = _instance_set(ga), _instance_set(pa)
            out.append((len(gs & ps), len(ps - gs), len(gs - ps)))
        elif kind == "cls":
            out.append((ga, pa))
        elif kind == "nlg":
            out.append((clean_rouge(_text(pa), _text(ga)),))
        elif kind == "nlg_sections":
            pd = pa if isinstance(pa, dict) else {}
            out.append(tuple(clean_rouge(_text(pd.get(k, "")).strip(), _text(v).strip()) for k, v in ga.items()))
        else:
            gt, gd = sanitize_tree(ga)
            pt, pdrop = sanitize_tree(pa)
            out.append(CleanTreeStats(tree_counts(pt, gt), gd + pdrop))
    return out


def clean_metric_from_stats(task: str, stats: Sequence[tuple[Any, ...]]) -> CleanTaskScore:
    """The clean task score from per-sample statistics (any subset or resample)."""
    task = canonical_task(task)
    kind = task_kind(task)
    if kind == "ie":
        details = _ie_metric(stats)
    elif kind == "cls":
        details = _cls_metric(task, stats)
    elif kind in ("nlg", "nlg_sections"):
        details = _rouge_metric(stats)
    else:
        details = _tree_metric(stats)
    return CleanTaskScore(task=task, metric=_main_metric(task), details=details, n=len(stats))


def clean_task_score(task: str, gold: Sequence[Mapping[str, Any]],
                     pred: Sequence[Mapping[str, Any]]) -> CleanTaskScore:
    return clean_metric_from_stats(task, clean_sample_stats(task, gold, pred))


def clean_scores(gold: Mapping[str, Sequence[Mapping[str, Any]]],
                 pred: Mapping[str, Sequence[Mapping[str, Any]]],
                 *, tasks: Sequence[str] | None = None,
                 parse_issues: Mapping[str, Mapping[str, int]] | None = None) -> CleanScore:
    """Clean scores of every task that has gold samples (or of ``tasks``), scorer order.

    ``gold``/``pred`` are ``results.json``-shaped dicts (either task naming).
    """
    gold = {canonical_task(k): v for k, v in gold.items()}
    pred = {canonical_task(k): v for k, v in pred.items()}
    chosen = None if tasks is None else {canonical_task(t) for t in tasks}
    wanted = [t for t in SCORER_TASKS if (t in chosen if chosen is not None else gold.get(t))]
    per_task = {t: clean_task_score(t, gold.get(t, []), pred.get(t, [])) for t in wanted}
    issues = {t: dict(parse_issues[t]) for t in wanted if parse_issues and t in parse_issues}
    return CleanScore(per_task=per_task, parse_issues=issues)
