"""Where the browser's time goes when a page opens: Chromium's own profiler (CDP ``Profiler``
and ``Performance`` through Playwright's ``new_cdp_session``) on an open of a page in a server
that has already served it once (so the server's share is small and known: its CPU seconds are
printed beside).

For each URL: the open's wall seconds (as ``bench/browser_pages.py`` times it), the main
thread's script, layout and style seconds (``Performance.getMetrics``), and the JavaScript self
time per script file and per function (sampled every 0.5 ms), the Streamlit frontend's chunks
named by what they hold (Plotly's bundle, the data grid, Vega...) where the file name says it.

    python bench/browser_profile.py --db COPY.duckdb [--url '/errors?run=2&tab=matrix' ...] [--top N]

Without ``--url``: the Errors page of every run on its Per label, Confusion matrix, Error
taxonomy and Buckets tabs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from browser_pages import INIT_JS, Driver, Server  # bench/ is no package: on sys.path above
from cold_opens import cpu_seconds, model_runs

TABS = ("labels", "matrix", "taxonomy", "buckets")
METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")


def profile_open(context, server: Server, url: str, top: int) -> dict:
    """Open ``url`` once untimed (the server's caches, the browser's HTTP cache), then again in a
    new page under the profiler."""
    first = context.new_page()
    Driver(first, server.url).open(url)
    first.close()
    page = context.new_page()
    try:
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 500})
        cdp.send("Profiler.start")
        before = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        cpu = cpu_seconds(server.proc.pid)
        seconds = Driver(page, server.url).open(url)
        server_cpu = cpu_seconds(server.proc.pid) - cpu
        after = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        profile = cdp.send("Profiler.stop")["profile"]
    finally:
        page.close()
    return {"url": url, "open_s": round(seconds, 3), "server_cpu_s": round(server_cpu, 3),
            **{m: round(after.get(m, 0) - before.get(m, 0), 3) for m in METRICS},
            **self_times(profile, top)}


def self_times(profile: dict, top: int) -> dict:
    """Self seconds per script file and per function of a CDP CPU profile (its samples are
    evenly spaced: each one's share of the profile's duration)."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    counts = Counter(profile.get("samples", []))
    total = sum(counts.values()) or 1
    span = (profile["endTime"] - profile["startTime"]) / 1e6
    per_file: Counter[str] = Counter()
    per_function: Counter[str] = Counter()
    for node_id, n in counts.items():
        frame = nodes[node_id]["callFrame"]
        name = frame["url"].rsplit("/", 1)[-1] or frame["functionName"] or "(native)"
        per_file[name] += n
        per_function[f"{frame['functionName'] or '(anonymous)'} ({name}:{frame.get('lineNumber', 0)})"] += n
    def secs(c: Counter[str]) -> list[tuple[str, float]]:
        return [(k, round(v / total * span, 3)) for k, v in c.most_common(top)]
    return {"profile_s": round(span, 3), "files": secs(per_file), "functions": secs(per_function)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="a workspace copy (the server locks it)")
    parser.add_argument("--url", action="append", help="page path with its query (repeatable)")
    parser.add_argument("--top", type=int, default=12, help="files and functions listed")
    parser.add_argument("--script", default="serve.py", help="what `streamlit run` starts")
    args = parser.parse_args()
    chromium = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    if chromium is None:
        raise SystemExit("no chromium on this machine")
    urls = args.url or [f"/errors?run={run}&tab={tab}" for run in model_runs(args.db).values() for tab in TABS]
    from playwright.sync_api import sync_playwright
    log = Path(tempfile.mkdtemp()) / "streamlit.log"
    server = Server(args.db, log, [], script=args.script)
    results = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                         args=["--no-sandbox", "--disable-dev-shm-usage"])
            context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
            context.add_init_script(INIT_JS)
            for url in urls:
                r = profile_open(context, server, url, args.top)
                results.append(r)
                print(f"\n{url}: open {r['open_s']} s (load average {os.getloadavg()[0]:.1f}), server CPU "
                      f"{r['server_cpu_s']} s; main thread: task {r['TaskDuration']} s, script "
                      f"{r['ScriptDuration']} s, layout {r['LayoutDuration']} s, style {r['RecalcStyleDuration']} s")
                for name, s in r["files"]:
                    print(f"    {s:6.3f} s  {name}")
                for name, s in r["functions"][:6]:
                    print(f"    {s:6.3f} s    {name}")
            browser.close()
    finally:
        server.stop()
    print(json.dumps(results, ensure_ascii=False))


if __name__ == "__main__":
    main()
