"""The grouped selection slice: no first text on both sides, seeded, every example placed once."""
from __future__ import annotations

import pytest

from cblue_core.models.builtin.grouped_split import group_split
from cblue_core.records import Example


def pairs(groups: int, per_group: int) -> list[Example]:
    # interleaved, as the real file's siblings are not always adjacent
    return [Example(key=f"{g}-{k}", index=i, text=f"q{g}", text2=f"p{g}-{k}")
            for i, (k, g) in enumerate((k, g) for k in range(per_group) for g in range(groups))]


def test_no_query_is_on_both_sides():
    ex = pairs(50, 7)
    split = group_split(ex, fraction=0.2, seed=3)
    fit_q = {ex[i].text for i in split.fit}
    sel_q = {ex[i].text for i in split.selection}
    assert fit_q and sel_q and not fit_q & sel_q
    assert sorted(split.fit + split.selection) == list(range(len(ex)))
    assert split.groups == 50 and split.selection_groups == 10 == len(sel_q)
    assert len(split.selection) == 70


def test_seeded_and_order_free():
    ex = pairs(40, 3)
    a = group_split(ex, seed=1)
    assert a == group_split(ex, seed=1)
    assert a.selection != group_split(ex, seed=2).selection
    shuffled = list(reversed(ex))
    b = group_split(shuffled, seed=1)
    assert {shuffled[i].text for i in b.selection} == {ex[i].text for i in a.selection}


def test_both_parts_are_never_empty():
    ex = pairs(2, 5)
    split = group_split(ex, fraction=0.01)
    assert split.selection and split.fit
    assert "1 of 2 query1 groups" in split.describe()


@pytest.mark.parametrize("fraction", [0, 1, 1.5])
def test_bad_fraction_is_refused(fraction):
    with pytest.raises(ValueError, match="fraction"):
        group_split(pairs(5, 2), fraction=fraction)


def test_one_group_is_refused():
    with pytest.raises(ValueError, match="at least 2 distinct"):
        group_split(pairs(1, 4))
