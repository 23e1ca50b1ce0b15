"""Curated cases for the clinician demo, chosen by a written rule that never looks at whether a
model gets them right (the demo marks right and wrong, so a mistake stays visible).

The rule: among a split's records whose text is one sentence ending in ``。`` of 20 to 120
characters (for query tasks, whose texts are search queries without final punctuation: one
line of 6 to 60 characters), and, for a model trained on part of the split, that the model
never saw, pick
greedily the record that adds the most entity types, predicates or labels not yet shown; ties
are broken by a seeded shuffle (seed 0). Cases are kept as (dataset content hash, record
index), never as copied text: the same file gives the same cases in every workspace.
"""
from __future__ import annotations

import random
from collections.abc import Collection, Sequence

from .records import Example

RULE = ("one sentence ending in 。 of 20-120 characters (queries: one line of 6-60 characters), not "
        "in the model's training data; picked greedily to cover every type (ties by a seed-0 shuffle)")
MIN_CHARS, MAX_CHARS = 20, 120
QUERY_MIN_CHARS, QUERY_MAX_CHARS = 6, 60


def shown_types(ex: Example) -> set[str]:
    """What a case shows: its entity types, predicates and label."""
    types = {s.type for s in ex.spans} | {t.predicate for t in ex.triples}
    if ex.label:
        types.add(ex.label)
    return types


def eligible(ex: Example, *, queries: bool = False) -> bool:
    text = (ex.text or "").strip()
    if queries:
        return QUERY_MIN_CHARS <= len(text) <= QUERY_MAX_CHARS and "\n" not in text
    return (MIN_CHARS <= len(text) <= MAX_CHARS and text.endswith("。")
            and text.count("。") == 1 and not ex.text2)


def curated_indices(examples: Sequence[Example], *, k: int = 12, exclude: Collection[int] = (),
                    seed: int = 0, queries: bool = False) -> list[int]:
    """Record indices of up to ``k`` cases by the rule above (``exclude``: records a model was
    trained on; ``queries``: the query rule, for classification and pair tasks)."""
    skip = set(exclude)
    pool = [ex for ex in examples if ex.index not in skip and eligible(ex, queries=queries)]
    random.Random(seed).shuffle(pool)
    covered: set[str] = set()
    chosen: list[int] = []
    while pool and len(chosen) < k:
        best = max(range(len(pool)), key=lambda i: (len(shown_types(pool[i]) - covered), -i))
        ex = pool.pop(best)
        chosen.append(ex.index)
        covered |= shown_types(ex)
    return chosen
