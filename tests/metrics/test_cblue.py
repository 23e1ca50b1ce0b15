"""CBLUE 1.0 metrics: hand-made cases with the arithmetic written out, the official example
gold/pred pairs (counts read off the files), sklearn cross-checks and real dev self-scores."""
from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pytest

from cblue_core.io.validate import load
from cblue_core.metrics.cblue import cmeie_normalise
from cblue_core.metrics.registry import score
from cblue_core.records import Example, Span, Triple
from cblue_core.tasks import get_task


def ex(i=0, **kw) -> Example:
    return Example(key=kw.pop("key", str(i)), index=i, **kw)


def align_by_key(gold: list[Example], pred: list[Example]) -> list[Example]:
    """What the run importer does before scoring: one prediction per gold example, by key
    (an empty Example where the prediction is missing)."""
    by_key = {p.key: p for p in pred}
    return [by_key.get(g.key, Example(key=g.key, index=g.index)) for g in gold]


# ---------------------------------------------------------------------- CMeEE (spans)

def test_spans_hand_case():
    gold = [ex(0, spans=[Span(0, 3, "bod"), Span(0, 5, "sym"), Span(7, 9, "dis")]),
            ex(1, spans=[Span(2, 4, "dru")])]
    pred = [ex(0, spans=[Span(0, 3, "bod"), Span(0, 3, "bod"),   # duplicate: counts once
                         Span(0, 5, "dis"), Span(7, 9, "dis")]),
            ex(1, spans=[])]
    s = score("CMeEE", gold, pred, intervals=False)
    # ex0: gold {(0,3,bod),(0,5,sym),(7,9,dis)}, pred {(0,3,bod),(0,5,dis),(7,9,dis)}
    #      tp 2 (bod, dis), fp 1 ((0,5,dis)), fn 1 ((0,5,sym)); the nested bod counts on its own
    # ex1: tp 0, fp 0, fn 1
    # P = 2/3, R = 2/4, F = 2*2/(2*2+1+2) = 4/7
    assert (s.extra["tp"], s.extra["fp"], s.extra["fn"]) == (2, 1, 2)
    assert s.metrics["precision"] == pytest.approx(2 / 3)
    assert s.metrics["recall"] == pytest.approx(0.5)
    assert s.metrics["f1"] == pytest.approx(4 / 7)
    assert s.headline == "f1" and s.value == pytest.approx(4 / 7)
    # per type: bod 1/0/0, sym 0/0/1, dis tp1 fp1 (the (0,5,dis)), dru fn1
    assert (s.per_label["bod"].tp, s.per_label["bod"].fp, s.per_label["bod"].fn) == (1, 0, 0)
    assert (s.per_label["dis"].tp, s.per_label["dis"].fp) == (1, 1)
    assert s.per_label["sym"].fn == 1 and s.per_label["dru"].fn == 1
    assert s.per_label["dis"].f1 == pytest.approx(2 / 3)  # 2*1/(2+1+0)
    assert any("duplicated" in n for n in s.notes)
    np.testing.assert_array_equal(s.stats.tp, [2, 0])


def test_spans_empty_everything_is_zero_not_nan():
    s = score("CMeEE", [ex(0)], [ex(0)], intervals=False)
    assert s.metrics == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_length_mismatch_refused():
    with pytest.raises(ValueError, match="aligned"):
        score("CMeEE", [ex(0)], [], intervals=False)


