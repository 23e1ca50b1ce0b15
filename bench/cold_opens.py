"""Cold opens in headless Chromium: each page or Errors tab opened by its URL as the first page
of a freshly started server (``python bench/browser_pages.py --cold``; target: under 1.5 s).

A server is started for every measured open, so each open pays what a page costs after a
restart: the app's imports, the workspace opened, the page's data read or derived. One browser
context serves all of them, on one port (the same origin), so the browser's cache is that of a
visitor who came before the restart: the figure is the server's cold cost, not the download of
Streamlit's code. A first server, not measured, fills that cache.

Beside each open, the CPU seconds the server process spent on it (``/proc``): on this shared
machine the wall-clock figure grows with the load, the CPU figure much less. Then the same URL is
opened once more in the same server (a new session, the server warm), so that cold and warm
are compared under the same load.

Round 1 may find a run's derived data (buckets, per-example statistics) not yet kept in the
workspace, and derive and keep it; round 2 is every later restart. Both are printed.

The Errors tabs are opened for the first dev run of each model found in the workspace (the
real-size one holds cmeee, cmeie and chip-ctc runs), by ``?run=ID&tab=SLUG``.

The peer, measured the same way in the same run and browser: bare Streamlit pages that import
nothing of the app (``bench/floor/``), one with a title and a line of text, one with a data grid
the size of a per-label table (served as ``serve.py`` serves ours: its imports made while the
server starts). Their cold open is the floor under any page of ours (the new tab,
Streamlit's own code, a websocket session, a data grid's code); each page's figure is printed
beside its difference from the table floor, the part that is ours.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from browser_pages import INIT_JS, OPEN_TARGET_S, OUTPUT, Driver, Failed, PySpy, Server, free_port, hot_frames
from scenarios import Scenario, Shows

# What each Errors tab shows once drawn (the tab's own text, whatever the run's task).
TAB_SHOWS = {
    "labels": r"label|per-label",
    "matrix": r"Click a cell for its examples|No confusion pairs",
    "taxonomy": r"Examples behind the selection",
    "buckets": r"per bucket|Bucketed analysis covers",
    "slices": r"A slice is a SQL predicate",
    "gold": r"No gold correction|Gold version",
}


FLOOR = Path(__file__).resolve().parent / "floor"
# name -> (script, what it shows once drawn)
PEERS = {"Streamlit floor: text": (FLOOR / "text.py", r"A bare Streamlit page"),
         "Streamlit floor: table": (FLOOR / "serve_table.py", r"Streamlit floor with a table")}
TABLE_FLOOR = "Streamlit floor: table"


def model_runs(db: Path) -> dict[str, int]:
    """{task: the first dev run a model made} of the workspace at ``db`` (read-write: an older
    schema is migrated, as the app does, before any server opens the file)."""
    from cblue_core.store.workspace import connect

    ws = connect(db)
    try:
        found: dict[str, int] = {}
        for r in ws.runs.all():
            if r.split == "dev" and r.model:
                found.setdefault(r.task, r.run_id)
        return found
    finally:
        ws.close()


def cold_scenarios(runs: dict[str, int]) -> dict[str, Scenario]:
    out = {"Datasets CMeEE train": Scenario("datasets", {"task": "CMeEE", "split": "train"},
                                            (Shows("matching example"),)),
           "Runs": Scenario("runs", {}, (Shows("All runs"),))}
    for task, run_id in runs.items():
        for slug, shows in TAB_SHOWS.items():
            out[f"Errors {task} · {slug}"] = Scenario("errors", {"run": str(run_id), "tab": slug}, (Shows(shows),))
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cold_open(context, db: Path, port: int, sc: Scenario, profile: Path | None = None,
              script: str = "serve.py") -> dict:
    """One fresh server, one page opened in it: {"open_s", "script_end_s", "server_cpu_s"} or
    {"problem"}."""
    log = Path(tempfile.mkdtemp()) / "streamlit.log"
    server = Server(db, log, [], port=port, script=script)
    page = context.new_page()
    try:
        d = Driver(page, server.url)
        spy = PySpy(server.proc.pid, "open", profile) if profile else None
        cpu = cpu_seconds(server.proc.pid)
        try:
            if spy:
                with spy:
                    seconds = d.open(sc.url)
            else:
                seconds = d.open(sc.url)
        except Failed as exc:
            return {"problem": str(exc)}
        text = d.text()
        problem = next((p for p in (c.problem("", text) for c in sc.opened) if p), None)
        if problem:
            return {"problem": problem}
        out = {"open_s": round(seconds, 3), "script_end_s": round(d.script_end, 3),
               "server_cpu_s": round(cpu_seconds(server.proc.pid) - cpu, 3)}
        again = context.new_page()
        try:
            cpu = cpu_seconds(server.proc.pid)
            out["warm_open_s"] = round(Driver(again, server.url).open(sc.url), 3)
            out["warm_server_cpu_s"] = round(cpu_seconds(server.proc.pid) - cpu, 3)
        except Failed as exc:
            out["warm_problem"] = str(exc)
        finally:
            again.close()
        if profile:
            out["profile"] = hot_frames(profile)
        return out
    finally:
        page.close()
        server.stop()


def measure_cold(browser, db: Path, rounds: int, only: list[str] | None, profile: bool,
                 script: str = "serve.py") -> dict:
    runs = model_runs(db)
    flows: dict[str, tuple[Scenario, str]] = {
        name: (Scenario("", {}, (Shows(shows),)), str(peer)) for name, (peer, shows) in PEERS.items()}
    flows.update((k, (v, script)) for k, v in cold_scenarios(runs).items() if not only or any(o in k for o in only))
    port = free_port()
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
    context.add_init_script(INIT_JS)
    results: dict = {"runs": runs, "script": script, "load_avg_1m": [round(os.getloadavg()[0], 2)], "flows": {}}
    try:
        cold_open(context, db, port, cold_scenarios({})["Runs"], script=script)   # the browser's cache filled
        for rnd in range(1, rounds + 1):
            for name, (sc, flow_script) in flows.items():
                raw = None
                if profile and rnd == rounds:
                    raw = OUTPUT / "pyspy" / ("cold_" + "".join(c if c.isalnum() else "_" for c in name) + ".txt")
                    raw.parent.mkdir(parents=True, exist_ok=True)
                    raw.unlink(missing_ok=True)
                res = cold_open(context, db, port, sc, raw if flow_script == script else None, flow_script)
                results["flows"].setdefault(name, {})[f"round {rnd}"] = res
                shown = res.get("problem") or (f"{res['open_s']:.3f} s (script end {res['script_end_s']:.3f} s,"
                                               f" server CPU {res['server_cpu_s']:.3f} s; warm "
                                               f"{res.get('warm_open_s', float('nan')):.3f} s, server CPU "
                                               f"{res.get('warm_server_cpu_s', float('nan')):.3f} s)")
                print(f"  cold round {rnd}: {name}: {shown}", flush=True)
                for frame, sec in (res.get("profile") or {}).get("innermost_ours_s", [])[:6]:
                    print(f"      {sec:6.2f} s  {frame}", flush=True)
                time.sleep(0.5)
    finally:
        context.close()
    results["load_avg_1m"].append(round(os.getloadavg()[0], 2))
    return results


def print_cold(results: dict, rounds: int) -> list[dict]:
    """The table, one line an open; returns the last round's opens of ours over the target."""
    print(f"\ncold opens (a fresh `streamlit run {results['script']}` each), target {OPEN_TARGET_S} s ('!' over it); "
          f"runs {results['runs']}; "
          f"load average {results['load_avg_1m']}; over floor = the last round's open minus the "
          f"table floor's in that round")
    heads = [f"round {r}" for r in range(1, rounds + 1)]
    floor = results["flows"].get(TABLE_FLOOR, {}).get(heads[-1], {}).get("open_s")
    extra = ("script_end_s", "server_cpu_s", "warm_open_s", "warm_server_cpu_s")
    print(f"{'page or tab':<34}" + "".join(f" {h:>10}" for h in heads)
          + f" {'over floor':>11} {'script end':>11} {'server CPU':>11} {'warm open':>11} {'warm CPU':>11}")
    misses = []
    for name, per_round in results["flows"].items():
        cells = []
        for h in heads:
            res = per_round.get(h, {})
            v = res.get("open_s")
            over = v is not None and v >= OPEN_TARGET_S
            cells.append(f"{'failed':>10}" if v is None else f"{v:9.3f}" + ("!" if over else " "))
            if over and h == heads[-1] and name not in PEERS:
                misses.append({"page": name, "open_s": v})
        last_open = per_round.get(heads[-1], {}).get("open_s")
        above = None if floor is None or last_open is None or name in PEERS else last_open - floor
        last = [above] + [per_round.get(heads[-1], {}).get(k) for k in extra]
        print(f"{name:<34}" + " ".join(cells) + "".join(f" {v:10.3f}" if v is not None else f" {'—':>10}" for v in last))
        for h in heads:
            if "problem" in per_round.get(h, {}):
                print(f"{'':<34} {h}: {per_round[h]['problem']}")
    return misses
