"""Page render times under Streamlit's AppTest, on the sample workspace and on a real-size one.

Sample workspace (target: under 2 s each). Each page is opened the way a user reaches it (its
URL query parameters), in a fresh session:

- first page of the process: the default page while the workspace is opened;
- cold: the page's first render in the process (its runs scored, its model loaded);
- warm: the median of the next renders, each in a new session (process caches kept, as in a
  running app where a second visitor opens the page).

The peer is a one-line page (``st.title``) through the same AppTest machinery: the floor
that no page can go under. Ratios are page time over that floor. The target is checked on the
first page and on warm renders; a cold Live prediction also imports torch and loads the model
(once per process, shown on the page as the model load time), so it is printed beside it.

Real size (target: every page open and every rerun a user triggers under 0.7 s). A workspace
holding all of ``<shared>/cblue`` (``../shared/cblue`` or ``$CBLUE_SHARED/cblue``) plus the
built-in models' runs on the full CMeEE dev (5,000) and CMeIE dev (3,585) sets, and, for
Compare, a second CMeEE run (the cmeee run with the first entity of every other sentence
dropped). It is built once with the command line (``ingest``, then ``run --model cmeee`` and
``run --model cmeie``; about 3 minutes on 2 cores) and kept at ``workspace/bench-real.duckdb``
(rebuilt when missing, or with ``--rebuild``). Each scenario opens a page and then does what a
user does there (tabs, a confusion-matrix cell click, an error-row click, a filter, the next
page...), each step one timed rerun; the same scenarios also run on the sample workspace, so
that each real-size figure has its sample-data figure beside it. Per step: cold (the first
session of the process) and the median of ``--repeats`` warm sessions (fresh AppTest sessions
in the same process). The sample and real-size measurements each run in a process of their
own, so "cold" and "first page of the process" are really cold.

    python bench/pages.py [--repeats N] [--sample-only] [--rebuild]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from streamlit.testing.v1 import AppTest

from cblue_core.ingest import bootstrap_sample_data
from cblue_core.runs import import_run
from cblue_core.store.workspace import connect

APP = str(ROOT / "app.py")
TARGET_S = 2.0                  # sample workspace
REAL_TARGET_S = 0.7             # real-size workspace: every page open and every rerun
REAL_DB = ROOT / "workspace" / "bench-real.duckdb"
COPY_NAME = "cmeee, every other sentence without its first entity"
TIMEOUT_S = 300


# ====================================================================== workspaces
def sample_workspace(path: Path) -> dict[str, int]:
    """The embedded default (sample data) plus the sample prediction files as runs."""
    ws = connect(path)
    bootstrap_sample_data(ws, ROOT / "sample_data")
    runs = {}
    for pred in sorted((ROOT / "sample_data/cblue").glob("*/*_dev.pred.json")):
        task = pred.parent.name
        did = ws.datasets.find(task, "dev").dataset_id
        runs[task] = import_run(ws, did, pred, name=f"sample {task}").run_id
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    gold = (ROOT / "sample_data/cblue/CMeEE/CMeEE_dev.json").read_bytes()
    runs["CMeEE gold"] = import_run(ws, did, gold, name="CMeEE gold as a run", file_name="gold.json").run_id
    ws.close()
    return runs


def shared_cblue() -> Path | None:
    """``$CBLUE_SHARED/cblue`` or ``../shared/cblue`` (beside the project), where it exists."""
    for base in (os.environ.get("CBLUE_SHARED"), str(ROOT.parent / "shared")):
        if base and (Path(base) / "cblue").is_dir():
            return Path(base) / "cblue"
    return None


def _second_cmeee_run(db: Path) -> None:
    """Compare needs two runs on one split: the cmeee run exported, the first entity of every
    other sentence dropped, imported back."""
    from cblue_core.runs import export_run

    ws = connect(db)
    try:
        run = next(r for r in ws.runs.all() if r.task == "CMeEE" and r.split == "dev" and r.model)
        with tempfile.TemporaryDirectory() as tmp:
            records = json.loads(export_run(ws, run.run_id, tmp).read_text(encoding="utf-8"))
        for rec in records[::2]:
            rec["entities"] = rec["entities"][1:]
        import_run(ws, run.dataset_id, json.dumps(records, ensure_ascii=False).encode(), name=COPY_NAME,
                   file_name="CMeEE_test.json")
    finally:
        ws.close()


def real_runs(db: Path) -> dict[str, int]:
    """{"CMeEE": cmeee model run, "CMeIE": cmeie model run, "CMeEE B": the second CMeEE run};
    raises LookupError when one is missing."""
    ws = connect(db)            # read-write: a workspace of an older schema is migrated, as the app does
    try:
        runs = ws.runs.all()
    finally:
        ws.close()
    found = {}
    for r in runs:
        if r.split == "dev" and r.model and r.task in ("CMeEE", "CMeIE"):
            found.setdefault(r.task, r.run_id)
        elif r.task == "CMeEE" and r.name == COPY_NAME:
            found.setdefault("CMeEE B", r.run_id)
    missing = {"CMeEE", "CMeIE", "CMeEE B"} - set(found)
    if missing:
        raise LookupError(f"{db}: no run for {sorted(missing)}")
    return found


def real_workspace(shared: Path, db: Path = REAL_DB, rebuild: bool = False) -> dict[str, int]:
    """Build (when missing, incomplete, or with ``rebuild``) the real-size workspace at ``db``
    with the command line; return its runs (see :func:`real_runs`)."""
    if db.is_file() and not rebuild:
        try:
            return real_runs(db)
        except LookupError as exc:
            print(f"rebuilding: {exc}", flush=True)
    db.parent.mkdir(parents=True, exist_ok=True)
    building = db.with_name(db.stem + ".building.duckdb")
    for f in (building, Path(f"{building}.wal")):
        f.unlink(missing_ok=True)
    cli = [sys.executable, "-m", "cblue_core"]
    steps = [cli + ["ingest", str(shared), "--db", str(building)]]
    steps += [cli + ["run", "--model", m, "--split", "dev", "--db", str(building), "--no-progress"]
              for m in ("cmeee", "cmeie")]
    start = time.perf_counter()
    for cmd in steps:
        print("building the real-size workspace:", " ".join(cmd[2:]), flush=True)
        done = subprocess.run(cmd, check=False, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    _second_cmeee_run(building)
    for f in (db, Path(f"{db}.wal")):
        f.unlink(missing_ok=True)
    os.replace(building, db)
    print(f"built {db} in {time.perf_counter() - start:.0f} s", flush=True)
    return real_runs(db)


# ====================================================================== sample-data pages
def page_file(url_path: str) -> str:
    """The file of the page at ``url_path``, for AppTest.switch_page: what the app's navigation
    lists (``pages/…`` since the pages moved there), else ``app_pages/<name>.py`` as before."""
    try:
        from app_pages.navigation import PAGES
        return next(p.file for p in PAGES if p.url_path == url_path)
    except (ImportError, StopIteration):
        return f"app_pages/{url_path}.py"


def scenarios(runs: dict[str, int]) -> dict[str, tuple[str, dict, dict, str | None]]:
    """name -> (page file, query parameters, widget state set before the render, the button
    whose click is the timed render, if any)."""
    return {
        "Datasets": (page_file("datasets"), {"task": "CMeEE", "split": "dev", "example": "0"}, {}, None),
        "Live (CMeEE prediction)": (page_file("live"), {"task": "CMeEE"},
                                    {"live_source": "Dataset example"}, "live_run"),
        "Live demo (CMeIE prediction)": (page_file("live"), {"task": "CMeIE", "demo": "1"},
                                         {"live_source": "Curated case"}, "live_run"),
        "Runs": (page_file("runs"), {}, {}, None),
        "Errors": (page_file("errors"), {"run": str(runs["CMeEE"]), "example": "2"}, {}, None),
        "Compare": (page_file("compare"), {"a": str(runs["CMeEE"]), "b": str(runs["CMeEE gold"])}, {}, None),
        "Annotate": (page_file("annotate"), {"task": "CMeEE", "split": "dev", "example": "0"}, {}, None),
    }


def render(page: str, query: dict, state: dict, click: str | None) -> float:
    """Seconds for one render of ``page`` in a new session (navigation run not counted; with
    ``click``, the render that follows a click on that button)."""
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(page)
    for k, v in query.items():
        at.query_params[k] = v
    if click:               # the page drawn, the state set as a user would, then the click
        at.run()
        if state:
            for k, v in state.items():
                choose(at, "radio", k, v)
            at.run()
        at.button(key=click).click()
    else:
        for k, v in state.items():
            at.session_state[k] = v
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise SystemExit(f"{page} raised: {at.exception[0].message}")
    if click == "live_run" and query.get("demo") != "1" and not any(m.label.startswith("Latency") for m in at.metric):
        raise SystemExit(f"{page}: the click predicted nothing")
    return elapsed


def floor(repeats: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "one_line.py"
        script.write_text("import streamlit as st\nst.title('one line')\n", encoding="utf-8")
        times = []
        for _ in range(repeats + 1):
            at = AppTest.from_file(str(script)).run()    # the session's first run, like the navigation run
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def first_page() -> float:
    """The process's first page (the default page, the workspace opened)."""
    start = time.perf_counter()
    first = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    first_s = time.perf_counter() - start
    if first.exception:
        raise SystemExit(f"the default page raised: {first.exception[0].message}")
    return first_s


