"""What the page benchmarks do, shared by ``bench/pages.py`` (Streamlit's AppTest) and
``bench/browser_pages.py`` (headless Chromium): the two workspaces, the user scenarios, the
checks that each step really did what it says, and the figures table.

Workspaces
    *sample*: the sample data plus the sample prediction files as runs, and the CMeEE dev gold
    imported as a second CMeEE run (for Compare). *real*: all of ``<shared>/cblue`` with the
    built-in models' runs on the full CMeEE dev (5,000) and CMeIE dev (3,585), and a second
    CMeEE run for Compare (the cmeee run with the first entity of every other sentence
    dropped). The real one is built with the command line (``ingest``, ``run --model cmeee``,
    ``run --model cmeie``; about 1-3 minutes on 2 cores) and kept at
    ``workspace/bench-real.duckdb``.

Scenarios
    A scenario opens one page by its URL (path and query parameters) in a fresh session, then
    takes steps a user takes there. A step is a widget action (:class:`Tab`, :class:`MatrixClick`,
    :class:`Row`, :class:`Type`, :class:`Choose`, :class:`Press`, :class:`StepUp`, :class:`Number`) that each driver
    performs its own way, plus what the page must show afterwards (:class:`Shows`,
    :class:`Changes`: regular expressions over the page's text). The drivers also check that the
    widget holds the new value (the tab is open, the option chosen). A step whose check fails
    stops the session and is reported instead of timed: a figure of a click that did nothing
    would be meaningless.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REAL_DB = ROOT / "workspace" / "bench-real.duckdb"
COPY_NAME = "cmeee, every other sentence without its first entity"


# ====================================================================== workspaces
def sample_workspace(path: Path) -> dict[str, int]:
    """Build the sample workspace at ``path``; {"CMeEE": run, "CMeIE": run, "CMeEE B": the CMeEE
    gold imported as a run, ...one run per sample prediction file}."""
    from cblue_core.runs.record import import_run
    from cblue_core.store.ingest import bootstrap_sample_data
    from cblue_core.store.workspace import connect

    ws = connect(path)
    try:
        bootstrap_sample_data(ws, ROOT / "sample_data")
        runs = {}
        for pred in sorted((ROOT / "sample_data/cblue").glob("*/*_dev.pred.json")):
            did = ws.datasets.find(pred.parent.name, "dev").dataset_id
            runs[pred.parent.name] = import_run(ws, did, pred, name=f"sample {pred.parent.name}").run_id
        did = ws.datasets.find("CMeEE", "dev").dataset_id
        gold = (ROOT / "sample_data/cblue/CMeEE/CMeEE_dev.json").read_bytes()
        runs["CMeEE B"] = import_run(ws, did, gold, name="CMeEE gold as a run", file_name="gold.json").run_id
    finally:
        ws.close()
    return runs


def shared_cblue() -> Path | None:
    """``$CBLUE_SHARED/cblue`` or ``../shared/cblue`` (beside the project), where it exists."""
    for base in (os.environ.get("CBLUE_SHARED"), str(ROOT.parent / "shared")):
        if base and (Path(base) / "cblue").is_dir():
            return Path(base) / "cblue"
    return None


def real_runs(db: Path) -> dict[str, int]:
    """{"CMeEE": cmeee model run, "CMeIE": cmeie model run, "CMeEE B": the second CMeEE run};
    raises LookupError when one is missing. Opens read-write: an older schema is migrated, as
    the app does."""
    from cblue_core.store.workspace import connect

    ws = connect(db)
    try:
        runs = ws.runs.all()
    finally:
        ws.close()
    found: dict[str, int] = {}
    for r in runs:
        if r.split == "dev" and r.model and r.task in ("CMeEE", "CMeIE"):
            found.setdefault(r.task, r.run_id)
        elif r.task == "CMeEE" and r.name == COPY_NAME:
            found.setdefault("CMeEE B", r.run_id)
    missing = {"CMeEE", "CMeIE", "CMeEE B"} - set(found)
    if missing:
        raise LookupError(f"{db}: no run for {sorted(missing)}")
    return found


def _second_cmeee_run(db: Path) -> None:
    """Compare needs two runs on one split: the cmeee run exported, the first entity of every
    other sentence dropped, imported back."""
    from cblue_core.runs.record import export_run, import_run
    from cblue_core.store.workspace import connect

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


def real_workspace(shared: Path, db: Path = REAL_DB, rebuild: bool = False) -> dict[str, int]:
    """The real-size workspace at ``db``, built with the command line when missing, incomplete
    or with ``rebuild``; returns its runs (see :func:`real_runs`)."""
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


# ====================================================================== what a step must show
@dataclass(frozen=True)
class Shows:
    """The page's text, after the step, matches ``pattern``."""

    pattern: str

    def problem(self, before: str, after: str) -> str | None:
        return None if re.search(self.pattern, after) else f"the page does not show /{self.pattern}/"


