"""Page and click times in headless Chromium against `streamlit run app.py` on the real-size
workspace (targets: every page open under 1.5 s, every click under 0.5 s).

The workspace is the one ``bench/pages.py`` builds and keeps (all of ``<shared>/cblue``, the
cmeee and cmeie built-in models' runs on the full dev sets, and a second CMeEE run for Compare;
``--rebuild`` builds it again). The server is started on it the way the browser tests start one
(headless, 127.0.0.1, a free port, ``CBLUE_STUDIO_DB``), and Debian's Chromium is driven with
Playwright.

What is timed. An init script watches the DOM of the page (and of its same-origin frames) with a
MutationObserver, and the time of the user's input (pointerdown/keydown). A page or a click is
*settled* when Streamlit says the script is not running (``stApp``'s
``data-test-script-state="notRunning"``), its status widget (``stStatusWidget``) is gone, a rerun
was seen after a click, and the DOM has not changed for 100 ms. The figure is the time of the
last DOM change before that quiet window (the window only confirms it): for an open, from
``page.goto``; for a click, from the input event.

Each scenario (the same as ``bench/pages.py``'s) opens a page and does what a user does there:
tabs, a confusion-matrix cell click (a real mouse click on the Plotly point), an error-row click
(on the data grid's canvas), a filter typed + Enter, the next page... Every repetition starts
with a fresh page load (a new Streamlit session). The first repetition is the cold one (first
time in the server process; printed apart, and the untimed warm-up of the medians); the figures
are the medians of ``--repeats`` more. The server's first page of all (the default page, the
workspace opened) is printed apart.

``--profile``: each step whose median misses its target is done once more with ``py-spy record
-f raw`` on the server process; the raw stacks go to ``test-output/pyspy/`` and the hottest
frames of ``app_pages/`` and ``cblue_core/`` are printed.

    python bench/browser_pages.py [--repeats N] [--only SCENARIO] [--profile] [--rebuild]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "test-output"
OPEN_TARGET_S = 1.5
CLICK_TARGET_S = 0.5
QUIET_MS = 100
STEP_TIMEOUT_MS = 120_000


def _bench_pages():
    """bench/pages.py (the workspace it builds), imported by path: bench/ is no package."""
    spec = importlib.util.spec_from_file_location("bench_pages", ROOT / "bench" / "pages.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_pages"] = module
    spec.loader.exec_module(module)
    return module


# ====================================================================== in the page
INIT_JS = """
(() => {
  const epoch = () => performance.timeOrigin + performance.now();
  let b;
  try { if (window !== window.top) b = window.top.__bench; } catch (e) { b = undefined; }
  if (!b) {
    if (window.__bench) return;
    b = window.__bench = {lastMut: epoch(), input: 0, ran: false, muts: 0};
  }
  new MutationObserver((records) => {
    b.lastMut = epoch();
    b.muts += records.length;
    for (const r of records) {
      if (r.type === 'attributes' && r.attributeName === 'data-test-script-state') {
        const v = r.target.getAttribute('data-test-script-state');
        if (v === 'running' || v === 'rerunRequested') b.ran = true;
      }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  if (window === window.top) {
    for (const type of ['pointerdown', 'keydown']) {
      window.addEventListener(type, () => { b.input = epoch(); b.ran = false; }, true);
    }
  }
})();
"""

# settled: the script not running, no status widget, a rerun seen after an input (or 3 s of
# nothing: a click that reruns nothing), and no DOM change for `quiet` ms
SETTLED_JS = """
([quiet, click]) => {
  const b = window.__bench;
  if (!b) return false;
  const now = performance.timeOrigin + performance.now();
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const status = document.querySelector('[data-testid="stStatusWidget"]');
  if (status && status.getClientRects().length) return false;
  if (click && !(b.input > 0 && (b.ran || now - b.input > 3000))) return false;
  return now - b.lastMut >= quiet;
}
"""

# the off-diagonal cell with the largest value of a confusion matrix (trace 0: the cells), or
# the first point of a chart's first trace
POINT_JS = """
([sel, offDiagonal]) => {
  const gd = document.querySelector(sel + ' .js-plotly-plot');
  if (!gd) return null;
  const arr = (v) => v == null ? [] : (v._inputArray ? Array.from(v._inputArray)
                     : (ArrayBuffer.isView(v) ? Array.from(v) : v));
  const traces = gd._fullData || gd.data;
  const t = traces.findIndex(tr => tr.mode !== 'text');
  if (t < 0) return null;
  if (!offDiagonal) return [t, 0];
  const xs = arr(traces[t].x), ys = arr(traces[t].y), colour = arr((traces[t].marker || {}).color);
  let best = 0, value = -Infinity;
  for (let i = 0; i < xs.length; i++) {
    const v = typeof colour[i] === 'number' ? colour[i] : 0;
    if (xs[i] !== ys[i] && v > value) { best = i; value = v; }
  }
  return [t, best];
}
"""


# ====================================================================== the server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Server:
    """`streamlit run app.py` on ``db`` (copied from tests/browser/conftest.py)."""

    def __init__(self, db: Path, log: Path, extra: list[str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, CBLUE_STUDIO_DB=str(db), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
                   HF_HUB_OFFLINE="1")
        self.log = open(log, "w")  # noqa: SIM115 - open for the server's lifetime
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true",
             f"--server.port={self.port}", "--server.address=127.0.0.1", "--server.fileWatcherType=none",
             "--server.runOnSave=false", *(extra or [])],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).status == 200:
                    return
            except OSError:
                time.sleep(0.5)
            if self.proc.poll() is not None:
                raise SystemExit(f"streamlit exited: {Path(log).read_text()[-3000:]}")
        self.stop()
        raise SystemExit("streamlit did not start in 90 s")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


# ====================================================================== timing
class Timed(Exception):
    """A step that did not settle, or showed an exception."""


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Driver:
    def __init__(self, page, url: str, pid: int) -> None:
        self.page = page
        self.url = url
        self.pid = pid
        self.last_cpu = 0.0         # the server's CPU seconds in the last open or click

    def _settle(self, click: bool) -> dict:
        try:
            self.page.wait_for_function(SETTLED_JS, arg=[QUIET_MS, click], timeout=STEP_TIMEOUT_MS,
                                        polling=10)
        except Exception as exc:
            raise Timed(f"did not settle in {STEP_TIMEOUT_MS / 1000:.0f} s: {str(exc).splitlines()[0][:120]}") from exc
        state = self.page.evaluate("() => window.__bench")
        if self.page.get_by_text("Page not found", exact=True).count():
            raise Timed("Streamlit says: page not found")
        shown = self.page.locator('[data-testid="stException"]')
        if shown.count():
            raise Timed("the page shows an exception: " + shown.first.inner_text()[:200].replace("\n", " "))
        return state

    def open(self, path: str) -> float:
        cpu = cpu_seconds(self.pid)
        start = time.time() * 1000
        self.page.goto(self.url + path, wait_until="commit", timeout=STEP_TIMEOUT_MS)
        state = self._settle(click=False)
        self.last_cpu = cpu_seconds(self.pid) - cpu
        return (state["lastMut"] - start) / 1000

    def act(self, action: Callable[[Driver], None]) -> tuple[float, bool]:
        """(seconds from the input event to the last DOM change, whether a rerun was seen)."""
        self.page.evaluate("() => { window.__bench.input = 0; window.__bench.ran = false; }")
        cpu = cpu_seconds(self.pid)
        action(self)
        state = self._settle(click=True)
        self.last_cpu = cpu_seconds(self.pid) - cpu
        if not state["input"]:
            raise Timed("no input event reached the page")
        return (state["lastMut"] - state["input"]) / 1000, bool(state["ran"])

    # ---------------------------------------------------------------- what a user does
    def key(self, key: str):
        return self.page.locator(f".st-key-{key}")

    def mouse_click_on(self, locator) -> None:
        locator.scroll_into_view_if_needed(timeout=STEP_TIMEOUT_MS)
        box = locator.bounding_box()
        if box is None:
            raise Timed("nothing to click (not displayed)")
        self.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


Action = Callable[[Driver], None]


def tab(name: str) -> Action:
    def act(d: Driver) -> None:
        d.page.get_by_role("tab", name=name, exact=True).click(timeout=STEP_TIMEOUT_MS)
    return act


def chart_point(key: str, off_diagonal: bool = False) -> Action:
    """A real mouse click on a point of the Plotly chart with widget key ``key`` (the largest
    off-diagonal cell of a confusion matrix, or the first bar)."""
    def act(d: Driver) -> None:
        sel = f".st-key-{key}"
        d.page.wait_for_selector(f"{sel} .js-plotly-plot .scatterlayer .point, {sel} .js-plotly-plot .barlayer .point",
                                 timeout=STEP_TIMEOUT_MS)
        found = d.page.evaluate(POINT_JS, [sel, off_diagonal])
        if found is None:
            raise Timed(f"no Plotly chart in {sel}")
        trace, i = found
        layer = d.key(key).locator(".js-plotly-plot .scatterlayer .trace, .js-plotly-plot .barlayer .trace")
        d.mouse_click_on(layer.nth(trace).locator(".point").nth(i))
    return act


def grid_row(key: str, row: int) -> Action:
    """A click on row ``row`` of the data grid with widget key ``key``, in the row-selection
    column (the grid is a canvas: 35 px header, 35 px rows)."""
    def act(d: Driver) -> None:
        grid = d.key(key).locator('[data-testid="stDataFrame"]')
        grid.scroll_into_view_if_needed(timeout=STEP_TIMEOUT_MS)
        box = grid.bounding_box()
        if box is None:
            raise Timed(f"no grid {key}")
        d.page.mouse.click(box["x"] + 18, box["y"] + 35 + 35 * row + 17)
    return act


def typed(key: str, text: str) -> Action:
    """Text typed into a text field, then Enter (the timed input is the Enter)."""
    def act(d: Driver) -> None:
        field_ = d.key(key).locator("input")
        field_.fill(text, timeout=STEP_TIMEOUT_MS)
        field_.press("Enter")
    return act


def step_up(key: str) -> Action:
    def act(d: Driver) -> None:
        d.key(key).locator('[data-testid="stNumberInputStepUp"]').click(timeout=STEP_TIMEOUT_MS)
    return act


def button(key: str | None = None, label: str | None = None) -> Action:
    def act(d: Driver) -> None:
        target = d.key(key).locator("button") if key else d.page.get_by_role("button", name=label)
        target.first.click(timeout=STEP_TIMEOUT_MS)
    return act


def radio(key: str, label: str) -> Action:
    def act(d: Driver) -> None:
        d.key(key).locator("label").filter(has_text=label).first.click(timeout=STEP_TIMEOUT_MS)
    return act


def select(key: str, option_starts: str) -> Action:
    """Open a selectbox (not timed: no rerun), then click the option (timed)."""
    def act(d: Driver) -> None:
        opener = d.key(key).locator("button[aria-haspopup='listbox']")
        option = d.page.get_by_role("option").filter(has_text=re.compile("^" + re.escape(option_starts)))
        for attempt in range(4):        # the list closes when the page scrolls: scroll first
            opener.scroll_into_view_if_needed(timeout=STEP_TIMEOUT_MS)
            d.page.wait_for_timeout(200)
            opener.click(timeout=STEP_TIMEOUT_MS)
            try:
                option.first.wait_for(timeout=3000)
                break
            except Exception:
                if attempt == 3:
                    raise
        d.page.evaluate("() => { window.__bench.input = 0; window.__bench.ran = false; }")
        option.first.click(timeout=STEP_TIMEOUT_MS)
    return act


@dataclass
class Flow:
    path: str
    steps: list[tuple[str, Action]] = field(default_factory=list)


def errors_flow(run_id: int) -> Flow:
    return Flow(f"/errors?run={run_id}", [
        ("tab Confusion matrix", tab("Confusion matrix")),
        ("confusion cell click", chart_point("err_cm", off_diagonal=True)),
        ("error row click", grid_row("err_rows", 0)),
        ("tab Error taxonomy", tab("Error taxonomy")),
        ("taxonomy bar click", chart_point("err_tax")),
        ("tab Buckets", tab("Buckets")),
        ("tab Slices", tab("Slices")),
        ("tab Corrected gold", tab("Corrected gold")),
        ("tab Per label", tab("Per label")),
    ])


def datasets_url() -> str:
    """``/datasets`` where the app's navigation answers there, else ``/`` (the default page
    answers only at the root)."""
    try:
        from app_pages.navigation import PAGES
    except ImportError:
        return "/"
    return "/datasets" if any(p.url_path == "datasets" for p in PAGES) else "/"


def flows(runs: dict[str, int]) -> dict[str, Flow]:
    """The scenarios of bench/pages.py, as a browser user does them."""
    return {
        "Datasets CMeEE train": Flow(f"{datasets_url()}?task=CMeEE&split=train&example=0", [
            ("filter: text contains", typed("ds_q", "病")),
            ("filter: + SQL predicate", typed("ds_sql", "n_spans >= 3")),
            ("next page of the table", step_up("ds_page")),
            ("table row click", grid_row("ds_table", 3)),
            ("Next example button", button(label="Next ▶")),
            ("task CMeIE", select("ds_task", "CMeIE")),
        ]),
        "Live CMeEE": Flow("/live?task=CMeEE", [
            ("input: Dataset example", radio("live_source", "Dataset example")),
            ("Predict click", button("live_run")),
            ("Predict again", button("live_run")),
        ]),
        "Runs": Flow("/runs", [
            ("select the CMeIE run", select("runs_selected", f"#{runs['CMeIE']} ")),
            ("select the CMeEE run", select("runs_selected", f"#{runs['CMeEE']} ")),
        ]),
        "Errors CMeEE run": errors_flow(runs["CMeEE"]),
        "Errors CMeIE run": errors_flow(runs["CMeIE"]),
        "Compare CMeEE runs": Flow(f"/compare?a={runs['CMeEE']}&b={runs['CMeEE B']}", [
            ("list: B right, A wrong", radio("cmp_list", "B right, A wrong")),
            ("list: both wrong", radio("cmp_list", "both wrong")),
            ("example row click", grid_row("cmp_table", 2)),
        ]),
        "Annotate CMeEE dev": Flow("/annotate?task=CMeEE&split=dev&example=0", [
            ("Next example", button("ann_next")),
            ("tab Versions", tab("Versions")),
            ("tab Review queue", tab("Review queue")),
            ("tab Agreement", tab("Agreement")),
            ("tab Re-score", tab("Re-score")),
            ("tab Export", tab("Export")),
            ("tab Edit", tab("Edit")),
        ]),
    }


SCREENSHOTS = {("Errors CMeIE run", "tab Confusion matrix"): "bench_cmeie_confusion_matrix.png",
               ("Errors CMeEE run", "confusion cell click"): "bench_cmeee_confusion_after_click.png"}


def one_pass(d: Driver, name: str, flow: Flow, *, shots: bool = False,
             profile: Callable[[str], object] | None = None, only_step: str | None = None
             ) -> tuple[dict[str, float], dict[str, bool], str | None]:
    """One repetition: a fresh page load, then the steps (up to ``only_step`` when given).
    ({step: s}, {step: rerun seen}, problem); the server's CPU seconds per step go to
    ``d.cpu``."""
    times: dict[str, float] = {}
    reruns: dict[str, bool] = {}
    d.cpu = {}
    try:
        with (profile("open") if profile and only_step == "open" else _nothing()):
            times["open"] = d.open(flow.path)
        d.cpu["open"] = d.last_cpu
        if only_step == "open":
            return times, reruns, None
        for step, action in flow.steps:
            with (profile(step) if profile and only_step == step else _nothing()):
                times[step], reruns[step] = d.act(action)
            d.cpu[step] = d.last_cpu
            if step == only_step:
                break
            if shots and (name, step) in SCREENSHOTS:
                OUTPUT.mkdir(exist_ok=True)
                d.page.screenshot(path=str(OUTPUT / SCREENSHOTS[(name, step)]), full_page=True)
    except Timed as exc:
        return times, reruns, f"{step if 'step' in locals() else 'open'}: {exc}"
    except Exception as exc:  # noqa: BLE001 - a locator that never matched: the page changed
        return times, reruns, f"{step if 'step' in locals() else 'open'}: {type(exc).__name__} {str(exc).splitlines()[0][:160]}"
    return times, reruns, None


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ====================================================================== py-spy
class PySpy:
    """``py-spy record -f raw`` on the server while a step runs."""

    def __init__(self, pid: int, out: Path) -> None:
        self.pid, self.out = pid, out

    def __call__(self, step: str):
        return self

    def __enter__(self):
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(["py-spy", "record", "-o", str(self.out), "-f", "raw", "-r", "200",
                                      "--nonblocking", "-p", str(self.pid)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)          # attached before the step starts
        return self

    def __exit__(self, *exc):
        time.sleep(0.2)
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
                rel = m["file"].split("/work/main/")[-1]
                if rel.startswith(("app_pages/", "cblue_core/")):
                    where = f"{m['func']} ({rel}:{m['line']})"
        ours[where] += n
    return {"script_thread_s": round(script / SAMPLE_HZ, 3), "post_run_gc_s": round(post_gc / SAMPLE_HZ, 3),
            "innermost_ours_s": [[k, round(c / SAMPLE_HZ, 3)] for k, c in ours.most_common(top)]}


# ====================================================================== main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", action="append", help="scenario name (repeatable)")
    parser.add_argument("--profile", action="store_true", help="py-spy each step that misses its target")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the real-size workspace")
    parser.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="extra `streamlit run` option for an experiment, e.g. "
                             "--server-arg=--runner.postScriptGC=false (repeatable)")
    args = parser.parse_args()
    path = chromium()
    if path is None:
        raise SystemExit("no chromium on this machine: apt-get install chromium fonts-noto-cjk")
    bp = _bench_pages()
    shared = bp.shared_cblue()
    if shared is None:
        raise SystemExit("no shared/cblue folder (../shared/cblue or $CBLUE_SHARED/cblue)")
    runs = bp.real_workspace(shared, bp.REAL_DB, args.rebuild)     # before the server locks the file
    all_flows = {k: v for k, v in flows(runs).items() if not args.only or k in args.only}

    from playwright.sync_api import sync_playwright

    OUTPUT.mkdir(exist_ok=True)
    log = Path(tempfile.mkdtemp()) / "streamlit.log"
    server = Server(bp.REAL_DB, log, args.server_arg)
    load = [os.getloadavg()[0]]
    results: dict[str, object] = {"workspace": str(bp.REAL_DB.relative_to(ROOT)), "runs": runs,
                                  "server_args": args.server_arg,
                                  "open_target_s": OPEN_TARGET_S, "click_target_s": CLICK_TARGET_S}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=path, headless=True,
                                         args=["--no-sandbox", "--disable-dev-shm-usage"])
            context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
            context.add_init_script(INIT_JS)
            page = context.new_page()
            d = Driver(page, server.url, server.pid)
            first = d.open("/")
            results["first_page_of_the_server_s"] = round(first, 3)
            print(f"first page of the server (default page, workspace opened): {first:.3f} s", flush=True)
            measured: dict[str, dict] = {}
            for name, flow in all_flows.items():
                reps = []
                cpus = []
                problems = []
                for rep in range(args.repeats + 1):
                    times, reruns, problem = one_pass(d, name, flow, shots=rep == args.repeats)
                    reps.append((times, reruns))
                    cpus.append(dict(d.cpu))
                    if problem:
                        problems.append(f"rep {rep}: {problem}")
                steps = ["open"] + [s for s, _ in flow.steps]
                res = {}
                for step in steps:
                    cold = reps[0][0].get(step)
                    warm = [r[0][step] for r in reps[1:] if step in r[0]]
                    target = OPEN_TARGET_S if step == "open" else CLICK_TARGET_S
                    entry: dict[str, object] = {"target_s": target}
                    if cold is not None:
                        entry["cold_s"] = round(cold, 3)
                    if warm:
                        entry.update({"warm_p50_s": round(statistics.median(warm), 3),
                                      "warm_max_s": round(max(warm), 3), "n": len(warm),
                                      "server_cpu_p50_s": round(statistics.median(
                                          c[step] for c in cpus[1:] if step in c), 3)})
                    if step != "open" and not all(r[1].get(step, True) for r in reps):
                        entry["no_rerun_seen"] = True
                    res[step] = entry
                if problems:
                    res["problems"] = problems[:3]
                    print(f"  {name}: " + " | ".join(problems[:3]), flush=True)
                measured[name] = res
                print(f"  measured {name}", flush=True)
            results["flows"] = measured
            load.append(os.getloadavg()[0])

            if args.profile:
                results["profiles"] = profile_misses(d, all_flows, measured, server.pid)
            browser.close()
    finally:
        server.stop()
    results["load_avg_1m"] = [round(x, 2) for x in load]
    print_table(results)
    print(json.dumps(results, ensure_ascii=False))


def profile_misses(d: Driver, all_flows: dict[str, Flow], measured: dict, pid: int) -> dict:
    out = {}
    for name, flow in all_flows.items():
        for step, entry in measured[name].items():
            if step == "problems" or entry.get("warm_p50_s", 0) < entry["target_s"]:
                continue
            slug = re.sub(r"[^A-Za-z0-9]+", "_", f"{name}__{step}").strip("_")
            raw = OUTPUT / "pyspy" / f"{slug}.txt"
            raw.unlink(missing_ok=True)
            times, _, problem = one_pass(d, name, flow, profile=PySpy(pid, raw), only_step=step)
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


def print_table(results: dict) -> None:
    print()
    print(f"headless Chromium on {results['workspace']}: open target {OPEN_TARGET_S} s, click target "
          f"{CLICK_TARGET_S} s ('!' marks a figure over its target); warm = median of fresh page loads")
    print(f"first page of the server: {results['first_page_of_the_server_s']:.3f} s "
          f"(printed apart: the workspace opened); load average {results['load_avg_1m']}; "
          f"server options {results['server_args'] or 'default'}; server cpu = the server's CPU "
          f"seconds in the step (all threads), median")
    print(f"{'scenario':>22}  {'step':<26} {'cold s':>8} {'warm p50':>9} {'warm max':>9} {'server cpu':>10}")
    for name, steps in results.get("flows", {}).items():
        for step, e in steps.items():
            if step == "problems":
                continue
            t = e["target_s"]
            cells = []
            for k in ("cold_s", "warm_p50_s", "warm_max_s", "server_cpu_p50_s"):
                v = e.get(k)
                cells.append(f"{'—':>8} " if v is None else f"{v:8.3f}" + ("!" if v >= t and k in ("cold_s", "warm_p50_s") else " "))
            note = "  (no rerun seen)" if e.get("no_rerun_seen") else ""
            print(f"{name:>22}  {step:<26} {cells[0]} {cells[1]} {cells[2]}  {cells[3]}{note}")
        for p in steps.get("problems", []):
            print(f"{'':>22}  problem: {p}")


if __name__ == "__main__":
    main()