def legacy_pages(runs: dict[str, int], repeats: int, base: float, first_s: float) -> dict:
    """The sample workspace's page table (one render per page, as measured since the start)."""
    results: dict[str, object] = {"one_line_page_s": round(base, 4), "first_page_of_the_process_s":
                                  round(first_s, 3)}
    worst = first_s          # over the first page and warm renders
    cold_worst = 0.0
    print(f"first page of the process (default page, workspace opened): {first_s:.3f} s")
    print(f"{'page':>28}  {'cold s':>7}  {'warm p50 s':>10}  {'warm max s':>10}  {'warm / one-line':>15}")
    for name, (page, query, state, click) in scenarios(runs).items():
        try:
            cold = render(page, query, state, click)
            warm = [render(page, query, state, click) for _ in range(repeats)]
        except (SystemExit, Exception) as exc:  # noqa: BLE001 - a page that fails is reported, not timed
            print(f"{name:>28}  failed: {str(exc).splitlines()[0][:160]}")
            results[name] = {"error": str(exc).splitlines()[0][:300]}
            continue
        p50 = statistics.median(warm)
        worst = max(worst, max(warm))
        cold_worst = max(cold_worst, cold)
        print(f"{name:>28}  {cold:7.3f}  {p50:10.3f}  {max(warm):10.3f}  {p50 / base:15.1f}")
        results[name] = {"cold_s": round(cold, 3), "warm_p50_s": round(p50, 3),
                         "warm_max_s": round(max(warm), 3)}
    results.update({"target_s": TARGET_S, "slowest_first_or_warm_s": round(worst, 3),
                    "slowest_cold_s": round(cold_worst, 3), "meets_target": worst < TARGET_S})
    print(f"one-line page (AppTest floor): {base:.4f} s; slowest first-page or warm render {worst:.3f} s "
          f"(target {TARGET_S} s); slowest cold render {cold_worst:.3f} s")
    return results


