"""Prediction jobs with either engine: ``"local"`` (this process) or ``"ray"`` (Ray Data over an
actor pool, :mod:`.ray_engine`). Both run :class:`~cblue_core.scale.work.RowPredictor`, so their
outputs are identical; results come back in input order.

* :func:`predict_examples`: examples the driver holds (an official file, a stored split) ->
  submission records or prediction examples;
* :func:`predict_folder`: a folder of shards -> Parquet shards plus a manifest, resumable;
* :func:`ray_model_run`: a stored split predicted on Ray and recorded as a run, like
  :func:`cblue_core.runs.record.model_run`.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..records import Example, example_from_dict
from .ray_engine import RaySession, WorkerSpec, ray_session
from .shards import (
    DEFAULT_CHUNK_RECORDS,
    InputShard,
    Manifest,
    ShardEntry,
    find_shards,
    plan_shard,
    read_chunk,
    write_output_shard,
)
from .work import RowPredictor, load_worker_predictor, raise_error_row

ENGINES = ("local", "ray")
Progress = Callable[[int], None]
Log = Callable[[str], None]


@dataclass
class JobResult:
    engine: str
    workers: int
    records: int = 0
    seconds: float = 0.0
    pids: set[int] = field(default_factory=set)
    params: dict[str, Any] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)   # record or prediction JSON, input order
    shards_done: int = 0
    shards_skipped: int = 0
    output: Path | None = None

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


def default_workers(device: str = "cpu") -> int:
    return max(1, os.cpu_count() or 1) if not device.startswith("cuda") else 1


def _session(engine: str, address: str | None, workers: int):
    if engine != "ray":
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    return ray_session(address, workers)


def _local_rows(spec: WorkerSpec, shard_names: Sequence[str] = ()) -> RowPredictor:
    predictor = load_worker_predictor(spec.model_path, spec.task, spec.device, allow_pickle=spec.allow_pickle,
                                      generation=spec.generation, batch_size=spec.batch_size)
    return RowPredictor(predictor, spec.task, mode=spec.mode, shard_names=shard_names,
                        batch_size=spec.batch_size, convention=spec.convention)


def predict_examples(examples: Sequence[Example], spec: WorkerSpec, *, engine: str = "ray",
                     address: str | None = None, progress: Progress | None = None,
                     session: RaySession | None = None) -> JobResult:
    """Predict examples held by the driver: ``outputs[k]`` is the submission record
    (``spec.mode == "records"``) or the prediction (``"examples"``) of ``examples[k]``, as JSON."""
    import pyarrow as pa

    n = len(examples)
    result = JobResult(engine, spec.workers, n, keys=[""] * n, outputs=[""] * n)
    cols = {"shard": pa.array([0] * n, pa.int32()), "i": pa.array(range(n), pa.int64()),
            "line": pa.array([0] * n, pa.int64()),
            "ex": pa.array([json.dumps(ex.to_dict(), ensure_ascii=False, default=str) for ex in examples],
                           pa.string())}
    rows = pa.table(cols)
    out_col = "record" if spec.mode == "records" else "pred"

    def take(batch) -> None:
        raise_error_row(batch)
        for i, key, out in zip(batch.column("i").to_pylist(), batch.column("key").to_pylist(),
                               batch.column(out_col).to_pylist()):
            result.keys[i], result.outputs[i] = key, out
        _note(result, batch)
        if progress is not None:
            progress(batch.num_rows)

    start = time.perf_counter()
    if engine == "local":
        worker = _local_rows(spec)
        step = max(1, spec.batch_size * 8)
        for s in range(0, n, step):
            take(worker(rows.slice(s, step)))
    elif session is not None:
        from . import ray_engine

        ray_engine.run(spec, session, rows=rows, on_batch=take)
    else:
        with _session(engine, address, spec.workers) as sess:
            from . import ray_engine

            ray_engine.run(spec, sess, rows=rows, on_batch=take)
    result.seconds = time.perf_counter() - start
    return result


def _note(result: JobResult, batch) -> None:
    result.pids.update(p for p in batch.column("pid").to_pylist() if p is not None)
    if not result.params:
        for p in batch.column("params").to_pylist():
            if p:
                result.params = json.loads(p)
                break


def plan_folder(in_dir: str | Path, chunk_records: int = DEFAULT_CHUNK_RECORDS) -> list[InputShard]:
    return [plan_shard(k, p, chunk_records) for k, p in enumerate(find_shards(in_dir))]


def predict_folder(in_dir: str | Path, out_dir: str | Path, spec: WorkerSpec, *, engine: str = "local",
                   address: str | None = None, model: str = "", chunk_records: int = DEFAULT_CHUNK_RECORDS,
                   progress: Progress | None = None, log: Log | None = None,
                   on_plan: Callable[[list[InputShard], list[InputShard]], None] | None = None) -> JobResult:
    """Predict every shard of ``in_dir`` into ``out_dir`` (one Parquet file per shard and
    ``manifest.json``), skipping the shards a previous run finished. ``on_plan(all, pending)``
    is called once the shards are planned (before any model loads)."""
    say = log or (lambda _msg: None)
    spec = replace(spec, mode="records")
    shards = plan_folder(in_dir, chunk_records)
    job = {"task": spec.task, "model": model or spec.model_path, "model_path": spec.model_path,
           "input": str(Path(in_dir).resolve()), "generation": spec.generation}
    manifest = Manifest.open(out_dir, job)
    order = [s.name for s in shards]
    pending = [s for s in shards if not manifest.finished(s)]
    result = JobResult(engine, spec.workers, output=Path(out_dir), shards_skipped=len(shards) - len(pending))
    if result.shards_skipped:
        say(f"resuming: {result.shards_skipped} of {len(shards)} shard(s) already finished")
    if on_plan is not None:
        on_plan(shards, pending)
    names = [s.name for s in shards]
    start = time.perf_counter()
    buffers: dict[int, tuple[list[int], list[str], list[str], set[int]]] = {}
    shard_start: dict[int, float] = {}

    def finish(shard: InputShard) -> None:
        index, keys, records, pids = buffers.pop(shard.number, ([], [], [], set()))
        _, sha = write_output_shard(out_dir, shard.output_name, index, keys, records)
        manifest.add(ShardEntry(shard.name, shard.output_name, shard.records, sha, shard.sha256,
                                round(time.perf_counter() - shard_start.get(shard.number, start), 3),
                                sorted(pids)))
        manifest.save(order=order)
        result.shards_done += 1
        result.records += shard.records
        say(f"finished shard {shard.name}: {shard.records} records -> {shard.output_name}")

    by_number = {s.number: s for s in pending}

    def take(batch) -> None:
        raise_error_row(batch)
        cols = {c: batch.column(c).to_pylist() for c in ("shard", "i", "key", "record", "pid")}
        touched = set()
        for s, i, key, rec, pid in zip(cols["shard"], cols["i"], cols["key"], cols["record"], cols["pid"]):
            buf = buffers.setdefault(s, ([], [], [], set()))
            shard_start.setdefault(s, time.perf_counter())
            buf[0].append(i)
            buf[1].append(key)
            buf[2].append(rec)
            buf[3].add(pid)
            touched.add(s)
        _note(result, batch)
        for s in sorted(touched):
            if len(buffers[s][0]) == by_number[s].records:
                finish(by_number[s])
        if progress is not None:
            progress(batch.num_rows)

    manifest.save(order=order, complete=False)
    for s in [s for s in pending if s.records == 0]:
        finish(s)
    work = [s for s in pending if s.records > 0]
    if work:
        if engine == "local":
            worker = _local_rows(spec, names)
            for shard in work:
                for chunk in shard.chunks:
                    rows = list(read_chunk(shard.path, shard.kind, chunk))
                    take(worker(_rows_table(shard.number, rows)))
        else:
            chunks = [{"path": str(s.path), "kind": s.kind, "shard": c.shard, "first": c.first,
                       "count": c.count, "start": c.start, "stop": c.stop, "line": c.line}
                      for s in work for c in s.chunks]
            with _session(engine, address, spec.workers) as sess:
                from . import ray_engine

                ray_engine.run(spec, sess, chunks=chunks, shard_names=names, on_batch=take)
    result.seconds = time.perf_counter() - start
    manifest.save(order=order, complete=all(manifest.finished(s) for s in shards))
    return result


def _rows_table(shard: int, rows: list[tuple[int, int, str]]):
    import pyarrow as pa

    return pa.table({"shard": pa.array([shard] * len(rows), pa.int32()),
                     "i": pa.array([r[0] for r in rows], pa.int64()),
                     "line": pa.array([r[1] for r in rows], pa.int64()),
                     "rec": pa.array([r[2] for r in rows], pa.string())})


def ray_model_run(ws, dataset_id: int, spec: WorkerSpec, *, address: str | None = None,
                  name: str | None = None, progress: Progress | None = None, n_boot: int = 1000,
                  engine: str = "ray"):
    """Predict a stored split on Ray and store the predictions as a run, as
    :func:`cblue_core.runs.record.model_run` does (inputs only, the same scoring and parameters, plus
    ``engine``, ``workers`` and ``worker_processes``)."""
    from ..models.base import model_input
    from ..models.provenance import read_training_records
    from ..runs.record import ModelTaskMismatch, record_run
    from ..store.workspace import WorkspaceError
    from ..tasks import get_task

    info = ws.datasets.get(dataset_id)
    if info is None:
        raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
    task = get_task(info.task)
    if spec.task != task.name:
        raise ModelTaskMismatch(f"model {spec.model_path!r} predicts {spec.task}, but dataset "
                                f"{dataset_id} is {task.name} {info.split}")
    inputs = [model_input(task, ex) for ex in ws.datasets.examples(dataset_id)]
    res = predict_examples(inputs, replace(spec, mode="examples"), engine=engine, address=address,
                           progress=progress)
    preds = [example_from_dict(json.loads(t)) for t in res.outputs]
    params = {**res.params, "batch_size": spec.batch_size, "examples": len(inputs),
              "seconds": round(res.seconds, 3), "engine": engine, "workers": spec.workers,
              "worker_processes": len(res.pids)}
    model = str(params.get("model") or Path(spec.model_path).name)
    run = record_run(ws, dataset_id, preds, name=name or f"{model} on {info.split}", source="model",
                     model=model, params=params, device=str(params.get("device", spec.device)),
                     n_boot=n_boot, training_records=read_training_records(Path(spec.model_path)))
    return run, res
