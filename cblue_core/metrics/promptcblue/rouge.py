"""ROUGE as ``rouge_chinese`` 1.0.3 computes it (``Rouge().get_scores(hyps, refs, avg=True)``).

Per pair of space-separated strings:

* both are cut into "sentences" (``Rouge.cut_sent``: a newline after 。！？? not followed by a
  closing quote, after six dots, after two ellipses, after a terminator + closing quote),
  each sentence is whitespace-normalised and empty pieces are dropped;
* words are the sentences split on single spaces, flattened;
* ROUGE-1/2 compare the **sets** of n-grams (``exclusive=True``);
* ROUGE-L is the LCS of the two full word lists (summary level reduces to this);
* P = overlap/len(hyp) (0.0 when the hypothesis has no n-gram), R = overlap/len(ref)
  (0.0 when the reference has none), F = 2PR/(P+R+1e-8);
* ``avg=True`` is the plain mean of the per-pair values (summed in order from 0).

An empty string has no sentence: like the library, :func:`rouge_pair_scores` raises
``ValueError`` for it (the official scorer never passes one: it substitutes ``"无 。"``).
"""
from __future__ import annotations

from ..lcs import lcs_length

import re
from typing import NamedTuple, Sequence

__all__ = ["RougeF", "cut_sentences", "rouge_pair_scores", "rouge_avg", "lcs_length"]

_CUTS = (
    (re.compile("([。！？\\?])([^”’])"), r"\1\n\2"),
    (re.compile("(\\.{6})([^”’])"), r"\1\n\2"),
    (re.compile("(\\…{2})([^”’])"), r"\1\n\2"),
    (re.compile("([。！？\\?][”’])([^，。！？\\?])"), r"\1\n\2"),
)


class RougeF(NamedTuple):
    """F values of one (hypothesis, reference) pair."""

    rouge1: float
    rouge2: float
    rougeL: float


def cut_sentences(para: str) -> list[str]:
    for pattern, repl in _CUTS:
        para = pattern.sub(repl, para)
    return para.rstrip().split("\n")


def _sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in cut_sentences(text) if len(s) > 0]


def _words(sentences: list[str]) -> list[str]:
    words: list[str] = []
    for s in sentences:
        words.extend(s.split(" "))
    return words


def _f(overlap: int, hyp_count: int, ref_count: int) -> float:
    precision = 0.0 if hyp_count == 0 else overlap / hyp_count
    recall = 0.0 if ref_count == 0 else overlap / ref_count
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))


def _ngram_f(hyp: list[str], ref: list[str], n: int) -> float:
    hyp_set = {tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1)}
    ref_set = {tuple(ref[i:i + n]) for i in range(len(ref) - n + 1)}
    return _f(len(hyp_set & ref_set), len(hyp_set), len(ref_set))


def rouge_pair_scores(hyp: str, ref: str) -> RougeF:
    """ROUGE-1/2/L F of one pair of space-tokenised strings, as rouge_chinese 1.0.3."""
    hyp_sents, ref_sents = _sentences(hyp), _sentences(ref)
    if not hyp_sents:
        raise ValueError("Hypothesis is empty.")
    if not ref_sents:
        raise ValueError("Reference is empty.")
    hyp_words, ref_words = _words(hyp_sents), _words(ref_sents)
    llcs = lcs_length(ref_words, hyp_words)
    r_lcs = llcs / len(ref_words)
    p_lcs = llcs / len(hyp_words)
    f_lcs = 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))
    return RougeF(_ngram_f(hyp_words, ref_words, 1), _ngram_f(hyp_words, ref_words, 2), f_lcs)


def rouge_avg(scores: Sequence[RougeF]) -> RougeF:
    """The ``avg=True`` mean: per-pair F values summed in order from 0, divided by the count.

    An empty list raises ``ZeroDivisionError``, as the library does.
    """
    s1 = s2 = sl = 0
    for r in scores:
        s1 += r.rouge1
        s2 += r.rouge2
        sl += r.rougeL
    count = len(scores)
    return RougeF(s1 / count, s2 / count, sl / count)