@dataclass(frozen=True)
class Changes:
    """``pattern``'s first group is on the page after the step, with another value than before
    (or none before): the filter applied, another example shown."""

    pattern: str

    def problem(self, before: str, after: str) -> str | None:
        new, old = re.search(self.pattern, after), re.search(self.pattern, before)
        if new is None:
            return f"the page does not show /{self.pattern}/"
        if old is not None and old.group(1) == new.group(1):
            return f"/{self.pattern}/ still {new.group(1)!r}"
        return None


def normalised(text: str) -> str:
    """Page text as a browser shows it: Markdown's ``**`` and backslash escapes dropped (AppTest
    hands over the Markdown source)."""
    return re.sub(r"\\(.)", r"\1", text.replace("**", ""))


# ====================================================================== what a user does
@dataclass(frozen=True)
class Tab:
    key: str            # the st.tabs key
    name: str


@dataclass(frozen=True)
class MatrixClick:
    """A click on the confusion matrix's busiest cell off the diagonal (not a Σ total), the one a
    user looks at first."""


@dataclass(frozen=True)
class Row:
    """A click that selects row ``row`` (0-based, as shown) of the data grid ``key``."""

    key: str
    row: int


@dataclass(frozen=True)
class Type:
    """Text typed into the text field ``key``, then Enter."""

    key: str
    text: str


@dataclass(frozen=True)
class Choose:
    """An option of the radio or selectbox ``key``: ``value`` as the page's code sees it,
    ``shown`` the start of its label (what a browser user clicks)."""

    key: str
    kind: str               # "radio" or "selectbox"
    value: object
    shown: str


@dataclass(frozen=True)
class Press:
    """A click on the button with widget key ``key`` (or, keyless, the label ``label``)."""

    key: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class StepUp:
    """The "+" of the number input ``key``."""

    key: str


@dataclass(frozen=True)
class Number:
    """A number typed into the number input ``key``, then Enter."""

    key: str
    value: int


Action = Tab | MatrixClick | Row | Type | Choose | Press | StepUp | Number
Check = Shows | Changes


@dataclass(frozen=True)
class Step:
    name: str
    action: Action
    checks: tuple[Check, ...] = ()
    real_only: bool = False     # impossible on the sample data (e.g. one page of 25 examples)


@dataclass(frozen=True)
class Scenario:
    page: str                   # url path of the page
    query: dict[str, str]
    opened: tuple[Check, ...]   # what the opened page shows
    steps: tuple[Step, ...] = field(default_factory=tuple)

    @property
    def url(self) -> str:
        from urllib.parse import urlencode
        return f"/{self.page}" + (f"?{urlencode(self.query)}" if self.query else "")

    def labels(self) -> list[str]:
        return ["open"] + [s.name for s in self.steps]


