"""``streamlit run bench/load_serve.py``: the app exactly as ``serve.py`` serves it (same script,
same start-up warm-up, the project's ``.streamlit/config.toml`` read from the working folder),
with one addition for ``bench/load.py``: every script run the server does is timed in the
server process and written as one JSON line to ``$CBLUE_BENCH_RUN_LOG``.

A line is one call of Streamlit's ``ScriptRunner._run_script``: from the moment the script
thread starts a visitor's rerun (its callbacks, the page, any ``st.rerun()`` it asks for, the
post-run clean-up) to its end. ``start``/``end`` are epoch seconds, ``cpu`` the script
thread's own CPU seconds in that time (``time.thread_time``), ``session`` Streamlit's session id
(the one the visitor's ``new_session`` message names).
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from serve import warm_up  # after the project root is on the path


def _time_script_runs(path: str) -> None:
    out = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - open for the server's lifetime
    lock = threading.Lock()
    run = ScriptRunner._run_script

    def timed(self: ScriptRunner, rerun_data) -> None:
        start, cpu = time.time(), time.thread_time()
        try:
            run(self, rerun_data)
        finally:
            line = json.dumps({"session": self._session_id, "start": start, "end": time.time(),
                               "cpu": time.thread_time() - cpu})
            with lock:
                out.write(line + "\n")

    ScriptRunner._run_script = timed  # type: ignore[method-assign]


if os.environ.get("CBLUE_BENCH_RUN_LOG"):
    _time_script_runs(os.environ["CBLUE_BENCH_RUN_LOG"])

app = st.App(Path(__file__).resolve().parents[1] / "app.py", lifespan=warm_up)
