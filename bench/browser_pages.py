"""Page and click times in headless Chromium against `streamlit run app.py`, on the real-size
workspace beside the sample one (targets at real size: every page open under 1.5 s, every click
under 0.5 s).

The workspaces and the scenarios are those of ``bench/scenarios.py`` (``bench/pages.py`` times
the same under AppTest). For each workspace a server is started the way the browser tests start
one (headless, 127.0.0.1, a free port, ``CBLUE_STUDIO_DB``) and Debian's Chromium is driven with
Playwright: tabs clicked, a real mouse click on the Plotly point, a click in the data grid's
row-selection column (the grid is a canvas), text typed + Enter, options picked.

What is timed. An init script watches the page's DOM with a MutationObserver, and the time of
the user's input (pointerdown/keydown). A page or a click is *settled* when Streamlit says the
script is not running (``stApp``'s ``data-test-script-state="notRunning"``), its status widget
(``stStatusWidget``) is gone, a rerun was seen after a click, no element is stale
(``data-stale``) or a skeleton still waiting for its code (``stSkeleton``), no request is in
flight, and the DOM has not changed for 100 ms of an idle main thread (a fresh page loads the
code of each element kind when it first shows one, after the script run, and draws the element
100-500 ms after the run ended; a poll that comes late means the main thread was busy, and that
time is not quiet). The figure is the time of the last DOM change before that quiet window (the window only
confirms it): for an open, from ``page.goto``; for a click, from the input event. Then the
step's checks run on the page's text (the filter shown, another example...) and the widget's
state (the tab selected, the option shown), untimed.

Every repetition starts with a fresh page load (a new Streamlit session). The first is the cold
one (first time in the server process, printed apart); the figures are the medians of
``--repeats`` more. The server's first page (the default page, the workspace opened) is printed
apart.

``--profile``: each real-size step whose median misses its target is done once more with
``py-spy record -f raw`` on the server; the raw stacks go to ``test-output/pyspy/`` and the
hottest frames of ``app_pages/`` and ``cblue_core/`` are printed.

``--cold``: instead, every page and Errors tab opened as the first page of a fresh server
(``bench/cold_opens.py``), on the real-size workspace or ``--db FILE``; ``--rounds`` times each
(round 1 may derive and keep what later rounds read), beside its peer, bare Streamlit pages
opened the same way (``bench/floor/``); ``--profile`` samples the last round.

    python bench/browser_pages.py [--repeats N] [--only SCENARIO] [--workspace sample|real]
                                  [--profile] [--rebuild]
    python bench/browser_pages.py --cold [--db FILE] [--rounds N] [--only TEXT] [--profile]
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import scenarios as bench  # bench/ is no package; the user actions: bench.Tab, bench.Row...
from scenarios import (
    REAL_DB,
    Column,
    Scenario,
    argument_parser,
    figure_columns,
    print_table,
    real_workspace,
    sample_workspace,
    scenarios,
    shared_cblue,
    summarise,
)

OUTPUT = ROOT / "test-output"
OPEN_TARGET_S = 1.5
CLICK_TARGET_S = 0.5
QUIET_MS = 100
STEP_TIMEOUT_MS = 120_000

# ====================================================================== in the page
INIT_JS = """
(() => {
  if (window.__bench) return;
  const epoch = () => performance.timeOrigin + performance.now();
  const b = window.__bench = {lastMut: epoch(), input: 0, ran: false, done: 0};
  new MutationObserver((records) => {
    b.lastMut = epoch();
    for (const r of records) {
      if (r.type === 'attributes' && r.attributeName === 'data-test-script-state') {
        const v = r.target.getAttribute('data-test-script-state');
        if (v === 'running' || v === 'rerunRequested') b.ran = true;
        if (v === 'notRunning') b.done = epoch();
      }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  for (const type of ['pointerdown', 'keydown']) {
    window.addEventListener(type, () => { b.input = epoch(); b.ran = false; b.done = 0; }, true);
  }
})();
"""

# settled: the script not running, no status widget, a rerun seen after an input (or 3 s of
# nothing: a click that reruns nothing), no element stale or still waiting for its code (a
# skeleton), and no DOM change for `quiet` ms of an idle main thread (nor since `notBefore`)
SETTLED_JS = """
([quiet, click, notBefore]) => {
  const b = window.__bench;
  if (!b) return false;
  const now = performance.timeOrigin + performance.now();
  // a gap between two polls: the main thread was busy (parsing an element's code, say) and the
  // DOM may change as soon as it is free: that time is not quiet
  if (b.lastPoll && now - b.lastPoll > 50) b.busy = now;
  b.lastPoll = now;
  if (document.querySelector('[data-testid="stSkeleton"], [data-stale="true"]')) return false;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const status = document.querySelector('[data-testid="stStatusWidget"]');
  if (status && status.getClientRects().length) return false;
  if (click && !(b.input > 0 && (b.ran || now - b.input > 3000))) return false;
  return now - Math.max(b.lastMut, notBefore, b.busy || 0) >= quiet;
}
"""

# The key ("row,column") of a MatrixClick's cell: the busiest off the diagonal, not a Σ total,
# read from the grid the page drew (in the component's shadow root; a cell's title ends with its
# count).
BUSIEST_CELL_JS = """
() => {
  const root = [...document.querySelectorAll('*')].map(e => e.shadowRoot)
                 .find(r => r && r.querySelector('.cbr-cm'));
  if (!root) return null;
  let best = null, most = -1;
  for (const cell of root.querySelectorAll('.cbr-cm-c:not(.d):not(.t)')) {
    const n = parseInt(cell.title.split('\\n').pop().replace(/,/g, ''), 10);
    if (n > most) { most = n; best = cell.dataset.pick; }
  }
  return best;
}
"""


# ====================================================================== the server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run app.py` (or ``script``) on ``db``, as tests/browser/conftest.py starts it (on
    ``port``, or a free one)."""

    def __init__(self, db: Path, log: Path, extra: list[str], port: int | None = None,
                 script: str = "app.py") -> None:
        self.url = f"http://127.0.0.1:{port or free_port()}"
        env = dict(os.environ, CBLUE_STUDIO_DB=str(db), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
                   HF_HUB_OFFLINE="1")
        self.log = open(log, "w")  # noqa: SIM115 - open for the server's lifetime
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless=true",
             f"--server.port={self.url.rsplit(':', 1)[1]}", "--server.address=127.0.0.1",
             "--server.fileWatcherType=none", "--server.runOnSave=false", *extra],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).status == 200:
                    return
            except OSError:
                time.sleep(0.5)
            if self.proc.poll() is not None:
                raise SystemExit(f"streamlit exited: {log.read_text()[-3000:]}")
        self.stop()
        raise SystemExit("streamlit did not start in 90 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


# ====================================================================== the driver
class Failed(Exception):
    """A step that did not settle, showed an exception, or did not do what it says."""


class Driver:
    def __init__(self, page, url: str) -> None:
        self.page = page
        self.url = url
        self.script_end = 0.0           # seconds to the end of the last script run, as the page learnt it
        self.requests: dict = {}        # in flight: request -> when it started
        page.on("request", lambda r: self.requests.__setitem__(r, time.time()))
        page.on("requestfinished", lambda r: self.requests.pop(r, None))
        page.on("requestfailed", lambda r: self.requests.pop(r, None))

    def key(self, key: str):
        return self.page.locator(f".st-key-{key}")

    def text(self) -> str:
        main = self.page.locator('[data-testid="stMain"]')
        return main.inner_text() if main.count() else self.page.inner_text("body")

    def _settle(self, click: bool) -> dict:
        """Wait until the page is settled (SETTLED_JS) with no request in flight: the frontend
        loads the code of an element kind (metric, data grid, radio...) when a fresh page first
        shows one, after the script run has ended, and draws it then."""
        deadline = time.time() + STEP_TIMEOUT_MS / 1000

        def loading() -> bool:          # a request started in the last 10 s (not a long poll)
            return any(time.time() - t < 10 for t in self.requests.values())
        not_before = 0.0
        while True:
            try:
                self.page.wait_for_function(SETTLED_JS, arg=[QUIET_MS, click, not_before], polling=10,
                                            timeout=max(deadline - time.time(), 0.001) * 1000)
            except Exception as exc:
                raise Failed(f"did not settle in {STEP_TIMEOUT_MS / 1000:.0f} s") from exc
            if not loading():
                break
            while loading() and time.time() < deadline:
                self.page.wait_for_timeout(10)
            not_before = time.time() * 1000     # then quiet for 100 ms again
        state = self.page.evaluate("() => window.__bench")
        shown = self.page.locator('[data-testid="stException"]')
        if shown.count():
            raise Failed("the page shows an exception: " + shown.first.inner_text()[:200].replace("\n", " "))
        return state

    def open(self, path: str) -> float:
        start = time.time() * 1000
        self.page.goto(self.url + path, wait_until="commit", timeout=STEP_TIMEOUT_MS)
        state = self._settle(click=False)
        self.script_end = (state["done"] - start) / 1000
        return (state["lastMut"] - start) / 1000

    def timed(self, action) -> float:
        """Seconds from the input event to the last DOM change of the rerun it caused."""
        self.page.evaluate("() => { window.__bench.input = 0; window.__bench.ran = false; }")
        self.do(action)
        state = self._settle(click=True)
        if not state["input"]:
            raise Failed("no input event reached the page")
        self.script_end = (state["done"] - state["input"]) / 1000 if state["done"] else float("nan")
        return (state["lastMut"] - state["input"]) / 1000

    # ---------------------------------------------------------------- what a user does
    def do(self, action) -> None:
        timeout = STEP_TIMEOUT_MS
        if isinstance(action, bench.Tab):
            self.page.get_by_role("tab", name=action.name, exact=True).click(timeout=timeout)
        elif isinstance(action, bench.MatrixClick):
            self.page.locator(".cbr-cm-c").first.wait_for(timeout=timeout)
            found = self.page.evaluate(BUSIEST_CELL_JS)
            if found is None:
                raise Failed("no cell off the diagonal to click in the matrix")
            self.mouse_click(self.page.locator(f'.cbr-cm-c[data-pick="{found}"]'))
        elif isinstance(action, bench.Row):       # the row-selection column: 35 px header and rows
            grid = self.key(action.key).locator('[data-testid="stDataFrame"]')
            grid.scroll_into_view_if_needed(timeout=timeout)
            box = grid.bounding_box()
            if box is None:
                raise Failed(f"no grid {action.key}")
            self.page.mouse.click(box["x"] + 18, box["y"] + 35 + 35 * action.row + 17)
        elif isinstance(action, bench.Type):      # the timed input is the Enter
            field = self.key(action.key).locator("input")
            field.fill(action.text, timeout=timeout)
            field.press("Enter")
        elif isinstance(action, bench.Choose) and action.kind == "radio":
            self.key(action.key).locator("label").filter(has_text=action.shown).first.click(timeout=timeout)
        elif isinstance(action, bench.Choose):
            self.select(action.key, action.shown)
        elif isinstance(action, bench.Press):
            target = (self.key(action.key).locator("button") if action.key
                      else self.page.get_by_role("button", name=action.label))
            target.first.click(timeout=timeout)
        elif isinstance(action, bench.StepUp):
            self.key(action.key).locator('[data-testid="stNumberInputStepUp"]').click(timeout=timeout)
        elif isinstance(action, bench.Number):      # the timed input is the Enter
            field = self.key(action.key).locator("input")
            field.fill(str(action.value), timeout=timeout)
            field.press("Enter")

    def mouse_click(self, locator) -> None:
        locator.scroll_into_view_if_needed(timeout=STEP_TIMEOUT_MS)
        box = locator.bounding_box()
        if box is None:
            raise Failed("nothing to click (not displayed)")
        self.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)

    def select(self, key: str, shown: str) -> None:
        """Open a selectbox (not timed: no rerun), then click the option (timed)."""
        opener = self.key(key).locator("button[aria-haspopup='listbox']")
        option = self.page.get_by_role("option").filter(has_text=re.compile("^" + re.escape(shown)))
        for attempt in range(4):        # the list closes when the page scrolls: scroll first
            opener.scroll_into_view_if_needed(timeout=STEP_TIMEOUT_MS)
            self.page.wait_for_timeout(200)
            opener.click(timeout=STEP_TIMEOUT_MS)
            try:
                option.first.wait_for(timeout=3000)
                break
            except Exception:
                if attempt == 3:
                    raise
        self.page.evaluate("() => { window.__bench.input = 0; window.__bench.ran = false; }")
        option.first.click(timeout=STEP_TIMEOUT_MS)

    def holds(self, action) -> str | None:
        """The widget shows what the step set (the tab selected, the option chosen)."""
        if isinstance(action, bench.Tab):
            if not self.page.get_by_role("tab", name=action.name, exact=True, selected=True).count():
                return f"tab {action.name!r} is not selected"
        elif isinstance(action, bench.Number):
            shown = self.key(action.key).locator("input").input_value()
            if shown != str(action.value):
                return f"{action.key} shows {shown!r}, not {action.value}"
        elif isinstance(action, bench.Choose):
            if action.kind == "radio":
                widget = self.key(action.key).locator("label:has(input:checked)")
                shown = widget.first.inner_text() if widget.count() else ""
            else:                       # a combo box: the choice is its input's value
                shown = self.key(action.key).locator("input[role='combobox']").input_value()
            if action.shown not in shown:
                return f"{action.key} shows {shown.strip()[:60]!r}, not {action.shown!r}"
        return None


def one_pass(d: Driver, sc: Scenario, sample: bool, profile=None,
             ends: dict[str, float] | None = None) -> tuple[dict[str, float], str | None]:
    """A fresh page load, then the steps: ({step: seconds}, problem); ``ends`` gets each step's
    seconds to the end of its script run. ``profile(step)``, when given, is a context manager
    wrapped around each step."""
    times: dict[str, float] = {}
    ends = {} if ends is None else ends
    before = ""
    label = "open"
    try:
        with profile("open") if profile else _Nothing():
            times["open"] = d.open(sc.url)
            ends["open"] = d.script_end
        for label, step in [("open", None)] + [(s.name, s) for s in sc.steps]:
            if step is not None:
                if step.real_only and sample:
                    continue
                with profile(label) if profile else _Nothing():
                    times[label] = d.timed(step.action)
                    ends[label] = d.script_end
            after = d.text()
            problems = [d.holds(step.action)] if step else []
            problems += [c.problem(before, after) for c in (step.checks if step else sc.opened)]
            problem = next((p for p in problems if p), None)
            if problem:
                times.pop(label, None)
                shot = OUTPUT / "bench-problems" / (re.sub(r"[^A-Za-z0-9]+", "_", f"{sc.url}_{label}") + ".png")
                shot.parent.mkdir(parents=True, exist_ok=True)
                d.page.screenshot(path=str(shot), full_page=True)
                return times, f"{label}: {problem} (screenshot {shot.relative_to(ROOT)})"
            before = after
    except Failed as exc:
        return times, f"{label}: {exc}"
    except Exception as exc:  # noqa: BLE001 - a locator that never matched: the page changed
        return times, f"{label}: {type(exc).__name__} {str(exc).splitlines()[0][:160]}"
    return times, None


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ====================================================================== py-spy
class PySpy:
    """``py-spy record -f raw`` on the server while one step runs (``only``)."""

    def __init__(self, pid: int, only: str, out: Path) -> None:
        self.pid, self.only, self.out = pid, only, out
        self.proc: subprocess.Popen | None = None

    def __call__(self, step: str):
        return self if step == self.only else _Nothing()

    def __enter__(self):
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(["py-spy", "record", "-o", str(self.out), "-f", "raw", "-r", str(SAMPLE_HZ),
                                      "--nonblocking", "-p", str(self.pid)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)          # attached before the step starts
        return self

    def __exit__(self, *exc):
        time.sleep(0.2)
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return False


FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?):(?P<line>\d+)\)$")
SAMPLE_HZ = 200
POST_RUN_GC = "ScriptRunner._on_script_finished (streamlit/runtime/scriptrunner/script_runner.py"


