"""The 26 hand-made cases run through the official scoring functions (reference/unit_cases.json)."""
from __future__ import annotations

import json

import pytest

from cblue_core.metrics.promptcblue import official

from ._util import load_json

N_CASES = 26


@pytest.fixture(scope="module")
def unit_cases(reference_dir):
    return load_json(reference_dir / "unit_cases.json")["cases"]


@pytest.mark.parametrize("index", range(N_CASES))
def test_unit_case(index, unit_cases):
    case = unit_cases[index]
    fn = getattr(official, case["function"])
    kwargs = json.loads(json.dumps(case["kwargs"]))  # a private copy
    if "error" in case:
        with pytest.raises(Exception) as info:
            fn(**kwargs)
        assert f"{type(info.value).__name__}: {info.value}" == case["error"]
    else:
        out = fn(**kwargs)
        assert len(out) == len(case["output"])
        for mine, ref in zip(out, case["output"]):
            assert abs(mine - ref) <= 1e-9, (case["id"], out, case["output"])
            assert type(mine) is type(ref) or isinstance(ref, float)  # the integer 0 stays an int


def test_all_26_cases_present(unit_cases):
    cases = unit_cases
    assert len(cases) == N_CASES
    assert {c["function"] for c in cases} <= {n for n in dir(official) if n.startswith("calc_")}
