"""Load bench: N concurrent visitors on one server process, on the real-size workspace (target:
every step succeeds, every save stored once, the server's own time per script run under 1 s at
p95, with 10 visitors).

The server is ``serve.py``'s app as visitors get it, behind the sign-in proxy mode
(``CBLUE_STUDIO_AUTH=proxy``: each visitor is named by its own header, ``load-v01``...,
stored as an annotator), started the way the other benches start one
(``browser_pages.Server``: headless, 127.0.0.1, a free port) through ``bench/load_serve.py``,
which times every script run inside the server process. The workspace is a copy of the
real-size one of ``bench/scenarios.py`` (built once at ``workspace/bench-real.duckdb``), so
the saves never touch it; ``--workspace sample`` uses the sample workspace instead.

The visitors speak Streamlit's own websocket protocol (``/_stcore/stream``, the BackMsg and
ForwardMsg protobufs the browser sends and receives), all in this one process: each step sends
the widget value a browser would send (a text typed, a tab or an option picked, a button's
trigger, a page opened by its URL) and waits for the end of the script run it caused. On two
shared cores, ten browsers would spend most of the CPU drawing, and the figures would be the
browsers'; this client costs little, so the server's figures are the server's. What it does
not do is draw: its client time is the server's answer on loopback, not a page drawn.

Each visitor, ``--rounds`` times, in a new session (a reloaded tab) each round:

1. opens Datasets (CMeEE train), filters by text, then adds a SQL predicate;
2. opens Errors on the CMeEE model run and its Confusion matrix tab;
3. opens Annotate on a CHIP-CTC dev example of its own, picks another label, types a reason
   and saves;
4. types the number of the round's shared example (the same for every visitor) into the
   record number field, waits until every visitor has it open, then picks a label of its own, types a reason and saves: one save
   wins, the others must hit the version check ("Edit conflict"), and then press "Keep mine"
   until their save goes in (each press is one more step).

Every step is checked (the page shows the filter, the tab, "Saved example N ... by load-vNN",
no exception); a step that fails, or takes longer than ``--step-timeout``, is a failed step
and ends that visitor's round. ``--timeout`` bounds the whole bench; the server is stopped
at the end whatever happened.

Printed: per step, the client time (request sent to the end of the script run received) and
the server's own time for it (the matching script run in the server's log), p50/p95, and the
script thread's CPU seconds in it (p50: wall well above CPU is waiting, for a core, the GIL, a
lock or a worker process); the
server's own time per script run over all of them, p50/p95/max, wall and the script thread's
CPU; the server's memory (resident, at the start, peak, end); failed steps; then, after the
server stopped, the save check on the workspace: each save confirmed to a visitor is stored
exactly once (its reason, a unique token, in exactly one annotation event, by that visitor, with
the event id the page named), no save refused by the version check was stored, and each
example's events have consecutive revisions (no edit was lost or written over).

    python bench/load.py [--visitors 10] [--rounds 2] [--workspace real|sample] [--rebuild]
                         [--think S] [--step-timeout 120] [--timeout 1500] [--json FILE] [--profile]

``--think S``: each visitor pauses 0.5-1.5 x S seconds before each step, as a person reads the
page; the default, 0, sends each step as soon as the last one ended (the server is never idle:
a stress, not a team's day).

``--profile``: py-spy samples the server during the whole bench; the script threads' time is
printed by the innermost frame of ``app_pages/`` or ``cblue_core/`` on the stack
(``browser_pages.hot_frames``), the raw stacks kept in ``test-output/pyspy/load.txt``.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from browser_pages import OUTPUT, PySpy, Server, hot_frames  # bench/ is no package
from cold_opens import cpu_seconds
from scenarios import REAL_DB, normalised, real_runs, real_workspace, sample_workspace, shared_cblue

USER_HEADER = "X-Remote-User"
ANNOTATE_TASK = "CHIP-CTC"      # a label task: its editor is a selectbox, saved by the page's Save button
TARGET_P95_S = 1.0
TEXT_FILTERS = ["病", "痛", "炎", "血", "肿", "咳", "热", "癌", "疹", "骨"]


class Failed(Exception):
    """A step that timed out, showed an exception, or did not do what it says."""


# ====================================================================== one visitor's session
@dataclass
class Run:
    """What one script run sent back: its text, its widgets by user key, exceptions."""

    text: str = ""
    widgets: dict[str, tuple[str, object]] = field(default_factory=dict)   # user key -> (id, proto)
    exceptions: list[str] = field(default_factory=list)


ELEMENT_TEXT = ("body", "label", "message")


def _element_text(kind: str, proto) -> str:
    parts = [str(getattr(proto, f)) for f in ELEMENT_TEXT if f in proto.DESCRIPTOR.fields_by_name]
    if kind == "html":
        parts = [re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<style.*?</style>", "", proto.body))]
    return "\n".join(p for p in parts if p)


def _user_key(element_id: str) -> str | None:
    from streamlit.elements.lib.utils import user_key_from_element_id
    return user_key_from_element_id(element_id)


def widget_state(element_id: str, kind: str, value):
    from streamlit.proto.WidgetStates_pb2 import WidgetState
    state = WidgetState(id=element_id)
    if kind == "string_array_value":
        state.string_array_value.data.extend(value)
    else:
        setattr(state, kind, value)
    return state


def initial_state(element_id: str, proto):
    """The value a browser sends for a widget it shows and the visitor did not touch (or whose
    value the script set), from the widget's element; None for a kind it does not keep
    (buttons) or this client does not model (a grid's or a chart's selection, a component's
    value: the server keeps its default)."""
    name = proto.DESCRIPTOR.name
    has = proto.HasField if hasattr(proto, "HasField") else (lambda f: False)
    if name in ("Selectbox", "Radio"):
        if has("raw_value"):
            return widget_state(element_id, "string_value", proto.raw_value)
        if has("default") and 0 <= proto.default < len(proto.options):
            return widget_state(element_id, "string_value", proto.options[proto.default])
        return None
    if name in ("TextInput", "TextArea"):
        text = proto.value if has("value") else (proto.default if has("default") else "")
        return widget_state(element_id, "string_value", text)
    if name == "NumberInput":
        number = proto.value if has("value") else (proto.default if has("default") else None)
        if number is None:
            return None
        is_int = proto.DataType.Name(proto.data_type) == "INT"
        return widget_state(element_id, "int_value" if is_int else "double_value", int(number) if is_int else number)
    if name == "Checkbox":
        return widget_state(element_id, "bool_value", proto.value if proto.set_value else proto.default)
    if name == "MultiSelect":
        picked = list(proto.raw_values) if proto.set_value else [proto.options[i] for i in proto.default]
        return widget_state(element_id, "string_array_value", picked)
    if name == "Block" and proto.HasField("tab_container") and proto.tab_container.HasField("default_tab_label"):
        return widget_state(element_id, "string_value", proto.tab_container.default_tab_label)
    return None


class Session:
    """One websocket session, as one browser tab: ``go(page, query)`` opens a page, ``set`` /
    ``press`` change a widget; each waits for the end of the script run and returns it."""

    def __init__(self, url: str, name: str, secret: str, step_timeout: float) -> None:
        self.uri = url.replace("http://", "ws://") + "/_stcore/stream"
        self.headers = {USER_HEADER: name, "X-Proxy-Secret": secret}
        self.step_timeout = step_timeout
        self.page = ""
        self.query = ""
        self.session_id = ""
        self.last = Run()
        self.values: dict = {}      # widget id -> the WidgetState the browser would send
        self.ws = None

    async def __aenter__(self) -> Session:  # noqa: PYI034 - never subclassed
        from websockets.asyncio.client import connect
        self.ws = await connect(self.uri, additional_headers=self.headers, subprotocols=["streamlit"],
                                max_size=None, open_timeout=self.step_timeout)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.ws.close()

    async def go(self, page: str, query: dict[str, str]) -> Run:
        self.page, self.query = page, urlencode(query)
        return await self._rerun([])

    async def set(self, key: str, value, kind: str = "string_value") -> Run:
        found = self.last.widgets.get(key)
        if found is None:
            raise Failed(f"no widget {key} on the page")
        state = widget_state(found[0], kind, value)
        if kind != "trigger_value":
            self.values[found[0]] = state
        return await self._rerun([state])

    async def press(self, key: str) -> Run:
        found = self.last.widgets.get(key)
        if found is None:
            raise Failed(f"no button {key} on the page (widgets: {sorted(self.last.widgets)[:40]})")
        if getattr(found[1], "disabled", False):
            raise Failed(f"the button {key} is disabled")
        return await self.set(key, True, "trigger_value")

    async def _rerun(self, states) -> Run:
        from streamlit.proto.BackMsg_pb2 import BackMsg
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        cs.page_name = self.page
        ids = {st.id for st in states}
        cs.widget_states.widgets.extend([v for k, v in self.values.items() if k not in ids] + list(states))
        cs.context_info.timezone = "Asia/Shanghai"
        cs.context_info.locale = "zh-CN"
        cs.context_info.url = f"http://127.0.0.1/{self.page}" + (f"?{self.query}" if self.query else "")
        await self.ws.send(msg.SerializeToString())
        try:
            run = await asyncio.wait_for(self._until_finished(), self.step_timeout)
        except TimeoutError as exc:
            raise Failed(f"no end of the script run in {self.step_timeout:.0f} s") from exc
        self.last = run
        self._remember(run)
        if run.exceptions:
            raise Failed("the page shows an exception: " + run.exceptions[0][:200].replace("\n", " "))
        return run

    async def _until_finished(self) -> Run:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        texts: list[str] = []
        run = Run()
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(await self.ws.recv())
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.session_id = msg.new_session.initialize.session_id or self.session_id
            elif kind == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            elif kind == "ref_hash":
                raise Failed("the server sent a cached-message reference this client never cached")
            elif kind == "delta":
                self._read_delta(msg.delta, run, texts)
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
                if status == "FINISHED_EARLY_FOR_RERUN":       # st.rerun(): the next run follows
                    texts, run = [], Run()
                    continue
                if status == "FINISHED_WITH_COMPILE_ERROR":
                    run.exceptions.append("compile error")
                run.text = normalised("\n".join(texts))
                return run

    def _remember(self, run: Run) -> None:
        """What the browser's widget manager keeps after a run: the value of each widget shown
        (the one it had, or the script's when it set one), none of the others."""
        shown = {element_id for element_id, _ in run.widgets.values()}
        self.values = {k: v for k, v in self.values.items() if k in shown}
        for element_id, proto in run.widgets.values():
            if element_id not in self.values or getattr(proto, "set_value", False):
                state = initial_state(element_id, proto)
                if state is not None:
                    self.values[element_id] = state

    @staticmethod
    def _read_delta(delta, run: Run, texts: list[str]) -> None:
        which = delta.WhichOneof("type")
        if which == "add_block":
            block = delta.add_block
            for element_id in (block.id, block.tab_container.id if block.HasField("tab_container") else ""):
                if element_id and _user_key(element_id):
                    run.widgets[_user_key(element_id)] = (element_id, block)
            return
        if which not in ("new_element", "new_transient"):
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind is None:
            return
        proto = getattr(element, kind)
        if kind == "exception":
            run.exceptions.append(f"{proto.type}: {proto.message}")
        texts.append(_element_text(kind, proto))
        element_id = getattr(proto, "id", "") if "id" in proto.DESCRIPTOR.fields_by_name else ""
        if element_id and _user_key(element_id):
            run.widgets[_user_key(element_id)] = (element_id, proto)


# ====================================================================== the visitors
@dataclass
class Step:
    visitor: str
    round: int
    name: str
    session: str
    sent: float             # epoch seconds
    received: float
    problem: str | None = None

    @property
    def client_s(self) -> float:
        return self.received - self.sent


@dataclass
class Save:
    """One save a visitor asked for: its reason (a unique token), and what the page said."""

    visitor: str
    example: int
    label: str
    reason: str
    event_id: int | None = None     # confirmed as this event
    refused: int = 0                # refusals by the version check shown to the visitor
    problem: str | None = None


class Meeting:
    """Every visitor of a round has the shared example open before any of them edits it (or
    ``timeout`` passes: a visitor whose round failed early still arrives)."""

    def __init__(self, n: int, timeout: float) -> None:
        self.n, self.timeout = n, timeout
        self.arrived: dict[int, int] = {}
        self.events: dict[int, asyncio.Event] = {}

    async def arrive(self, rnd: int, wait: bool = True) -> None:
        event = self.events.setdefault(rnd, asyncio.Event())
        self.arrived[rnd] = self.arrived.get(rnd, 0) + 1
        if self.arrived[rnd] >= self.n:
            event.set()
        if wait:
            try:
                await asyncio.wait_for(event.wait(), self.timeout)
            except TimeoutError:
                pass


class Visitor:
    def __init__(self, n: int, ctx: dict, steps: list[Step], saves: list[Save], meeting: Meeting) -> None:
        self.n = n
        self.name = f"load-v{n + 1:02d}"
        self.ctx, self.steps, self.saves, self.meeting = ctx, steps, saves, meeting
        self.session: Session | None = None
        self.rng = random.Random(n)

    async def step(self, rnd: int, name: str, action, *checks: str) -> object:
        """``action()`` (a coroutine of the session) timed; ``checks``: patterns the page must show.
        First the visitor's pause (``--think``), as a person reads the page before the next click."""
        assert self.session is not None
        if self.ctx["think"]:
            await asyncio.sleep(self.rng.uniform(0.5, 1.5) * self.ctx["think"])
        sent = time.time()
        try:
            run = await action()
            text = getattr(run, "text", "")
            missing = next((c for c in checks if not re.search(c, text)), None)
            if missing:
                said = [ln for ln in text.splitlines() if re.search(r"Example \d|[Ss]aved|onflict|failed|rror", ln)]
                raise Failed(f"the page does not show /{missing}/ (it says: {' | '.join(said)[:300]})")
        except Failed as exc:
            self.steps.append(Step(self.name, rnd, name, self.session.session_id, sent, time.time(), str(exc)))
            raise
        except Exception as exc:
            self.steps.append(Step(self.name, rnd, name, self.session.session_id, sent, time.time(),
                                   f"{type(exc).__name__}: {str(exc)[:160]}"))
            raise Failed(str(exc)) from exc
        self.steps.append(Step(self.name, rnd, name, self.session.session_id, sent, time.time()))
        return run

    async def visit(self, rnd: int) -> None:
        ctx = self.ctx
        met = False
        async with Session(ctx["url"], self.name, ctx["secret"], ctx["step_timeout"]) as s:
            self.session = s
            try:
                await self.step(rnd, "open Datasets", lambda: s.go("datasets", {"task": "CMeEE", "split": "train"}),
                                r"matching example")
                q = TEXT_FILTERS[(self.n + rnd) % len(TEXT_FILTERS)]
                await self.step(rnd, "filter: text contains", lambda: s.set("ds_q", q), r"[\d,]+ matching example")
                await self.step(rnd, "filter: + SQL predicate", lambda: s.set("ds_sql", "n_spans >= 3"),
                                r"[\d,]+ matching example")
                await self.step(rnd, "open Errors", lambda: s.go("errors", {"run": str(ctx["errors_run"])}),
                                r"Examples behind the selection")
                await self.step(rnd, "tab Confusion matrix", lambda: s.set("err_tab", "Confusion matrix"),
                                r"Click a cell for its examples|No confusion pairs")
                own = ctx["own_examples"][rnd][self.n]
                await self.edit(rnd, own, "own")
                shared = ctx["shared_examples"][rnd]
                await self.step(rnd, "record number: shared example", lambda: s.set("ann_example", shared, "int_value"),
                                rf"Example {shared} of")
                met = True
                await self.meeting.arrive(rnd)
                await self.edit(rnd, shared, "shared", opened=True)
            except Failed:
                pass
            finally:
                if not met:
                    await self.meeting.arrive(rnd, wait=False)

    def open_example(self, idx: int):
        assert self.session is not None
        return self.session.go("annotate", {"task": ANNOTATE_TASK, "split": "dev", "example": str(idx)})

    async def edit(self, rnd: int, idx: int, which: str, opened: bool = False) -> None:
        """Pick a label other than the example's, type a unique reason, Save (then Keep mine while
        the version check refuses it)."""
        s = self.session
        assert s is not None
        if not opened:
            await self.step(rnd, f"open Annotate ({which})", lambda: self.open_example(idx), rf"Example {idx} of")
        key = next((k for k in s.last.widgets if k.startswith("ann_label")), None)
        if key is None:
            raise Failed("no label selectbox on the Annotate page")
        element_id, proto = s.last.widgets[key]
        options = list(proto.options)
        now = s.values.get(element_id)
        choices = [o for o in options if now is None or o != now.string_value] or options
        label = choices[(self.n * 7 + rnd * 3) % len(choices)]
        await self.step(rnd, "pick a label", lambda: s.set(key, label), r"Unsaved changes")
        token = f"load {self.name} round {rnd} {which} example {idx} {secrets.token_hex(4)}"
        save = Save(self.name, idx, label, token)
        self.saves.append(save)
        await self.step(rnd, "type the reason", lambda: s.set("ann_reason", token))
        button, step = "ann_save", "Save"
        for _attempt in range(self.ctx["visitors"] + 2):
            try:
                run = await self.step(rnd, step, lambda b=button: s.press(b))
            except Failed as exc:
                save.problem = str(exc)
                raise
            text = getattr(run, "text", "")
            done = re.search(rf"Saved example {idx} as event #(\d+) \(revision \d+\) by (\S+)\.", text)
            if done:
                if done.group(2) != self.name:
                    save.problem = f"saved as {done.group(2)}, not {self.name}"
                    raise Failed(save.problem)
                save.event_id = int(done.group(1))
                return
            if re.search(rf"Edit conflict on example {idx}", text) and "ann_keep_mine" in s.last.widgets:
                save.refused += 1
                button, step = "ann_keep_mine", "Keep mine (after a conflict)"
                continue
            save.problem = "neither saved nor refused by the version check: " + text[:200].replace("\n", " ")
            raise Failed(save.problem)
        save.problem = "still refused after every Keep mine"
        raise Failed(save.problem)


# ====================================================================== the server's side
class Memory:
    """The server's resident memory, sampled every half second."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[float] = []

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def hwm_mib(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    async def watch(self) -> None:
        while True:
            try:
                self.samples.append(self.rss_mib())
            except OSError:
                return
            await asyncio.sleep(0.5)


def server_runs(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def match_runs(steps: list[Step], runs: list[dict]) -> dict[int, list[dict]]:
    """{step index: the server's script runs of that step}: same session, started while the
    step waited for its answer."""
    by_session: dict[str, list[dict]] = {}
    for r in runs:
        by_session.setdefault(r["session"], []).append(r)
    out: dict[int, list[dict]] = {}
    for i, st in enumerate(steps):
        out[i] = [r for r in by_session.get(st.session, []) if st.sent - 0.01 <= r["start"] <= st.received]
    return out


# ====================================================================== figures
def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def check_saves(db: Path, saves: list[Save], dataset_id: int) -> dict:
    """After the server stopped: each confirmed save stored exactly once, as the event the page
    named, by its visitor; nothing of a save never confirmed stored twice; consecutive revisions."""
    from cblue_core.store.workspace import connect
    from cblue_core.tasks import get_task
    shown = get_task(ANNOTATE_TASK).display_label
    ws = connect(db, read_only=True)
    try:
        events = ws.annotations.events(dataset_id)
    finally:
        ws.close()
    ours = [e for e in events if e.reason.startswith("load ")]
    problems = []
    for save in saves:
        stored = [e for e in ours if e.reason == save.reason]
        if save.event_id is not None:
            if len(stored) != 1:
                problems.append(f"{save.reason!r}: confirmed as #{save.event_id}, stored {len(stored)} times")
            elif stored[0].event_id != save.event_id or stored[0].author != save.visitor \
                    or stored[0].idx != save.example or shown(stored[0].after.label or "") != save.label:
                e = stored[0]
                problems.append(f"{save.reason!r}: confirmed as #{save.event_id} by {save.visitor} on "
                                f"{save.example} ({save.label}), stored as #{e.event_id} by {e.author} on "
                                f"{e.idx} ({shown(e.after.label or '')})")
        elif len(stored) > 1:
            problems.append(f"{save.reason!r}: never confirmed, stored {len(stored)} times")
    known = {s.reason for s in saves}
    problems += [f"event #{e.event_id}: reason {e.reason!r} no visitor sent" for e in ours if e.reason not in known]
    by_example: dict[int, list[int]] = {}
    for e in events:
        by_example.setdefault(e.idx, []).append(e.revision)
    for idx, revisions in by_example.items():
        if revisions != list(range(revisions[0], revisions[0] + len(revisions))) or revisions[0] != 1:
            problems.append(f"example {idx}: revisions {revisions} (an edit lost or written over)")
    confirmed = sum(s.event_id is not None for s in saves)
    return {"saves_asked": len(saves), "confirmed": confirmed, "events_of_the_bench": len(ours),
            "refused_by_version_check": sum(s.refused for s in saves),
            "examples_edited": len({s.example for s in saves}), "problems": problems}


# ====================================================================== main
def prepare(args, tmp: Path) -> tuple[Path, dict]:
    """The workspace copy the server will serve, with the visitors' roles; its runs and the
    CHIP-CTC dev dataset."""
    from cblue_core.auth.roles import Role
    from cblue_core.store.workspace import connect
    db = tmp / "load.duckdb"
    if args.workspace == "sample":
        runs = sample_workspace(db)
    else:
        shared = shared_cblue()
        if shared is None:
            raise SystemExit("no shared/cblue folder (../shared/cblue or $CBLUE_SHARED/cblue): try --workspace sample")
        real_workspace(shared, REAL_DB, args.rebuild)
        shutil.copyfile(REAL_DB, db)
        if Path(f"{REAL_DB}.wal").is_file():
            shutil.copyfile(f"{REAL_DB}.wal", f"{db}.wal")
        runs = real_runs(db)
    ws = connect(db)
    try:
        for n in range(args.visitors):
            ws.users.set_role(f"load-v{n + 1:02d}", Role.ANNOTATOR)
        info = ws.datasets.find(ANNOTATE_TASK, "dev")
        if info is None:
            raise SystemExit(f"no {ANNOTATE_TASK} dev split in the workspace")
        dataset_id, records = info.dataset_id, info.records
    finally:
        ws.close()
    return db, {"runs": runs, "dataset_id": dataset_id, "records": records}


def examples(records: int, visitors: int, rounds: int, seed: int) -> tuple[list[list[int]], list[int]]:
    """Own examples (distinct for every visitor and round) and one shared example per round."""
    rng = random.Random(seed)
    picked = rng.sample(range(records), visitors * rounds + rounds)
    own = [picked[r * visitors:(r + 1) * visitors] for r in range(rounds)]
    return own, picked[visitors * rounds:]


async def drive(args, url: str, secret: str, pid: int, ws_info: dict) -> tuple[list[Step], list[Save], Memory]:
    own, shared = examples(ws_info["records"], args.visitors, args.rounds, args.seed)
    ctx = {"url": url, "secret": secret, "step_timeout": args.step_timeout, "visitors": args.visitors,
           "think": args.think,
           "errors_run": ws_info["runs"]["CMeEE"], "own_examples": own, "shared_examples": shared}
    steps: list[Step] = []
    saves: list[Save] = []
    meeting = Meeting(args.visitors, args.step_timeout)
    memory = Memory(pid)
    watcher = asyncio.create_task(memory.watch())
    rng = random.Random(args.seed)

    async def one(n: int) -> None:
        v = Visitor(n, ctx, steps, saves, meeting)
        await asyncio.sleep(rng.uniform(0, 1))          # they arrive within a second
        for rnd in range(args.rounds):
            await v.visit(rnd)

    try:
        await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(args.visitors))), args.timeout)
    except TimeoutError:
        print(f"the bench ran past --timeout {args.timeout:.0f} s: stopped", flush=True)
    finally:
        watcher.cancel()
    return steps, saves, memory


def report(args, steps: list[Step], runs: list[dict], saves_check: dict, memory: dict, load: list) -> dict:
    matched = match_runs(steps, runs)
    names = list(dict.fromkeys(s.name for s in steps))
    table = {}
    print(f"\n{args.visitors} visitors x {args.rounds} rounds, pause before a step {args.think:g} s (mean), "
          f"websocket protocol, workspace {args.workspace}; "
          f"load average (1 min) before/after {load}; {os.cpu_count()} CPUs")
    print(f"{'step':<30} {'n':>4} {'fail':>4} {'client p50':>11} {'client p95':>11} {'server p50':>11} "
          f"{'server p95':>11} {'srv CPU p50':>11}")
    for name in names:
        ok = [(i, s) for i, s in enumerate(steps) if s.name == name and s.problem is None]
        failed = sum(1 for s in steps if s.name == name and s.problem)
        client = [s.client_s for _, s in ok]
        server = [sum(r["end"] - r["start"] for r in matched[i]) for i, _ in ok if matched[i]]
        cpu = [sum(r["cpu"] for r in matched[i]) for i, _ in ok if matched[i]]
        row = {"n": len(ok), "failed": failed, "client_p50_s": pct(client, 50), "client_p95_s": pct(client, 95),
               "server_p50_s": pct(server, 50), "server_p95_s": pct(server, 95), "server_cpu_p50_s": pct(cpu, 50)}
        table[name] = row
        print(f"{name:<30} {len(ok):>4} {failed:>4} {row['client_p50_s']:>11.3f} {row['client_p95_s']:>11.3f} "
              f"{row['server_p50_s']:>11.3f} {row['server_p95_s']:>11.3f} {row['server_cpu_p50_s']:>11.3f}")
    walls = [r["end"] - r["start"] for r in runs]
    cpus = [r["cpu"] for r in runs]
    all_client = [s.client_s for s in steps if s.problem is None]
    figures = {
        "script_runs": len(runs),
        "server_run_wall_p50_s": pct(walls, 50), "server_run_wall_p95_s": pct(walls, 95),
        "server_run_wall_max_s": max(walls, default=float("nan")),
        "server_run_cpu_p50_s": pct(cpus, 50), "server_run_cpu_p95_s": pct(cpus, 95),
        "client_p50_s": pct(all_client, 50), "client_p95_s": pct(all_client, 95),
    }
    print(f"all steps: client p50 {figures['client_p50_s']:.3f} s, p95 {figures['client_p95_s']:.3f} s")
    print(f"server's own time per script run ({len(runs)} runs): wall p50 {figures['server_run_wall_p50_s']:.3f} s, "
          f"p95 {figures['server_run_wall_p95_s']:.3f} s, max {figures['server_run_wall_max_s']:.3f} s "
          f"(target p95 < {TARGET_P95_S} s: {'met' if figures['server_run_wall_p95_s'] < TARGET_P95_S else 'MISSED'}); "
          f"script thread CPU p50 {figures['server_run_cpu_p50_s']:.3f} s, p95 {figures['server_run_cpu_p95_s']:.3f} s")
    print(f"server memory (resident): {memory['start_mib']:.0f} MiB at the first step, peak "
          f"{memory['peak_mib']:.0f} MiB (kernel high-water mark {memory['hwm_mib']:.0f} MiB), "
          f"{memory['end_mib']:.0f} MiB at the end")
    failures = [s for s in steps if s.problem]
    print(f"failed steps: {len(failures)} of {len(steps)}")
    for s in failures[:20]:
        print(f"    {s.visitor} round {s.round} {s.name}: {s.problem}")
    print(f"saves: {saves_check['saves_asked']} asked, {saves_check['confirmed']} confirmed, "
          f"{saves_check['events_of_the_bench']} events stored, {saves_check['refused_by_version_check']} "
          f"refusals by the version check (then Keep mine), {saves_check['examples_edited']} examples; "
          + ("every confirmed save stored exactly once" if not saves_check["problems"] else
             f"{len(saves_check['problems'])} problems:"))
    for p in saves_check["problems"][:20]:
        print(f"    {p}")
    each = [{"visitor": s.visitor, "round": s.round, "step": s.name, "client_s": round(s.client_s, 4),
             "server_s": round(sum(r["end"] - r["start"] for r in matched[i]), 4),
             "server_cpu_s": round(sum(r["cpu"] for r in matched[i]), 4), "problem": s.problem}
            for i, s in enumerate(steps)]
    return {"steps": table, "each_step": each, **figures, "memory": memory, "failed_steps": len(failures), "steps_done": len(steps),
            "failures": [f"{s.visitor} round {s.round} {s.name}: {s.problem}" for s in failures],
            "saves": saves_check, "load_avg_1m": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2, help="sessions per visitor, one after the other")
    parser.add_argument("--workspace", choices=["real", "sample"], default="real")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the real-size workspace")
    parser.add_argument("--step-timeout", type=float, default=120.0, help="seconds a step may take")
    parser.add_argument("--timeout", type=float, default=1500.0, help="seconds the visitors may take in all")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--think", type=float, default=0.0,
                        help="mean seconds a visitor pauses before each step (uniform, 0.5-1.5 times it); "
                             "0: back to back, the server never idle")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--profile", action="store_true",
                        help="py-spy on the server while the visitors run: where its script threads spent the time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db, ws_info = prepare(args, tmp)
        secret = secrets.token_hex(16)
        run_log = tmp / "runs.jsonl"
        os.environ.update({"CBLUE_STUDIO_AUTH": "proxy", "CBLUE_STUDIO_USER_HEADER": USER_HEADER,
                           "CBLUE_STUDIO_PROXY_SECRET": secret, "CBLUE_BENCH_RUN_LOG": str(run_log)})
        load = [round(os.getloadavg()[0], 2)]
        server = Server(db, tmp / "streamlit.log", [], script="bench/load_serve.py")
        try:
            print(f"server {server.url} (pid {server.proc.pid}) on {db.name}: {args.visitors} visitors, "
                  f"{args.rounds} rounds", flush=True)
            start, client_cpu, server_cpu = time.time(), time.process_time(), cpu_seconds(server.proc.pid)
            raw = OUTPUT / "pyspy" / "load.txt"
            if args.profile:
                raw.parent.mkdir(parents=True, exist_ok=True)
                raw.unlink(missing_ok=True)
            with PySpy(server.proc.pid, "load", raw) if args.profile else contextlib.nullcontext():
                steps, saves, mem = asyncio.run(drive(args, server.url, secret, server.proc.pid, ws_info))
            took, client_cpu = time.time() - start, time.process_time() - client_cpu
            server_cpu = cpu_seconds(server.proc.pid) - server_cpu
            print(f"visitors done in {took:.0f} s; CPU seconds: the server process {server_cpu:.1f} "
                  f"({server_cpu / took:.2f} cores on average; its filter workers apart), this client {client_cpu:.1f}",
                  flush=True)
            memory = {"start_mib": mem.samples[0] if mem.samples else float("nan"),
                      "peak_mib": max(mem.samples, default=float("nan")),
                      "end_mib": mem.samples[-1] if mem.samples else float("nan"), "hwm_mib": mem.hwm_mib()}
        finally:
            server.stop()
        load.append(round(os.getloadavg()[0], 2))
        log_tail = (tmp / "streamlit.log").read_text(encoding="utf-8", errors="replace")[-3000:]
        runs = server_runs(run_log)
        saves_check = check_saves(db, saves, ws_info["dataset_id"])
        result = report(args, steps, runs, saves_check, memory, load)
        result.update(wall_s=round(took, 1), client_cpu_s=round(client_cpu, 1), server_cpu_s=round(server_cpu, 1),
                      think_s=args.think)
        if args.profile:
            result["profile"] = hot_frames(raw, top=15)
            print(f"\npy-spy over the whole bench -> {raw.relative_to(ROOT)}: script threads "
                  f"{result['profile'].get('script_thread_s', 0)} s sampled; innermost frame of ours:")
            for frame, sec in result["profile"].get("innermost_ours_s", []):
                print(f"    {sec:7.2f} s  {frame}")
        if any(w in log_tail for w in ("Traceback", "ERROR")):
            print("the server's log ends with:\n" + log_tail)
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    ok = not result["failed_steps"] and not saves_check["problems"] and result["server_run_wall_p95_s"] < TARGET_P95_S
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
