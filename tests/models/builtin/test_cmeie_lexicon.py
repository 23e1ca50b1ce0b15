"""The CMeIE lexicon: leave-one-out training features, an encoder that reads them, and a model
that reads it saved and reloaded (the gazetteer itself: test_lexicon.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from cblue_core.models.builtin import cmeie as M
from cblue_core.models.builtin import spans as S
from cblue_core.models.builtin.cmeie.lexicon import training_lexicon
from cblue_core.models.builtin.common import load_split
from cblue_core.records import Example, Triple
from cblue_core.tasks import get_task

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data" / "cblue"


def test_training_features_leave_out_a_records_own_terms():
    records = [Example(key="0", index=0, text="肺炎可有发热。",
                       triples=[Triple("肺炎", "临床表现", "发热", "疾病", "症状")]),
               Example(key="1", index=1, text="肺炎可并发脓胸。",
                       triples=[Triple("肺炎", "并发症", "脓胸", "疾病", "疾病")])]
    aux = [("患者发热三天", [(2, 4, 1)])]
    lex, (main_ids, aux_ids) = training_lexicon(records, [0, 1], [r.text for r in records], aux, ["sym"], 10)
    assert lex.classes == ["CMeIE subject 疾病", "CMeIE object 症状", "CMeIE object 疾病", "CMeEE sym"]
    assert lex.terms["发热"] == [1, 3]

    def classes_at(ids, pos):
        return {f // 3 for p, f in ids if p == pos}
    # record 0: 肺炎 is record 1's too; 发热 is CMeEE's (not record 0's own object class)
    assert classes_at(main_ids[0], 0) == {0}
    assert classes_at(main_ids[0], 4) == {3}
    # record 1: 脓胸 is its own alone
    assert classes_at(main_ids[1], 5) == set()
    # the CMeEE piece: 发热 as a CMeEE symptom is its own; as a CMeIE object it is record 0's
    assert classes_at(aux_ids[0], 2) == {1}
    # at prediction every term counts
    assert {c for _, _, c in lex.matches("脓胸")} == {2}


def test_zero_lexicon_weights_leave_the_encoder_as_it_was():
    torch.manual_seed(0)
    cfg = S.SpanConfig(task="CMeEE", labels=["dis"], char_dim=8, bigram_dim=4, hidden=6, layers=1,
                       span_dim=4, max_span=4, dropout=0.0, vocab_size=5, bigram_size=5)
    plain = S.SpanNet(cfg).eval()
    with_lex = S.SpanNet(S.SpanConfig(**{**cfg.__dict__, "lexicon_features": 6})).eval()
    with_lex.load_state_dict(plain.state_dict(), strict=False)
    chars = torch.tensor([[2, 3, 4, 0]])
    lengths = torch.tensor([3])
    lex = torch.ones(1, 4, 6)
    assert torch.equal(plain.encode(chars, chars, lengths), with_lex.encode(chars, chars, lengths, lex))
    with pytest.raises(ValueError, match="pass lexicon"):
        with_lex.encode(chars, chars, lengths)


def test_a_model_with_a_lexicon_saves_reloads_and_predicts_identically(tmp_path):
    card = M.train("CMeIE", SAMPLE, tmp_path / "m", progress=False,
                   overrides={**M.TINY, "pair_dim": 8, "epochs": 2, "aux_per_epoch": 8, "lexicon": True})
    assert card.training["hyperparameters"]["lexicon"] is True
    assert "lexicon of" in card.description
    a = M.load_model(tmp_path / "m")
    assert a.lexicon is not None and a.net.cfg.lexicon_features == a.lexicon.n_features
    assert a.net.lexicon.weight.abs().sum() > 0                     # it learnt from the features
    b = M.load_model(tmp_path / "m")
    for m in (a, b):
        m.threshold = m.subject_threshold = 0.0
        m.pair_threshold = 0.45
    ex, _ = load_split(SAMPLE, get_task("CMeIE"), "dev")
    assert [p.triples for p in a.predict(ex[:2])] == [p.triples for p in b.predict(ex[:2])]
    with pytest.raises(ValueError, match="lexicon features"):
        M.RelationModel(a.net, a.vocab, a.schemas, a.card, get_task("CMeIE"))
