"""The gazetteer: matches, per-character features, JSON, leave-one-out counts."""
from __future__ import annotations

import pytest

from cblue_core.models.builtin.lexicon import Lexicon, LexiconBuilder, feature_tensor


def lexicon() -> Lexicon:
    return Lexicon(["病", "症"], {"肺炎": [0], "发热": [1], "炎": [0], "咳嗽": [0, 1], "hiv感染": [0]}, max_len=5)


def test_matches_every_term_in_the_text_at_every_place():
    text = "肺炎发热，肺炎咳嗽"
    assert lexicon().matches(text) == [(0, 2, 0), (2, 4, 1), (5, 7, 0), (7, 9, 0), (7, 9, 1)]
    # case-blind, never a single character, never beyond max_len
    assert lexicon().matches("HIV感染者") == [(0, 5, 0)]
    assert Lexicon(["病"], {"hiv感染": [0]}, max_len=4).matches("hiv感染") == []
    assert lexicon().matches(text, exclude={("肺炎", 0)}) == [(2, 4, 1), (7, 9, 0), (7, 9, 1)]


def test_features_mark_begin_inside_end_per_class():
    lex = Lexicon(["病", "症"], {"肺炎": [0], "咳嗽不止": [1]}, max_len=5)
    assert lex.n_features == 6
    assert lex.feature_ids("肺炎咳嗽不止") == [(0, 0), (1, 2), (2, 3), (3, 4), (4, 4), (5, 5)]
    x = lex.features(["肺炎咳嗽不止", "无"])
    assert x.shape == (2, 6, 6)
    assert x[0].sum() == 6 and x[1].sum() == 0
    assert x[0, 0, 0] == 1 and x[0, 1, 2] == 1 and x[0, 3, 4] == 1
    # positions past a shorter length are dropped, not an index error
    assert feature_tensor([[(0, 1), (9, 2)]], 3, 6).sum() == 1


def test_json_round_trip_and_bad_class_ids():
    lex = lexicon()
    again = Lexicon.from_json(lex.to_json())
    assert again == lex
    with pytest.raises(ValueError, match="class id"):
        Lexicon.from_json({"classes": ["病"], "max_len": 5, "terms": {"肺炎": [3]}})


def test_leave_one_out_hides_only_the_terms_no_other_unit_has():
    b = LexiconBuilder(max_len=10)
    own_a = b.add([("肺炎", "病"), ("发热", "症")])
    own_b = b.add([("肺炎", "病"), ("x", "症")])           # one character: not a term
    assert b.classes == ["病", "症"]
    assert own_b == {("肺炎", 0)}
    assert b.own_only(own_a) == {("发热", 1)}                # 肺炎 is also unit b's
    assert b.own_only(own_b) == frozenset()
    assert b.lexicon().terms == {"发热": [1], "肺炎": [0]}


def test_case_kept_when_not_folded():
    lex = Lexicon(["病"], {"HIV感染": [0]}, max_len=5, fold_case=False)
    assert lex.matches("HIV感染") == [(0, 5, 0)]
    assert lex.matches("hiv感染") == []
    assert Lexicon.from_json(lex.to_json()).fold_case is False


@pytest.mark.parametrize("raw, field", [
    ([], "JSON object"),
    ({"classes": "病", "max_len": 5, "terms": {}}, "classes"),
    ({"classes": ["病"], "max_len": "5", "terms": {}}, "max_len"),
    ({"classes": ["病"], "max_len": 1, "terms": {}}, "max_len"),
    ({"classes": ["病"], "max_len": 5, "terms": {"肺炎": 0}}, "terms"),
    ({"classes": ["病"], "max_len": 5, "terms": {"肺炎": [True]}}, "terms"),
])
def test_a_malformed_lexicon_says_which_field(raw, field):
    with pytest.raises(ValueError, match=field):
        Lexicon.from_json(raw)
