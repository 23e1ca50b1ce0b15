"""Ray Data as the engine of large prediction jobs.

A job is a Ray dataset: the input (rows the driver read, cut into at least two blocks per worker;
or one block per chunk descriptor of a shard folder: a byte range of JSON lines, Parquet row
groups) is all available when the actors start, so that every worker gets work, then
``map_batches`` over an actor pool of :class:`RayRowPredictor` (one model load per actor; the
actor reads its chunks itself, so records never pass through the object store on the way in; a
fractional ``num_cpus`` per actor so that N actors fit beside Ray Data's tasks on N cores;
``num_gpus`` per actor with ``device="cuda"``). No block is handed out before every actor is up,
and each actor has at most two blocks in flight. The driver streams the output back in input
order (``preserve_order``) with a bounded object store, so memory does not grow with the corpus.

Without an address a local Ray is started for the job (``ray.init(num_cpus=N,
include_dashboard=False)``) and shut down after it; with one, the job joins that cluster (the
``cblue_core`` package travels with it as a ``py_modules`` runtime environment). A Ray already
initialised in this process (a test's, a notebook's) is used as it is and left running.

Ray is optional (``requirements-ray.txt``): nothing here imports it until a job starts, and
:func:`require_ray` says in one line how to install it.
"""
from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .shards import Chunk, ShardError, read_chunk
from .work import RowPredictor, load_worker_predictor, set_threads

RAY_MISSING = ("Ray is not installed, so --engine ray cannot run: pip install -r requirements-ray.txt "
               "(or use --engine local)")
# Object store of a local Ray started for a job: bounded, so that a job streams instead of
# staging the corpus (Ray Data's backpressure keeps within it).
LOCAL_OBJECT_STORE_BYTES = 512 << 20
# Per predictor actor: N actors take N/2 cores' worth of Ray's accounting, so that they always
# fit beside Ray Data's own tasks (splitting, output) on N cores; the model's threads are set
# apart (cores // N each).
ACTOR_CPUS = 0.5
ACTOR_START_TIMEOUT_S = 600
# After shutting a job's local Ray down: how long its processes get to exit before they are killed.
REAP_WAIT_S = 15.0
# Environment variables that ray.init sets in the driver (restored after the job).
_RAY_SET_ENV = ("RAY_AUTH_MODE",)


class RayUnavailable(RuntimeError):
    """Ray is not installed (or cannot be imported)."""


class RayJobError(RuntimeError):
    """A Ray job that failed for a reason other than a bad record."""


def require_ray():
    """The ``ray`` module with Ray Data, or :class:`RayUnavailable` with the install line."""
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise RayUnavailable(f"{RAY_MISSING} ({exc})" if "ray" not in str(exc) else RAY_MISSING) from None
    return ray


def _package_root() -> Path:
    return Path(__file__).resolve().parents[2]


@dataclass
class RaySession:
    started: bool        # a local Ray started for this job (shut down after it)
    joined: str | None   # the address of a cluster joined for this job
    cpus: float
    gpus: float


