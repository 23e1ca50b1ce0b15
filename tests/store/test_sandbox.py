"""The time limit a filter runs under, and the regular expression beside the predicate."""
from __future__ import annotations

import math

import pyarrow as pa
import pytest

from cblue_core.store.sandbox import MAX_TIMEOUT, ExampleFilter, PredicateSandbox, time_limit
from cblue_core.store.user_sql import PredicateRefused, parse_predicate


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, -math.inf])
def test_unusable_time_limits_are_refused(value):
    with pytest.raises(PredicateRefused, match="time limit"):
        time_limit(value)


def test_time_limits_are_capped_where_waits_would_overflow(monkeypatch):
    assert time_limit(1e300) == MAX_TIMEOUT
    assert time_limit(2.5) == 2.5
    monkeypatch.setenv("CBLUE_STUDIO_SQL_TIMEOUT", "1e12")
    assert time_limit(None) == MAX_TIMEOUT


def test_regex_and_predicate_both_apply():
    table = pa.table({"idx": pa.array([0, 1, 2], type=pa.int32()), "text": ["肺炎", "发热", "肺癌"],
                      "text2": pa.array([None, "肺", None], type=pa.string())})
    columns = {"idx": "INTEGER", "text": "VARCHAR", "text2": "VARCHAR"}
    with PredicateSandbox(table) as sandbox:
        assert sandbox.matching_indices(ExampleFilter(regex="肺")) == [0, 1, 2]
        assert sandbox.matching_indices(ExampleFilter(parse_predicate("idx > 0", columns), "肺")) == [1, 2]
        assert sandbox.count(ExampleFilter(regex="^肺.")) == 2   # text2 holds a lone 肺
    with pytest.raises(PredicateRefused, match="longer than 1,000"):
        ExampleFilter(regex="x" * 1_001)
