"""The demo's curated cases follow the written rule, never the model's answers."""
from __future__ import annotations

from cblue_core.curation import curated_indices, eligible
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