def _errors(run_id: int) -> Scenario:
    rows = Shows(r"[1-9][\d,]* rows? in [\d,]+ example")
    return Scenario("errors", {"run": str(run_id)}, (Shows("Examples behind the selection"),), (
        Step("tab Confusion matrix", Tab("err_tab", "Confusion matrix"), (Shows("Click a cell for its examples"),)),
        Step("confusion cell click", MatrixClick(), (Changes(r"Filter: ([^\n]+)"), rows)),
        Step("error row click", Row("err_rows", 0), (Changes(r"Example (\d+): gold above"),)),
        Step("tab Error taxonomy", Tab("err_tab", "Error taxonomy")),
        Step("taxonomy row click", Row("err_tax", 0), (Changes(r"Filter: ([^\n]+)"), rows)),
        Step("tab Buckets", Tab("err_tab", "Buckets"), (Shows("F1 per bucket|Bucketed analysis covers"),)),
        Step("tab Slices", Tab("err_tab", "Slices"), (Shows("A slice is a SQL predicate"),)),
        Step("tab Corrected gold", Tab("err_tab", "Corrected gold"), (Shows("No gold correction|Gold version"),)),
        Step("tab Per label", Tab("err_tab", "Per label")),
    ))


def scenarios(runs: dict[str, int]) -> dict[str, Scenario]:
    """The scenarios on a workspace whose runs are ``runs`` (keys "CMeEE", "CMeIE", "CMeEE B")."""
    example = Changes(r"example=(\d+)")         # the Datasets page's link to the example shown
    matching = Changes(r"([\d,]+) matching example")
    return {
        "Datasets CMeEE train": Scenario("datasets", {"task": "CMeEE", "split": "train", "example": "0"},
                                         (Shows("matching example"),), (
            Step("filter: text contains", Type("ds_q", "病"), (matching,)),
            Step("filter: + SQL predicate", Type("ds_sql", "n_spans >= 5"), (matching,)),
            Step("next page of the table", StepUp("ds_page"), (Shows(r"page 2 of"),), real_only=True),
            Step("table row click", Row("ds_table", 2), (example,)),
            Step("Next example button", Press(label="Next ▶"), (example,)),
            Step("task CMeIE", Choose("ds_task", "selectbox", "CMeIE", "CMeIE"), (Shows("task=CMeIE"),)),
        )),
        "Live CMeEE": Scenario("live", {"task": "CMeEE"}, (Shows("Live prediction"),), (
            Step("input: Dataset example", Choose("live_source", "radio", "Dataset example", "Dataset example"),
                 (Shows("病例 / Example"),)),
            Step("example number 7", Number("live_example", 7)),
            Step("Predict click", Press("live_run"), (Shows("Latency"),)),
            Step("Predict again", Press("live_run"), (Shows("Latency"),)),
        )),
        "Live demo CMeIE": Scenario("live", {"task": "CMeIE", "demo": "1"}, (Shows("Clinical text analysis demo"),), (
            Step("input: Curated case", Choose("live_source", "radio", "Curated case", "Curated case"),
                 (Shows("chosen by rule"),)),
            Step("Predict click", Press("live_run"), (Shows("matches the gold|differs from the gold"),)),
        )),
        "Runs": Scenario("runs", {}, (Shows("All runs"),), (
            Step("select the CMeIE run", Choose("runs_selected", "selectbox", runs["CMeIE"], f"#{runs['CMeIE']} ")),
            Step("select the CMeEE run", Choose("runs_selected", "selectbox", runs["CMeEE"], f"#{runs['CMeEE']} ")),
        )),
        "Errors CMeEE run": _errors(runs["CMeEE"]),
        "Errors CMeIE run": _errors(runs["CMeIE"]),
        "Compare CMeEE runs": Scenario("compare", {"a": str(runs["CMeEE"]), "b": str(runs["CMeEE B"])},
                                       (Shows("Paired bootstrap"),), (
            Step("list: both wrong", Choose("cmp_list", "radio", "both wrong", "both wrong")),
            Step("next page of the list", StepUp("cmp_page"), (Changes(r"a page: page (\d+) of"),), real_only=True),
            Step("list: B right, A wrong", Choose("cmp_list", "radio", "B right, A wrong", "B right, A wrong"),
                 (Shows(r"Example \d+"),)),
            Step("example row click", Row("cmp_table", 2), (Changes(r"Example (\d+)"),)),
        )),
        "Annotate CMeEE dev": Scenario("annotate", {"task": "CMeEE", "split": "dev", "example": "0"},
                                       (Shows(r"Example 0 of"),), (
            Step("Next example", StepUp("ann_example"), (Changes(r"Example (\d+) of"),)),
            Step("tab Versions", Tab("ann_tab", "Versions")),
            Step("tab Review queue", Tab("ann_tab", "Review queue")),
            Step("tab Agreement", Tab("ann_tab", "Agreement")),
            Step("tab Re-score", Tab("ann_tab", "Re-score"), (Shows("on original"),)),
            Step("tab Export", Tab("ann_tab", "Export")),
            Step("tab Edit", Tab("ann_tab", "Edit"), (Shows(r"Example \d+ of"),)),
            Step("suggestions from a run", Choose("ann_suggest_source", "selectbox", f"run:{runs['CMeEE']}",
                                                  f"run {runs['CMeEE']} ·")),
            Step("Next example, suggested", StepUp("ann_example"), (Changes(r"Example (\d+) of"),)),
        )),
    }