# ====================================================================== interaction scenarios
Action = Callable[[AppTest], None]


@dataclass
class Flow:
    """A page opened in a new session, then the steps a user takes there: each step changes
    what the browser would send (a widget value, a click) and is timed as one rerun."""

    page: str
    query: dict[str, str]
    steps: list[tuple[str, Action]] = field(default_factory=list)
    state: dict = field(default_factory=dict)   # widget state before the page's first render


def put(key: str, value) -> Action:
    def act(at: AppTest) -> None:
        at.session_state[key] = value
    return act


def click(key: str | None = None, label: str | None = None) -> Action:
    def act(at: AppTest) -> None:
        button = at.button(key=key) if key else next(b for b in at.button if b.label == label)
        button.click()
    return act


def typed(key: str, text: str) -> Action:
    """Text typed into a text field and Enter pressed."""
    def act(at: AppTest) -> None:
        at.text_input(key=key).input(text)
    return act


def choose(at: AppTest, kind: str, key: str, value) -> None:
    """Set a radio or selectbox to ``value``, or (a text value the page has since renamed, e.g.
    "Dataset example / 数据集样例") to the first option that contains it."""
    widget = getattr(at, kind)(key=key)
    if isinstance(value, str) and value not in widget.options:
        shown = next((o for o in widget.options if value in o), None)
        if shown is not None:       # AppTest lists options Markdown-escaped: "a \\/ b"
            at.session_state[key] = re.sub(r"\\(.)", r"\1", shown)
            return
    widget.set_value(value)