def test_cmeee_official_example(cblue_dir):
    gold = load(cblue_dir / "CMeEE/example_gold.json", "CMeEE").examples
    pred = load(cblue_dir / "CMeEE/example_pred.json", "CMeEE").examples
    s = score("CMeEE", gold, pred, intervals=False)
    # Read off the files (inclusive offsets):
    # s1 gold: bod 3-9 SARST细胞, dis 19-24 成人SARS; pred: dis 19-24      -> tp1 fp0 fn1
    # s2 gold: bod 10-10, sym 10-13, bod 17-17, sym 17-22
    #    pred: bod 10-10, dis 10-13, bod 17-18 (肺内), sym 17-22            -> tp2 fp2 fn2
    # s3 gold: bod 4-5, sym 4-7, bod 11-11, sym 11-16
    #    pred: bod 4-5, dis 4-7, sym 11-16                                  -> tp2 fp1 fn2
    # total tp 5, fp 3, fn 5: P = 5/8, R = 5/10, F = 10/18
    assert (s.extra["tp"], s.extra["fp"], s.extra["fn"]) == (5, 3, 5)
    assert s.metrics["precision"] == pytest.approx(0.625)
    assert s.metrics["recall"] == pytest.approx(0.5)
    assert s.metrics["f1"] == pytest.approx(10 / 18)
    # per type: bod gold 5, pred 4 (10-10, 17-18, 4-5 + none) -> tp 2 (10-10, 4-5), fp 1, fn 3
    assert (s.per_label["bod"].tp, s.per_label["bod"].fp, s.per_label["bod"].fn) == (2, 1, 3)
    # sym gold 4, pred 2 (17-22, 11-16) both right -> tp 2, fn 2; dis: tp 1 (s1), fp 2
    assert (s.per_label["sym"].tp, s.per_label["sym"].fn) == (2, 2)
    assert (s.per_label["dis"].tp, s.per_label["dis"].fp, s.per_label["dis"].fn) == (1, 2, 0)


# ---------------------------------------------------------------------- CMeIE

def test_cmeie_normalisation():
    assert cmeie_normalise(Triple("《ABC》病", "病因", "《Xy》")) == ("《abc》病", "病因", "xy")
    assert cmeie_normalise(Triple("《ABC》", "病因", "x")) == ("abc", "病因", "x")


def test_cmeie_hand_case():
    gold = [ex(0, triples=[Triple("糖尿病", "并发症", "酮症酸中毒"),
                           Triple("糖尿病", "药物治疗", "《二甲双胍》")])]
    pred = [ex(0, triples=[Triple("糖尿病", "并发症", "酮症酸中毒"),
                           Triple("糖尿病", "并发症", "酮症酸中毒"),   # duplicate, removed
                           Triple("糖尿病", "药物治疗", "二甲双胍"),   # 《》 stripped -> match
                           Triple("糖尿病", "病因", "肥胖")])]
    s = score("CMeIE", gold, pred, intervals=False)
    # gold 2, pred 3 after dedupe, tp 2: P = 2/3, R = 1, F = 4/5
    assert (s.extra["tp"], s.extra["fp"], s.extra["fn"]) == (2, 1, 0)
    assert s.metrics["f1"] == pytest.approx(0.8)
    # official rounding: P 0.6667, R 1.0, F = 2*(2/3)*1/(2/3+1) = 0.8
    assert s.extra["official_rounded"] == {"precision": 0.6667, "recall": 1.0, "f1": 0.8}
    assert s.per_label["病因"].fp == 1
    assert any("not verified" in n for n in s.notes)


def test_cmeie_official_example(cblue_dir):
    gold = load(cblue_dir / "CMeIE/example_gold.json", "CMeIE").examples
    pred = load(cblue_dir / "CMeIE/example_pred.json", "CMeIE").examples
    s = score("CMeIE", gold, pred, intervals=False)
    # line 1: gold 1 (急性胰腺炎 影像学检查 ERCP), pred the same          -> tp1
    # line 2: gold 2 (鉴别诊断 社交性焦虑, 分离性焦虑), pred 分离性焦虑       -> tp1 fn1
    # line 3: gold 5 (发病部位 关节/踝关节/腕关节, 病因 结晶性关节病/创伤);
    #         pred 5 with 关节 twice (deduped -> 4): 关节, 腕关节, 晶性关节病, 创伤
    #         -> tp3 fp1 fn2
    # total tp 5, predicted 6, gold 8: P = 5/6, R = 5/8, F = 10/14
    assert (s.extra["tp"], s.extra["fp"], s.extra["fn"]) == (5, 1, 3)
    assert s.metrics["precision"] == pytest.approx(5 / 6)
    assert s.metrics["recall"] == pytest.approx(5 / 8)
    assert s.metrics["f1"] == pytest.approx(10 / 14)
    # 0.83333 -> 0.8333, 0.625, F = 2PR/(P+R) = 0.714285... -> 0.7143
    assert s.extra["official_rounded"] == {"precision": 0.8333, "recall": 0.625, "f1": 0.7143}
    assert (s.per_label["发病部位"].tp, s.per_label["发病部位"].fn) == (2, 1)
    assert (s.per_label["病因"].tp, s.per_label["病因"].fp, s.per_label["病因"].fn) == (1, 1, 1)


