"""Typed JSON: results written by one process are read back by another as the same dataclasses
(arrays with their dtype and shape), and text that does not hold the type asked for is refused
with the path of the first wrong value; no type is ever built from a name found in the text."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from cblue_core.analysis.buckets import BucketScore
from cblue_core.io.typed_json import TypedJsonError, dumps, loads
from cblue_core.metrics.types import ExampleStats
from cblue_core.runs.evaluation import Evaluation


@dataclass(frozen=True)
class Inner:
    name: str
    weight: float | None = None


@dataclass
class Outer:
    inners: list[Inner]
    by_id: dict[int, Inner]
    pair: tuple[int, str]
    many: tuple[str, ...] = ()
    arr: np.ndarray | None = None
    loose: dict[str, object] = field(default_factory=dict)
    hidden: int = field(default=0, init=False)


def test_nested_dataclasses_round_trip():
    value = Outer([Inner("a", 0.5), Inner("丙")], {3: Inner("b")}, (1, "x"), ("p", "q"),
                  np.arange(6, dtype=np.int32).reshape(2, 3), {"k": [1, "two"]})
    value.hidden = 7
    back = loads(dumps(value), Outer)
    assert back.inners == value.inners and back.by_id == {3: Inner("b")}
    assert back.pair == (1, "x") and back.many == ("p", "q") and back.loose == {"k": [1, "two"]}
    assert back.arr is not None and back.arr.dtype == np.int32 and back.arr.shape == (2, 3)
    assert np.array_equal(back.arr, value.arr) and back.hidden == 7
    assert back.arr.flags.writeable        # a copy, not a view on the decoded bytes


def test_bucket_scores_and_evaluations_round_trip():
    scores = [BucketScore("entity length", "1", 0, 3, 1, 2, 4, 2 / 3, 0.1, 0.9),
              BucketScore("nesting role", "inner", 2, 0, 0, 5, 3, 0.0, 0.0, 0.0)]
    assert loads(dumps(scores), list[BucketScore]) == scores
    ev = Evaluation("CMeEE", "f1", {"f1": 0.5}, {"f1": (0.4, 0.6)}, {"bod": {"tp": 1, "f1": 0.5}},
                    ["a note"], 1, {"clean": {"x": 1}})
    assert loads(dumps(ev), Evaluation) == ev
    stats = ExampleStats.from_labels([0, 1, 2], [0, -1, 2], ("a", "b", "c"))
    back = loads(dumps(stats), ExampleStats)
    assert back.kind == "labels" and back.n == 3 and back.labels == ("a", "b", "c")
    assert back.gold is not None and back.pred is not None and back.tp is None
    assert back.gold.dtype == np.int64 and back.pred.tolist() == [0, -1, 2]


def test_floats_keep_their_type_and_specials():
    back = loads(dumps(Inner("x", float("inf"))), Inner)
    assert back.weight == float("inf")
    assert loads('{"name": "x", "weight": 1}', Inner).weight == 1.0
    assert isinstance(loads('{"name": "x", "weight": 1}', Inner).weight, float)


@pytest.mark.parametrize(("text", "where"), [
    ('[{"name": 5}]', r"\$\[0\]\.name: expected str, found int"),
    ('[{"weight": 1.0}]', r"\$\[0\]: Inner lacks its field 'name'"),
    ('{"name": "x"}', r"\$: expected a list, found dict"),
    ('[{"name": "x", "weight": "heavy"}]', r"\$\[0\]\.weight: expected float, found str"),
    ('[1', "not JSON"),
])
def test_a_wrong_payload_is_refused_with_its_path(text, where):
    with pytest.raises(TypedJsonError, match=where):
        loads(text, list[Inner])


def test_no_type_is_built_from_a_name_in_the_text():
    # a crafted workspace naming a class: read as the type asked for, nothing else
    text = '{"__class__": "subprocess.Popen", "name": "x", "args": ["true"]}'
    assert loads(text, Inner) == Inner("x")
    with pytest.raises(TypedJsonError, match="arrays of Python objects"):
        loads('{"__ndarray__": {"dtype": "|O", "shape": [1], "data": "AA=="}}', np.ndarray)
    with pytest.raises(TypedJsonError, match="broken array"):
        loads('{"__ndarray__": {"dtype": "<i8", "shape": [3], "data": "AA=="}}', np.ndarray)


def test_what_cannot_be_written_is_refused():
    with pytest.raises(TypeError, match="cannot write a complex"):
        dumps([1j])


def test_the_module_example_runs():
    import doctest

    from cblue_core.io import typed_json
    result = doctest.testmod(typed_json)
    assert result.attempted and not result.failed
