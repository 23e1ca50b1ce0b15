"""A selection slice grouped by the first text of a pair.

KUAKE-QQR's train file repeats each query1 about 19 times, while its dev file shares almost none
with train: a slice drawn by example would put a query's siblings on both sides and flatter every
choice made on it. Drawing whole query1 groups keeps the slice as unseen as dev is.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...records import Example


@dataclass(frozen=True)
class GroupedSplit:
    fit: list[int]            # indices of the examples to train on (sorted)
    selection: list[int]      # indices of the held-out selection slice (sorted)
    groups: int               # distinct groups in all
    selection_groups: int     # of which held out
    seed: int
    fraction: float

    def describe(self, key: str = "query1") -> str:
        return (f"selection slice: {self.selection_groups} of {self.groups} {key} groups "
                f"({self.fraction:.0%}, numpy seed {self.seed}; {len(self.selection)} pairs), "
                f"sharing no {key} with the {len(self.fit)} training pairs")


def group_split(examples: Sequence[Example], *, fraction: float = 0.1, seed: int = 0) -> GroupedSplit:
    """Hold out ``fraction`` of the distinct first texts (all their pairs) for selection.

    The groups are sorted before the seeded permutation, so the slice depends on the data and the
    seed only, not on the file's order."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction}")
    groups = sorted({e.text for e in examples})
    if len(groups) < 2:
        raise ValueError(f"a grouped split needs at least 2 distinct first texts, got {len(groups)}")
    perm = np.random.RandomState(seed).permutation(len(groups))
    k = min(max(1, round(len(groups) * fraction)), len(groups) - 1)
    held = {groups[i] for i in perm[:k]}
    selection = [i for i, e in enumerate(examples) if e.text in held]
    fit = [i for i, e in enumerate(examples) if e.text not in held]
    return GroupedSplit(fit=fit, selection=selection, groups=len(groups), selection_groups=k,
                        seed=seed, fraction=fraction)
