"""Curated cases for the clinician demo, chosen by a written rule that never looks at whether a
model gets them right (the demo marks right and wrong, so a mistake stays visible).

The rule: among a split's records whose text is one sentence ending in ``。`` of 20 to 120
characters (for query tasks, whose texts are search queries without final punctuation: one
line of 6 to 60 characters), that read as clean prose (the quality rule below), and, for a
model trained on part of the split, that the model never saw, pick greedily the record that adds
the most entity types, predicates or labels not yet shown; ties are broken by a seeded shuffle
(seed 0). Cases are kept as (dataset content hash, record index), never as copied text: the same
file gives the same cases in every workspace.

The quality rule drops what CBLUE's texts scraped from the web carry and a clinician should not
be shown: replacement or box characters (``□``, ``�``, private-use glyphs, control characters),
Markdown or table syntax (``##``, ``---|``, ``|``, `````, ``**``, ``[`` … ``](``), and a text that
starts with a symbol instead of a word (``@``, ``#``, ``*``, ``-``, ``>``, ``·``).
"""
from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..records import Example

RULE = ("one sentence ending in 。 of 20-120 characters (queries: one line of 6-60 characters), clean "
        "prose (no box or replacement characters, no Markdown or table syntax, no leading symbol), not "
        "in the model's training data; picked greedily to cover every type (ties by a seed-0 shuffle)")
RULE_PLAIN = ("whole sentences from the benchmark's development set that the model never saw in training, "
              "chosen to show every kind of result; the model's mistakes are shown too")
RULE_ZH = "从基准开发集中选出的完整句子，模型训练时未见过，覆盖各类结果；模型的错误也照样显示。"
MIN_CHARS, MAX_CHARS = 20, 120
QUERY_MIN_CHARS, QUERY_MAX_CHARS = 6, 60

_BOXES = frozenset("□■▢▣◻◼☐⬜\ufffd\u25a1")
_MARKUP = re.compile(r"#{2,}|-{3,}|\|\s*-|\||`|\*\*|\]\(|^\s*>|查看全部")
_LEADING_OK = frozenset("（(“\"《【「『")


@dataclass(frozen=True)
class CuratedCase:
    """One case and why the rule kept it."""

    index: int
    reason: str


def debris(text: str) -> str | None:
    """Why a text reads as scraped debris rather than clean prose, or None when it is clean."""
    for ch in text:
        if ch in _BOXES:
            return f"box or replacement character {ch!r}"
        cat = unicodedata.category(ch)
        if cat == "Co" or (cat == "Cc" and ch not in "\n\t"):
            return f"control or private-use character U+{ord(ch):04X}"
    if m := _MARKUP.search(text):
        return f"Markdown or table syntax {m.group(0)!r}"
    first = text.lstrip()[:1]
    if first and not first.isalnum() and first not in _LEADING_OK:
        return f"starts with the symbol {first!r}"
    return None


def shown_types(ex: Example) -> set[str]:
    """What a case shows: its entity types, predicates and label."""
    types = {s.type for s in ex.spans} | {t.predicate for t in ex.triples}
    if ex.label:
        types.add(ex.label)
    return types


def eligible(ex: Example, *, queries: bool = False) -> bool:
    text = (ex.text or "").strip()
    if debris(text) is not None:
        return False
    if queries:
        return QUERY_MIN_CHARS <= len(text) <= QUERY_MAX_CHARS and "\n" not in text
    return (MIN_CHARS <= len(text) <= MAX_CHARS and text.endswith("。")
            and text.count("。") == 1 and not ex.text2)


def curated_cases(examples: Sequence[Example], *, k: int = 12, exclude: Collection[int] = (),
                  seed: int = 0, queries: bool = False) -> list[CuratedCase]:
    """Up to ``k`` cases by the rule above, each with the reason it was kept (``exclude``: records
    a model was trained on; ``queries``: the query rule, for classification and pair tasks)."""
    skip = set(exclude)
    pool = [ex for ex in examples if ex.index not in skip and eligible(ex, queries=queries)]
    random.Random(seed).shuffle(pool)
    covered: set[str] = set()
    chosen: list[CuratedCase] = []
    shape = "a query of 6-60 characters" if queries else "one clean sentence of 20-120 characters"
    while pool and len(chosen) < k:
        best = max(range(len(pool)), key=lambda i: (len(shown_types(pool[i]) - covered), -i))
        ex = pool.pop(best)
        new = sorted(shown_types(ex) - covered)
        adds = f"adds {', '.join(new)}" if new else "adds nothing new (every type already shown; next by the shuffle)"
        chosen.append(CuratedCase(ex.index, f"{shape}, unseen in training; {adds}"))
        covered |= shown_types(ex)
    return chosen


def curated_indices(examples: Sequence[Example], *, k: int = 12, exclude: Collection[int] = (),
                    seed: int = 0, queries: bool = False) -> list[int]:
    """The record indices of :func:`curated_cases`."""
    return [c.index for c in curated_cases(examples, k=k, exclude=exclude, seed=seed, queries=queries)]