def hot_frames(raw: Path, top: int = 10) -> dict:
    """Where the server's script thread spent a step, from py-spy's raw (collapsed) stacks:
    its seconds in all, those in the full ``gc.collect()`` Streamlit runs after every script run
    (``runner.postScriptGC``), and the rest charged to the innermost frame of ``app_pages/`` or
    ``cblue_core/`` on the stack (the line of ours responsible, whatever library runs below it)."""
    if not raw.is_file():
        return {"error": "py-spy wrote nothing"}
    ours: Counter = Counter()
    script = post_gc = 0
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        if not any("ScriptRunner._run_script_thread" in f for f in frames):
            continue                        # the event loop, the file watcher: idle or small
        n = int(count)
        script += n
        if frames[-1].startswith(POST_RUN_GC):     # gc.collect is C code: this frame is the leaf
            post_gc += n
            continue
        where = "(Streamlit, no frame of ours)"
        for f in frames:
            m = FRAME.match(f)
            if m:
                rel = m["file"].split(f"{ROOT}/")[-1]
                if rel.startswith(("app_pages/", "cblue_core/")):
                    where = f"{m['func']} ({rel}:{m['line']})"
        ours[where] += n
    return {"script_thread_s": round(script / SAMPLE_HZ, 3), "post_run_gc_s": round(post_gc / SAMPLE_HZ, 3),
            "innermost_ours_s": [[k, round(c / SAMPLE_HZ, 3)] for k, c in ours.most_common(top)]}