# ---------------------------------------------------------------------- CHIP-CDN

def test_terms_hand_case():
    gold = [ex(0, terms=["高血压", "糖尿病"]), ex(1, terms=["肺炎"]), ex(2, terms=["a", "b", "c"])]
    pred = [ex(0, terms=["高血压 ", "高血压"]), ex(1, terms=["肺炎", "支气管炎"]), ex(2, terms=[])]
    s = score("CHIP-CDN", gold, pred, intervals=False)
    # ex0: {"高血压"} vs {"高血压","糖尿病"}: tp1 fn1 (whitespace stripped, repeat counted once)
    # ex1: tp1 fp1; ex2: fn3. Total tp2 fp1 fn4: F = 4/(4+1+4) = 4/9
    assert (s.extra["tp"], s.extra["fp"], s.extra["fn"]) == (2, 1, 4)
    assert s.metrics["f1"] == pytest.approx(4 / 9)
    # buckets by gold term count: 1 term -> ex1: F = 2/(2+1) = 2/3; 2 -> ex0: 2/(2+0+1) = 2/3; 3+ -> 0
    assert s.metrics["f1[gold_terms=1]"] == pytest.approx(2 / 3)
    assert s.metrics["f1[gold_terms=2]"] == pytest.approx(2 / 3)
    assert s.metrics["f1[gold_terms=3+]"] == 0.0


def test_cdn_official_example(cblue_dir):
    gold = load(cblue_dir / "CHIP-CDN/example_gold.json", "CHIP-CDN").examples
    pred = load(cblue_dir / "CHIP-CDN/example_pred.json", "CHIP-CDN").examples
    s = score("CHIP-CDN", gold, pred, intervals=False)
    # 左膝退变伴游离体: gold {膝骨关节病, 膝关节游离体}, pred {骨关节病}      -> tp0 fp1 fn2
    # 糖尿病...: gold 5 terms, pred 4 of them (冠状动脉粥样硬化性心脏病 missing) -> tp4 fn1
    # 右乳腺癌IV期: gold = pred = {乳腺恶性肿瘤, 癌}                         -> tp2
    # tp 6, fp 1, fn 3: P = 6/7, R = 6/9, F = 12/16 = 0.75
    assert (s.extra["tp"], s.extra["fp"], s.extra["fn"]) == (6, 1, 3)
    assert s.metrics["precision"] == pytest.approx(6 / 7)
    assert s.metrics["recall"] == pytest.approx(6 / 9)
    assert s.metrics["f1"] == pytest.approx(0.75)


# ---------------------------------------------------------------------- classification

def test_macro_f1_hand_case():
    gold = [ex(i, label=l) for i, l in enumerate(["a", "a", "b", "c"])]
    pred = [ex(i, label=l) for i, l in enumerate(["a", "b", "b", "d"])]
    s = score("CHIP-CTC", gold, pred, intervals=False)
    # labels = sorted union {a, b, c, d}
    # a: tp1 pred1 gold2 -> P 1, R 1/2, F 2/3
    # b: tp1 pred2 gold1 -> P 1/2, R 1, F 2/3
    # c: tp0 pred0 gold1 -> P 0 (never predicted), R 0, F 0
    # d: tp0 pred1 gold0 -> P 0, R 0 (not in gold), F 0
    # macro F = (2/3 + 2/3 + 0 + 0) / 4 = 1/3; macro P = (1 + 1/2)/4 = 3/8; macro R = 3/8
    assert s.headline == "macro_f1"
    assert s.metrics["macro_f1"] == pytest.approx(1 / 3)
    assert s.metrics["macro_precision"] == pytest.approx(3 / 8)
    assert s.metrics["macro_recall"] == pytest.approx(3 / 8)
    assert s.metrics["accuracy"] == pytest.approx(0.5)
    assert (s.per_label["b"].tp, s.per_label["b"].fp, s.per_label["b"].fn) == (1, 1, 0)
    assert s.per_label["c"].precision == 0.0 and s.per_label["d"].recall == 0.0


