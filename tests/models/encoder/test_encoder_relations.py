"""The CMeIE relation extractor on the shared encoder, on the sample data with the tiny encoder:
the loss falls, the folder holds head + adapter and reloads to the live model's predictions,
predictions are valid CMeIE triples, windows of long texts (training windows, a pair in the
overlap of two windows found once), thresholds chosen on a selection slice."""
from __future__ import annotations

import shutil

import pytest

from cblue_core.annotation.model import Annotation
from cblue_core.annotation.validation import validate_annotation
from cblue_core.models.builtin import cmeie as M
from cblue_core.models.builtin import common, train
from cblue_core.models.builtin import encoder_heads as H
from cblue_core.models.builtin import encoder_relations as R
from cblue_core.models.builtin import finetune as F
from cblue_core.records import Example, Triple
from cblue_core.runs.evaluation import evaluate
from cblue_core.tasks import get_task
from tests.models.encoder.conftest import DATA

TASK = get_task("CMeIE")


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_encoder):
    """``models/`` with the tiny encoder and a CMeIE model on it (3 epochs on the 6 sample
    training texts; the encoder's 48 positions make every sample text go through windows)."""
    root = tmp_path_factory.mktemp("ie") / "models"
    shutil.copytree(tiny_encoder, root / "encoder")
    card = train("CMeIE", DATA, root / "cmeie", seed=1, progress=False, architecture="encoder",
                 encoder=root / "encoder", overrides={**H.TINY, "epochs": 3, "pair_dim": 16})
    return root, card


def loose(model: R.EncoderRelations) -> R.EncoderRelations:
    """Low thresholds (an untrained model scores everything low) and few candidates."""
    model.threshold = model.subject_threshold = model.pair_threshold = 0.0
    model.max_subjects, model.max_objects = 3, 6
    return model


def dev(n: int = 6) -> list[Example]:
    ex, _ = common.load_split(DATA, TASK, "dev")
    return ex[:n]


def test_loss_falls_and_the_folder_holds_head_adapter_and_schemas(trained):
    root, card = trained
    losses = card.training["losses"]
    assert len(losses) == 3 and losses[-1] < losses[0], losses
    assert card.kind == R.KIND and card.dev_metrics["headline"] == "f1"
    files = {p.name for p in (root / "cmeie").iterdir()}
    assert files == {"adapter.safetensors", "config.json", "model_card.json", "README.md",
                     "training_records.sha1.gz"}, files
    config = common.read_json(root / "cmeie" / "config.json")
    assert config["encoder"] == "encoder" and config["labels"][0] == M.SUBJ
    schemas, _ = M.load_schemas(DATA, TASK, [])
    assert config["schemas"] == [list(r) for r in schemas.rows] and config["kind"] == R.KIND
    data = card.training["data"]
    assert data["train_windows"] > data["train_examples"] == 6      # long sample texts are windowed
    missed, total = map(int, data["scored_triples_no_window_holds"].split(" of "))
    assert 0 <= missed < total
    assert "train_triple_dictionary" in card.baselines
    assert not card.extra["not_comparable_with_leaderboard"]          # the sample has a train file
    assert "windows of 46 tokens" in (root / "cmeie" / "README.md").read_text(encoding="utf-8")


def test_reloaded_model_predicts_as_the_live_one(trained):
    root, _ = trained
    folder = root / "cmeie"
    cfg = F.HeadConfig.from_json(common.read_json(folder / "config.json"))
    net, tok = F.new_net(cfg, root / "encoder", R.RelationHead)     # LoRA layers still separate
    net.load_shipped(common.load_tensors(folder / F.ADAPTER_FILE))
    live = loose(R.EncoderRelations(net, tok, common.read_card(folder), TASK))
    shipped = loose(R.load_model(folder))
    assert not any(isinstance(m, F.LoRALinear) for m in shipped.net.modules())
    gold = dev()
    a, b = live.predict(gold), shipped.predict(gold)
    assert [p.triples for p in a] == [p.triples for p in b] and any(p.triples for p in a)
    for p, q in zip(a, b):
        assert p.meta["triple_scores"] == pytest.approx(q.meta["triple_scores"], abs=1e-4)


def test_predictions_are_valid_cmeie_triples(trained):
    model = loose(R.load_model(trained[0] / "cmeie"))
    gold = dev()
    preds = model.predict(gold)
    assert [(p.key, p.index) for p in preds] == [(g.key, g.index) for g in gold]
    schemas = model.schemas.rows
    for g, p in zip(gold, preds):
        assert len(p.meta["triple_scores"]) == len(p.triples)
        # the project's own check of CMeIE triples: known predicate, mentions in the text, schema types
        checked = validate_annotation(TASK, Example(key=g.key, index=g.index, text=g.text),
                                      Annotation(triples=tuple(p.triples)), schemas=schemas)
        assert list(checked.triples) == p.triples          # Combined as the code computes it
        assert len({(t.predicate, t.object) for t in p.triples}) == len(p.triples)   # one subject each
    ev = evaluate(TASK, gold, preds, n_boot=0)
    assert 0.0 <= ev.value <= 1.0


