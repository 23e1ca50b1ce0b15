"""--engine ray without Ray installed: one clear line, exit 2, nothing written."""
from __future__ import annotations

import sys

import pytest

from cblue_core.cli.models import cmd_predict, cmd_run
from cblue_core.scale.ray_engine import RAY_MISSING, RayUnavailable, require_ray

from .conftest import SAMPLE


@pytest.fixture
def no_ray(monkeypatch):
    for name in [m for m in sys.modules if m == "ray" or m.startswith("ray.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ray", None)   # import ray -> ImportError


def test_require_ray_says_how_to_install(no_ray):
    with pytest.raises(RayUnavailable) as info:
        require_ray()
    assert str(info.value) == RAY_MISSING and "pip install -r requirements-ray.txt" in RAY_MISSING


def test_predict_and_run_refuse_in_one_line(no_ray, tmp_path, capsys):
    src = SAMPLE / "KUAKE-QIC" / "KUAKE-QIC_test.json"
    assert cmd_predict("kuake-qic", str(src), str(tmp_path / "o"), progress=False, engine="ray") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {RAY_MISSING}"]
    assert not (tmp_path / "o").exists()
    assert cmd_run("kuake-qic", "dev", db=str(tmp_path / "ws.duckdb"), engine="ray", progress=False) == 2
    assert capsys.readouterr().err.strip() == f"error: {RAY_MISSING}"