def set_value(kind: str, key: str, value) -> Action:
    def act(at: AppTest) -> None:
        if kind in ("radio", "selectbox"):
            choose(at, kind, key, value)
        else:
            getattr(at, kind)(key=key).set_value(value)
    return act


def chart_points(*points: dict) -> dict:
    return {"selection": {"points": list(points), "point_indices": list(range(len(points))),
                          "box": [], "lasso": []}}


def row(i: int) -> dict:
    return {"selection": {"rows": [i], "columns": [], "cells": []}}


def figure_of(at: AppTest, key: str) -> dict:
    """The Plotly figure (JSON) of the chart with widget key ``key``."""
    charts = list(at.get("plotly_chart"))
    chart = next((c for c in charts if key in (getattr(c.proto, "id", "") or "")), None)
    if chart is None:
        raise LookupError(f"no chart {key!r} on the page ({len(charts)} charts)")
    return json.loads(chart.proto.spec)


def chart_click(key: str, off_diagonal: bool = False) -> Action:
    """What a click on a point of the chart ``key`` sends back, read from the figure the page
    drew: the first point of the first trace, or (``off_diagonal``, a confusion matrix) the
    off-diagonal cell with the largest value, the one a user looks at first."""
    def act(at: AppTest) -> None:
        trace_no, trace = next((n, t) for n, t in enumerate(figure_of(at, key)["data"])
                               if t.get("x") is not None and t.get("mode") != "text")
        xs, ys = list(trace["x"]), list(trace["y"])
        i = 0
        if off_diagonal:
            colour = (trace.get("marker") or {}).get("color")
            value = colour if isinstance(colour, list) else [0] * len(xs)
            off = [n for n in range(len(xs)) if xs[n] != ys[n]]
            i = max(off or range(len(xs)), key=lambda n: value[n])
        point = {"x": xs[i], "y": ys[i], "curve_number": trace_no, "point_number": i, "point_index": i}
        if trace.get("customdata") is not None:
            point["customdata"] = trace["customdata"][i]
        at.session_state[key] = chart_points(point)
    return act


ERROR_TABS = ["Per label", "Confusion matrix", "Error taxonomy", "Buckets", "Slices", "Corrected gold"]


def errors_flow(run_id: int) -> Flow:
    return Flow(page_file("errors"), {"run": str(run_id)}, [
        ("tab Confusion matrix", put("err_tab", "Confusion matrix")),
        ("confusion cell click", chart_click("err_cm", off_diagonal=True)),
        ("error row click", put("err_rows", row(0))),
        ("tab Error taxonomy", put("err_tab", "Error taxonomy")),
        ("taxonomy bar click", chart_click("err_tax")),
        ("tab Buckets", put("err_tab", "Buckets")),
        ("tab Slices", put("err_tab", "Slices")),
        ("tab Corrected gold", put("err_tab", "Corrected gold")),
        ("tab Per label", put("err_tab", "Per label")),
    ])


