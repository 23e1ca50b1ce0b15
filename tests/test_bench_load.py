"""bench/load.py on the sample workspace with two visitors: every step done, the shared
example's second save refused by the version check and then kept, each save stored once.
Marked ``browser``: it starts a real server, as those tests do (no Chromium is needed)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.browser
def test_two_visitors_every_step_done_and_every_save_stored_once(tmp_path):
    out = tmp_path / "load.json"
    done = subprocess.run([sys.executable, "bench/load.py", "--workspace", "sample", "--visitors", "2",
                           "--rounds", "1", "--step-timeout", "90", "--timeout", "240", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=420, check=False)
    assert out.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["failures"] == []
    saves = result["saves"]
    assert saves["problems"] == []
    assert saves["saves_asked"] == saves["confirmed"] == saves["events_of_the_bench"] == 4
    assert saves["refused_by_version_check"] >= 1       # the shared example: one of the two came second
    assert result["steps"]["Keep mine (after a conflict)"]["n"] >= 1
    assert result["script_runs"] >= result["steps_done"]
    assert result["memory"]["peak_mib"] > 0
