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

import re
from collections.abc import Sequence
from typing import NamedTuple

from ..lcs import lcs_length

__all__ = ["RougeF", "cut_sentences", "lcs_length", "rouge_avg", "rouge_pair_scores"]

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
    """Split a text into sentences as ``rouge_chinese``'s ``Rouge.cut_sent`` does.

    Args:
        para: the text.

    Returns:
        The pieces between the inserted line breaks (after 。！？? not followed by a closing
        quote, six dots, two ellipses, or a terminator and a closing quote).

    Examples:
        >>> cut_sentences("头痛。发热？好")
        ['头痛。', '发热？', '好']
        >>> cut_sentences("他说：“头痛。”然后")   # a closing quote stays with its sentence
        ['他说：“头痛。”', '然后']
    """
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
    """ROUGE-1/2/L F of one pair of space-tokenised strings, as rouge_chinese 1.0.3.

    Args:
        hyp: the hypothesis, tokens separated by spaces.
        ref: the reference, tokens separated by spaces.

    Returns:
        ``RougeF(rouge1, rouge2, rougeL)``: F = 2PR/(P+R+1e-8), ROUGE-1/2 over *sets* of
        n-grams, ROUGE-L over the LCS of the token lists.

    Raises:
        ValueError: when either text has no sentence (empty or blank).

    Examples:
        A perfect hypothesis scores 2/(2+1e-8), not 1:

        >>> rouge_pair_scores("发 热", "发 热")
        RougeF(rouge1=0.999999995, rouge2=0.999999995, rougeL=0.999999995)

        Unique n-grams: 好好好 against 好 has ROUGE-1 ~ 1, no bigram in the reference, and
        ROUGE-L P = 1/3, R = 1:

        >>> [round(x, 6) for x in rouge_pair_scores("好 好 好", "好")]
        [1.0, 0.0, 0.5]
    """
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

    Args:
        scores: per-pair scores.

    Returns:
        The mean ``RougeF``.

    Examples:
        >>> rouge_avg([RougeF(1.0, 0.5, 1.0), RougeF(0.0, 0.5, 0.5)])
        RougeF(rouge1=0.5, rouge2=0.5, rougeL=0.75)
    """
    # Integer 0 start, as in the library: an empty list then fails with int division's
    # "division by zero" message, which the official scorer reports verbatim.
    s1: float = 0
    s2: float = 0
    sl: float = 0
    for r in scores:
        s1 += r.rouge1
        s2 += r.rouge2
        sl += r.rougeL
    count = len(scores)
    return RougeF(s1 / count, s2 / count, sl / count)
