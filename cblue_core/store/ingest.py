"""File or folder -> validated records -> workspace. Shared by the CLI, the app and the bootstrap."""
from __future__ import annotations

import ctypes
import hashlib
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Self

from ..io.errors import FileRefused
from ..io.resources import READERS, resource_kind
from ..io.validate import ValidationReport, validate
from ..tasks import infer_task, infer_tasks
from .datasets import IngestResult, prepare
from .workspace import Workspace

# Files in a CBLUE folder that are documentation or derived views, not datasets.
SKIP_NAMES = ("readme", "dev_structured", "results.json", "prediction", ".pred.", "corpus")
PARALLEL_MIN_BYTES = 8_000_000  # below this, starting worker processes costs more than it saves
PR_SET_PDEATHSIG = 1            # <linux/prctl.h>


@dataclass
class IngestOutcome:
    path: str
    kind: str                      # "dataset", "resource", "skipped" (a file passed over) or "folder"
    ok: bool
    message: str
    report: ValidationReport | None = None
    result: IngestResult | None = None


class IngestInterrupted(BaseException):
    """A signal (SIGTERM) stopped :func:`ingest_paths` between two files' writes.

    ``outcomes`` are the files finished before it; every stored one is complete (one transaction
    per file), and nothing of the rest was stored. A BaseException, like KeyboardInterrupt,
    because the handler can raise it inside validation code whose ``except Exception`` would
    otherwise turn it into a refused file.
    """

    def __init__(self, signum: int, outcomes: list[IngestOutcome] | None = None):
        self.signum = signum
        self.outcomes: list[IngestOutcome] = outcomes or []
        super().__init__(f"ingest stopped by {signal.Signals(signum).name}")


# What prepare_file hands to store_prepared: (kind, path, payload), the payload by kind.
Prepared = tuple[str, Path, Any]


def _read_resource(path: Path, kind: str, data: bytes | None = None) -> tuple[str, str, Any]:
    rows = READERS[kind](data if data is not None else path, str(path))
    sha = hashlib.sha256(data if data is not None else path.read_bytes()).hexdigest()
    return kind, sha, rows


def prepare_file(path: str | Path, task: str | None = None, split: str | None = None,
                 strict: bool = False, data: bytes | None = None) -> Prepared:
    """Everything short of the database: validation, then Arrow tables (or resource rows).

    Pure and picklable, so that a folder's files are prepared in parallel processes.
    """
    path = Path(path)
    kind = resource_kind(path)
    if kind:
        try:
            return ("resource", path, _read_resource(path, kind, data))
        except FileRefused as refused:
            return ("refused-resource", path, str(refused))
    loaded = validate(data if data is not None else path, task, name=str(path), split=split, strict=strict)
    rep = loaded.report
    if not rep.ok:
        return ("refused", path, rep)
    split = split or rep.split or _declared_split(rep.task, path) or "dev"
    return ("dataset", path, (prepare(loaded), split))


def store_prepared(ws: Workspace, prepared: Prepared, make_default: bool = False) -> IngestOutcome:
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
    res = ws.datasets.ingest(ready, split=split, make_default=make_default)
    return IngestOutcome(str(path), "dataset", True, res.message, report=ready.report, result=res)


def ingest_file(ws: Workspace, path: str | Path, task: str | None = None, split: str | None = None,
                strict: bool = False, data: bytes | None = None) -> IngestOutcome:
    """Validate and store one file (dataset or reference list). ``data`` overrides reading ``path``."""
    return store_prepared(ws, prepare_file(path, task, split, strict, data))


@dataclass(frozen=True)
class FolderScan:
    """What a folder tree holds for ingest: the files taken, and every other file with the reason
    it is passed over (so that a folder holding nothing the studio reads says why)."""
    files: list[Path]
    skipped: list[tuple[Path, str]]


def skip_reason(path: Path) -> str | None:
    """Why a file of a folder is not ingested, or None when it is a dataset or reference list."""
    low = path.name.lower()
    if resource_kind(path):
        return None
    if "readme" in low:
        return "documentation"
    if low.startswith("example_"):
        return "an example file of the official distribution, not a split"
    if "prediction" in low or ".pred." in low:
        return "a predictions file (import it as a run: `import-run`)"
    if any(s in low for s in SKIP_NAMES):
        return "a derived view of another file"
    if path.suffix.lower() not in (".json", ".jsonl", ".tsv"):
        return f"not a dataset or reference-list file ({path.suffix or 'no extension'})"
    if not infer_task(path):
        return "no task recognised from its name (ingest it alone with --task)"
    return None


def scan_folder(folder: Path) -> FolderScan:
    """The files of a folder tree that look like datasets or reference lists, and the others."""
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        reason = skip_reason(p)
        if reason is None:
            files.append(p)
        else:
            skipped.append((p, reason))
    return FolderScan(files, skipped)


