"""Page times under Streamlit's AppTest, on the real-size workspace beside the sample one.

Target at real size: every page open and every rerun a user triggers under 0.7 s (median of
``--repeats`` warm sessions). The workspaces and the scenarios (a page opened by its URL, then
tabs, a confusion-matrix cell click, an error-row click, filters, the next page...) are those of
``bench/scenarios.py``, which ``bench/browser_pages.py`` times in Chromium.

Each workspace is measured in a process of its own, so that the first session really is cold:

- first page of the process: the default page while the workspace is opened (printed apart);
- cold: each step in the first session of the scenario (its runs scored, its model loaded);
- warm: the median of the next ``--repeats`` sessions, each a new AppTest session in the same
  process (process caches kept, as for a second visitor of a running app).

A session opens its page by URL: its first run is the open. AppTest scans the installed
packages for Streamlit components on a session's first run (0.4 s on this machine), which a
server does once at startup, so the sessions share the first page's scan.

Each step is one timed ``AppTest.run()``; its checks (the page shows the new filter, another
example...) run after the clock stops. ``+gc`` is the full ``gc.collect()`` that
``streamlit run`` does after every script run (``runner.postScriptGC``) and AppTest skips: a
browser waits for it. The one-line page (``st.title`` through the same machinery, open and rerun) is the floor.

    python bench/pages.py [--repeats N] [--sample-only] [--rebuild] [--only SCENARIO]
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import scenarios as bench  # bench/ is no package; the user actions: bench.Tab, bench.Row...
from scenarios import (
    REAL_DB,
    Column,
    Scenario,
    argument_parser,
    figure_columns,
    normalised,
    print_table,
    real_runs,
    real_workspace,
    sample_workspace,
    scenarios,
    shared_cblue,
    summarise,
)
from streamlit.testing.v1 import AppTest

from app_pages.navigation import page_file

APP = str(ROOT / "app.py")
TARGET_S = 0.7
TIMEOUT_S = 300


# ====================================================================== the driver
def page_text(at: AppTest) -> str:
    """What the page shows as text: Markdown, captions, alerts, metrics, widget labels and the
    text of st.html blocks."""
    parts = []
    for node in at.main:
        label = getattr(node, "label", None)
        if isinstance(label, str):
            parts.append(label)
        if node.type == "html":
            parts.append(re.sub(r"<[^>]+>", "", re.sub(r"(?s)<style.*?</style>", "", node.proto.body)))
        elif node.type in ("markdown", "caption", "title", "header", "subheader", "text", "error", "warning",
                           "info", "success", "metric"):
            parts.append(str(node.value))
    return normalised("\n".join(parts))


def matrix_click(at: AppTest) -> tuple[str, dict]:
    """What a click on the matrix's busiest cell off the diagonal sends back (see MatrixClick),
    read from the grid drawn: (the component's key, its state)."""
    grid = next((e for e in at.get("bidi_component") if str(getattr(e, "key", "")).startswith("err_cm::")), None)
    if grid is None:
        raise LookupError("no confusion matrix on the page")
    cells = re.findall(r'<div class="cbr-cm-c([^"]*)" data-pick="(\d+,\d+)"[^>]*title="([^"]*)"',
                       json.loads(grid.proto.json)["html"])
    counts = {key: int(title.rsplit("\n", 1)[-1].split()[0].replace(",", ""))
              for kind, key, title in cells if not {"d", "t"} & set(kind.split())}
    return grid.key, {"pick": max(counts, key=counts.__getitem__)}


def act(at: AppTest, action) -> None:
    """Change what the browser would send for ``action`` (the rerun follows)."""
    if isinstance(action, bench.Tab):
        at.session_state[action.key] = action.name
    elif isinstance(action, bench.MatrixClick):
        key, value = matrix_click(at)
        at.session_state[key] = value
    elif isinstance(action, bench.Row):
        at.session_state[action.key] = {"selection": {"rows": [action.row], "columns": [], "cells": []}}
    elif isinstance(action, bench.Type):
        at.text_input(key=action.key).input(action.text)
    elif isinstance(action, bench.Choose):
        widget = getattr(at, action.kind)(key=action.key)
        value = action.value
        if str(widget.format_func(value)) not in widget.options:    # "数据集样例 / Dataset example"
            value = re.sub(r"\\(.)", r"\1", next(o for o in widget.options if value in o))
        widget.set_value(value)
    elif isinstance(action, bench.Press):
        button = (at.button(key=action.key) if action.key else
                  next(b for b in at.button if b.label == action.label))
        button.click()
    elif isinstance(action, bench.StepUp):
        at.number_input(key=action.key).increment()
    elif isinstance(action, bench.Number):
        at.number_input(key=action.key).set_value(action.value)


def holds(at: AppTest, action) -> str | None:
    """The widget holds what the step set (the tab open, the option chosen)."""
    if isinstance(action, (bench.Tab, bench.Choose, bench.Number)):
        want = action.name if isinstance(action, bench.Tab) else action.value
        got = at.session_state.get(action.key)
        if isinstance(want, str) and isinstance(got, str) and want in got or got == want:
            return None
        return f"{action.key} is {got!r}, not {want!r}"
    return None


COMPONENTS: list = []      # the component scan of the process's first session


def new_session(script: str = APP) -> AppTest:
    """A new AppTest session. Each AppTest scans the installed packages for Streamlit
    components on its first run (0.4 s here), which a server does once at startup: the
    sessions share the scan of the process's first page."""
    at = AppTest.from_file(script, default_timeout=TIMEOUT_S)
    at._bidi_component_manager = COMPONENTS[0]
    return at


def session(sc: Scenario, sample: bool) -> tuple[dict[str, float], dict[str, float], str | None]:
    """One new session: the page opened by its URL (the session's first run), then each step.
    ({step: seconds}, {step: post-run gc seconds}, problem)."""
    at = new_session()
    at.query_params = dict(sc.query)
    at.switch_page(page_file(sc.page))      # the file name is the url path: no run needed before
    times: dict[str, float] = {}
    gcs: dict[str, float] = {}
    before = ""
    gc.collect()
    for label, step in [("open", None)] + [(s.name, s) for s in sc.steps]:
        if step is not None and step.real_only and sample:
            continue
        try:
            if step is not None:
                act(at, step.action)
            start = time.perf_counter()
            at.run()
            times[label] = time.perf_counter() - start
        except Exception as exc:  # noqa: BLE001 - a widget missing or refused: the page changed
            return times, gcs, f"{label}: {type(exc).__name__} {str(exc)[:160]}"
        start = time.perf_counter()
        gc.collect()
        gcs[label] = time.perf_counter() - start
        if at.exception:
            return times, gcs, f"{label}: raised {at.exception[0].message.splitlines()[0][:160]}"
        after = page_text(at)
        problems = [holds(at, step.action)] if step else []
        problems += [c.problem(before, after) for c in (step.checks if step else sc.opened)]
        problem = next((p for p in problems if p), None)
        if problem:
            times.pop(label)
            return times, gcs, f"{label}: {problem}"
        before = after
    return times, gcs, None


def floor(repeats: int) -> tuple[float, float]:
    """A one-line page's (first run, rerun) in a new session: the machinery's own time."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "one_line.py"
        script.write_text("import streamlit as st\nst.title('one line')\n", encoding="utf-8")
        opens, reruns = [], []
        for _ in range(repeats + 1):
            at = new_session(str(script))
            for times in (opens, reruns):
                start = time.perf_counter()
                at.run()
                times.append(time.perf_counter() - start)
    return statistics.median(opens[1:]), statistics.median(reruns[1:])


# ====================================================================== one process per workspace
def child(kind: str, repeats: int, only: list[str] | None) -> None:
    """Measure one workspace in this (fresh) process; the last line printed is the JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        if kind == "sample":
            db = Path(tmp) / "pages.duckdb"
            runs = sample_workspace(db)
        else:
            db = REAL_DB
            runs = real_runs(db)        # before the app holds the file open
        os.environ["CBLUE_STUDIO_DB"] = str(db)
        start = time.perf_counter()
        first = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
        first_s = time.perf_counter() - start
        if first.exception:
            raise SystemExit(f"the default page raised: {first.exception[0].message}")
        COMPONENTS.append(first._bidi_component_manager)
        results: dict = {"first_page_of_the_process_s": round(first_s, 3),
                         "one_line_page_s": [round(x, 4) for x in floor(repeats)],
                         "load_avg_1m": [os.getloadavg()[0]], "flows": {}}
        for name, sc in scenarios(runs).items():
            if only and name not in only:
                continue
            runs_, gcs, problems = [], [], []
            for n in range(repeats + 1):
                times, gc_s, problem = session(sc, kind == "sample")
                runs_.append(times)
                gcs.append(gc_s)
                if problem:
                    problems.append(f"session {n}: {problem}")
            res = summarise(runs_, sc.labels())
            for label, entry in res.items():
                warm_gc = [g[label] for g in gcs[1:] if label in g]
                if warm_gc and "warm_p50_s" in entry:
                    entry["warm_plus_gc_s"] = round(entry["warm_p50_s"] + statistics.median(warm_gc), 3)
            if problems:
                res["problems"] = problems[:3]
                print(f"  {name}: " + " | ".join(problems[:3]), flush=True)
            results["flows"][name] = res
            print(f"  {kind}: measured {name}", flush=True)
        results["load_avg_1m"].append(os.getloadavg()[0])
    print(json.dumps(results, ensure_ascii=False), flush=True)


def run_child(kind: str, repeats: int, only: list[str] | None) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--repeats", str(repeats)]
    for name in only or []:
        cmd += ["--only", name]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    last = ""
    for line in proc.stdout:
        if line.startswith("{"):
            last = line
        else:
            print(line, end="", flush=True)
    if proc.wait() or not last:
        raise SystemExit(f"the {kind} measurement failed (exit {proc.returncode})")
    return json.loads(last)


COLUMNS = figure_columns(Column("real +gc", "real", "warm_plus_gc_s"))


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--sample-only", action="store_true", help="skip the real-size workspace")
    parser.add_argument("--child", choices=["sample", "real"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        # AppTest reads session state and caches from the main thread: no "missing
        # ScriptRunContext" line each time
        logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").disabled = True
        child(args.child, args.repeats, args.only)
        return
    shared = None if args.sample_only else shared_cblue()
    if shared is not None:
        real_workspace(shared, REAL_DB, args.rebuild)
    elif not args.sample_only:
        print("no shared/cblue folder (../shared/cblue or $CBLUE_SHARED/cblue): sample workspace only")
    results = {"sample": run_child("sample", args.repeats, args.only),
               "real": run_child("real", args.repeats, args.only) if shared else None}
    print(f"\nAppTest, target {TARGET_S} s for every page open and rerun at real size ('!' over it); warm = median "
          f"of {args.repeats} fresh sessions, cold = the first session of the process; +gc = warm plus the "
          "post-run gc.collect() of `streamlit run`")
    for kind, r in results.items():
        if r:
            print(f"{kind}: first page of the process {r['first_page_of_the_process_s']:.3f} s (workspace opened), "
                  f"one-line page open {r['one_line_page_s'][0]:.3f} s and rerun {r['one_line_page_s'][1]:.3f} s, "
                  f"load average {r['load_avg_1m']}")
    misses = print_table(results, COLUMNS, lambda step: TARGET_S)
    print(f"{len(misses)} warm figures over the target at real size")
    print(json.dumps({**results, "target_s": TARGET_S, "misses": misses}, ensure_ascii=False))


if __name__ == "__main__":
    main()