def test_a_pair_in_the_overlap_of_two_windows_is_found_once():
    hit = M.PairHit("肺炎", "临床表现", "发热", 0.9, "症状", 0.8, 0.7)
    other = M.PairHit("肺炎", "并发症", "脓胸", 0.6, "疾病", 0.8, 0.7)
    # windows of 10 tokens at 0 and 6: the pair at 7-10 lies in both, farther from the edges in
    # the second (which scored it 0.8); the pair at 0-3 only in the first
    found = [(0, 10, [(7, 10, hit, 0.9), (0, 3, other, 0.6)]), (6, 10, [(1, 4, hit._replace(score=0.8), 0.8)])]
    assert set(R.merge_pair_windows(found)) == {other, hit._replace(score=0.8)}
    assert len(R.merge_pair_windows(found)) == 2
    # the window that holds a pair best decides it, even without a hit for it
    assert R.merge_pair_windows([(0, 10, [(7, 10, hit, 0.9)]), (6, 10, [])]) == []


def test_training_windows_hold_whole_pairs(tiny_encoder):
    _, tok = F.build_encoder(tiny_encoder)
    text = "肺炎@肺炎患者常见发热、咳嗽。肺炎可并发脓胸。"
    ex = Example(key="k", index=0, text=text, triples=[
        Triple("肺炎", "临床表现", "发热", "疾病", "症状"), Triple("肺炎", "并发症", "脓胸", "疾病", "疾病")])
    labels = M.span_labels(TASK, M.Schemas([("疾病", "临床表现", "症状"), ("疾病", "并发症", "疾病")]))
    size, overlap = 12, 4
    windows, lost = R.relation_windows(tok, [ex], labels, size, overlap, max_span=10)
    assert lost == 0 and len(windows) == len(H.window_starts(len(text), size, overlap)) == 3
    ids = tok(text, add_special_tokens=False)["input_ids"]
    starts = H.window_starts(len(text), size, overlap)
    held = set()
    for a, (w_ids, spans, (subj, ment, pairs)) in zip(starts, windows):
        assert w_ids == ids[a:a + size]
        assert all(0 <= s < e <= len(w_ids) for s, e, _ in spans)
        for (s, e, c, d), ks in pairs.items():
            assert max(e, d) <= len(w_ids) and (s, e) in subj and (c, d) in ment
            assert text[a + s:a + e] == "肺炎" and {labels[1 + k] for k in ks} <= {"临床表现", "并发症"}
            held.add((a + s, a + e, a + c, a + d))
    pus = text.index("脓胸")
    assert (15, 17, pus, pus + 2) in held                     # one window holds 肺炎 ... 脓胸
    assert (0, 2, pus, pus + 2) not in held                   # 22 tokens: no window holds it
    # both triples have some occurrence pair a window holds
    assert R.unreachable_triples(tok, [ex], size, overlap) == (0, 2)
    # windows of 8 at 0, 4, 8, 12, 15: 肺炎 ... 发热 (3-11 or 9-17) in none of them
    assert R.unreachable_triples(tok, [ex], 8, 4) == (1, 2)


def test_thresholds_are_chosen_on_the_selection_slice(trained):
    model = R.load_model(trained[0] / "cmeie")
    model.max_subjects, model.max_objects = 3, 6
    gold = dev(4)
    chosen = R.choose_thresholds(model, gold)
    assert model.thresholds == tuple(chosen["thresholds"].values())
    assert all(t in g for t, g in zip(model.thresholds, R.THRESHOLD_GRID)) and 0 <= chosen["selection_f1"] <= 1
    # hits found at the lowest thresholds, filtered by higher ones, are what those find directly
    model.threshold, model.subject_threshold, model.pair_threshold = (min(g) for g in R.THRESHOLD_GRID)
    hits = [h for h, _, _ in model.scored([g.text for g in gold])]
    for th in [(0.1, 0.1, 0.05), (0.3, 0.2, 0.1), (0.5, 0.5, 0.5)]:
        model.threshold, model.subject_threshold, model.pair_threshold = th
        assert [model.decode(g.text, h, th)[0] for g, h in zip(gold, hits)] == [p.triples for p in model.predict(gold)]


def test_stops_after_an_epoch_and_resumes(trained, tmp_path):
    """--max-minutes and --resume through fine_tune: a run cut after its first epoch, then
    finished, gives the uninterrupted run's losses."""
    kw = {"seed": 2, "progress": False, "architecture": "encoder", "encoder": trained[0] / "encoder",
          "overrides": {**H.TINY, "epochs": 3, "pair_dim": 16}}
    whole = train("CMeIE", DATA, tmp_path / "whole", **kw)
    cut = train("CMeIE", DATA, tmp_path / "cut", max_minutes=0, **kw)
    assert cut.training["epochs"] == 1 and cut.training["stopped_early"]
    assert (tmp_path / "cut" / common.CHECKPOINT / "best.json").is_file()
    done = train("CMeIE", DATA, tmp_path / "cut", resume=True, **kw)
    assert done.training["epochs"] == 3 and not done.training["stopped_early"]
    assert done.training["losses"] == pytest.approx(whole.training["losses"], rel=1e-5)
    assert not (tmp_path / "cut" / common.CHECKPOINT).exists()