def flows(runs: dict[str, int], second: str) -> dict[str, Flow]:
    """The scenarios, on a workspace whose runs are ``runs`` (``second``: the key of a second
    run on the CMeEE run's split)."""
    return {
        "Datasets CMeEE train": Flow(page_file("datasets"), {"task": "CMeEE", "split": "train", "example": "0"}, [
            ("filter: text contains", typed("ds_q", "病")),
            ("filter: + SQL predicate", typed("ds_sql", "n_spans >= 3")),
            ("next page of the table", set_value("number_input", "ds_page", 2)),
            ("table row click", put("ds_table", row(3))),
            ("Next example button", click(label="Next ▶")),
            ("task CMeIE", set_value("selectbox", "ds_task", "CMeIE")),
        ]),
        "Live CMeEE": Flow(page_file("live"), {"task": "CMeEE"}, [
            ("input: Dataset example", set_value("radio", "live_source", "Dataset example")),
            ("pick example 7", set_value("selectbox", "live_example", 7)),
            ("Predict click", click("live_run")),
            ("Predict again", click("live_run")),
        ]),
        "Runs": Flow(page_file("runs"), {}, [
            ("select the CMeIE run", set_value("selectbox", "runs_selected", runs["CMeIE"])),
            ("select the CMeEE run", set_value("selectbox", "runs_selected", runs["CMeEE"])),
        ]),
        "Errors CMeEE run": errors_flow(runs["CMeEE"]),
        "Errors CMeIE run": errors_flow(runs["CMeIE"]),
        "Compare CMeEE runs": Flow(page_file("compare"), {"a": str(runs["CMeEE"]), "b": str(runs[second])}, [
            ("list: B right, A wrong", set_value("radio", "cmp_list", "B right, A wrong")),
            ("list: both wrong", set_value("radio", "cmp_list", "both wrong")),
            ("example row click", put("cmp_table", row(2))),
        ]),
        "Annotate CMeEE dev": Flow(page_file("annotate"), {"task": "CMeEE", "split": "dev", "example": "0"}, [
            ("Next example", click("ann_next")),
            ("tab Versions", put("ann_tab", "Versions")),
            ("tab Review queue", put("ann_tab", "Review queue")),
            ("tab Agreement", put("ann_tab", "Agreement")),
            ("tab Re-score", put("ann_tab", "Re-score")),
            ("tab Export", put("ann_tab", "Export")),
            ("tab Edit", put("ann_tab", "Edit")),
        ]),
    }


def check(name: str, step: str, at: AppTest) -> str | None:
    """What went wrong in the rerun (so that a timed step that did nothing is not a figure)."""
    if at.exception:
        return f"raised: {at.exception[0].message.splitlines()[0][:200]}"
    if step == "confusion cell click" or step == "taxonomy bar click":
        try:
            if not len(at.dataframe(key="err_rows").value):
                return "no error rows listed"
        except KeyError:
            return "no error-row table"
    if step.startswith("Predict") and not any(m.label.startswith("Latency") for m in at.metric):
        return "the click predicted nothing"
    return None


