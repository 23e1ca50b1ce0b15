"""Page render times under Streamlit's AppTest on the sample workspace (target: under 2 s each).

Each page is opened the way a user reaches it (its URL query parameters), in a fresh session:

- first page of the process: the default page while the workspace is opened;
- cold: the page's first render in the process (its runs scored, its model loaded);
- warm: the median of the next renders, each in a new session (process caches kept, as in a
  running app where a second visitor opens the page).

The peer is a one-line page (``st.title``) through the same AppTest machinery: the floor
that no page can go under. Ratios are page time over that floor. The target is checked on the
first page and on warm renders; a cold Live prediction also imports torch and loads the model
(once per process, shown on the page as the model load time), so it is printed beside it.

    python bench/pages.py [--repeats N]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from streamlit.testing.v1 import AppTest

from cblue_core.ingest import bootstrap_sample_data
from cblue_core.runs import import_run
from cblue_core.store.workspace import connect

APP = str(ROOT / "app.py")
TARGET_S = 2.0


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


def scenarios(runs: dict[str, int]) -> dict[str, tuple[str, dict, dict, str | None]]:
    """name -> (page file, query parameters, widget state set before the render, the button
    whose click is the timed render, if any)."""
    return {
        "Datasets": ("app_pages/datasets.py", {"task": "CMeEE", "split": "dev", "example": "0"}, {}, None),
        "Live (CMeEE prediction)": ("app_pages/live.py", {"task": "CMeEE"},
                                    {"live_source": "Dataset example"}, "live_run"),
        "Live demo (CMeIE prediction)": ("app_pages/live.py", {"task": "CMeIE", "demo": "1"},
                                         {"live_source": "Curated case"}, "live_run"),
        "Runs": ("app_pages/runs.py", {}, {}, None),
        "Errors": ("app_pages/errors.py", {"run": str(runs["CMeEE"]), "example": "2"}, {}, None),
        "Compare": ("app_pages/compare.py", {"a": str(runs["CMeEE"]), "b": str(runs["CMeEE gold"])}, {}, None),
        "Annotate": ("app_pages/annotate.py", {"task": "CMeEE", "split": "dev", "example": "0"}, {}, None),
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
    for k, v in state.items():
        at.session_state[k] = v
    if click:
        at.run()
        at.button(key=click).click()
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise SystemExit(f"{page} raised: {at.exception[0].message}")
    if click == "live_run" and not any(m.label.startswith("Latency") for m in at.metric):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "pages.duckdb"
        runs = sample_workspace(db)
        os.environ["CBLUE_STUDIO_DB"] = str(db)
        base = floor(args.repeats)
        start = time.perf_counter()
        first = AppTest.from_file(APP, default_timeout=120).run()   # opens the workspace: the app's start
        first_s = time.perf_counter() - start
        if first.exception:
            raise SystemExit(f"the default page raised: {first.exception[0].message}")
        results: dict[str, object] = {"one_line_page_s": round(base, 4), "first_page_of_the_process_s":
                                      round(first_s, 3)}
        worst = first_s          # over the first page and warm renders
        cold_worst = 0.0
        print(f"first page of the process (default page, workspace opened): {first_s:.3f} s")
        print(f"{'page':>28}  {'cold s':>7}  {'warm p50 s':>10}  {'warm max s':>10}  {'warm / one-line':>15}")
        for name, (page, query, state, click) in scenarios(runs).items():
            cold = render(page, query, state, click)
            warm = [render(page, query, state, click) for _ in range(args.repeats)]
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
    print(json.dumps(results, ensure_ascii=False))


if __name__ == "__main__":
    main()
