"""CliMedBench scoring on files users bring (the questions are not public; docs/metrics.md section 4).

Gold examples come from the CliMedBench codec (scenario in ``meta["scenario"]`` / ``label``,
reference in ``target``, options in ``meta["options"]``); predictions are Examples whose
``target`` holds the model's raw text (matched by id before). The paper's exact answer
extraction, tau variant and similarity model are not available, so the choices below are this
project's, documented and tested:

**Single-letter answers** (ID1-4, BKT, FTT, DS, CS): :func:`extract_choice`, text first
NFKC-normalised (full-width letters and punctuation become ASCII), valid letters = the option
keys (A-E when there are no options). Rules, first success wins:

1. an explicit marker then one letter: ``答案：B``, ``正确答案是B``, ``答案为（C）``, ``答：D``,
   ``选B`` / ``选择B`` / ``应选B`` (not ``不选A``), ``Answer: B``, ``the answer is B``; with
   several markers, the last one (models conclude at the end); lower-case letters only after
   the Chinese markers;
2. the whole answer is one letter, possibly bracketed or followed by punctuation: ``B``,
   ``(B)``, ``B.``;
3. the answer starts with a letter and a delimiter: ``B. 肺炎``, ``(B) 肺炎``, ``B、肺炎``,
   ``B 肺炎``;
4. exactly one distinct bracketed letter anywhere: ``我认为是(C)``;
5. exactly one distinct stand-alone letter anywhere (not inside a Latin word): ``应该是B选项``;
6. exactly one option text occurs in the answer (longest texts first, an option contained in
   another matched one ignored): ``肺炎`` when option B is 肺炎.

A letter followed by a conjunction and another letter (``A和B``, ``A、B``, ``A or B``) is never
taken; negated mentions (``不选A``, ``不是B``, ``排除C``) are ignored by rules 2-6; several distinct letters without a marker, or nothing at all, give None. A None counts
as wrong and is reported (``extra["extraction_failures"]``).

**Orders** (SSO, CPR): :func:`extract_order` finds runs of at least two capital letters joined
by nothing, spaces, commas, ``、``, ``;``, ``>``, ``-``, ``->``, ``=>`` or ``→`` (``DCBA``,
``D C B A``, ``D→C→B→A``, ``D, C, B, A``); it prefers the first run after the last marker
(顺序, 排序, 答案, order, answer, sequence), else the longest run (the last of equals). Letters
outside the reference's letters are dropped, repeats keep their first place. Fewer than two
letters: None.

**Kendall's tau-b** (:func:`kendall_tau_b`, ties handled) between the reference positions and
the predicted positions of the reference's letters: letters missing from the prediction tie
for the last place (so a partial order is credited for what it orders and penalised by the
ties); an extraction failure, or a prediction sharing no letter with the reference, scores -1.
Tau is on -1..1 and enters the overall mean as it is.

**KE**: ROUGE-1 F1 on characters (clipped unigram counts), whitespace and punctuation removed
from both sides. **FIT / WTD / MC** (free-text references): character ROUGE-L F1
(whitespace removed), as :func:`cblue_core.metrics.cblue2.rouge_l_f`.

Metrics: ``scenario:<code>`` (mean per scenario), ``dimension:<name>`` (accuracy pooled over
the letter-answer items of that dimension), ``overall`` (mean over the scenarios present, the
headline) and ``extraction_failure_rate`` (over letter and order items).
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

import numpy as np

from ..records import Example
from ..tasks import CLIMEDBENCH_SCENARIOS, TaskSpec
from .cblue import check_aligned
from .cblue2 import rouge_l_f
from .types import ExampleStats, TaskScore, evaluate, group_mean, one_group_mean

__all__ = [
    "extract_choice",
    "extract_order",
    "item_score",
    "kendall_tau_b",
    "order_tau",
    "rouge1_char_f",
    "score_climedbench",
]


class ItemScore(TypedDict):
    """One item's result (see :func:`item_score`)."""

    scenario: str
    metric: str
    score: float | None       # None: the reference gives no letter/order to score against
    extracted: str | None
    failed: bool              # no letter/order could be extracted from the answer

SCENARIOS = {s.code: s for s in CLIMEDBENCH_SCENARIOS}
DEFAULT_LETTERS = "ABCDE"

