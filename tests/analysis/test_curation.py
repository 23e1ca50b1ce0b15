"""The demo's curated cases follow the written rule, never the model's answers."""
from __future__ import annotations

from cblue_core.analysis.curation import curated_cases, curated_indices, debris, eligible
from cblue_core.records import Example, Span, Triple


def sent(i, text, types=(), label=None, predicates=()):
    return Example(key=str(i), index=i, text=text, label=label,
                   spans=[Span(0, 1, t, text[0]) for t in types],
                   triples=[Triple("a", p, "b") for p in predicates])


LONG = "患者因反复咳嗽伴发热三天入院，胸部检查提示右下肺炎。"        # 26 characters


def test_eligibility():
    assert eligible(sent(0, LONG))
    assert not eligible(sent(0, "患者发热。"))                       # too short
    assert not eligible(sent(0, LONG[:-1] + "，"))                   # no 。 at the end
    assert not eligible(sent(0, LONG + LONG))                        # two sentences
    assert not eligible(sent(0, "很" * 119 + "长。"))                # 121 characters


def test_greedy_cover_of_every_type():
    examples = [sent(0, LONG, ["dis"]), sent(1, LONG, ["dis", "sym"]), sent(2, LONG, ["dru"]),
                sent(3, LONG, ["dis", "sym", "bod"]), sent(4, "太短。", ["ite"])]
    picked = curated_indices(examples, k=3)
    assert picked[0] == 3                                            # three new types at once
    assert set(picked) >= {2}                                        # then the one adding dru
    covered = set().union(*({t.type for t in examples[i].spans} for i in picked))
    assert covered == {"dis", "sym", "bod", "dru"}                   # ite only in a short text


def test_exclusion_seed_and_determinism():
    examples = [sent(i, LONG, [f"t{i % 3}"]) for i in range(30)]
    a = curated_indices(examples, k=5)
    assert a == curated_indices(examples, k=5) and len(a) == 5
    assert curated_indices(examples, k=5, seed=1) != a
    skip = set(range(0, 30, 2))
    assert not set(curated_indices(examples, k=10, exclude=skip)) & skip


def test_labels_and_predicates_count_as_types():
    examples = [sent(0, LONG, label="A"), sent(1, LONG, label="B"), sent(2, LONG, predicates=["并发症"])]
    assert set(curated_indices(examples, k=3)) == {0, 1, 2}


def test_query_tasks_use_the_query_rule():
    queries = [sent(0, "糖尿病人能喝牛奶吗", label="注意事项"), sent(1, "头痛", label="病情诊断"),
               sent(2, "感冒发烧吃什么药好得快", label="治疗方案")]
    assert curated_indices(queries) == []                               # no sentence ends in 。
    assert set(curated_indices(queries, queries=True)) == {0, 2}        # "头痛" is too short


def test_scraped_debris_is_never_a_case():
    """What CMeIE's web-scraped texts carry (seen in its dev file), each refused with its reason."""
    tail = "患者因反复咳嗽伴发热三天入院。"
    cases = {
        "口咽癌@### 定义 口咽癌绝大多数是鳞状细胞癌出现在口咽部。": "Markdown or table syntax",
        "膀胱癌@[ 肾细胞癌 ](/topics/zh-cn/261) 病因和症状相似。": "Markdown or table syntax",
        "并发症 ---|--- 查看全部" + tail: "Markdown or table syntax",
        "豆腐盒□□" + tail: "box or replacement character",
        "坏字符\ufffd" + tail: "box or replacement character",
        "私用\ue313字符" + tail: "control or private-use character",
        "@ 由于腮腺炎病毒对腺体组织和神经组织的亲和性而出现并发症。": "starts with the symbol",
        "\ufeff唐氏综合征又称21三体综合征，是最早被确定的染色体病。": "starts with the symbol",
    }
    for text, reason in cases.items():
        assert reason in (debris(text) or ""), text
        assert not eligible(sent(0, text))
    assert debris("（四）心理和社会因素如幼儿时期的不良遭遇等。") is None        # an opening bracket is prose
    assert debris("脑炎@诊查应包括血液培养、神经影像学检查和脑脊液分析。") is None  # CMeIE's title@text


def test_each_case_says_why_it_was_kept():
    examples = [sent(0, LONG, ["dis", "sym"]), sent(1, LONG, ["dis"])]
    first, second = curated_cases(examples, k=2)
    assert (first.index, second.index) == (0, 1)
    assert "unseen in training" in first.reason and "adds dis, sym" in first.reason
    assert "adds nothing new" in second.reason