def profile_misses(d: Driver, all_flows: dict[str, Scenario], measured: dict, pid: int) -> dict:
    out = {}
    for name, sc in all_flows.items():
        for step, entry in measured[name].items():
            if step == "problems" or entry.get("warm_p50_s", 0) < target(step):
                continue
            slug = re.sub(r"[^A-Za-z0-9]+", "_", f"{name}__{step}").strip("_")
            raw = OUTPUT / "pyspy" / f"{slug}.txt"
            raw.unlink(missing_ok=True)
            times, problem = one_pass(d, sc, False, profile=PySpy(pid, step, raw))
            summary = hot_frames(raw)
            summary["step_s"] = round(times.get(step, float("nan")), 3)
            if problem:
                summary["problem"] = problem
            out[f"{name} · {step}"] = summary
            print(f"\npy-spy {name} · {step}: step {summary['step_s']} s; script thread "
                  f"{summary.get('script_thread_s', 0)} s, of which post-run gc.collect "
                  f"{summary.get('post_run_gc_s', 0)} s -> {raw.relative_to(ROOT)}")
            for frame, sec in summary.get("innermost_ours_s", [])[:8]:
                print(f"    {sec:6.2f} s  {frame}")
    return out


# ====================================================================== main
def target(step: str) -> float:
    return OPEN_TARGET_S if step == "open" else CLICK_TARGET_S