_CONJ = r"\s*(?:和|与|及|或|或者|、|,|/|&|and|or)\s*"
_OPEN = r"[\(\[【<《]"
_CLOSE = r"[\)\]】>》]"
_NEG = r"(?:不应该选|不应选|不选|不是|并非|排除|除了|除)"


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "")


def _letter_class(letters: str) -> str:
    return "[" + re.escape(letters) + "]"


def _valid_letters(options: Mapping[str, str] | Iterable[str] | None) -> str:
    if options:
        keys = [str(k).strip().upper() for k in options]
        keys = [k for k in keys if len(k) == 1 and "A" <= k <= "Z"]
        if keys:
            return "".join(sorted(set(keys)))
    return DEFAULT_LETTERS


def _followed_by_other_letter(text: str, end: int, lc: str) -> bool:
    return re.match(_CONJ + lc + r"(?![A-Za-z])", text[end:], flags=re.IGNORECASE) is not None


def extract_choice(text: str, options: Mapping[str, str] | Iterable[str] | None = None) -> str | None:
    """The single option letter a model's answer names, or None (rules in the module doc).

    Args:
        text: the model's answer.
        options: the item's options (``{"A": text, ...}``) or option letters; None: A-E.

    Returns:
        The letter (upper case), or None when the answer names no letter or several.

    Examples:
        >>> options = {"A": "肺炎", "B": "哮喘", "C": "肺癌"}
        >>> extract_choice("答案：B", options)          # an explicit marker
        'B'
        >>> extract_choice("我认为是(C)", options)       # one bracketed letter
        'C'
        >>> extract_choice("应该是哮喘", options)        # one option text
        'B'
        >>> extract_choice("A和B都有可能", options) is None
        True
    """
    t = _norm(text).strip()
    if not t:
        return None
    letters = _valid_letters(options)
    lc = _letter_class(letters)
    lc_any = _letter_class(letters + letters.lower())
    # 1. explicit markers (Chinese: any case; English: upper case only)
    zh = (r"(?:正确答案|最佳答案|正确选项|最佳选项|答案|答)\s*(?:应该|应|可能)?\s*(?:是|为|选)?\s*[:]?\s*"
          + _OPEN + r"?\s*(" + lc_any + r")(?![A-Za-z])")
    pick = r"(?<!不)(?<!不应)(?<!不应该)(?:选择|选)\s*[:]?\s*" + _OPEN + r"?\s*(" + lc_any + r")(?![A-Za-z])"
    en = r"(?i:answer)\s*(?:(?i:is|should be|would be))?\s*[:]?\s*" + _OPEN + r"?\s*(" + lc + r")(?![A-Za-z])"
    found: list[tuple[int, str]] = []
    for pat in (zh, pick, en):
        for hit in re.finditer(pat, t):
            if not _followed_by_other_letter(t, hit.end(1), lc_any):
                found.append((hit.start(), hit.group(1).upper()))
    if found:
        return max(found)[1]
    # Negated mentions (不选A, 不是B, 排除C) name no answer for the rules below.
    t = re.sub(_NEG + r"\s*" + _OPEN + r"?\s*" + lc_any + r"(?![A-Za-z])" + _CLOSE + "?", " ", t).strip()
    if not t:
        return None
    # 2. the whole answer is one letter
    m = re.fullmatch(_OPEN + r"?\s*(" + lc + r")\s*" + _CLOSE + r"?\s*[.。:,、;!]?", t)
    if m:
        return m.group(1)
    # 3. leading letter + delimiter
    m = re.match(_OPEN + r"?\s*(" + lc + r")(?:" + _CLOSE + r"|[.。:,、;\s]|$)", t)
    if m and not _followed_by_other_letter(t, m.end(1), lc):
        return m.group(1)
    # 4. one distinct bracketed letter
    br: set[str] = set(re.findall(_OPEN + r"\s*(" + lc + r")\s*" + _CLOSE, t))
    if len(br) == 1:
        return br.pop()
    # 5. one distinct stand-alone letter
    alone: set[str] = set(re.findall(r"(?<![A-Za-z])(" + lc + r")(?![A-Za-z])", t))
    if len(alone) == 1:
        (x,) = alone
        first = re.search(r"(?<![A-Za-z])" + x + r"(?![A-Za-z])", t)
        # findall just found x with this very pattern, so the search cannot miss.
        if first is not None and not _followed_by_other_letter(t, first.end(), lc):
            return x
        return None
    if len(alone) > 1:
        return None
    # 6. one option text occurs in the answer
    if isinstance(options, Mapping):
        hits = []
        for k, v in options.items():
            v = _norm(str(v)).strip()
            if len(v) >= 2 and v in t:
                hits.append((str(k).strip().upper(), v))
        hits = [(k, v) for k, v in hits if not any(v != w and v in w for _, w in hits)]
        if len({k for k, _ in hits}) == 1:
            return hits[0][0]
    return None


