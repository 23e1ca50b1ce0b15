"""File or folder -> validated records -> workspace. Shared by the CLI, the app and the bootstrap."""
from __future__ import annotations

import hashlib
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .io.errors import FileRefused
from .io.resources import READERS, resource_kind
from .io.validate import ValidationReport, validate
from .store.datasets import IngestResult, prepare
from .store.workspace import Workspace
from .tasks import infer_task, infer_tasks

# Files in a CBLUE folder that are documentation or derived views, not datasets.
SKIP_NAMES = ("readme", "dev_structured", "results.json", "prediction", ".pred.", "corpus")
PARALLEL_MIN_BYTES = 8_000_000  # below this, starting worker processes costs more than it saves


@dataclass
class IngestOutcome:
    path: str
    kind: str                      # "dataset", "resource" or "skipped"
    ok: bool
    message: str
    report: ValidationReport | None = None
    result: IngestResult | None = None


def _read_resource(path: Path, data: bytes | None = None):
    kind = resource_kind(path)
    rows = READERS[kind](data if data is not None else path, str(path))
    sha = hashlib.sha256(data if data is not None else path.read_bytes()).hexdigest()
    return kind, sha, rows


def prepare_file(path: str | Path, task: str | None = None, split: str | None = None,
                 strict: bool = False, data: bytes | None = None):
    """Everything short of the database: validation, then Arrow tables (or resource rows).

    Pure and picklable, so that a folder's files are prepared in parallel processes.
    """
    path = Path(path)
    if resource_kind(path):
        try:
            return ("resource", path, _read_resource(path, data))
        except FileRefused as refused:
            return ("refused-resource", path, str(refused))
    loaded = validate(data if data is not None else path, task, name=str(path), split=split, strict=strict)
    rep = loaded.report
    if not rep.ok:
        return ("refused", path, rep)
    split = split or rep.split or _declared_split(rep.task, path) or "dev"
    return ("dataset", path, (prepare(loaded), split))


def store_prepared(ws: Workspace, prepared) -> IngestOutcome:
    kind, path, payload = prepared
    if kind == "resource":
        rkind, sha, rows = payload
        res = ws.resources.ingest(rkind, path.name, sha, rows)
        return IngestOutcome(str(path), "resource", True, res.message, result=res)
    if kind == "refused-resource":
        return IngestOutcome(str(path), "resource", False, payload)
    if kind == "refused":
        rep = payload
        more = f" (+{len(rep.errors) - 1} more)" if len(rep.errors) > 1 else ""
        return IngestOutcome(str(path), "dataset", False, f"refused: {rep.errors[0]}{more}", report=rep)
    ready, split = payload
    res = ws.datasets.ingest(ready, split=split)
    return IngestOutcome(str(path), "dataset", True, res.message, report=ready.report, result=res)


def ingest_file(ws: Workspace, path: str | Path, task: str | None = None, split: str | None = None,
                strict: bool = False, data: bytes | None = None) -> IngestOutcome:
    """Validate and store one file (dataset or reference list). ``data`` overrides reading ``path``."""
    return store_prepared(ws, prepare_file(path, task, split, strict, data))


def dataset_files(folder: Path) -> list[Path]:
    """Files of a folder tree that look like datasets or reference lists."""
    out = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        low = p.name.lower()
        if any(s in low for s in SKIP_NAMES) or low.startswith("example_"):
            continue
        if resource_kind(p) or (p.suffix.lower() in (".json", ".jsonl", ".tsv") and infer_task(p)):
            out.append(p)
    return out


def ingest_paths(ws: Workspace, paths: list[str | Path], task: str | None = None,
                 split: str | None = None, strict: bool = False,
                 workers: int | None = None) -> list[IngestOutcome]:
    """Ingest files and folders. Files are validated in parallel processes when there are
    several; the database writes stay in this process, one transaction per file."""
    files: list[Path] = []
    outcomes: list[IngestOutcome] = []
    jobs: list[tuple[Path, str | None]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = dataset_files(p)
            if not found:
                outcomes.append(IngestOutcome(str(p), "skipped", False, "no dataset files found in this folder"))
            files.extend(found)
        else:
            files.append(p)
    for f in files:
        # A file can serve several tasks (the IMCS-V2 dialogues): one dataset per task.
        names: list[str | None] = [task] if task or resource_kind(f) else [t.name for t in infer_tasks(f)] or [None]
        jobs.extend((f, name) for name in names)
    if workers is None:
        total = sum(f.stat().st_size for f in files if f.exists())
        workers = min(os.cpu_count() or 1, 4) if total >= PARALLEL_MIN_BYTES else 1
    if workers > 1 and len(jobs) > 2:
        ctx = multiprocessing.get_context("spawn")
        # Submitted in the order they are stored, so that the writes here overlap the
        # preparation of later files (largest-first left every write to the end: ~1.5 s slower).
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            futures = {j: pool.submit(prepare_file, j[0], j[1], split, strict) for j in jobs}
            for j in jobs:
                outcomes.append(store_prepared(ws, futures[j].result()))
    else:
        for f, name in jobs:
            outcomes.append(ingest_file(ws, f, name, split, strict))
    return outcomes


def bootstrap_sample_data(ws: Workspace, sample_dir: str | Path) -> list[IngestOutcome]:
    """Fill an empty workspace with the project's sample data (the embedded default)."""
    if ws.datasets.all():
        return []
    sample_dir = Path(sample_dir)
    outcomes = ingest_paths(ws, [sample_dir])
    # PromptCBLUE files have generic names (dev.json): ingest them with their task.
    for f in sorted((sample_dir / "promptcblue").glob("*.json")):
        if "prediction" not in f.name:
            outcomes.append(ingest_file(ws, f, "PromptCBLUE", split=f.stem))
    return outcomes


def _declared_split(task_name: str, path: Path) -> str | None:
    from .tasks import REGISTRY
    task = REGISTRY.get(task_name)
    if task:
        for split, fname in task.files.items():
            if fname == path.name:
                return split
    return None
