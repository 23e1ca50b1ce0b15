"""An answer of any length is scored in time linear in its length (an endpoint that ignores
max_tokens, or an imported predictions file, can hold megabytes in one answer)."""
from __future__ import annotations

import random
import time

from cblue_core.metrics.lcs import lcs_length
from cblue_core.metrics.promptcblue.rouge import rouge_pair_scores


def test_lcs_of_a_huge_sequence_against_a_short_one_is_linear():
    rng = random.Random(0)
    huge = [rng.choice("患者咳嗽发热头痛") for _ in range(600_000)]
    short = list("患者发热三天伴咳嗽头痛")
    start = time.perf_counter()
    assert lcs_length(huge, short) == lcs_length(short, huge) == 8      # 三, 天 and 伴 never occur
    # masks built over the long one were quadratic: over 20 s here on a quiet machine
    assert time.perf_counter() - start < 4


def test_rouge_of_a_huge_hypothesis_is_linear_and_unchanged_for_short_ones():
    hyp = " ".join(["发", "热"] * 150_000)
    start = time.perf_counter()
    scores = rouge_pair_scores(hyp, "发 热 三 天")
    assert time.perf_counter() - start < 4
    assert round(scores.rougeL, 6) == round(2 * (2 / 300_000 * 2 / 4) / (2 / 300_000 + 2 / 4 + 1e-8), 6)
    assert lcs_length("ABCBDAB", "BDCABA") == 4 and lcs_length(["a", "b"], []) == 0
