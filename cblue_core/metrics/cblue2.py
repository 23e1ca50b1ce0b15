"""CBLUE 2.0 tasks: documented, sensible metrics.

The sources give no leaderboard metric for the CBLUE 2.0 tasks (benchmarks.md 1.4; the
registry's ``metric`` strings are descriptive), so every TaskScore here says so in its notes.
Choices:

* **CHIP-CDEE** (``events``): micro P/R/F over events, an event being
  (core_name, tendency, sorted character, sorted anatomy), exact match, repeats counted once;
  per tendency counts.
* **IMCS-V2-NER / CHIP-MDCFNPC** (``dialogue_spans``): micro P/R/F over
  (turn, start, end, type) of the turns' spans (for CHIP-MDCFNPC the type is the attribute);
  per type counts.
* **IMCS-V2-DAC** (``dialogue_acts``): accuracy and scikit-learn macro P/R/F over the acts of
  the turns that have a gold act; the bootstrap resamples dialogues.
* **IMCS-V2-SR** (``dialogue_symptoms``): micro P/R/F over (turn, normalised symptom, status);
  the dialogue-level implicit symptoms are not scored. Per status counts.
* **IMCS-V2-MRG / MedDG** (``report_rouge`` / ``generation_rouge``): character ROUGE-L F1
  (LCS over characters, whitespace removed; F = 2PR/(P+R); 1.0 when both texts are empty,
  0.0 when exactly one is), averaged over examples. For MRG, when both reports parse into the
  ``section：text`` lines the reader writes, an example scores the mean over the six sections
  that are non-empty on either side (section names excluded from the comparison); otherwise the
  section bodies (or raw texts) are compared whole.
* **KUAKE-IR** (``mrr10``): mean reciprocal rank of the first relevant passage in the top 10
  of ``pred.terms`` (0 when none), over the queries that have at least one relevant passage
  in ``gold.terms``.
* **Text2DT** (``text2dt``): micro P/R/F over the (subject, relation, object) triples of all the
  tree's nodes, a simple proxy: the official metric (tree edit ratio) also scores node roles,
  logical relations and tree shape.
* **CMedCausal** (``causal_triples``): micro P/R/F over (head, relation, tail) triples, a
  conditional relation's nested tail written as one string by the reader; per relation counts.

Turns are matched by ``turn_id`` when every turn of both dialogues has a distinct id, else by
position.
"""
from __future__ import annotations

from .lcs import lcs_length  # noqa: F401  (re-exported: part of this module's API)

from typing import Sequence

import numpy as np

from ..records import Example
from ..tasks import MRG_SECTIONS, TaskSpec
from .cblue import check_aligned, label_score, micro_from_sets
from .types import ExampleStats, TaskScore, evaluate, mean_score

__all__ = ["score_events", "score_dialogue_spans", "score_dialogue_acts", "score_dialogue_symptoms",
           "score_report_rouge", "score_generation_rouge", "score_mrr10", "score_text2dt",
           "score_causal", "lcs_length", "rouge_l_f", "turn_keys", "reciprocal_rank"]

NO_LEADERBOARD = ("no leaderboard metric is published for this CBLUE 2.0 task (benchmarks.md "
                  "1.4): the metric below is this project's documented choice")


# ---------------------------------------------------------------------- helpers

def turn_keys(gold: Example, pred: Example) -> tuple[list[str], list[str]]:
    """Keys matching the turns of two versions of one dialogue: the turn ids when every turn of
    both has a distinct non-empty id, else the positions."""
    gi = [t.turn_id for t in gold.turns]
    pi = [t.turn_id for t in pred.turns]
    if all(gi) and all(pi) and len(set(gi)) == len(gi) and len(set(pi)) == len(pi):
        return gi, pi
    return [str(i) for i in range(len(gold.turns))], [str(i) for i in range(len(pred.turns))]


def _strip_ws(s: str) -> str:
    return "".join(s.split())


def rouge_l_f(pred: str, gold: str) -> float:
    """Character ROUGE-L F1, whitespace ignored (1.0 for two empty texts, 0.0 for one)."""
    p, g = _strip_ws(pred), _strip_ws(gold)
    if not p and not g:
        return 1.0
    if not p or not g:
        return 0.0
    lcs = lcs_length(p, g)
    if lcs == 0:
        return 0.0
    prec, rec = lcs / len(p), lcs / len(g)
    return 2 * prec * rec / (prec + rec)