_SEP = r"(?:\s*(?:->|=>|→|⇒|>|,|、|;|-)\s*|\s*)"
_ORDER_MARK = re.compile(r"顺序|排序|排列|答案|(?i:order|answer|sequence)")


def extract_order(text: str, letters: Iterable[str] | str | None = None) -> tuple[str, ...] | None:
    """The letter order a model's answer gives, or None (rules in the module doc).

    Args:
        text: the model's answer.
        letters: the letters the reference orders (others are dropped); None: A-J.

    Returns:
        The letters in the answer's order, each once, or None when fewer than two are found.

    Examples:
        >>> extract_order("正确的顺序是 D→C→B→A")
        ('D', 'C', 'B', 'A')
        >>> extract_order("B, A, E", letters="ABCD")
        ('B', 'A')
        >>> extract_order("先做A") is None
        True
    """
    t = _norm(text)
    valid = set(_valid_letters(list(letters)) if letters else "ABCDEFGHIJ")
    run = re.compile(r"(?<![A-Za-z])[A-Z](?:" + _SEP + r"[A-Z])+(?![A-Za-z])")
    runs = []
    for m in run.finditer(t):
        seq: list[str] = []
        for c in re.findall(r"[A-Z]", m.group(0)):
            if c in valid and c not in seq:
                seq.append(c)
        if len(seq) >= 2:
            runs.append((m.start(), tuple(seq)))
    if not runs:
        return None
    marks = [m.end() for m in _ORDER_MARK.finditer(t)]
    if marks:
        after = [r for r in runs if r[0] >= marks[-1]]
        if after:
            return after[0][1]
    return max(runs, key=lambda r: (len(r[1]), r[0]))[1]


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b of two rankings of the same items (ties allowed).

    Args:
        x: the first ranking's position of each item.
        y: the second ranking's position of each item.

    Returns:
        (concordant - discordant pairs) / sqrt((pairs - ties in x) * (pairs - ties in y)); NaN
        when undefined (fewer than two items, or one side all tied).

    Raises:
        ValueError: when the sequences differ in length.

    Examples:
        >>> kendall_tau_b([1, 2, 3], [1, 2, 3]), kendall_tau_b([1, 2, 3], [3, 2, 1])
        (1.0, -1.0)
        >>> round(kendall_tau_b([1, 2, 3], [1, 1, 2]), 4)   # 2 / sqrt(3 * 2)
        0.8165
    """
    n = len(x)
    if n != len(y):
        raise ValueError("kendall_tau_b needs two sequences of the same length")
    s = 0
    tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            s += dx * dy
            tx += dx == 0
            ty += dy == 0
    n0 = n * (n - 1) // 2
    denom = math.sqrt((n0 - tx) * (n0 - ty))
    return s / denom if denom > 0 else float("nan")


def order_tau(pred: Sequence[str] | None, ref: Sequence[str]) -> float:
    """Tau-b between a reference order and a predicted, possibly partial, one.

    Args:
        pred: the predicted order (letters), or None when none could be extracted.
        ref: the reference order.

    Returns:
        :func:`kendall_tau_b` of the reference and predicted positions of the reference's
        letters, letters missing from the prediction tied for last place; -1.0 for None or no
        letter in common.

    Examples:
        >>> order_tau(("D", "C", "A", "B"), "DCBA")   # one discordant pair of six
        0.6666666666666666
        >>> round(order_tau(("D", "C"), "DCBA"), 4)    # B and A tie last: 5 / sqrt(6 * 5)
        0.9129
        >>> order_tau(None, "DCBA")
        -1.0
    """
    if pred is None:
        return -1.0
    ref = list(dict.fromkeys(ref))
    pos = {c: i for i, c in enumerate(dict.fromkeys(c for c in pred if c in ref))}
    if not pos:
        return -1.0
    last = len(pos)
    tau = kendall_tau_b(list(range(len(ref))), [pos.get(c, last) for c in ref])
    return -1.0 if math.isnan(tau) else tau


def _content_chars(text: str) -> list[str]:
    return [c for c in _norm(text) if not c.isspace() and not unicodedata.category(c).startswith("P")]


def rouge1_char_f(pred: str, ref: str) -> float:
    """ROUGE-1 F1 on characters (clipped counts), whitespace and punctuation removed.

    Args:
        pred: the generated text.
        ref: the reference text.

    Returns:
        2PR/(P+R) over character counts; 1.0 for two empty texts, 0.0 when exactly one is.

    Examples:
        >>> round(rouge1_char_f("肺炎，发热", "发热"), 4)   # P = 2/4, R = 2/2
        0.6667
        >>> rouge1_char_f("。", "")
        1.0
    """
    p, r = _content_chars(pred), _content_chars(ref)
    if not p and not r:
        return 1.0
    if not p or not r:
        return 0.0
    overlap = sum((Counter(p) & Counter(r)).values())
    if overlap == 0:
        return 0.0
    prec, rec = overlap / len(p), overlap / len(r)
    return 2 * prec * rec / (prec + rec)


def _answer_kind(code: str, reference: str) -> tuple[str, str]:
    sc = SCENARIOS.get(code)
    if sc is not None:
        return sc.metric, sc.answer
    ref = _norm(reference).strip()
    if re.fullmatch(r"[A-Z]", ref):
        return "accuracy", "letter"
    if re.fullmatch(r"[A-Z](?:" + _SEP + r"[A-Z])+", ref):
        return "kendall_tau", "order"
    return "similarity", "text"


def item_score(gold: Example, pred_text: str) -> ItemScore:
    """Score one item.

    Args:
        gold: the item (scenario in ``meta["scenario"]`` or ``label``, options in
            ``meta["options"]``, reference in ``target``).
        pred_text: the model's answer.

    Returns:
        ``{"scenario", "metric", "score" (None if unscorable), "extracted", "failed"}``;
        ``failed`` means no letter or order could be extracted.

    Examples:
        >>> from cblue_core.records import Example
        >>> item = Example("1", 0, target="B", meta={"scenario": "ID1", "options": {"A": "x", "B": "y"}})
        >>> item_score(item, "答案：B")
        {'scenario': 'ID1', 'metric': 'accuracy', 'score': 1.0, 'extracted': 'B', 'failed': False}
        >>> item_score(item, "不知道")["failed"]
        True
    """
    code = str(gold.meta.get("scenario") or gold.label or "")
    options = gold.meta.get("options") or {}
    metric, answer = _answer_kind(code, gold.target)
    out: ItemScore = {"scenario": code, "metric": metric, "score": None, "extracted": None,
                      "failed": False}
    if answer == "letter" or metric == "accuracy":
        ref = extract_choice(gold.target, options)
        got = extract_choice(pred_text, options)
        out["extracted"] = got
        out["failed"] = got is None
        if ref is not None:
            out["score"] = float(got == ref)
    elif answer == "order" or metric == "kendall_tau":
        ref_letters = [c for c in _norm(gold.target) if "A" <= c <= "Z"]
        ref_order = list(dict.fromkeys(ref_letters))
        order = extract_order(pred_text, ref_order if ref_order else None)
        out["extracted"] = "".join(order) if order else None
        out["failed"] = order is None
        if len(ref_order) >= 2:
            out["score"] = order_tau(order, ref_order)
    elif metric == "rouge1" or answer == "keywords":
        out["score"] = rouge1_char_f(pred_text, gold.target)
    else:
        out["score"] = rouge_l_f(_norm(pred_text), _norm(gold.target))
    return out


def score_climedbench(task: TaskSpec, gold: Sequence[Example], pred: Sequence[Example]) -> TaskScore:
    """CliMedBench: per-item scores (:func:`item_score`), averaged per scenario; the headline
    ``overall`` is the mean over the scenarios present.

    Args:
        task: the task (``get_task("CliMedBench")``).
        gold: the items.
        pred: the predictions, aligned with ``gold``: the model's answer in ``target``.

    Returns:
        A TaskScore with ``overall``, ``scenario:<code>``, ``dimension:<name>`` and
        ``extraction_failure_rate``; the extracted answers in ``extra["extracted"]``.

    Examples:
        >>> from cblue_core.records import Example
        >>> from cblue_core.tasks import get_task
        >>> options = {"A": "x", "B": "y"}
        >>> gold = [Example("1", 0, label="ID1", target="B", meta={"scenario": "ID1", "options": options}),
        ...         Example("2", 1, label="SSO", target="DCBA", meta={"scenario": "SSO"})]
        >>> pred = [Example("1", 0, target="B"), Example("2", 1, target="DCAB")]
        >>> ts = score_climedbench(get_task("CliMedBench"), gold, pred)
        >>> ts.metrics["scenario:ID1"], round(ts.metrics["scenario:SSO"], 4), round(ts.value, 4)
        (1.0, 0.6667, 0.8333)
        >>> ts.extra["extracted"]
        ['B', 'DCAB']
    """
    notes = check_aligned(gold, pred)
    notes.append("CliMedBench's own answer extraction, tau variant and similarity model are not "
                 "public: letters and orders are extracted by documented rules, orders scored by "
                 "Kendall's tau-b (missing letters tied last, failures -1), KE by character "
                 "ROUGE-1 F1, free-text references by character ROUGE-L F1")
    items = [item_score(g, p.target) for g, p in zip(gold, pred)]
    order = [s.code for s in CLIMEDBENCH_SCENARIOS]
    present = sorted({it["scenario"] for it in items},
                     key=lambda c: (order.index(c) if c in order else len(order), c))
    gid = {c: i for i, c in enumerate(present)}
    score = np.array([it["score"] if it["score"] is not None else 0.0 for it in items])
    weight = np.array([0.0 if it["score"] is None else 1.0 for it in items])
    group = np.array([gid[it["scenario"]] for it in items], dtype=np.int64)
    stats = ExampleStats.from_scores(score, weight, group, tuple(present) or ("all",), name="overall")
    metrics = {"overall": evaluate(stats, group_mean)}
    extra: dict[str, Any] = {"scenarios": {}, "extraction_failures": [], "unscorable": []}
    for c in present:
        metrics[f"scenario:{c}"] = evaluate(stats, one_group_mean(gid[c]))
        idx = [i for i, it in enumerate(items) if it["scenario"] == c]
        extra["scenarios"][c] = {"items": len(idx), "scored": int(sum(weight[i] for i in idx)),
                                 "metric": items[idx[0]]["metric"],
                                 "extraction_failures": sum(items[i]["failed"] for i in idx)}
    dims: dict[str, list[float]] = {}
    for g, it in zip(gold, items):
        if it["metric"] == "accuracy" and it["score"] is not None:
            sc = SCENARIOS.get(it["scenario"])
            dim = str(g.meta.get("dimension") or (sc.dimension if sc else ""))
            if dim:
                dims.setdefault(dim, []).append(it["score"])
    for d, vals in dims.items():
        metrics[f"dimension:{d}"] = float(np.mean(vals))
    extractive = [it for it in items if it["metric"] in ("accuracy", "kendall_tau")]
    failed = [i for i, it in enumerate(items) if it["failed"]]
    metrics["extraction_failure_rate"] = len(failed) / len(extractive) if extractive else 0.0
    extra["extraction_failures"] = failed
    extra["unscorable"] = [i for i, it in enumerate(items) if it["score"] is None]
    extra["extracted"] = [it["extracted"] for it in items]
    if failed:
        notes.append(f"{len(failed)} answer(s) with no extractable letter/order: scored as wrong "
                     "(tau -1 for orders)")
    if extra["unscorable"]:
        notes.append(f"{len(extra['unscorable'])} item(s) whose reference gives no letter/order "
                     "are not scored")
    return TaskScore(task.name, "overall", metrics, {}, stats, notes, extra=extra)