@contextlib.contextmanager
def ray_session(address: str | None = None, workers: int = 1) -> Iterator[RaySession]:
    """Ray for one job: a local Ray with ``workers`` CPUs (no dashboard), the cluster at
    ``address``, or the Ray this process already has; shut down afterwards unless it was
    already there. A local Ray's processes (all started under this one) are waited for after
    the shutdown, and any still running after :data:`REAP_WAIT_S` are killed: the job leaves
    no process behind. Ray's own changes to this process's environment (it turns on token
    authentication for a local Ray by setting ``RAY_AUTH_MODE``) are undone afterwards."""
    ray = require_ray()
    if ray.is_initialized():
        res = ray.cluster_resources()
        yield RaySession(False, None, float(res.get("CPU", 0)), float(res.get("GPU", 0)))
        return
    import cblue_core

    from .procs import descendants, identify, reap

    quiet = {"logging_level": logging.ERROR, "log_to_driver": False, "configure_logging": True}
    saved_env = {k: os.environ.get(k) for k in _RAY_SET_ENV}
    before = descendants()
    try:
        if address:
            check_reachable(address)
            try:
                ray.init(address=address, runtime_env={"py_modules": [cblue_core]}, **quiet)
            except Exception as exc:  # noqa: BLE001 - Ray raises several types; one line for each
                msg = _short(exc)
                hint = _AUTH_HINT if os.environ.get("RAY_AUTH_MODE", "").lower() != "token" else ""
                raise RayJobError(f"cannot join the Ray cluster at {address}: {msg}{hint}") from None
        else:
            parts = [str(_package_root()), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
            path = os.pathsep.join(dict.fromkeys(p for p in parts if p))
            ray.init(address="local", num_cpus=max(1, int(workers)), include_dashboard=False,
                     object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                     runtime_env={"env_vars": {"PYTHONPATH": path, "TOKENIZERS_PARALLELISM": "false"}}, **quiet)
        started = identify(descendants() - before) if not address else set()
        try:
            res = ray.cluster_resources()
            yield RaySession(not address, address, float(res.get("CPU", 0)), float(res.get("GPU", 0)))
        finally:
            started |= identify(descendants() - before) if not address else set()
            ray.shutdown()
            reap(started, REAP_WAIT_S)
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_AUTH_HINT = (" (a cluster with token authentication needs RAY_AUTH_MODE=token here, and its token in "
              "RAY_AUTH_TOKEN or ~/.ray/auth_token: see docs/scaling.md)")


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """A ``HOST:PORT`` address must accept a connection (Ray itself retries an unreachable one
    for minutes); RayJobError saying how to start a cluster if it does not. Other forms
    (``auto``, ``ray://...``) are left to Ray."""
    import socket

    host, sep, port = address.rpartition(":")
    # isascii: str.isdigit() also accepts "²", which int() refuses
    if not sep or "://" in address or not (port.isascii() and port.isdigit()) or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise RayJobError(f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with "
                          f"`ray start --head --port={port}` or leave out --ray-address for a local Ray") from None


class RayRowPredictor:
    """The actor class of ``map_batches``: loads the model once, then predicts batches of rows
    (:class:`~cblue_core.scale.work.RowPredictor`)."""

    def __init__(self, model_path: str, task: str, device: str, mode: str, batch_size: int,
                 allow_pickle: bool = False, generation: dict | None = None,
                 shard_names: Sequence[str] = (), convention: str = "inclusive", threads: int | None = None):
        set_threads(threads)
        predictor = load_worker_predictor(model_path, task, device, allow_pickle=allow_pickle,
                                          generation=generation, batch_size=batch_size)
        self.rows = RowPredictor(predictor, task, mode=mode, shard_names=shard_names,
                                 batch_size=batch_size, convention=convention)

    def __call__(self, table):
        if "path" in table.column_names:      # chunk descriptors: this actor reads them
            try:
                table = read_chunks(table)
            except ShardError as err:
                return self.rows.error_table(err)
        return self.rows(table, errors_as_rows=True)


def read_chunks(table):
    """Chunk descriptors -> input rows (``shard``, ``i``, ``line``, ``rec``)."""
    import pyarrow as pa

    shard, index, line, rec = [], [], [], []
    for d in table.to_pylist():
        chunk = Chunk(d["shard"], d["first"], d["count"], d["start"], d["stop"], d["line"])
        for i, ln, text in read_chunk(d["path"], d["kind"], chunk):
            shard.append(chunk.shard)
            index.append(i)
            line.append(ln)
            rec.append(text)
    return pa.table({"shard": pa.array(shard, pa.int32()), "i": pa.array(index, pa.int64()),
                     "line": pa.array(line, pa.int64()), "rec": pa.array(rec, pa.string())})


def find_shard_error(exc: BaseException) -> ShardError | None:
    """The :class:`ShardError` behind an exception Ray raised in the driver, if any."""
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ShardError):
            return e
        stack += [getattr(e, "__cause__", None), getattr(e, "__context__", None), getattr(e, "cause", None)]
    return None


