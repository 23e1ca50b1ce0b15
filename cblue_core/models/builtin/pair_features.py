"""Pair features a bag of n-grams misses: how far apart two short queries are as strings, and
whether they ask the same kind of question.

KUAKE-QQR's hard labels are 1 (query2 narrower than query1) and 2 (query2 broader or asking
something else about the same thing): two queries about one disease that differ only in the
intent word (its cause against its treatment) share most n-grams, so the intent groups below are
compared one by one.
"""
from __future__ import annotations

# Intent words of Chinese medical search queries, grouped by what they ask.
INTENTS: tuple[tuple[str, ...], ...] = (
    ("原因", "为什么", "怎么回事", "引起", "导致", "怎么会"),
    ("怎么办", "治疗", "怎么治", "治愈", "根治", "治好", "缓解"),
    ("吃什么药", "用药", "什么药", "药物", "药膏"),
    ("症状", "表现", "征兆", "前兆"),
    ("饮食", "吃什么", "能吃", "可以吃", "食物", "食疗"),
    ("多少钱", "价格", "费用", "价钱"),
    ("能不能", "可以", "会不会", "是不是", "吗", "能否"),
    ("作用", "功效", "效果", "好处"),
    ("医院", "哪里", "哪家", "科"),
    ("检查", "诊断", "化验"),
    ("预防", "避免"),
    ("危害", "严重", "后果", "影响"),
    ("多久", "几天", "时间", "多长"),
)

N_EXTRA = 4 + 2 * len(INTENTS)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insert, delete, substitute; each costs 1)."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _intents(text: str) -> list[bool]:
    return [any(w in text for w in words) for words in INTENTS]


def extra_features(a: str, b: str) -> list[float]:
    """N_EXTRA numbers for two normalized texts: edit distance (over the longer length and in
    characters, log-scaled), how many characters only one side has (each way), then per intent
    group whether both ask it and whether only one does."""
    dist = edit_distance(a, b)
    longest = max(len(a), len(b), 1)
    only_a, only_b = set(a) - set(b), set(b) - set(a)
    feats = [dist / longest, min(dist, 20) / 20, min(len(only_a), 10) / 10, min(len(only_b), 10) / 10]
    for ia, ib in zip(_intents(a), _intents(b)):
        feats += [float(ia and ib), float(ia != ib)]
    return feats
