"""The review queue: examples whose gold is worth a second look.

Four reasons, each scored on 0-1 (higher first):

- ``validation_defect`` (1.0): validation found a defect in the record (the dataset's stored
  validation report names ``record N``); an example edited since is checked again, so a fixed
  defect leaves the queue.
- ``all_runs_wrong``: every run on the split has an error on the example; score = the mean
  over runs of the share of the example's rows that are errors, times the run's confidence in
  its answer when it stores probabilities (the probability of its label, or the mean of its
  spans'), so that with one classifier run, whose every wrong example is all wrong, the
  confidently wrong come first instead of every example scoring 1.
- ``runs_disagree`` (two runs or more): 1 - the mean pairwise Jaccard agreement of the runs'
  predictions on the example.
- ``inconsistent_type``: a mention carries another type elsewhere in the split (entity types,
  CMeIE subject / object types); score = 1 - the share of this type among the mention's uses.

Runs are judged on the current gold: the stored error rows serve examples never edited, and
edited examples are re-scored.
"""
from __future__ import annotations

import logging
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

from ..io.codecs import DecodeContext, codec_for
from ..io.offsets import EXCLUSIVE, INCLUSIVE
from ..records import Example
from ..runs.evaluation import evaluate

log = logging.getLogger(__name__)
from ..tasks import get_task

REASONS = ("validation_defect", "all_runs_wrong", "runs_disagree", "inconsistent_type")
CORRECT = ("correct", "correct_term")
_RECORD = re.compile(r"\brecord (\d+)\b")


@dataclass(frozen=True)
class ReviewItem:
    idx: int
    reason: str
    score: float
    detail: str


def _prediction_items(ex: Example) -> frozenset:
    out: set = {("span", s.start, s.end, s.type) for s in ex.spans}
    out |= {("triple", t.subject, t.predicate, t.object) for t in ex.triples}
    out |= {("term", t) for t in ex.terms}
    if ex.label not in (None, ""):
        out.add(("label", ex.label))
    for n, turn in enumerate(ex.turns):
        out |= {("turn-span", n, s.start, s.end, s.type) for s in turn.spans}
        if turn.act:
            out.add(("act", n, turn.act))
    return frozenset(out)


def _jaccard(a: frozenset, b: frozenset) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def _summary(cats: Counter) -> str:
    return ", ".join(f"{c} ×{n}" for c, n in cats.most_common() if c not in CORRECT)


def validation_defects(ws, dataset_id: int, gold: list[Example], edited: set[int]) -> dict[int, list[str]]:
    """Defect messages per example: the stored report for untouched examples, a fresh check
    of the current gold for edited ones."""
    out: dict[int, list[str]] = defaultdict(list)
    for w in ws.datasets.report(dataset_id).get("warnings", []):
        m = _RECORD.search(w)
        if m and int(m.group(1)) not in edited:
            out[int(m.group(1))].append(w)
    if edited:
        info = ws.datasets.get(dataset_id)
        task = get_task(info.task)
        conv = info.offset_convention if info.offset_convention in (INCLUSIVE, EXCLUSIVE) else INCLUSIVE
        codec = codec_for(task)
        by_idx = {ex.index: ex for ex in gold}
        for i in sorted(edited):
            ex = by_idx.get(i)
            if ex is None:
                continue
            ctx = DecodeContext(info.name, task, conv, record=i)
            rec = ex.raw if ex.raw is not None else codec.encode(ex, task, conv)
            try:
                codec.decode(rec, i, ctx)
            except ValueError as exc:  # a record the codec cannot read back
                out[i].append(f"{info.name}, record {i}: {exc}")
                continue
            if ctx.warnings:
                out[i].extend(str(d) for d in ctx.warnings)
    return {i: msgs for i, msgs in out.items() if msgs}


def _short(warning: str) -> str:
    """The defect without the file name: 'record 3, field ...: message'."""
    m = _RECORD.search(warning)
    return warning[m.start():] if m else warning


def review_queue(ws, dataset_id: int, limit: int = 100, *,
                 reasons: Iterable[str] | None = None) -> list[ReviewItem]:
    """Examples worth a second look, best first (one item per example and reason)."""
    wanted = set(reasons) if reasons is not None else set(REASONS)
    unknown = wanted - set(REASONS)
    if unknown:
        raise ValueError(f"unknown review reason(s) {sorted(unknown)}; known: {', '.join(REASONS)}")
    info = ws.datasets.get(dataset_id)
    if info is None:
        raise ValueError(f"no dataset {dataset_id} in the workspace")
    task = get_task(info.task)
    gold = ws.annotations.gold_examples(dataset_id)
    edited = set(ws.annotations.edited_indices(dataset_id))
    items: list[ReviewItem] = []

    if "validation_defect" in wanted:
        for i, msgs in validation_defects(ws, dataset_id, gold, edited).items():
            items.append(ReviewItem(i, "validation_defect", 1.0, "; ".join(_short(m) for m in msgs)))

    runs = ws.runs.all(dataset_id) if wanted & {"all_runs_wrong", "runs_disagree"} else []
    if runs and "all_runs_wrong" in wanted:
        items.extend(_all_runs_wrong(ws, task, gold, edited, runs))
    if len(runs) >= 2 and "runs_disagree" in wanted:
        items.extend(_runs_disagree(ws, gold, runs))
    if "inconsistent_type" in wanted:
        items.extend(_inconsistent_types(gold))

    order = {r: n for n, r in enumerate(REASONS)}
    items.sort(key=lambda it: (-it.score, order[it.reason], it.idx))
    return items[:limit] if limit else items