def session(name: str, flow: Flow) -> tuple[dict[str, list[float]], str | None]:
    """One new session: the page opened (the navigation run is not timed), then each step.
    Returns, per step in order, ``wall`` (seconds of the rerun), ``cpu`` (CPU seconds of this
    process, all threads: less sensitive than the wall clock to other load on a shared machine)
    and ``gc`` (a full ``gc.collect()`` right after the rerun: what ``streamlit run`` does after
    every script run, ``runner.postScriptGC``, and AppTest skips), and a problem (the session
    stops there)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S)
    for k, v in flow.query.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(flow.page)
    for k, v in flow.query.items():
        at.query_params[k] = v
    for k, v in flow.state.items():
        at.session_state[k] = v
    out: dict[str, list[float]] = {"wall": [], "cpu": [], "gc": []}
    gc.collect()
    for step, act in [("open", None)] + flow.steps:
        if act is not None:
            try:
                act(at)
            except Exception as exc:  # noqa: BLE001 - a widget missing: the page changed
                return out, f"{step}: {type(exc).__name__} {exc}"
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            at.run()
        except Exception as exc:  # noqa: BLE001 - e.g. a widget value the page no longer offers
            return out, f"{step}: {type(exc).__name__} {exc}"
        out["wall"].append(time.perf_counter() - start)
        out["cpu"].append(time.process_time() - start_cpu)
        start = time.perf_counter()
        gc.collect(2)
        out["gc"].append(time.perf_counter() - start)
        problem = check(name, step, at)
        if problem:
            return out, f"{step}: {problem}"
    return out, None


def measure_flows(all_flows: dict[str, Flow], repeats: int) -> dict[str, dict]:
    """{scenario: {step: {cold_s, warm_p50_s, warm_max_s, warm_cpu_p50_s, warm_gc_p50_s} or
    {error}}}."""
    out: dict[str, dict] = {}
    for name, flow in all_flows.items():
        labels = ["open"] + [s for s, _ in flow.steps]
        cold, problem = session(name, flow)
        warm_runs = []
        for _ in range(repeats):
            w, p = session(name, flow)
            warm_runs.append(w)
            problem = problem or p
        res: dict[str, dict] = {}
        for i, label in enumerate(labels):
            warm = [w for w in warm_runs if len(w["wall"]) > i]
            if i >= len(cold["wall"]) or not warm:
                res[label] = {"error": problem or "not reached"}
                continue
            med = (lambda key: round(statistics.median(w[key][i] for w in warm), 3))  # noqa: B023
            res[label] = {"cold_s": round(cold["wall"][i], 3), "cold_gc_s": round(cold["gc"][i], 3),
                          "warm_p50_s": med("wall"), "warm_max_s": round(max(w["wall"][i] for w in warm), 3),
                          "warm_cpu_p50_s": med("cpu"), "warm_gc_p50_s": med("gc")}
        if problem:
            print(f"  {name}: {problem}", flush=True)
        out[name] = res
        print(f"  measured {name}", flush=True)
    return out


# ====================================================================== one process per workspace
def child(kind: str, repeats: int) -> None:
    """Measure one workspace in this (fresh) process; the last line printed is the JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        if kind == "sample":
            db = Path(tmp) / "pages.duckdb"
            runs = sample_workspace(db)
            second = "CMeEE gold"
        else:
            db = REAL_DB
            runs = real_runs(db)
            second = "CMeEE B"
        all_flows = flows(runs, second)     # before the app holds the file open
        os.environ["CBLUE_STUDIO_DB"] = str(db)
        base = floor(repeats)
        first_s = first_page()
        results: dict[str, object] = {"first_page_of_the_process_s": round(first_s, 3),
                                      "one_line_page_s": round(base, 4),
                                      "load_avg_1m": [round(os.getloadavg()[0], 2)]}
        if kind == "sample":
            results["pages"] = legacy_pages(runs, repeats, base, first_s)
        print(f"{kind}: interaction scenarios ({repeats} warm sessions each)…", flush=True)
        results["flows"] = measure_flows(all_flows, repeats)
        results["load_avg_1m"].append(round(os.getloadavg()[0], 2))
    print(json.dumps(results, ensure_ascii=False), flush=True)


def run_child(kind: str, repeats: int) -> dict:
    proc = subprocess.Popen([sys.executable, __file__, "--child", kind, "--repeats", str(repeats)],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)
    last = ""
    for line in proc.stdout:
        if line.startswith("{"):
            last = line
        else:
            print(line, end="", flush=True)
    if proc.wait() or not last:
        raise SystemExit(f"the {kind} measurement failed (exit {proc.returncode})")
    return json.loads(last)


def fmt(step: dict, key: str, target: float | None) -> str:
    if key not in step:
        return f"{'—':>7} "
    v = step[key]
    return f"{v:7.3f}" + ("!" if target is not None and v >= target else " ")


