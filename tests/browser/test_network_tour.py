"""Real headless Chromium: "safe to serve". The browser talks to the app's own host only, on
every page, and names that come from data (runs, slices) never become live HTML or Markdown.

Every request the page makes is recorded from before the first navigation (HTTP through a
context-wide route that also aborts anything external, so nothing leaves the machine;
websockets through the page's ``websocket`` event). Browser-level fetches that never reach
the page's network (a headless Chromium may not fetch the favicon at all) are caught by an
audit of the URLs the document asks the browser to load (``<link rel=icon>``, ``<img>``, …).

The servers here are started like a team would serve the app: ``streamlit run app.py`` with
the repository's own configuration and no ``STREAMLIT_*`` variable from the environment (the
shared ``app_url`` server turns usage statistics off through one, which would hide them).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.browser.conftest import ROOT, _free_port, _prepare_workspace, _tiny_classifier

pytestmark = pytest.mark.browser

ATTACKER = "attacker.invalid"
HOSTILE_RUN = f"![t](http://{ATTACKER}/run.png) <img src=http://{ATTACKER}/run2.png>"
HOSTILE_SLICE = f"![s](http://{ATTACKER}/slice.png)"
LOCAL_SCHEMES = {"data", "blob", "about"}
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}
RENDER_TIMEOUT_MS = 120_000   # two shared cores: the first run of a page imports a lot
_LOGS: dict[str, Path] = {}   # server URL -> its log (the page redacts exception details)


# ---------------------------------------------------------------- servers


@contextmanager
def _serve(db: Path, models: Path, log_path: Path) -> Iterator[str]:
    """`streamlit run app.py` on a workspace file, as conftest's ``app_url`` does, but with the
    repository's configuration only (no STREAMLIT_* override from the environment)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env.update(CBLUE_STUDIO_DB=str(db), CBLUE_STUDIO_MODELS=str(models))
    log = open(log_path, "w")  # noqa: SIM115 - open for the server's lifetime
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true",
         f"--server.port={port}", "--server.address=127.0.0.1", "--server.fileWatcherType=none"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    _LOGS[url] = log_path
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited: {log_path.read_text()}")
        else:
            raise RuntimeError("streamlit did not start in 90 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def tour_url(tmp_path_factory):
    """The conftest workspace (sample data, run 1) plus a second run on the same split, so the
    Compare page draws its full view; a tiny model for the Live page."""
    from cblue_core.runs.record import import_run
    from cblue_core.store.workspace import connect

    db = tmp_path_factory.mktemp("tour") / "workspace.duckdb"
    _prepare_workspace(db)
    ws = connect(db)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    import_run(ws, did, ROOT / "sample_data/cblue/CMeEE/CMeEE_dev.pred.json", name="second model")
    ws.close()
    models = tmp_path_factory.mktemp("tour_models")
    _tiny_classifier(models / "tiny-qic")
    with _serve(db, models, tmp_path_factory.mktemp("tour_log") / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="module")
def hostile_url(tmp_path_factory):
    """A separate workspace whose run 1 and one saved slice carry Markdown/HTML image names; run 2
    is the sample model on the same split, so Compare has a pair."""
    from cblue_core.runs.record import import_run
    from cblue_core.store.ingest import bootstrap_sample_data
    from cblue_core.store.workspace import connect

    db = tmp_path_factory.mktemp("hostile") / "workspace.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, ROOT / "sample_data")
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    preds = ROOT / "sample_data/cblue/CMeEE/CMeEE_dev.pred.json"
    assert import_run(ws, did, preds, name=HOSTILE_RUN).run_id == 1
    assert import_run(ws, did, preds, name="sample model").run_id == 2
    ws.slices.save(HOSTILE_SLICE, "text_length > 5", task=None)
    ws.close()
    models = tmp_path_factory.mktemp("hostile_models")   # empty: the built-in models/ only
    with _serve(db, models, tmp_path_factory.mktemp("hostile_log") / "streamlit.log") as url:
        yield url


# ---------------------------------------------------------------- the recorder


@dataclass
class Seen:
    where: str      # the tour stop that was showing
    kind: str       # the resource type, "websocket", or "dom <tag>[attr]"
    url: str
    blocked: bool = False

    def __str__(self) -> str:
        return f"[{self.where}] {self.kind} {self.url}" + (" (blocked)" if self.blocked else "")


@dataclass
class Recorder:
    """Every request and websocket of a browser context, tagged with the tour stop showing;
    external ones are blocked (nothing leaves the machine)."""
    base_url: str
    where: str = "(before the first navigation)"
    seen: list[Seen] = field(default_factory=list)
    dom: list[Seen] = field(default_factory=list)
    blocked: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        own = urlsplit(self.base_url)
        port = own.port or DEFAULT_PORTS[own.scheme]
        self.own = {(own.hostname, port), ("localhost", port), ("127.0.0.1", port)}

    def is_own(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme in LOCAL_SCHEMES:
            return True
        try:
            port = parts.port or DEFAULT_PORTS.get(parts.scheme)
        except ValueError:
            return False
        return (parts.hostname, port) in self.own

    def attach(self, page) -> Recorder:
        """Call before the first ``goto``: a route on the context sees every HTTP request of
        every frame and page in it (external ones are aborted); the ``request`` event records
        them; websockets only show as page events."""
        context = page.context
        context.route("**/*", self._route)
        # An external websocket is answered by this (closing) mock; the app's own is untouched.
        context.route_web_socket(lambda url: not self.is_own(url), self._route_websocket)
        context.on("request", self._on_request)
        context.on("page", lambda p: p.on("websocket", self._on_websocket))
        page.on("websocket", self._on_websocket)
        return self

    def _route(self, route) -> None:
        url = route.request.url
        if self.is_own(url):
            route.continue_()
        else:
            self.blocked.add(url)
            route.abort("blockedbyclient")

    def _route_websocket(self, ws) -> None:
        self.blocked.add(ws.url)
        if not any(s.kind == "websocket" and s.url == ws.url for s in self.seen):
            self.seen.append(Seen(self.where, "websocket", ws.url))
        ws.close(code=1008, reason="blocked by the test")

    def _on_request(self, request) -> None:
        self.seen.append(Seen(self.where, request.resource_type, request.url))

    def _on_websocket(self, ws) -> None:
        if not any(s.kind == "websocket" and s.url == ws.url and s.url in self.blocked for s in self.seen):
            self.seen.append(Seen(self.where, "websocket", ws.url))

    def external(self, host: str | None = None) -> list[Seen]:
        found = [s for s in self.seen + self.dom if not self.is_own(s.url)]
        for s in found:
            s.blocked = s.blocked or s.url in self.blocked
        return [s for s in found if host is None or urlsplit(s.url).hostname == host]

    def audit_dom(self, page) -> None:
        """The URLs the document asks the browser to load, in every frame that can be read:
        what a page leaks even where headless Chromium skips the fetch (the favicon)."""
        for frame in page.frames:
            try:
                found = frame.evaluate(_DOM_URLS)
            except PlaywrightError:   # a frame detached meanwhile; its requests were recorded
                found = []
            for kind, url in found:
                if not self.is_own(url) and not any(d.kind == kind and d.url == url for d in self.dom):
                    self.dom.append(Seen(self.where, kind, url))


_DOM_URLS = """() => {
  const out = [];
  const add = (kind, value) => {
    if (!value) return;
    try { out.push([kind, new URL(value, document.baseURI).href]); } catch (e) {}
  };
  const loading = /(^|\\s)(icon|shortcut|apple-touch-icon|mask-icon|stylesheet|preload|modulepreload|prefetch|preconnect|dns-prefetch|prerender|manifest)(\\s|$)/i;
  for (const el of document.querySelectorAll('link[href]')) {
    if (loading.test(el.rel || '')) add(`dom link[rel=${el.rel}]`, el.getAttribute('href'));
  }
  const attrs = ['src', 'poster', 'data', 'background'];
  for (const el of document.querySelectorAll(
      'img, source, script, iframe, frame, embed, object, video, audio, track, input, body, table, td')) {
    for (const a of attrs) add(`dom <${el.tagName.toLowerCase()} ${a}>`, el.getAttribute(a));
    for (const a of ['srcset', 'imagesrcset']) {
      for (const part of (el.getAttribute(a) || '').split(',')) {
        add(`dom <${el.tagName.toLowerCase()} ${a}>`, part.trim().split(/\\s+/)[0]);
      }
    }
  }
  for (const el of document.querySelectorAll('image, use, feImage')) {
    add(`dom <${el.tagName.toLowerCase()} href>`, el.getAttribute('href') || el.getAttribute('xlink:href'));
  }
  for (const el of document.querySelectorAll('[style*="url("]')) {
    for (const m of el.getAttribute('style').matchAll(/url\\(\\s*['"]?([^'")]+)/g)) add('dom style url()', m[1]);
  }
  return out;
}"""

_LIVE_ATTRIBUTES = """(needle) => {
  // Attributes through which a string becomes a fetch, a link or a script; an <input value> or
  // a text node holding the name is plain text and fine.
  const live = /^(src|srcset|imagesrcset|href|xlink:href|poster|data|action|formaction|background|style|on.*)$/i;
  const out = [];
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (live.test(a.name) && a.value.includes(needle)) {
        const box = el.closest('[data-testid^="st"]');
        out.push(`<${el.tagName.toLowerCase()} ${a.name}="${a.value}"> in `
                 + (box ? box.getAttribute('data-testid') : '(no Streamlit element)'));
      }
    }
  }
  return out;
}"""

_SHOWN_TEXT = """() => [document.body.innerText,
  ...[...document.querySelectorAll('input, textarea')].filter(e => e.offsetParent !== null).map(e => e.value)
].join(' ')"""


# ---------------------------------------------------------------- the tour


@dataclass(frozen=True)
class Stop:
    name: str
    path: str
    ready: Callable   # page -> a locator that shows this page rendered
    act: Callable | None = None   # page -> None: a click that shows more of the page


def _title(text: str) -> Callable:
    return lambda page: page.locator("h1").filter(has_text=re.compile(rf"^\s*{re.escape(text)}\s*$")).first


def _both_wrong(page) -> None:
    """Compare lists "A right, B wrong" first, empty for two runs of one predictions file; the
    examples both runs get wrong show the example view with each run's name above it."""
    page.locator('[data-testid="stRadio"] label').filter(has_text="both wrong").first.click(
        timeout=RENDER_TIMEOUT_MS)
    shown = page.get_by_text(re.compile(r"^Example \d+$")).or_(page.get_by_text("None.", exact=True))
    shown.first.wait_for(timeout=RENDER_TIMEOUT_MS)


TOUR = [
    Stop("Datasets", "/", _title("Datasets")),
    Stop("Live", "/live", _title("Live prediction")),
    Stop("Live (demo)", "/live?demo=1",
         lambda page: page.get_by_text("Research prototype, not for clinical use").first),
    Stop("Runs", "/runs", _title("Runs")),
    Stop("Errors", "/errors?run=1", _title("Errors")),
    Stop("Compare", "/compare?a=1&b=2", _title("Compare runs"), _both_wrong),
    Stop("Annotate", "/annotate", _title("Annotate")),
]


def _wait_idle(page, quiet_ms: int = 1500, timeout_ms: int = RENDER_TIMEOUT_MS) -> None:
    """Until Streamlit's status widget (shown while a script runs or connects) has stayed away
    for ``quiet_ms``, then until the page's HTTP traffic is idle."""
    status = page.locator('[data-testid="stStatusWidget"]')
    deadline = time.monotonic() + timeout_ms / 1000
    quiet_since = None
    while True:
        busy = any(status.nth(i).is_visible() for i in range(status.count()))
        now = time.monotonic()
        if busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif (now - quiet_since) * 1000 >= quiet_ms:
            break
        if now > deadline:
            raise TimeoutError(f"the app kept running for {timeout_ms / 1000:.0f} s")
        page.wait_for_timeout(250)
    page.wait_for_load_state("networkidle", timeout=timeout_ms)


def _last_error(base_url: str) -> str:
    """The last exception line of the server's log (Rich's traceback ends with it), and where."""
    log = _LOGS.get(base_url)
    if log is None or not log.exists():
        return "(no log)"
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in log.read_text(errors="replace").splitlines()]
    errors = [n for n, line in enumerate(lines) if re.match(r"^[A-Za-z_.]*(Error|Exception)\b.*:", line)]
    if not errors:
        return f"(no exception in {log})"
    return f"{' '.join(lines[errors[-1]:errors[-1] + 3])[:400]} ({log})"


def _visit(page, rec: Recorder, base_url: str, stop: Stop, output_dir: Path, prefix: str) -> list[str]:
    """Open one page, wait until it rendered, screenshot it; the problems it shows."""
    rec.where = stop.name
    problems = []
    page.goto(base_url + stop.path, timeout=RENDER_TIMEOUT_MS)
    try:
        stop.ready(page).wait_for(timeout=RENDER_TIMEOUT_MS)
        _wait_idle(page)
        if stop.act is not None:
            stop.act(page)
            _wait_idle(page)
    except Exception as exc:  # noqa: BLE001  (report it with the screenshot, then go on)
        problems.append(f"[{stop.name}] did not render: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    shot = re.sub(r"[^a-z0-9]+", "_", stop.name.lower()).strip("_")
    page.screenshot(path=str(output_dir / f"{prefix}_{shot}.png"), full_page=True)
    boxes = page.locator('[data-testid="stException"]')
    for i in range(boxes.count()):
        problems.append(f"[{stop.name}] exception box: {boxes.nth(i).inner_text()[:200]!r}; "
                        f"server log: {_last_error(base_url)}")
    rec.audit_dom(page)
    return problems


def test_every_page_talks_to_its_own_host_only(tour_url, page, output_dir):
    page.set_viewport_size({"width": 1400, "height": 1600})
    rec = Recorder(tour_url).attach(page)
    problems = []
    for stop in TOUR:
        problems += _visit(page, rec, tour_url, stop, output_dir, "network_tour")
    rec.where = "(after the tour)"
    page.wait_for_timeout(1000)   # a late beacon of the last page
    assert any(rec.is_own(s.url) and s.kind == "document" for s in rec.seen), "the recorder saw no page load"
    assert any(s.kind == "websocket" and rec.is_own(s.url) for s in rec.seen), "no app websocket recorded"
    external = rec.external()
    if external:
        problems.append(f"{len(external)} requests/references outside {tour_url}:\n  "
                        + "\n  ".join(map(str, external)))
    assert not problems, "\n".join(problems)


def test_recorder_catches_an_injected_external_request(tour_url, page):
    """The positive control: the recorder sees (and blocks) what a page would leak."""
    rec = Recorder(tour_url).attach(page)
    assert not _visit_quietly(page, rec, tour_url)
    other_port = f"127.0.0.1:{urlsplit(tour_url).port + 1}"
    page.evaluate("""([host, otherPort]) => {
      const img = document.createElement('img');
      img.src = `http://${host}/x.png`;
      document.body.appendChild(img);
      const icon = document.createElement('link');
      icon.rel = 'icon';
      icon.href = `https://${host}/icon.png`;
      document.head.appendChild(icon);
      try { new WebSocket(`ws://${host}/stream`); } catch (e) {}
      fetch(`http://${otherPort}/same-host-other-port`).catch(() => {});
    }""", [ATTACKER, other_port])
    deadline = time.monotonic() + 15
    want = {"image": f"http://{ATTACKER}/x.png", "websocket": f"ws://{ATTACKER}/stream",
            "fetch": f"http://{other_port}/same-host-other-port"}
    while time.monotonic() < deadline:
        got = {s.kind: s.url for s in rec.external()}
        if all(got.get(k) == v for k, v in want.items()):
            break
        page.wait_for_timeout(200)
    rec.audit_dom(page)
    external = rec.external()
    urls = {(s.kind, s.url) for s in external}
    for kind, url in want.items():
        assert (kind, url) in urls, f"the recorder missed {kind} {url}; it saw {list(map(str, external))}"
    for url in (f"http://{ATTACKER}/x.png", f"ws://{ATTACKER}/stream"):
        assert any(s.url == url and s.blocked for s in external), f"{url} was not blocked"
    assert any(s.kind.startswith("dom link") and s.url == f"https://{ATTACKER}/icon.png" for s in external)
    own_port = urlsplit(tour_url).port
    assert all(rec.is_own(u) for u in (
        f"http://127.0.0.1:{own_port}/_stcore/health", f"ws://localhost:{own_port}/_stcore/stream",
        "data:image/png;base64,AAAA", f"blob:http://127.0.0.1:{own_port}/1234"))
    assert not any(rec.is_own(u) for u in (
        f"http://127.0.0.1:{own_port}.{ATTACKER}/", f"http://{ATTACKER}:{own_port}/", "https://127.0.0.1/"))


def _visit_quietly(page, rec: Recorder, base_url: str) -> list[str]:
    rec.where = "Datasets"
    page.goto(base_url + "/", timeout=RENDER_TIMEOUT_MS)
    TOUR[0].ready(page).wait_for(timeout=RENDER_TIMEOUT_MS)
    _wait_idle(page)
    return [f"exception box: {t[:300]!r}" for t in page.locator('[data-testid="stException"]').all_inner_texts()]


HOSTILE_TOUR = [
    # Each stop: where the names show, and the plain text that must be visible there.
    (Stop("Runs (hostile names)", "/runs", _title("Runs")), [HOSTILE_RUN]),
    (Stop("Errors (hostile names)", f"/errors?run=1&slice={quote(HOSTILE_SLICE, safe='')}", _title("Errors")),
     [HOSTILE_RUN, f"slice = {HOSTILE_SLICE}"]),
    (Stop("Compare (hostile names)", "/compare?a=1&b=2", _title("Compare runs"), _both_wrong),
     [HOSTILE_RUN, f"run #1 {HOSTILE_RUN}"]),
]


def test_hostile_names_stay_plain_text(hostile_url, page, output_dir):
    page.set_viewport_size({"width": 1400, "height": 1600})
    rec = Recorder(hostile_url).attach(page)
    problems = []
    for stop, texts in HOSTILE_TOUR:
        problems += _visit(page, rec, hostile_url, stop, output_dir, "network_hostile")
        live = page.evaluate(_LIVE_ATTRIBUTES, ATTACKER)
        if live:
            problems.append(f"[{stop.name}] {len(live)} elements load or link a URL from a name:\n  "
                            + "\n  ".join(live))
        # text and widget values, as shown (md() keeps bare URLs from becoming links with a
        # zero-width space inside "http", invisible on the page)
        body = " ".join(page.evaluate(_SHOWN_TEXT).replace("\u200b", "").split())
        for text in texts:
            if text not in body:
                problems.append(f"[{stop.name}] the name is not shown as plain text: {text!r}")
    rec.where = "(after the tour)"
    page.wait_for_timeout(1000)
    reached = rec.external(ATTACKER)
    if reached:
        problems.append(f"{len(reached)} requests/references to {ATTACKER}:\n  " + "\n  ".join(map(str, reached)))
    assert not problems, "\n".join(problems)
