"""Pair features: edit distance, one-sided characters, intent groups asked by both or one."""
from __future__ import annotations

import pytest

from cblue_core.models.builtin.ngram import Featurizer
from cblue_core.models.builtin.pair_features import INTENTS, N_EXTRA, edit_distance, extra_features


@pytest.mark.parametrize(("a", "b", "d"), [("", "", 0), ("abc", "", 3), ("", "ab", 2), ("kitten", "sitting", 3),
                                           ("头痛怎么办", "头痛原因", 3), ("感冒", "感冒", 0)])
def test_edit_distance(a, b, d):
    assert edit_distance(a, b) == d == edit_distance(b, a)


def test_same_intent_and_different_intent():
    cause = INTENTS.index(next(g for g in INTENTS if "原因" in g))
    treat = INTENTS.index(next(g for g in INTENTS if "怎么办" in g))
    diff = extra_features("头痛怎么办", "头痛的原因")
    assert len(diff) == N_EXTRA
    assert diff[4 + 2 * cause:4 + 2 * cause + 2] == [0.0, 1.0]      # only one asks the cause
    assert diff[4 + 2 * treat:4 + 2 * treat + 2] == [0.0, 1.0]
    same = extra_features("头痛怎么办", "偏头痛怎么办")
    assert same[4 + 2 * treat:4 + 2 * treat + 2] == [1.0, 0.0]
    assert same[0] == pytest.approx(1 / 6) and same[2:4] == [0.0, 0.1]


def test_identical_texts_are_at_distance_zero():
    f = extra_features("糖尿病", "糖尿病")
    assert f[:4] == [0.0, 0.0, 0.0, 0.0] and not any(f[5::2])


def test_featurizer_adds_them_only_when_asked():
    vocab = ["头", "痛"]
    assert "extra" not in Featurizer(vocab, [1], pair=True).encode_one("头痛", "痛")
    enc = Featurizer(vocab, [1], pair=True, extra=True).encode_one("头痛", "痛")
    assert enc["extra"] == extra_features("头痛", "痛")