def dataset_files(folder: Path) -> list[Path]:
    """Files of a folder tree that look like datasets or reference lists."""
    return scan_folder(folder).files


def ingest_paths(ws: Workspace, paths: list[str | Path], task: str | None = None,
                 split: str | None = None, strict: bool = False,
                 workers: int | None = None, make_default: bool = False) -> list[IngestOutcome]:
    """Ingest files and folders. Files are validated in parallel processes when there are
    several; the database writes stay in this process, one transaction per file. A file stored
    becomes the default of its task split when it is the first, or with ``make_default``.

    In the main thread, SIGTERM stops it between two files' writes, ending the worker processes,
    with :class:`IngestInterrupted`; workers also die (on Linux) if this process is killed."""
    files: list[Path] = []
    outcomes: list[IngestOutcome] = []
    jobs: list[tuple[Path, str | None]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            scan = scan_folder(p)
            outcomes.extend(IngestOutcome(str(f), "skipped", True, why) for f, why in scan.skipped)
            if not scan.files:
                outcomes.append(IngestOutcome(str(p), "folder", False, "no dataset or reference-list file in this folder"
                                              f" ({len(scan.skipped)} file(s) passed over, listed above)"))
            files.extend(scan.files)
        else:
            files.append(p)
    for f in files:
        # A file can serve several tasks (the IMCS-V2 dialogues): one dataset per task.
        names: list[str | None] = [task] if task or resource_kind(f) else [t.name for t in infer_tasks(f)] or [None]
        jobs.extend((f, name) for name in names)
    if workers is None:
        total = sum(f.stat().st_size for f in files if f.exists())
        workers = min(os.cpu_count() or 1, 4) if total >= PARALLEL_MIN_BYTES else 1
    with _SigtermGuard() as guard:
        try:
            if workers > 1 and len(jobs) > 2:
                _ingest_parallel(ws, jobs, split, strict, workers, guard, outcomes, make_default)
            else:
                for f, name in jobs:
                    prepared = prepare_file(f, name, split, strict)
                    with guard.deferred():
                        outcomes.append(store_prepared(ws, prepared, make_default))
        except IngestInterrupted as stop:
            stop.outcomes = outcomes
            raise
    return outcomes


def _ingest_parallel(ws: Workspace, jobs: list[tuple[Path, str | None]], split: str | None, strict: bool,
                     workers: int, guard: _SigtermGuard, outcomes: list[IngestOutcome],
                     make_default: bool = False) -> None:
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(),))
    try:
        # Submitted in the order they are stored, so that the writes here overlap the
        # preparation of later files (largest-first left every write to the end: ~1.5 s slower).
        futures = {j: pool.submit(prepare_file, j[0], j[1], split, strict) for j in jobs}
        for j in jobs:
            prepared = futures[j].result()
            with guard.deferred():
                outcomes.append(store_prepared(ws, prepared, make_default))
    except BaseException:
        # Not the executor's own exit, which waits for the files in progress (seconds each).
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _worker_init(parent_pid: int) -> None:
    """Pool worker set-up: die with the parent, leave Ctrl-C to it."""
    # The parent stops the pool on Ctrl-C; workers catching it too would each print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    if os.getppid() != parent_pid:   # the parent was gone before the line above took effect
        os._exit(1)


def _die_with_parent() -> None:
    """On Linux, have the kernel SIGKILL this process when its parent dies, however it dies
    (a SIGKILLed parent runs no clean-up, and a busy worker would otherwise finish its file
    first, seconds to minutes, before noticing). Elsewhere, a no-op."""
    if not sys.platform.startswith("linux"):
        return
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    # "Parent" means the thread that started this worker: ingest_paths's, which outlives the pool.
    prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now."""
    procs = list((getattr(pool, "_processes", None) or {}).values())   # shutdown() forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=2)
        if p.is_alive():
            p.kill()
            p.join(timeout=2)


class _SigtermGuard:
    """While ingesting in the main thread, SIGTERM raises IngestInterrupted, except during a
    file's database write, which it lets finish first. Elsewhere (the app ingests in a script
    thread, where handlers cannot be installed) SIGTERM keeps its default action."""

    def __init__(self) -> None:
        self.installed = False
        self.previous: Any = None
        self.deferring = False
        self.pending: int | None = None

    def __enter__(self) -> Self:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, self._on_signal)
            self.installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self.installed:
            # None: the previous handler was not installed from Python; the default is the best guess.
            signal.signal(signal.SIGTERM, self.previous if self.previous is not None else signal.SIG_DFL)
            self.installed = False

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.deferring:
            self.pending = signum
            return
        raise IngestInterrupted(signum)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.pending is not None:
            raise IngestInterrupted(self.pending)


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
    from ..tasks import REGISTRY
    task = REGISTRY.get(task_name)
    if task:
        for split, fname in task.files.items():
            if fname == path.name:
                return split
    return None