# ====================================================================== figures
def summarise(sessions: list[dict[str, float]], labels: list[str]) -> dict[str, dict[str, float]]:
    """{step: {cold_s, warm_p50_s, warm_max_s}} from per-session {step: seconds}: the first
    session is the cold one (first in the process), the median over the others."""
    out: dict[str, dict[str, float]] = {}
    for label in labels:
        entry: dict[str, float] = {}
        if sessions and label in sessions[0]:
            entry["cold_s"] = round(sessions[0][label], 3)
        warm = [s[label] for s in sessions[1:] if label in s]
        if warm:
            entry.update(warm_p50_s=round(statistics.median(warm), 3), warm_max_s=round(max(warm), 3), n=len(warm))
        out[label] = entry
    return out


@dataclass(frozen=True)
class Column:
    title: str
    workspace: str          # "real" or "sample"
    key: str                # a key of the step's figures
    checked: bool = False   # marked "!" when over the step's target


def figure_columns(extra: Column) -> list[Column]:
    """The table's columns: real cold, real warm (checked against the target), real max,
    ``extra``, sample cold, sample warm."""
    return [Column("real cold", "real", "cold_s"), Column("real warm", "real", "warm_p50_s", checked=True),
            Column("real max", "real", "warm_max_s"), extra,
            Column("sample cold", "sample", "cold_s"), Column("sample warm", "sample", "warm_p50_s")]


def argument_parser(doc: str) -> argparse.ArgumentParser:
    """The options both page benchmarks take."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="warm sessions per scenario (their median)")
    parser.add_argument("--only", action="append", help="scenario name (repeatable)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the real-size workspace")
    return parser


def print_table(results: dict[str, dict], columns: list[Column], target) -> list[dict]:
    """One line a step: ``results[workspace]["flows"][scenario][step]`` in ``columns``;
    ``target(step)`` is the step's target in seconds. Returns the checked figures over it."""
    names = list(dict.fromkeys(n for ws in results.values() if ws for n in ws["flows"]))
    print(f"{'scenario':>22}  {'step':<26}" + "".join(f" {c.title:>11}" for c in columns))
    misses = []
    for name in names:
        per_ws = {k: (v or {}).get("flows", {}).get(name, {}) for k, v in results.items()}
        labels = list(dict.fromkeys(label for steps in per_ws.values() for label in steps if label != "problems"))
        for label in labels:
            cells = []
            for c in columns:
                v = per_ws.get(c.workspace, {}).get(label, {}).get(c.key)
                over = c.checked and v is not None and v >= target(label)
                if over:
                    misses.append({"scenario": name, "step": label, "workspace": c.workspace, c.key: v})
                cells.append(f"{'—':>11}" if v is None else f"{v:10.3f}" + ("!" if over else " "))
            print(f"{name:>22}  {label:<26} " + " ".join(cells))
        for ws, steps in per_ws.items():
            for p in steps.get("problems", []):
                print(f"{'':>22}  {ws}: {p}")
    return misses