def reciprocal_rank(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    for i, doc in enumerate(ranked[:k]):
        if doc in relevant:
            return 1.0 / (i + 1)
    return 0.0


def _scores_task(task: str, headline: str, scores, weights=None, notes=(), extra=None) -> TaskScore:
    stats = ExampleStats.from_scores(scores, weights, name=headline)
    return TaskScore(task, headline, {headline: evaluate(stats, mean_score)}, {}, stats,
                     list(notes), extra=extra or {"examples": len(scores)})


# ---------------------------------------------------------------------- set-based tasks

def _event_key(e) -> tuple:
    return (e.core_name, e.tendency, tuple(sorted(e.character)), tuple(sorted(e.anatomy)))


def score_events(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, "micro-F1 over events (core_name, "
                                         "tendency, sorted character, sorted anatomy), exact match"]
    gs = [{_event_key(e) for e in ex.events} for ex in gold]
    ps = [{_event_key(e) for e in ex.events} for ex in pred]
    return micro_from_sets(task.name, gs, ps, label_of=lambda k: k[1] or "肯定", notes=notes)


def _turn_span_sets(g: Example, p: Example) -> tuple[set, set]:
    gk, pk = turn_keys(g, p)
    gs = {(k, s.start, s.end, s.type) for k, t in zip(gk, g.turns) for s in t.spans}
    ps = {(k, s.start, s.end, s.type) for k, t in zip(pk, p.turns) for s in t.spans}
    return gs, ps


def score_dialogue_spans(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, "micro-F1 over (turn, start, end, type) "
                                         "of the turns' spans, exact match"]
    pairs = [_turn_span_sets(g, p) for g, p in zip(gold, pred)]
    return micro_from_sets(task.name, [a for a, _ in pairs], [b for _, b in pairs],
                           label_of=lambda k: k[3], notes=notes)


def score_dialogue_symptoms(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, "micro-F1 over (turn, normalised symptom, "
                                         "status); dialogue-level implicit symptoms not scored"]
    gs, ps = [], []
    for g, p in zip(gold, pred):
        gk, pk = turn_keys(g, p)
        gs.append({(k, s, v) for k, t in zip(gk, g.turns) for s, v in t.symptoms})
        ps.append({(k, s, v) for k, t in zip(pk, p.turns) for s, v in t.symptoms})
    return micro_from_sets(task.name, gs, ps, label_of=lambda k: k[2], notes=notes)


def _triple_key(t) -> tuple[str, str, str]:
    return (t.subject, t.predicate, t.object)


def score_text2dt(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred) + [
        NO_LEADERBOARD, "proxy: micro-F1 over the (subject, relation, object) triples of all tree "
        "nodes; the official Text2DT metric (tree edit ratio) also scores roles, logical "
        "relations and the tree shape"]
    gs = [{_triple_key(t) for t in ex.triples} for ex in gold]
    ps = [{_triple_key(t) for t in ex.triples} for ex in pred]
    return micro_from_sets(task.name, gs, ps, label_of=lambda k: k[1], notes=notes)


def score_causal(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, "micro-F1 over (head, relation, tail) "
                                         "triples, exact strings; a conditional tail is the "
                                         "nested triple as one string"]
    gs = [{_triple_key(t) for t in ex.triples} for ex in gold]
    ps = [{_triple_key(t) for t in ex.triples} for ex in pred]
    return micro_from_sets(task.name, gs, ps, label_of=lambda k: k[1], notes=notes)


# ---------------------------------------------------------------------- dialogue acts

def score_dialogue_acts(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, "accuracy and scikit-learn macro-F1 over "
                                         "the acts of the turns with a gold act; dialogues are "
                                         "the bootstrap unit"]
    g_lab: list[str] = []
    p_lab: list[str | None] = []
    unit: list[int] = []
    for i, (g, p) in enumerate(zip(gold, pred)):
        gk, pk = turn_keys(g, p)
        pacts = {k: t.act for k, t in zip(pk, p.turns)}
        for k, t in zip(gk, g.turns):
            if t.act:
                g_lab.append(t.act)
                p_lab.append(pacts.get(k) or None)
                unit.append(i)
    ts = label_score(task.name, g_lab, p_lab, "accuracy", notes, unit=unit, n_examples=len(gold))
    return ts


# ---------------------------------------------------------------------- generation

def _sections(text: str) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if "：" in line:
            k, v = line.split("：", 1)
            if k.strip() in MRG_SECTIONS:
                out[k.strip()] = v
    return out or None


def report_score(pred: str, gold: str) -> tuple[float, dict[str, float]]:
    """Per-example MRG score and the per-section values it averages."""
    gs, ps = _sections(gold), _sections(pred)
    if gs is not None and ps is not None:
        per = {k: rouge_l_f(ps.get(k, ""), gs.get(k, "")) for k in MRG_SECTIONS
               if _strip_ws(gs.get(k, "")) or _strip_ws(ps.get(k, ""))}
        return (sum(per.values()) / len(per) if per else 1.0), per
    gtext = "".join(gs.values()) if gs is not None else gold
    ptext = "".join(ps.values()) if ps is not None else pred
    return rouge_l_f(ptext, gtext), {}


def score_report_rouge(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred) + [
        NO_LEADERBOARD, "character ROUGE-L F1 (whitespace ignored), per example the mean over the "
        "report sections non-empty on either side; whole texts when a report has no sections"]
    scores = []
    section_vals: dict[str, list[float]] = {k: [] for k in MRG_SECTIONS}
    for g, p in zip(gold, pred):
        s, per = report_score(p.target, g.target)
        scores.append(s)
        for k, v in per.items():
            section_vals[k].append(v)
    ts = _scores_task(task.name, "rouge_l", scores, notes=notes)
    for k, vals in section_vals.items():
        if vals:
            ts.metrics[f"rouge_l[{k}]"] = float(np.mean(vals))
    return ts


def score_generation_rouge(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, "character ROUGE-L F1 (whitespace ignored) "
                                         "of the generated text against the reference, averaged"]
    scores = [rouge_l_f(p.target, g.target) for g, p in zip(gold, pred)]
    return _scores_task(task.name, "rouge_l", scores, notes=notes)


# ---------------------------------------------------------------------- retrieval

def score_mrr10(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, "MRR@10: reciprocal rank of the first "
                                         "relevant passage in the top 10 predicted (0 if none), "
                                         "averaged over the queries with a relevant passage"]
    rr, w = [], []
    for g, p in zip(gold, pred):
        rel = {d.strip() for d in g.terms if d.strip()}
        rr.append(reciprocal_rank([d.strip() for d in p.terms], rel) if rel else 0.0)
        w.append(1.0 if rel else 0.0)
    skipped = int(len(w) - sum(w))
    if skipped:
        notes.append(f"{skipped} quer(ies) without a relevant passage not scored")
    extra = {"examples": len(rr), "scored": len(rr) - skipped,
             "hits@10": float(np.mean([r > 0 for r, x in zip(rr, w) if x])) if len(rr) > skipped else 0.0}
    return _scores_task(task.name, "mrr@10", rr, w, notes, extra)