def measure(browser, kind: str, db: Path, runs: dict[str, int], args) -> dict:
    """All scenarios on one workspace, with a server of its own."""
    log = Path(tempfile.mkdtemp()) / "streamlit.log"
    server = Server(db, log, args.server_arg)
    results: dict = {"load_avg_1m": [round(os.getloadavg()[0], 2)], "flows": {}}
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
    try:
        context.add_init_script(INIT_JS)
        d = Driver(context.new_page(), server.url)
        results["first_page_of_the_server_s"] = round(d.open("/"), 3)
        print(f"{kind}: first page of the server {results['first_page_of_the_server_s']:.3f} s", flush=True)
        all_flows = {k: v for k, v in scenarios(runs).items() if not args.only or k in args.only}
        for name, sc in all_flows.items():
            passes, script_ends, problems = [], [], []
            for rep in range(args.repeats + 1):
                ends: dict[str, float] = {}
                times, problem = one_pass(d, sc, kind == "sample", ends=ends)
                passes.append(times)
                script_ends.append(ends)
                if problem:
                    problems.append(f"pass {rep}: {problem}")
            res: dict = summarise(passes, sc.labels())
            for label, entry in summarise(script_ends, sc.labels()).items():
                if "warm_p50_s" in entry:
                    res[label]["script_end_p50_s"] = entry["warm_p50_s"]
            if problems:
                res["problems"] = problems[:3]
                print(f"  {name}: " + " | ".join(problems[:3]), flush=True)
            results["flows"][name] = res
            print(f"  {kind}: measured {name}", flush=True)
        results["load_avg_1m"].append(round(os.getloadavg()[0], 2))
        if args.profile and kind == "real":
            results["profiles"] = profile_misses(d, all_flows, results["flows"], server.proc.pid)
    finally:
        context.close()
        server.stop()
    return results


