"""CMeIE extractor pieces: training pairs, candidate spans, the pair head, decoding."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from cblue_core.models.builtin import cmeie as M
from cblue_core.models.builtin import common as C
from cblue_core.models.builtin import spans as S
from cblue_core.records import Triple
from cblue_core.tasks import get_task

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data" / "cblue"

TEXT = "肺炎@肺炎患者常见发热、咳嗽。肺炎可并发脓胸。"
TRIPLES = [Triple("肺炎", "临床表现", "发热", "疾病", "症状"),
           Triple("肺炎", "临床表现", "咳嗽", "疾病", "症状"),
           Triple("肺炎", "并发症", "脓胸", "疾病", "疾病")]
PREDICATES = {"临床表现": 0, "并发症": 1}


def test_piece_pairs_labels_every_occurrence_pair():
    subj, ment, pos = M.piece_pairs(TEXT, TRIPLES, PREDICATES, max_span=10)
    assert subj == [(0, 2), (3, 5), (15, 17)]                     # 肺炎 three times
    assert {TEXT[a:b] for a, b in ment} == {"肺炎", "发热", "咳嗽", "脓胸"}
    fever = TEXT.index("发热")
    assert all(pos[s + (fever, fever + 2)] == {0} for s in subj)
    pus = TEXT.index("脓胸")
    assert pos[(15, 17, pus, pus + 2)] == {1}
    # a subject is never its own object; unknown predicates and over-long mentions are skipped
    assert all(k[:2] != k[2:] for k in pos)
    _, ment2, pos2 = M.piece_pairs(TEXT, [Triple("肺炎", "未知", "发热", "", "")], PREDICATES, 10)
    assert ment2 == [] and pos2 == {}
    assert M.piece_pairs(TEXT, TRIPLES, PREDICATES, max_span=1) == ([], [], {})


def test_top_spans_respects_length_threshold_and_exclusions():
    scores = torch.full((6, 3), -5.0)      # L=6 starts, W=3 widths
    scores[0, 1] = 3.0                     # (0, 2)
    scores[4, 2] = 9.0                     # (4, 7): runs past a 6-character text
    scores[2, 0] = 1.0                     # (2, 3)
    assert M.top_spans(scores, 6, 5, threshold=0.0) == [(0, 2, 3.0), (2, 3, 1.0)]
    assert M.top_spans(scores, 6, 1, exclude={(0, 2)})[0][:2] == (2, 3)
    assert len(M.top_spans(scores, 6, 100)) == 6 * 3 - 1 - 2      # every span inside the text


def test_pair_batch_adds_hard_negatives_and_targets():
    infos = [M.piece_pairs(TEXT, TRIPLES, PREDICATES, 10)]
    L, W, K = len(TEXT), 4, 3
    scores = torch.full((1, L, W, K), -5.0)
    scores[0, 6, 1, 1] = 4.0               # 患者 looks like an object: a hard negative
    rows, tgt = M.pair_batch(scores, infos, [L], subj_k=0, obj_ks=[1, 2], n_predicates=2,
                             hard_subjects=1, hard_objects=1)
    pairs = {tuple(r[1:].tolist()): t.tolist() for r, t in zip(rows, tgt)}
    fever = TEXT.index("发热")
    assert pairs[(0, 2, fever, fever + 2)] == [1.0, 0.0]
    assert pairs[(0, 2, 6, 8)] == [0.0, 0.0]                      # hard negative object
    assert sum(sum(t) for t in pairs.values()) == 3 * 3            # 3 triples x 3 subject occurrences
    rows, _ = M.pair_batch(scores, infos, [L], 0, [1, 2], 2, max_pairs=12)
    assert len(rows) == 12                                         # positives kept, negatives sampled
    assert M.pair_batch(scores, [([], [], {})], [L], 0, [1, 2], 2) == (None, None)


def test_pair_head_between_mean_and_shapes():
    torch.manual_seed(0)
    head = M.PairHead(4, 8, 3, n_span_labels=5)
    h = torch.randn(2, 10, 4)
    sc = torch.randn(2, 10, 4, 5)
    rows = torch.tensor([[0, 0, 2, 5, 7], [1, 6, 8, 1, 3], [0, 2, 6, 3, 4]])
    out = head(h, rows, sc)
    assert out.shape == (3, 3)
    # the context term is the mean of the characters strictly between the two spans
    captured = {}
    head.ctx.register_forward_hook(lambda m, i, o: captured.update(x=i[0]))   # returns None
    head(h, rows, sc)
    x = captured["x"]
    assert torch.allclose(x[0], h[0, 2:5].mean(0))
    assert torch.allclose(x[1], h[1, 3:6].mean(0))
    assert torch.allclose(x[2], torch.zeros(4))                  # nested spans: nothing between
    assert M.PairHead.bucket(torch.tensor([-100, -1, 0, 1, 3, 10 ** 6])).tolist() == [
        12 - 6, 11, 12, 13, 14, 24]


def test_pair_model_learns_saves_and_reloads_identically(tmp_path):
    from pathlib import Path

    from cblue_core.models.builtin.common import load_split
    from cblue_core.tasks import get_task
    sample = Path(__file__).resolve().parents[3] / "sample_data" / "cblue"
    card = M.train("CMeIE", sample, tmp_path / "m", progress=False,
                   overrides={**M.TINY, "pair_dim": 8, "epochs": 3, "aux_per_epoch": 8})
    losses = card.training["losses"]
    assert len(losses) == 3 and losses[-1] < losses[0]            # span + pair loss goes down
    a, b = M.load_model(tmp_path / "m"), M.load_model(tmp_path / "m")
    for m in (a, b):
        m.threshold = m.subject_threshold = 0.0
        m.pair_threshold = 0.45
        m.max_subjects, m.max_objects = 3, 6
    ex, _ = load_split(sample, get_task("CMeIE"), "dev")
    pa, pb = a.predict(ex[:2]), b.predict(ex[:2])
    assert [p.triples for p in pa] == [p.triples for p in pb]


@pytest.mark.slow
def test_learns_the_triples_of_its_training_records(tmp_path):
    train, _, _ = M.split_data(SAMPLE, get_task("CMeIE"))
    M.train("CMeIE", SAMPLE, tmp_path / "m", progress=False,
            overrides={**M.TINY, "hidden": 32, "span_dim": 32, "pair_dim": 16, "epochs": 60, "aux": False})
    pred = M.load_model(tmp_path / "m").predict(train)
    gold = {(e.index, t.subject, t.predicate, t.object) for e in train for t in e.triples}
    got = {(p.index, t.subject, t.predicate, t.object) for p in pred for t in p.triples}
    # 9 of 21 found, 13 predicted when measured; a model that learnt nothing finds none
    assert len(gold & got) >= 5 and len(gold & got) >= len(got) / 2, (len(gold), len(got), len(gold & got))


def test_starts_from_a_span_encoder(tmp_path):
    S.train("CMeEE", SAMPLE, tmp_path / "ee", progress=False, overrides=S.TINY)
    M.train("CMeIE", SAMPLE, tmp_path / "ie", progress=False,
            overrides={**M.TINY, "init_from": str(tmp_path / "ee"), "epochs": 1, "lr": 0.0,
                       "aux_per_epoch": 4})
    ee, _ = S.load_net(tmp_path / "ee")
    ie = M.load_model(tmp_path / "ie").net
    for name in ("char.weight", "bigram.weight"):        # lr 0: the copied encoder is unchanged
        assert torch.equal(ee.state_dict()[name], ie.state_dict()[name]), name
    lstm = [k for k in ee.state_dict() if k.startswith("lstm.")]
    assert lstm and all(torch.equal(ee.state_dict()[k], ie.state_dict()[k]) for k in lstm)


def test_a_missing_encoder_says_what_to_train(tmp_path):
    with pytest.raises(FileNotFoundError, match="train it first with `python -m cblue_core train --task CMeEE"):
        M.encoder_folder(tmp_path / "no-such-model")
    with pytest.raises(ValueError, match="not a usable span encoder"):
        M.encoder_folder(Path(__file__).resolve().parents[3] / "models" / "kuake-qic")


def test_multilabel_ce_by_hand():
    import math

    from cblue_core.models.builtin.spans import multilabel_ce
    s = torch.tensor([[2.0, -1.0, 0.5], [0.0, 0.0, 0.0]])
    t = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    got = multilabel_ce(s, t)
    want0 = math.log(1 + math.exp(-1) + math.exp(0.5)) + math.log(1 + math.exp(-2))
    want1 = math.log(1 + 3 * math.exp(0)) + math.log(1)            # no positive: second term 0
    assert torch.allclose(got, torch.tensor([want0, want1]))
    valid = torch.tensor([[True, True, False], [True, True, True]])   # 0.5 left out
    assert math.isclose(float(multilabel_ce(s, t, valid)[0]),
                        math.log(1 + math.exp(-1)) + math.log(1 + math.exp(-2)), rel_tol=1e-6)


def test_one_subject_each_keeps_the_best_subject_per_predicate_and_object():
    scored = {("肺炎", "临床表现", "发热"): (0.9, "症状"), ("哮喘", "临床表现", "发热"): (0.6, "症状"),
              ("哮喘", "临床表现", "咳嗽"): (0.7, "症状"), ("哮喘", "并发症", "发热"): (0.5, "疾病")}
    assert [k for k, _ in M.one_subject_each(scored)] == [
        ("肺炎", "临床表现", "发热"), ("哮喘", "临床表现", "咳嗽"), ("哮喘", "并发症", "发热")]


@pytest.mark.skipif(not C.native_bf16(), reason="this CPU has no native bf16 (AMX or AVX-512 BF16), "
                    "and oneDNN has no bf16 LSTM without it")
def test_bf16_trains_the_bilstm_under_autocast_and_the_heads_in_fp32(tmp_path, monkeypatch):
    seen: dict[str, set] = {"lstm": set(), "pair": set()}
    real_pair = M.PairHead.forward

    def pair(self, h, *args, **kw):
        seen["pair"].add(h.dtype)
        return real_pair(self, h, *args, **kw)

    monkeypatch.setattr(M.PairHead, "forward", pair)
    real_lstm = torch.nn.LSTM.forward

    def lstm(self, x, *args, **kw):
        out = real_lstm(self, x, *args, **kw)
        seen["lstm"].add(out[0].dtype)
        return out

    monkeypatch.setattr(torch.nn.LSTM, "forward", lstm)
    card = M.train("CMeIE", SAMPLE, tmp_path / "m", progress=False,
                   overrides={**M.TINY, "pair_dim": 8, "epochs": 2, "aux_per_epoch": 8, "precision": "bf16"})
    assert card.training["hyperparameters"]["precision"] == "bf16"
    assert torch.bfloat16 in seen["lstm"] and seen["pair"] == {torch.float32}
    assert all(map(math.isfinite, card.training["losses"]))
    # predictions run in fp32 whatever the training precision
    seen["lstm"].clear()
    M.load_model(tmp_path / "m").predict(M.split_data(SAMPLE, get_task("CMeIE"))[0][:2])
    assert seen["lstm"] == {torch.float32}
    with pytest.raises(ValueError, match="precision must be one of"):
        M.train("CMeIE", SAMPLE, tmp_path / "x", progress=False, overrides={**M.TINY, "precision": "fp16"})


def test_bf16_is_refused_on_a_cpu_without_native_bf16(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "native_bf16", lambda: False)
    tiny = {**M.TINY, "pair_dim": 8, "epochs": 1, "aux_per_epoch": 8, "precision": "bf16"}
    with pytest.raises(ValueError, match="needs a CPU that computes bf16 natively"):
        M.train("CMeIE", SAMPLE, tmp_path / "ie", progress=False, overrides=tiny)
    with pytest.raises(ValueError, match="needs a CPU that computes bf16 natively"):
        S.train("CMeEE", SAMPLE, tmp_path / "ee", progress=False,
                overrides={**S.TINY, "epochs": 1, "precision": "bf16"})
    assert not any((tmp_path / "ie").iterdir()) and not any((tmp_path / "ee").iterdir())


def test_logit_average_of_copies_is_the_network_itself():
    cfg = S.SpanConfig(task="CMeIE", labels=["SUBJ", "P1", "T:x"], **{k: v for k, v in M.TINY.items()
                       if k in ("char_dim", "bigram_dim", "hidden", "layers", "span_dim", "max_span")},
                       head="pointer", vocab_size=10, bigram_size=10)
    torch.manual_seed(0)
    net = M.RelNet(cfg, 3, 8).eval()
    twin = M.RelNet(cfg, 3, 8).eval()
    twin.load_state_dict(net.state_dict())
    both = M.LogitAverage([net, twin]).eval()
    chars, bis, lengths = torch.randint(1, 10, (2, 7)), torch.randint(1, 10, (2, 7)), torch.tensor([7, 5])
    rows = torch.tensor([[0, 0, 1, 2, 4], [1, 1, 2, 3, 5]])
    with torch.no_grad():
        h, hh = net.encode(chars, bis, lengths), both.encode(chars, bis, lengths)
        assert hh.shape == (2, *h.shape)
        assert torch.allclose(both.span_logits(hh), net.span_logits(h), atol=1e-6)
        assert torch.allclose(both.pair(hh, rows, None), net.pair(h, rows), atol=1e-6)
    with pytest.raises(ValueError, match="at least one"):
        M.LogitAverage([])


ENSEMBLE = {**M.TINY, "pair_dim": 8, "epochs": 2, "aux_per_epoch": 8}


@pytest.mark.slow
def test_a_seed_ensemble_trains_its_members_in_order_and_ships_them_in_one_folder(tmp_path):
    from safetensors.torch import load_file

    one = M.train("CMeIE", SAMPLE, tmp_path / "one", progress=False, seed=3, overrides=ENSEMBLE)
    card = M.train("CMeIE", SAMPLE, tmp_path / "two", progress=False, seed=3, overrides={**ENSEMBLE, "members": 2})
    t = card.training
    assert [m["seed"] for m in t["members"]] == [3, 4] and t["hyperparameters"]["members"] == 2
    assert t["time_s"] == round(sum(m["time_s"] for m in t["members"]), 1) and not t["stopped_early"]
    assert "seed ensemble of 2" in card.description and "members" not in one.training
    readme = (tmp_path / "two" / "README.md").read_text(encoding="utf-8")
    assert "2 networks, seeds 3, 4, trained one after the other; 2 epochs each" in readme
    assert sorted(p.name for p in (tmp_path / "two").iterdir() if p.is_dir()) == []   # checkpoints gone
    # member 0 is the one-network model of the same seed; member 1 is another network
    single, pair = load_file(str(tmp_path / "one" / "model.safetensors")), load_file(
        str(tmp_path / "two" / "model.safetensors"))
    assert set(pair) == {f"nets.{i}.{k}" for i in (0, 1) for k in single}
    assert all(torch.equal(pair[f"nets.0.{k}"], v) for k, v in single.items())
    assert not all(torch.equal(pair[f"nets.1.{k}"], v) for k, v in single.items())
    model = M.load_model(tmp_path / "two")
    assert isinstance(model.net, M.LogitAverage) and len(model.net.members) == 2
    ex = M.split_data(SAMPLE, get_task("CMeIE"))[1]
    assert [p.triples for p in model.predict(ex)] == [p.triples for p in M.load_model(tmp_path / "two").predict(ex)]
    with pytest.raises(ValueError, match="members must be a whole number"):
        M.train("CMeIE", SAMPLE, tmp_path / "x", progress=False, overrides={**ENSEMBLE, "members": 0})


@pytest.mark.slow
def test_an_ensemble_cut_short_resumes_to_the_uninterrupted_one(tmp_path):
    from safetensors.torch import load_file

    whole = {**ENSEMBLE, "members": 2}
    M.train("CMeIE", SAMPLE, tmp_path / "whole", progress=False, overrides=whole)
    cut = M.train("CMeIE", SAMPLE, tmp_path / "cut", progress=False, overrides=whole, max_minutes=0)
    # the first epoch of member 0 ran, then the time was up: one member saved, checkpoint kept
    assert cut.training["stopped_early"] and cut.training["members"][0]["epochs"] == 1
    assert len(cut.training["members"]) == 1 and (tmp_path / "cut" / "member-0" / "checkpoint").is_dir()
    done = M.train("CMeIE", SAMPLE, tmp_path / "cut", progress=False, overrides=whole, resume=True)
    assert not done.training["stopped_early"] and [m["epochs"] for m in done.training["members"]] == [2, 2]
    a, b = load_file(str(tmp_path / "whole" / "model.safetensors")), load_file(str(tmp_path / "cut" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert not (tmp_path / "cut" / "member-0").exists()