@dataclass
class WorkerSpec:
    """What each actor loads and how the pool is sized."""

    model_path: str
    task: str
    device: str
    mode: str
    batch_size: int
    workers: int
    allow_pickle: bool = False
    generation: dict | None = None
    convention: str = "inclusive"


def _pool_options(spec: WorkerSpec, session: RaySession) -> dict[str, Any]:
    from ray.data import ActorPoolStrategy

    workers = max(1, int(spec.workers))
    # two blocks in flight per actor: the least-loaded actor gets the next block, so every actor works
    opts: dict[str, Any] = {"compute": ActorPoolStrategy(size=workers, max_tasks_in_flight_per_actor=2),
                            "num_cpus": ACTOR_CPUS}
    if spec.device.startswith("cuda"):
        if session.gpus <= 0:
            raise RayJobError("--device cuda: the Ray cluster has no GPU")
        opts["num_gpus"] = min(1.0, session.gpus / workers)
    return opts


def _threads(spec: WorkerSpec, session: RaySession) -> int:
    cores = session.cpus if not session.started else float(os.cpu_count() or 1)
    return max(1, int(cores // max(1, spec.workers)))


def run(spec: WorkerSpec, session: RaySession, *, rows: Any | None = None, chunks: Sequence[dict] | None = None,
        shard_names: Sequence[str] = (), blocks: int | None = None,
        on_batch: Callable[[Any], None]) -> None:
    """Run one job on Ray: ``rows`` (a pyarrow table of input rows the driver holds) or
    ``chunks`` (shard chunk descriptors, each read by the actor it goes to). ``on_batch`` gets
    each output table, in input order. Raises :class:`ShardError` for a bad record, :class:`RayJobError` otherwise."""
    ray = require_ray()
    import pyarrow as pa

    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    # every actor is up (its model loaded) before the first block is handed out, so that the
    # first actor does not take every block of a short job while the others load
    ctx.wait_for_min_actors_s = ACTOR_START_TIMEOUT_S
    with contextlib.suppress(AttributeError):
        ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.CRITICAL)
    workers = max(1, int(spec.workers))
    if rows is not None:
        n = rows.num_rows
        if n == 0:
            return
        k = max(1, min(n, blocks or max(2 * workers, math.ceil(n / 1024))))
        size = max(1, math.ceil(n / k))
        ds = ray.data.from_arrow([rows.slice(i, size) for i in range(0, n, size)] or [rows])
        batch_rows = size
    else:   # one block per chunk descriptor; the actor that gets it reads it
        items = list(chunks or [])
        if not items:
            return
        ds = ray.data.from_arrow([pa.Table.from_pylist([c]) for c in items])
        batch_rows = None
    ds = ds.map_batches(
        RayRowPredictor, batch_size=batch_rows, batch_format="pyarrow",
        fn_constructor_kwargs={"model_path": spec.model_path, "task": spec.task,
                               "device": "cuda" if spec.device.startswith("cuda") else spec.device,
                               "mode": spec.mode, "batch_size": spec.batch_size,
                               "allow_pickle": spec.allow_pickle, "generation": spec.generation,
                               "shard_names": list(shard_names), "convention": spec.convention,
                               "threads": _threads(spec, session)},
        **_pool_options(spec, session))
    try:
        for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow", prefetch_batches=1):
            on_batch(batch)
    except Exception as exc:
        found = find_shard_error(exc)
        if found is not None:
            raise ShardError(found.file, found.record, found.message, found.line) from None
        raise RayJobError(_short(exc)) from exc


def _short(exc: BaseException) -> str:
    """The last meaningful line of a Ray error (its messages carry whole remote tracebacks)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    tail = [ln for ln in lines if not ln.startswith(("File ", "Traceback", "^", "~"))]
    text = tail[-1] if tail else type(exc).__name__
    return text[:400]
