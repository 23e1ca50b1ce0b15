"""The core is a plain library: importing every module of it must not import Streamlit."""
from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import cblue_core

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import importlib, json, pkgutil, sys
import cblue_core
names = sorted(m.name for m in pkgutil.walk_packages(cblue_core.__path__, "cblue_core.")
               if m.name != "cblue_core.__main__")
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "streamlit": sorted(m for m in sys.modules
                                                       if m == "streamlit" or m.startswith("streamlit."))}))
"""


def test_every_core_module_imports_without_streamlit():
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=False,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = {m.name for m in pkgutil.walk_packages(cblue_core.__path__, "cblue_core.")} - {"cblue_core.__main__"}
    assert set(out["modules"]) == expected and len(expected) > 50
    assert out["streamlit"] == [], out["streamlit"]