def table(sample: dict, real: dict | None) -> dict:
    """The side-by-side table; returns the summary of the real-size misses."""
    print()
    if real:
        print(f"real-size workspace (target {REAL_TARGET_S} s; '!' marks a figure over it) beside the sample "
              f"workspace; warm = median of the fresh sessions; cpu = this process's CPU seconds in the "
              f"rerun; +gc = the full gc.collect() that `streamlit run` does after every rerun (AppTest "
              f"does not), '!' where the warm rerun plus it is over the target")
        print(f"first page of the process: real {real['first_page_of_the_process_s']:.3f} s"
              f"{'!' if real['first_page_of_the_process_s'] >= REAL_TARGET_S else ''}, sample "
              f"{sample['first_page_of_the_process_s']:.3f} s (printed apart: the workspace opened)")
    print(f"{'scenario':>22}  {'step':<26} {'real cold':>9} {'real warm':>9} {'real max':>9} {'real cpu':>9}"
          f" {'real +gc':>9} {'sample cold':>11} {'sample warm':>11} {'sample +gc':>10}")
    misses = []
    slowest = 0.0
    for name, steps in sample["flows"].items():
        real_steps = (real or {}).get("flows", {}).get(name, {})
        for label in dict.fromkeys(list(steps) + list(real_steps)):
            s, r = steps.get(label, {}), real_steps.get(label, {})
            err = r.get("error") or s.get("error")
            gc_over = "warm_gc_p50_s" in r and r["warm_p50_s"] + r["warm_gc_p50_s"] >= REAL_TARGET_S
            gc_cell = fmt(r, "warm_gc_p50_s", None).rstrip() + ("!" if gc_over else " ")
            line = (f"{name:>22}  {label:<26} {fmt(r, 'cold_s', REAL_TARGET_S)}  {fmt(r, 'warm_p50_s', REAL_TARGET_S)}"
                    f"  {fmt(r, 'warm_max_s', None)}  {fmt(r, 'warm_cpu_p50_s', None)}  {gc_cell}"
                    f"  {fmt(s, 'cold_s', None):>11} {fmt(s, 'warm_p50_s', None):>11} {fmt(s, 'warm_gc_p50_s', None):>10}")
            print(line + (f"  ({err})" if err else ""))
            for kind in ("cold_s", "warm_p50_s"):
                if r.get(kind, 0) >= REAL_TARGET_S:
                    misses.append({"scenario": name, "step": label, kind: r[kind],
                                   "over_s": round(r[kind] - REAL_TARGET_S, 3)})
            if gc_over and r["warm_p50_s"] < REAL_TARGET_S:
                misses.append({"scenario": name, "step": label, "warm_p50_plus_gc_s":
                               round(r["warm_p50_s"] + r["warm_gc_p50_s"], 3)})
            slowest = max(slowest, r.get("warm_p50_s", 0))
    return {"target_s": REAL_TARGET_S, "slowest_warm_p50_s": round(slowest, 3), "misses": misses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sample-only", action="store_true", help="skip the real-size workspace")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the real-size workspace")
    parser.add_argument("--child", choices=["sample", "real"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        from streamlit import logger
        logger.set_log_level("error")        # no "missing ScriptRunContext" lines
        child(args.child, args.repeats)
        return
    shared = None if args.sample_only else shared_cblue()
    if shared is not None:
        real_workspace(shared, REAL_DB, args.rebuild)
    elif not args.sample_only:
        print("no shared/cblue folder (../shared/cblue or $CBLUE_SHARED/cblue): sample workspace only")
    print("sample workspace:", flush=True)
    sample = run_child("sample", args.repeats)
    real = None
    if shared is not None:
        print(f"real-size workspace {REAL_DB.relative_to(ROOT)}:", flush=True)
        real = run_child("real", args.repeats)
    summary = table(sample, real)
    if real:
        print(f"real size: slowest warm step {summary['slowest_warm_p50_s']:.3f} s (target {REAL_TARGET_S} s); "
              f"{len(summary['misses'])} figures over the target")
    if real:
        print(f"load average (1 min) during the measurements: sample {sample.get('load_avg_1m')}, "
              f"real size {real.get('load_avg_1m')} (2 cores, shared)")
    out = {"sample": sample, "real": real, "real_summary": summary if real else None}
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