COLUMNS = figure_columns(Column("real run", "real", "script_end_p50_s"))


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--workspace", choices=["sample", "real"], action="append",
                        help="only this workspace (default: both)")
    parser.add_argument("--profile", action="store_true", help="py-spy each real-size step that misses its target")
    parser.add_argument("--cold", action="store_true", help="cold opens: a fresh server for every page open")
    parser.add_argument("--db", type=Path, help="--cold: this workspace (a copy: the servers lock it)")
    parser.add_argument("--rounds", type=int, default=2, help="--cold: times each page is opened cold")
    parser.add_argument("--script", default="serve.py",
                        help="--cold: the script `streamlit run` starts (serve.py imports the pages first)")
    parser.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="extra `streamlit run` option for an experiment, e.g. "
                             "--server-arg=--runner.postScriptGC=false (repeatable)")
    args = parser.parse_args()
    chromium = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    if chromium is None:
        raise SystemExit("no chromium on this machine: apt-get install chromium fonts-noto-cjk")
    if args.cold:
        cold(args, chromium)
        return
    kinds = args.workspace or ["sample", "real"]
    shared = shared_cblue()
    if "real" in kinds and shared is None:
        print("no shared/cblue folder (../shared/cblue or $CBLUE_SHARED/cblue): sample workspace only")
        kinds = [k for k in kinds if k != "real"]

    from playwright.sync_api import sync_playwright

    OUTPUT.mkdir(exist_ok=True)
    results: dict[str, dict | None] = {"sample": None, "real": None}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                     args=["--no-sandbox", "--disable-dev-shm-usage"])
        for kind in kinds:
            if kind == "sample":
                db = Path(tmp) / "sample.duckdb"
                runs = sample_workspace(db)
            else:
                assert shared is not None
                db = REAL_DB
                runs = real_workspace(shared, db, args.rebuild)     # before the server locks the file
            results[kind] = measure(browser, kind, db, runs, args)
        browser.close()
    print(f"\nheadless Chromium: open target {OPEN_TARGET_S} s, click target {CLICK_TARGET_S} s at real size ('!' "
          f"over it); warm = median of {args.repeats} fresh page loads, cold = the first in the server process; "
          f"run = warm median to the end of the script run as the page learnt it (the rest: drawing); "
          f"server options {args.server_arg or 'default'}")
    for kind, r in results.items():
        if r:
            print(f"{kind}: first page of the server {r['first_page_of_the_server_s']:.3f} s (workspace opened), "
                  f"load average {r['load_avg_1m']}")
    misses = print_table(results, COLUMNS, target)
    print(f"{len(misses)} warm figures over their target at real size")
    print(json.dumps({**results, "misses": misses}, ensure_ascii=False))


def cold(args, chromium: str) -> None:
    from cold_opens import measure_cold, print_cold
    from playwright.sync_api import sync_playwright
    db = args.db
    if db is None:
        shared = shared_cblue()
        if shared is None:
            raise SystemExit("no shared/cblue folder for the real-size workspace: give --db FILE")
        db = REAL_DB
        real_workspace(shared, db, args.rebuild)
    OUTPUT.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                     args=["--no-sandbox", "--disable-dev-shm-usage"])
        results = measure_cold(browser, db, args.rounds, args.only, args.profile, args.script)
        browser.close()
    misses = print_cold(results, args.rounds)
    print(f"{len(misses)} cold opens of the last round over {OPEN_TARGET_S} s")
    print(json.dumps({"cold": results, "misses": misses}, ensure_ascii=False))


if __name__ == "__main__":
    main()