def test_missing_prediction_is_wrong_but_not_a_label():
    gold = [ex(0, label="0"), ex(1, label="1")]
    pred = [ex(0, label="0"), ex(1, label=None)]
    s = score("KUAKE-QTR", gold, pred, intervals=False)
    # labels = {0, 1} (None is not a label); 0: tp1 pred1 gold1 -> F 1; 1: tp0 gold1 -> F 0
    # macro F = 1/2, accuracy 1/2
    assert s.headline == "accuracy"
    assert s.metrics["accuracy"] == 0.5 and s.metrics["macro_f1"] == 0.5
    assert s.extra["missing_predictions"] == 1


def test_qqr_gold_na_is_read_as_zero():
    gold = [ex(0, label="NA"), ex(1, label="2")]
    pred = [ex(0, label="0"), ex(1, label="2")]
    s = score("KUAKE-QQR", gold, pred, intervals=False)
    assert s.metrics["accuracy"] == 1.0
    assert any("'NA'" in n and "'0'" in n for n in s.notes)


def test_macro_f1_matches_sklearn():
    sk = pytest.importorskip("sklearn.metrics")
    rng = random.Random(3)
    labels = list("abcdefg")
    for trial in range(20):
        n = rng.randint(1, 60)
        g = [rng.choice(labels[:5]) for _ in range(n)]
        p = [rng.choice(labels[2:]) if rng.random() < 0.5 else x for x in g]  # f, g: never gold
        s = score("CHIP-CTC", [ex(i, label=x) for i, x in enumerate(g)],
                  [ex(i, label=x) for i, x in enumerate(p)], intervals=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # UndefinedMetricWarning for never-predicted labels
            P, R, F, _ = sk.precision_recall_fscore_support(g, p, average="macro")
        assert s.metrics["macro_f1"] == pytest.approx(F, abs=1e-9)
        assert s.metrics["macro_precision"] == pytest.approx(P, abs=1e-9)
        assert s.metrics["macro_recall"] == pytest.approx(R, abs=1e-9)
        assert s.metrics["accuracy"] == pytest.approx(sk.accuracy_score(g, p), abs=1e-12)


def test_ctc_official_example(cblue_dir):
    gold = load(cblue_dir / "CHIP-CTC/example_gold.json", "CHIP-CTC").examples
    pred = load(cblue_dir / "CHIP-CTC/example_pred.json", "CHIP-CTC").examples
    s = score("CHIP-CTC", gold, pred, intervals=False)
    # gold Multiple, Addictive Behavior, Therapy or Surgery; pred Multiple, Symptom, Exercise
    # label union: Addictive Behavior, Exercise, Multiple, Symptom, Therapy or Surgery (5)
    # only Multiple has F 1 -> macro F = 1/5; accuracy 1/3
    assert s.metrics["macro_f1"] == pytest.approx(0.2)
    assert s.metrics["accuracy"] == pytest.approx(1 / 3)


def test_sts_official_example(cblue_dir):
    gold = load(cblue_dir / "CHIP-STS/example_golden.json", "CHIP-STS").examples
    pred = load(cblue_dir / "CHIP-STS/example_pred.json", "CHIP-STS").examples
    s = score("CHIP-STS", gold, pred, intervals=False)
    # gold 1,1,0; pred 1,0,0
    # "0": tp1 pred2 gold1 -> F 2/3; "1": tp1 pred1 gold2 -> F 2/3; macro 2/3
    # macro P = (1/2 + 1)/2 = 3/4; accuracy 2/3
    assert s.metrics["macro_f1"] == pytest.approx(2 / 3)
    assert s.metrics["macro_precision"] == pytest.approx(0.75)
    assert s.metrics["accuracy"] == pytest.approx(2 / 3)


def test_qic_official_example(cblue_dir):
    gold = load(cblue_dir / "KUAKE-QIC/example_gold.json", "KUAKE-QIC").examples
    pred = load(cblue_dir / "KUAKE-QIC/example_pred.json", "KUAKE-QIC").examples
    s = score("KUAKE-QIC", gold, align_by_key(gold, pred), intervals=False)
    # gold s1 治疗方案, s2 治疗方案, s3 疾病表述; pred s1 治疗方案, s2 疾病表述, s4 (no s3)
    # s1 right, s2 wrong, s3 missing -> accuracy 1/3
    # labels {治疗方案, 疾病表述}: 治疗方案 tp1 pred1 gold2 -> F 2/3; 疾病表述 tp0 -> F 0
    # macro F = 1/3
    assert s.metrics["accuracy"] == pytest.approx(1 / 3)
    assert s.metrics["macro_f1"] == pytest.approx(1 / 3)
    assert s.extra["missing_predictions"] == 1


def test_qtr_official_example(cblue_dir):
    gold = load(cblue_dir / "KUAKE-QTR/example_gold.json", "KUAKE-QTR").examples
    pred = load(cblue_dir / "KUAKE-QTR/example_pred.json", "KUAKE-QTR").examples
    s = score("KUAKE-QTR", gold, pred, intervals=False)
    # gold 2,1,1; pred 2,0,3 -> accuracy 1/3; labels {0,1,2,3}: only "2" has F 1 -> macro 1/4
    assert s.metrics["accuracy"] == pytest.approx(1 / 3)
    assert s.metrics["macro_f1"] == pytest.approx(0.25)


def test_qqr_official_example(cblue_dir):
    # The example files use query/title keys (the loader wants query1/query2), so the
    # Examples are built by hand from the JSON.
    def read(name):
        recs = json.loads((cblue_dir / "KUAKE-QQR" / name).read_text(encoding="utf-8"))
        return [Example(key=r["id"], index=i, text=r["query"], text2=r["title"], label=r["label"])
                for i, r in enumerate(recs)]
    gold, pred = read("example_gold.json"), read("example_pred.json")
    s = score("KUAKE-QQR", gold, align_by_key(gold, pred), intervals=False)
    # gold s1 2, s2 0, s3 2; pred s1 2, s2 1, s4 2 (s3 missing) -> accuracy 1/3
    # labels {0, 1, 2}: "2" tp1 pred1 gold2 -> F 2/3; "0" F 0; "1" F 0 -> macro 2/9
    assert s.metrics["accuracy"] == pytest.approx(1 / 3)
    assert s.metrics["macro_f1"] == pytest.approx(2 / 9)


# ---------------------------------------------------------------------- real dev files

@pytest.mark.parametrize("rel,task,headline", [
    ("CMeEE/CMeEE_dev.json", "CMeEE", "f1"),
    ("CMeIE/CMeIE_dev.json", "CMeIE", "f1"),
    ("CHIP-CTC/CHIP-CTC_dev.json", "CHIP-CTC", "macro_f1"),
])
def test_real_dev_gold_against_itself(cblue_dir, rel, task, headline):
    gold = load(cblue_dir / rel, task).examples
    s = score(task, gold, gold, intervals=False)
    assert s.headline == headline and s.value == 1.0
    if task == "CHIP-CTC":
        assert s.metrics["accuracy"] == 1.0 and len(s.per_label) == 44
    else:
        assert s.metrics["precision"] == s.metrics["recall"] == 1.0
    if task == "CMeIE":
        assert s.extra["official_rounded"]["f1"] == 1.0


def test_qqr_dev_na_record(cblue_dir):
    gold = load(cblue_dir / "KUAKE-QQR/KUAKE-QQR_dev.json", "KUAKE-QQR").examples
    pred = [Example(key=g.key, index=g.index, label="0" if g.label == "NA" else g.label) for g in gold]
    s = score("KUAKE-QQR", gold, pred, intervals=False)
    assert s.metrics["accuracy"] == 1.0
    assert any("'NA'" in n for n in s.notes)
    assert get_task("KUAKE-QQR").scorer == "accuracy"
