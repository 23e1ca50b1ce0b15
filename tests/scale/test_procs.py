"""The process bookkeeping that lets a job's local Ray leave nothing behind."""
from __future__ import annotations

import subprocess
import sys

import pytest

from cblue_core.scale.procs import ProcessId, descendants, identify, reap

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_reap_waits_then_kills_what_is_left():
    quick = subprocess.Popen([sys.executable, "-c", "pass"])
    stuck = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert {quick.pid, stuck.pid} <= descendants() | {quick.pid}   # quick may be gone already
        procs = identify({quick.pid, stuck.pid})
        assert ProcessId.of(stuck.pid) in procs and ProcessId.of(stuck.pid).alive()
        quick.wait(10)
        killed = reap(procs, wait_s=0.5)
        assert [p.pid for p in killed] == [stuck.pid]
        assert stuck.wait(10) == -9
        assert not any(p.alive() for p in procs)
    finally:
        for p in (quick, stuck):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_recycled_pid_is_another_process():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        p = ProcessId.of(child.pid)
        assert p is not None and p.alive()
        assert not ProcessId(p.pid, p.start + 1).alive()
    finally:
        child.kill()
        child.wait()
