"""CBLUE 2.0 tasks: documented, sensible metrics.

The sources give no leaderboard metric for the CBLUE 2.0 tasks (docs/metrics.md section 2; the
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

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..records import Event, Example, Triple
from ..tasks import MRG_SECTIONS, TaskSpec
from .cblue import check_aligned, label_score, micro_from_sets
from .lcs import lcs_length
from .types import ExampleStats, TaskScore, evaluate, mean_score

__all__ = [
    "lcs_length",
    "reciprocal_rank",
    "rouge_l_f",
    "score_causal",
    "score_dialogue_acts",
    "score_dialogue_spans",
    "score_dialogue_symptoms",
    "score_events",
    "score_generation_rouge",
    "score_mrr10",
    "score_report_rouge",
    "score_text2dt",
    "turn_keys",
]

NO_LEADERBOARD = ("no leaderboard metric is published for this CBLUE 2.0 task: the metric below is "
                  "this project's documented choice (docs/metrics.md, section 2)")


# ---------------------------------------------------------------------- helpers

def turn_keys(gold: Example, pred: Example) -> tuple[list[str], list[str]]:
    """Keys matching the turns of two versions of one dialogue: the turn ids when every turn of
    both has a distinct non-empty id, else the positions.

    Args:
        gold: the gold dialogue.
        pred: the predicted version of the same dialogue.

    Returns:
        ``(gold turn keys, predicted turn keys)``.

    Examples:
        >>> from cblue_core.records import Example, Turn
        >>> g = Example("d", 0, turns=[Turn("医生", "你好", "1"), Turn("患者", "头痛", "2")])
        >>> turn_keys(g, Example("d", 0, turns=[Turn("患者", "头痛", "2")]))
        (['1', '2'], ['2'])
        >>> turn_keys(g, Example("d", 0, turns=[Turn("患者", "头痛")]))
        (['0', '1'], ['0'])
    """
    gi = [t.turn_id for t in gold.turns]
    pi = [t.turn_id for t in pred.turns]
    if all(gi) and all(pi) and len(set(gi)) == len(gi) and len(set(pi)) == len(pi):
        return gi, pi
    return [str(i) for i in range(len(gold.turns))], [str(i) for i in range(len(pred.turns))]


def _strip_ws(s: str) -> str:
    return "".join(s.split())


def rouge_l_f(pred: str, gold: str) -> float:
    """Character ROUGE-L F1, whitespace ignored.

    Args:
        pred: the generated text.
        gold: the reference text.

    Returns:
        2PR/(P+R) with P = LCS/len(pred) and R = LCS/len(gold) over characters; 1.0 when both
        texts are empty, 0.0 when exactly one is.

    Examples:
        >>> round(rouge_l_f("患者 发热咳嗽", "患者咳嗽三天"), 4)   # LCS 患者咳嗽: P = R = 4/6
        0.6667
        >>> rouge_l_f("", "  "), rouge_l_f("", "有")
        (1.0, 0.0)
    """
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
    """Reciprocal rank of the first relevant document among the top ``k``.

    Args:
        ranked: document ids, best first.
        relevant: the relevant document ids.
        k: how many ranks count.

    Returns:
        ``1 / rank`` of the first relevant document, 0.0 when none is in the top ``k``.

    Examples:
        >>> reciprocal_rank(["d1", "d2", "d3"], {"d2", "d3"})
        0.5
        >>> reciprocal_rank(["d1", "d2"], {"d2"}, k=1)
        0.0
    """
    for i, doc in enumerate(ranked[:k]):
        if doc in relevant:
            return 1.0 / (i + 1)
    return 0.0


def _scores_task(task: str, headline: str, scores: Sequence[float],
                 weights: Sequence[float] | None = None, notes: Iterable[str] = (),
                 extra: dict[str, Any] | None = None) -> TaskScore:
    stats = ExampleStats.from_scores(scores, weights, name=headline)
    return TaskScore(task, headline, {headline: evaluate(stats, mean_score)}, {}, stats,
                     list(notes), extra=extra or {"examples": len(scores)})


# ---------------------------------------------------------------------- set-based tasks

EventKey = tuple[str, str, tuple[str, ...], tuple[str, ...]]
TurnSpanKey = tuple[str, int, int, str]


def _event_key(e: Event) -> EventKey:
    return (e.core_name, e.tendency, tuple(sorted(e.character)), tuple(sorted(e.anatomy)))


def score_events(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """CHIP-CDEE: micro P/R/F over events (core_name, tendency, sorted character, sorted anatomy),
    exact match, repeats counted once; counts per tendency (empty tendency: ``肯定``).

    Args:
        task: the task (``get_task("CHIP-CDEE")``).
        gold: the gold examples (their ``events``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``f1``.

    Examples:
        >>> from cblue_core.records import Event, Example
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("e", 0, events=[Event("腹痛", "", ("剧烈",), ("腹",)), Event("发热", "否定")])]
        >>> pred = [Example("e", 0, events=[Event("腹痛", "", ("剧烈",), ("腹",))])]
        >>> ts = score_events(get_task("CHIP-CDEE"), gold, pred)
        >>> ts.metrics["precision"], ts.metrics["recall"], round(ts.value, 4)
        (1.0, 0.5, 0.6667)
        >>> ts.per_label
        {'否定': PRF(tp=0, fp=0, fn=1), '肯定': PRF(tp=1, fp=0, fn=0)}
    """
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, ("micro-F1 over events (core_name, "
                                         "tendency, sorted character, sorted anatomy), exact match")]
    gs = [{_event_key(e) for e in ex.events} for ex in gold]
    ps = [{_event_key(e) for e in ex.events} for ex in pred]
    return micro_from_sets(task.name, gs, ps, label_of=lambda k: k[1] or "肯定", notes=notes)


def _turn_span_sets(g: Example, p: Example) -> tuple[set[TurnSpanKey], set[TurnSpanKey]]:
    gk, pk = turn_keys(g, p)
    gs = {(k, s.start, s.end, s.type) for k, t in zip(gk, g.turns) for s in t.spans}
    ps = {(k, s.start, s.end, s.type) for k, t in zip(pk, p.turns) for s in t.spans}
    return gs, ps


def score_dialogue_spans(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """IMCS-V2-NER, CHIP-MDCFNPC: micro P/R/F over (turn, start, end, type) of the turns' spans,
    exact match (turns matched by :func:`turn_keys`); counts per type.

    Args:
        task: the task (``get_task("IMCS-V2-NER")`` or ``"CHIP-MDCFNPC"``).
        gold: the gold dialogues (their turns' ``spans``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``f1``.

    Examples:
        >>> from cblue_core.records import Example, Span, Turn
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("d", 0, turns=[Turn("患者", "头痛发热", "1",
        ...                                     spans=(Span(0, 2, "Symptom"), Span(2, 4, "Symptom")))])]
        >>> pred = [Example("d", 0, turns=[Turn("患者", "头痛发热", "1", spans=(Span(0, 2, "Symptom"),))])]
        >>> ts = score_dialogue_spans(get_task("IMCS-V2-NER"), gold, pred)
        >>> ts.metrics["precision"], ts.metrics["recall"], round(ts.value, 4)
        (1.0, 0.5, 0.6667)
    """
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, ("micro-F1 over (turn, start, end, type) "
                                         "of the turns' spans, exact match")]
    pairs = [_turn_span_sets(g, p) for g, p in zip(gold, pred)]
    return micro_from_sets(task.name, [a for a, _ in pairs], [b for _, b in pairs],
                           label_of=lambda k: k[3], notes=notes)


def score_dialogue_symptoms(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """IMCS-V2-SR: micro P/R/F over (turn, normalised symptom, status) of the turns; the
    dialogue-level implicit symptoms are not scored. Counts per status.

    Args:
        task: the task (``get_task("IMCS-V2-SR")``).
        gold: the gold dialogues (their turns' ``symptoms``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``f1``.

    Examples:
        >>> from cblue_core.records import Example, Turn
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("d", 0, turns=[Turn("患者", "头痛，不发热", "1", symptoms=(("头痛", "1"), ("发热", "0")))])]
        >>> pred = [Example("d", 0, turns=[Turn("患者", "头痛，不发热", "1", symptoms=(("头痛", "1"), ("发热", "1")))])]
        >>> score_dialogue_symptoms(get_task("IMCS-V2-SR"), gold, pred).metrics
        {'precision': 0.5, 'recall': 0.5, 'f1': 0.5}
    """
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, ("micro-F1 over (turn, normalised symptom, "
                                         "status); dialogue-level implicit symptoms not scored")]
    gs: list[set[tuple[str, str, str]]] = []
    ps: list[set[tuple[str, str, str]]] = []
    for g, p in zip(gold, pred):
        gk, pk = turn_keys(g, p)
        gs.append({(k, s, v) for k, t in zip(gk, g.turns) for s, v in t.symptoms})
        ps.append({(k, s, v) for k, t in zip(pk, p.turns) for s, v in t.symptoms})
    return micro_from_sets(task.name, gs, ps, label_of=lambda k: k[2], notes=notes)


def _triple_key(t: Triple) -> tuple[str, str, str]:
    return (t.subject, t.predicate, t.object)


def score_text2dt(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """Text2DT (proxy): micro P/R/F over the (subject, relation, object) triples of all tree nodes.
    The official metric (tree edit ratio) also scores roles, logical relations and the tree shape.

    Args:
        task: the task (``get_task("Text2DT")``).
        gold: the gold trees (their ``triples``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``f1`` and per-relation counts.

    Examples:
        >>> from cblue_core.records import Example, Triple
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("t", 0, triples=[Triple("膀胱炎", "治疗药物", "磷霉素"), Triple("患者", "基本情况", "妊娠")])]
        >>> pred = [Example("t", 0, triples=[Triple("膀胱炎", "治疗药物", "磷霉素")])]
        >>> round(score_text2dt(get_task("Text2DT"), gold, pred).value, 4)   # P = 1, R = 1/2
        0.6667
    """
    notes = check_aligned(gold, pred) + [
        NO_LEADERBOARD, ("proxy: micro-F1 over the (subject, relation, object) triples of all tree "
        "nodes; the official Text2DT metric (tree edit ratio) also scores roles, logical "
        "relations and the tree shape")]
    gs = [{_triple_key(t) for t in ex.triples} for ex in gold]
    ps = [{_triple_key(t) for t in ex.triples} for ex in pred]
    return micro_from_sets(task.name, gs, ps, label_of=lambda k: k[1], notes=notes)


def score_causal(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """CMedCausal: micro P/R/F over (head, relation, tail) triples, exact strings (a conditional
    relation's nested tail is one string); counts per relation.

    Args:
        task: the task (``get_task("CMedCausal")``).
        gold: the gold examples (their ``triples``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``f1``.

    Examples:
        >>> from cblue_core.records import Example, Triple
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("c", 0, triples=[Triple("饮酒", "1", "肝病")])]
        >>> pred = [Example("c", 0, triples=[Triple("饮酒", "1", "肝病"), Triple("肝病", "1", "饮酒")])]
        >>> ts = score_causal(get_task("CMedCausal"), gold, pred)
        >>> ts.metrics["precision"], ts.metrics["recall"], round(ts.value, 4)
        (0.5, 1.0, 0.6667)
    """
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, ("micro-F1 over (head, relation, tail) "
                                         "triples, exact strings; a conditional tail is the "
                                         "nested triple as one string")]
    gs = [{_triple_key(t) for t in ex.triples} for ex in gold]
    ps = [{_triple_key(t) for t in ex.triples} for ex in pred]
    return micro_from_sets(task.name, gs, ps, label_of=lambda k: k[1], notes=notes)


# ---------------------------------------------------------------------- dialogue acts

def score_dialogue_acts(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """IMCS-V2-DAC: accuracy and scikit-learn macro P/R/F over the acts of the turns that have a
    gold act (see :func:`~cblue_core.metrics.cblue.label_score`); dialogues are the bootstrap unit.

    Args:
        task: the task (``get_task("IMCS-V2-DAC")``).
        gold: the gold dialogues (their turns' ``act``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``accuracy``.

    Examples:
        >>> from cblue_core.records import Example, Turn
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("d", 0, turns=[Turn("医生", "哪里痛", "1", act="Request-Symptom"),
        ...                                Turn("患者", "头痛", "2", act="Inform-Symptom")])]
        >>> pred = [Example("d", 0, turns=[Turn("医生", "哪里痛", "1", act="Request-Symptom"),
        ...                                Turn("患者", "头痛", "2", act="Other")])]
        >>> ts = score_dialogue_acts(get_task("IMCS-V2-DAC"), gold, pred)
        >>> ts.value, round(ts.metrics["macro_f1"], 4)   # macro over 3 labels: (1 + 0 + 0) / 3
        (0.5, 0.3333)
    """
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, ("accuracy and scikit-learn macro-F1 over "
                                         "the acts of the turns with a gold act; dialogues are "
                                         "the bootstrap unit")]
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
    r"""Per-example IMCS-V2-MRG score and the per-section values it averages.

    When both reports parse into ``section：text`` lines, the score is the mean of
    :func:`rouge_l_f` over the sections non-empty on either side; otherwise the whole texts (or
    the section bodies of the side that has sections) are compared.

    Args:
        pred: the generated report.
        gold: the reference report.

    Returns:
        ``(score, {section: ROUGE-L F})``; the dict is empty when the texts were compared whole.

    Examples:
        >>> s, per = report_score("主诉：头痛\n诊断：头痛", "主诉：头痛\n诊断：偏头痛")
        >>> round(s, 4), {k: round(v, 4) for k, v in per.items()}   # 诊断: P = 1, R = 2/3
        (0.9, {'主诉': 1.0, '诊断': 0.8})
    """
    gs, ps = _sections(gold), _sections(pred)
    if gs is not None and ps is not None:
        per = {k: rouge_l_f(ps.get(k, ""), gs.get(k, "")) for k in MRG_SECTIONS
               if _strip_ws(gs.get(k, "")) or _strip_ws(ps.get(k, ""))}
        return (sum(per.values()) / len(per) if per else 1.0), per
    gtext = "".join(gs.values()) if gs is not None else gold
    ptext = "".join(ps.values()) if ps is not None else pred
    return rouge_l_f(ptext, gtext), {}


def score_report_rouge(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    r"""IMCS-V2-MRG: the mean over examples of :func:`report_score`, plus the mean per section.

    Args:
        task: the task (``get_task("IMCS-V2-MRG")``).
        gold: the gold examples (their ``target`` report).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``rouge_l`` and ``rouge_l[<section>]``.

    Examples:
        >>> from cblue_core.records import Example
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("r", 0, target="主诉：头痛\n诊断：偏头痛"), Example("s", 1, target="多喝水")]
        >>> pred = [Example("r", 0, target="主诉：头痛\n诊断：头痛"), Example("s", 1, target="多喝水")]
        >>> ts = score_report_rouge(get_task("IMCS-V2-MRG"), gold, pred)
        >>> {k: round(v, 4) for k, v in ts.metrics.items()}   # (0.9 + 1) / 2
        {'rouge_l': 0.95, 'rouge_l[主诉]': 1.0, 'rouge_l[诊断]': 0.8}
    """
    notes = check_aligned(gold, pred) + [
        NO_LEADERBOARD, ("character ROUGE-L F1 (whitespace ignored), per example the mean over the "
        "report sections non-empty on either side; whole texts when a report has no sections")]
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
    """MedDG: character ROUGE-L F1 (:func:`rouge_l_f`) of each generated text against its
    reference, averaged over examples.

    Args:
        task: the task (``get_task("MedDG")``).
        gold: the gold examples (their ``target``).
        pred: the predictions, aligned with ``gold``.

    Returns:
        A TaskScore with headline ``rouge_l``.

    Examples:
        >>> from cblue_core.records import Example
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("m", 0, target="多喝温水"), Example("n", 1, target="休息")]
        >>> pred = [Example("m", 0, target="多喝水"), Example("n", 1, target="休息")]
        >>> round(score_generation_rouge(get_task("MedDG"), gold, pred).value, 4)   # (6/7 + 1) / 2
        0.9286
    """
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, ("character ROUGE-L F1 (whitespace ignored) "
                                         "of the generated text against the reference, averaged")]
    scores = [rouge_l_f(p.target, g.target) for g, p in zip(gold, pred)]
    return _scores_task(task.name, "rouge_l", scores, notes=notes)


# ---------------------------------------------------------------------- retrieval

def score_mrr10(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """KUAKE-IR: MRR@10, the reciprocal rank of the first relevant passage among the top 10
    predicted (0 when none), averaged over the queries that have a relevant passage.

    Args:
        task: the task (``get_task("KUAKE-IR")``).
        gold: the queries, their relevant passage ids in ``terms``.
        pred: the predictions, aligned with ``gold``: ranked passage ids in ``terms``.

    Returns:
        A TaskScore with headline ``mrr@10`` and ``hits@10`` in ``extra``.

    Examples:
        >>> from cblue_core.records import Example
        >>> from cblue_core.tasks import get_task
        >>> gold = [Example("q1", 0, terms=["d2"]), Example("q2", 1, terms=["d9"]), Example("q3", 2)]
        >>> pred = [Example("q1", 0, terms=["d1", "d2"]), Example("q2", 1, terms=["d1"]), Example("q3", 2)]
        >>> ts = score_mrr10(get_task("KUAKE-IR"), gold, pred)   # q3 has no relevant passage
        >>> ts.value, ts.extra["scored"], ts.extra["hits@10"]
        (0.25, 2, 0.5)
    """
    notes = check_aligned(gold, pred) + [NO_LEADERBOARD, ("MRR@10: reciprocal rank of the first "
                                         "relevant passage in the top 10 predicted (0 if none), "
                                         "averaged over the queries with a relevant passage")]
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