def answer_confidence(pred: Example | None) -> float | None:
    """How sure a run's model is of its answer on one example, when it stores probabilities:
    the probability of its label, or the mean of its predicted spans' (None otherwise)."""
    if pred is None:
        return None
    dist = pred.meta.get("probabilities")
    if isinstance(dist, dict) and dist:
        return float(dist.get(pred.label, max(dist.values())))
    spans = pred.meta.get("span_probabilities")
    if isinstance(spans, list) and spans:
        return sum(float(p) for p in spans) / len(spans)
    return None


def _all_runs_wrong(ws, task, gold: list[Example], edited: set[int], runs) -> list[ReviewItem]:
    from ..runs.record import reference_lists  # cblue_core.runs imports the store

    refs = reference_lists(ws, task.name) if edited else {}
    per_run: list[tuple[dict[int, Counter], dict[int, Example]]] = []
    sub_gold = [g for g in gold if g.index in edited]
    for run in runs:
        counts = {i: Counter(c) for i, c in ws.runs.example_error_counts(run.run_id).items() if i not in edited}
        preds = {p.index: p for p in ws.runs.predictions(run.run_id)}
        if sub_gold:
            sub_pred = [preds.get(g.index) or Example(key=g.key, index=g.index, text=g.text)
                        for g in sub_gold]
            try:
                ev = evaluate(task, sub_gold, sub_pred, n_boot=0, **refs)
            except (ValueError, KeyError):  # a subset the scorer cannot judge: no rows to go by
                log.warning("re-scoring edited examples of run %s failed", run.run_id, exc_info=True)
                ev = None
            for row in (ev.error_rows if ev else []):
                i = sub_gold[row["idx"]].index
                counts.setdefault(i, Counter())[row["category"]] += 1
        per_run.append((counts, preds))
    out = []
    for g in gold:
        scores: list[float] = []
        known: list[float] = []
        cats: Counter[str] = Counter()
        for counts, preds in per_run:
            c = counts.get(g.index)
            if not c:
                break
            wrong = sum(n for k, n in c.items() if k not in CORRECT)
            if not wrong:
                break
            confidence = answer_confidence(preds.get(g.index))
            if confidence is not None:
                known.append(confidence)
            scores.append(wrong / sum(c.values()) * (1.0 if confidence is None else confidence))
            cats.update(c)
        else:
            if scores:
                sure = f"; model confidence in its answer {sum(known) / len(known):.2f}" if known else ""
                out.append(ReviewItem(g.index, "all_runs_wrong", round(sum(scores) / len(scores), 6),
                                      f"all {len(per_run)} run(s) wrong: {_summary(cats)}{sure}"))
    return out


def _runs_disagree(ws, gold: list[Example], runs) -> list[ReviewItem]:
    preds = [{p.index: _prediction_items(p) for p in ws.runs.predictions(r.run_id)} for r in runs]
    out = []
    for g in gold:
        sets = [p.get(g.index, frozenset()) for p in preds]
        pairs = list(combinations(sets, 2))
        agreement = sum(_jaccard(a, b) for a, b in pairs) / len(pairs)
        if agreement < 1.0:
            distinct = len(set(sets))
            out.append(ReviewItem(g.index, "runs_disagree", round(1.0 - agreement, 6),
                                  f"{distinct} different predictions from {len(runs)} runs "
                                  f"(mean pairwise agreement {agreement:.2f})"))
    return out


def _mentions(ex: Example) -> list[tuple[str, str]]:
    out = [(s.text, s.type) for s in ex.spans if s.text]
    for t in ex.triples:
        if t.subject and t.subject_type:
            out.append((t.subject, t.subject_type))
        if t.object and t.object_type:
            out.append((t.object, t.object_type))
    return out


def _inconsistent_types(gold: list[Example]) -> list[ReviewItem]:
    uses: dict[str, Counter] = defaultdict(Counter)
    per_example = []
    for g in gold:
        ms = list(dict.fromkeys(_mentions(g)))
        per_example.append((g.index, ms))
        for mention, typ in ms:
            uses[mention][typ] += 1
    out = []
    for idx, ms in per_example:
        best = None
        for mention, typ in ms:
            c = uses[mention]
            if len(c) < 2:
                continue
            score = 1.0 - c[typ] / sum(c.values())
            if best is None or score > best[0]:
                others = ", ".join(f"{t} ×{n}" for t, n in c.most_common() if t != typ)
                best = (score, f"{mention!r} is {typ} here; elsewhere {others}")
        if best is not None:
            out.append(ReviewItem(idx, "inconsistent_type", round(best[0], 6), best[1]))
    return out
