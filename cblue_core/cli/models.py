"""The ``models``, ``predict`` and ``run`` commands (wired into ``python -m cblue_core`` by
:func:`build_parser_hooks`).

``predict`` and ``run`` take ``--engine local`` (default: this process) or ``--engine ray``
(Ray Data over an actor pool of the model, :mod:`cblue_core.scale`; ``--ray-address`` joins a
cluster, else a local Ray runs for the job; ``--workers N``). ``predict --input`` may be a folder
of JSON-lines / Parquet shards: the output is then a folder of Parquet shards plus a manifest,
and a rerun resumes (with either engine).

Exit codes: 0 success; 1 a file or model that cannot be used (input refused, model fails to
load, prediction failed, a bad record in a shard); 2 a usage error (unknown model, device not
available, unknown task, Ray not installed).
"""
from __future__ import annotations

import argparse
import contextvars
import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ..models.devices import DeviceError, predict_with_oom_retry, resolve_device
from ..models.endpoints.config import is_endpoint
from ..models.registry import ModelLoadError, ModelNotFoundError, list_models, resolve
from ..tasks import UnknownTaskError, get_task
from . import endpoints as endpoint_commands
from .output import fail, print_json, terminal_text

# Set by a command run with --json: its failure is then also one JSON object on stdout.
_json_errors: contextvars.ContextVar[bool] = contextvars.ContextVar("json_errors", default=False)


def _err(msg: str) -> None:
    fail(_json_errors.get(), 1, msg)


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def cmd_models(json_out: bool, extra_dirs: Sequence[str] = (), markdown: bool = False) -> int:
    """List built-in and user models (``$CBLUE_STUDIO_MODELS``, ``extra_dirs``); ``markdown``
    prints the built-in models' score table (the README's)."""
    models = list_models(extra_dirs)
    if markdown:
        from ..models.report import scores_table

        print(scores_table(models))
        return 0
    if json_out:
        print_json({"models": [m.to_json() for m in models], **(endpoint_commands.print_endpoints(True) or {})})
        return 0
    code = _print_models(models)
    endpoint_commands.print_endpoints(False)
    return code


def _print_models(models) -> int:
    if not models:
        from ..models.registry import BUILTIN_DIR, ENV_VAR

        print(f"no models found (built-in folder {BUILTIN_DIR}; add folders with ${ENV_VAR} or --dir)")
        return 0
    # A model card's fields are the card author's text, so each is escaped before it is measured.
    rows = [tuple(map(terminal_text, (
        m.name, "(shared encoder)" if m.role == "encoder" else m.task or "?", m.kind or "?", m.source,
        _size(m.size_bytes), "ok" if m.ok else f"PROBLEM: {m.problem}", m.path))) for m in models]
    heads = ("name", "task", "kind", "source", "size", "status", "path")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads[:5])]
    print("  ".join(h.ljust(w) for h, w in zip(heads[:5], widths)) + "  status / path")
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:5], widths)) + f"  {r[5]}  {r[6]}")
    return 0


def _output_path(task, out_path: str) -> Path:
    out = Path(out_path).expanduser()
    if out.is_dir() or str(out_path).endswith(("/", "\\")) or not out.suffix:
        return out / task.submission_file
    return out


class _Stop(Exception):
    """A command step failed after saying why on stderr; carries the exit code."""

    def __init__(self, code: int):
        self.code = code


ENGINES = ("local", "ray")


def _ray_device(device: str) -> str:
    """The device of Ray workers: checked there (the driver may have no GPU), so only its
    spelling is checked here."""
    d = (device or "cpu").strip().lower()
    if d == "cpu":
        return "cpu"
    if d in ("cuda", "gpu") or d.startswith("cuda:"):
        return "cuda"
    raise DeviceError(f"unknown device {device!r} for --engine ray; use cpu or cuda")


def _check_engine(engine: str, workers: int | None) -> None:
    if engine not in ENGINES:
        _err(f"unknown engine {engine!r}; use {' or '.join(ENGINES)}")
        raise _Stop(2)
    if workers is not None and workers < 1:
        _err(f"--workers must be at least 1 (got {workers})")
        raise _Stop(2)
    if engine == "ray":
        from ..scale.ray_engine import RayUnavailable, require_ray

        try:
            require_ray()
        except RayUnavailable as exc:
            _err(str(exc))
            raise _Stop(2)


def _choose(model: str, task: str | None, device: str, batch_size: int, allow_pickle: bool,
            extra_dirs: Sequence[str], engine: str = "local"):
    """(device, model info, task spec or None): the checks predict and run share."""
    if batch_size < 1:
        _err(f"--batch-size must be at least 1 (got {batch_size})")
        raise _Stop(2)
    try:
        dev = _ray_device(device) if engine == "ray" else resolve_device(device)
        info = resolve(model, extra_dirs)
        task_name = task or info.task
        spec = get_task(task_name) if task_name else None
    except (DeviceError, ModelNotFoundError, UnknownTaskError) as exc:
        _err(str(exc))
        raise _Stop(2)
    if task and info.task and task != info.task:
        _err(f"model {info.name!r} is for task {info.task}, not {task}")
        raise _Stop(2)
    if info.problem is not None and not allow_pickle:
        _err(f"model {info.name!r} at {info.path} cannot be loaded: {info.problem}")
        raise _Stop(1)
    return dev, info, spec


def _load(info, task_name: str, dev: str, allow_pickle: bool, generation: dict | None, batch_size: int):
    from ..models.loading import load_predictor

    try:
        return load_predictor(info, task=task_name, device=dev, allow_pickle=allow_pickle,
                              generation=generation, batch_size=batch_size)
    except DeviceError as exc:
        _err(str(exc))
        raise _Stop(2)
    except ModelLoadError as exc:
        _err(str(exc))
        raise _Stop(1)


def _progress_bar(total: int, desc: str, dev: str, progress: bool):
    """A tqdm bar on stderr and the out-of-memory retry note that writes through it."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit="ex", file=sys.stderr, disable=not progress, dynamic_ncols=True)

    def on_retry(old: int, new: int) -> None:
        bar.write(f"out of memory on {dev} at batch size {old}; retrying with {new}", file=sys.stderr)
    return bar, on_retry


def _timing(predictor) -> str:
    t = predictor.last_timing
    return (f"{t.examples} examples in {t.seconds:.2f} s ({t.per_example_ms:.1f} ms/example, "
            f"{t.batches} batches, {t.device})" if t else "")


def _exit_code(command):
    """Run a command body; a _Stop becomes its exit code."""
    @functools.wraps(command)
    def wrapped(*args, **kwargs) -> int:
        try:
            return command(*args, **kwargs)
        except _Stop as stop:
            return stop.code
    return wrapped


@_exit_code
def cmd_predict(model: str, input_path: str, out_path: str, device: str = "cpu",
                batch_size: int = 32, progress: bool = True, *, task: str | None = None,
                allow_pickle: bool = False, generation: dict | None = None,
                extra_dirs: Sequence[str] = (), engine: str = "local", ray_address: str | None = None,
                workers: int | None = None, chunk_records: int | None = None) -> int:
    """Predict an official input file (e.g. a test split) with a model and write the official
    submission file: ``out_path`` is a folder (the task's submission file name is used) or a
    file path. An input folder of shards gives an output folder of Parquet shards plus
    ``manifest.json`` (a rerun skips the finished shards). ``engine="ray"`` runs the model on
    Ray (``ray_address``: a cluster to join; ``workers``: actors). Prints timing; returns an
    exit code."""
    from ..io.writers import write_dataset
    from .inputs import read_input

    if is_endpoint(model):
        return endpoint_commands.predict_endpoint(model, input_path, out_path, task=task, progress=progress,
                                                  err=_err, output_path=_output_path)
    _check_engine(engine, workers)
    dev, info, spec = _choose(model, task, device, batch_size, allow_pickle, extra_dirs, engine)
    if Path(input_path).expanduser().is_dir():
        return _predict_folder(info, spec, Path(input_path).expanduser(), Path(out_path).expanduser(),
                               dev, batch_size, progress, allow_pickle=allow_pickle, generation=generation,
                               engine=engine, ray_address=ray_address, workers=workers,
                               chunk_records=chunk_records)
    loaded = read_input(input_path, spec, _err)
    if loaded is None:
        return 1
    spec = loaded.task
    examples = loaded.examples
    print(f"read {len(examples)} {spec.name} records from {input_path}", file=sys.stderr)
    if engine == "ray":
        return _predict_file_ray(info, spec, examples, _output_path(spec, out_path), dev, batch_size,
                                 progress, allow_pickle=allow_pickle, generation=generation,
                                 ray_address=ray_address, workers=workers)

    predictor = _load(info, spec.name, dev, allow_pickle, generation, batch_size)
    bar, on_retry = _progress_bar(len(examples), f"predict {spec.name}", dev, progress)
    try:
        preds = predict_with_oom_retry(predictor, examples, batch_size, progress=bar.update,
                                       on_retry=on_retry)
    except DeviceError as exc:
        _err(str(exc))
        return 1
    finally:
        bar.close()

    out = _output_path(spec, out_path)
    try:
        write_dataset(spec, preds, out, use_raw=False)
    except OSError as exc:
        _err(f"cannot write {out}: {exc.strerror or exc}")
        return 1
    print(f"wrote {len(preds)} predictions of {spec.name} to {out}")
    if _timing(predictor):
        print(f"timing: {_timing(predictor)}")
    return 0


def _worker_spec(info, task_name: str, dev: str, batch_size: int, workers: int | None, *,
                 allow_pickle: bool, generation: dict | None, mode: str = "records"):
    from ..scale.jobs import default_workers
    from ..scale.ray_engine import WorkerSpec

    return WorkerSpec(model_path=str(info.path), task=task_name, device=dev, mode=mode, batch_size=batch_size,
                      workers=workers or default_workers(dev), allow_pickle=allow_pickle, generation=generation)


def _scale_failure(exc: Exception) -> int:
    """Say why a scaled job failed and return its exit code; anything else propagates."""
    from ..scale.ray_engine import RayJobError, RayUnavailable
    from ..scale.shards import JobMismatch, ShardError

    if isinstance(exc, RayUnavailable):
        _err(str(exc))
        return 2
    if isinstance(exc, ShardError):
        _err(f"bad record: {exc}")
        return 1
    if isinstance(exc, JobMismatch):
        _err(str(exc))
        return 1
    if isinstance(exc, (RayJobError, ModelLoadError, DeviceError)):
        _err(f"the job failed: {exc}")
        return 1
    raise exc


def _job_timing(res) -> str:
    procs = f", {res.workers} worker(s) in {len(res.pids)} process(es)" if res.engine == "ray" else ""
    return (f"{res.records} records in {res.seconds:.2f} s ({res.records_per_s:.0f} records/s, "
            f"engine {res.engine}{procs})")


def _predict_file_ray(info, spec, examples, out: Path, dev: str, batch_size: int, progress: bool, *,
                      allow_pickle: bool, generation: dict | None, ray_address: str | None,
                      workers: int | None) -> int:
    """The Ray engine on an official file: the same submission file as the local engine."""
    from ..io.writers import dumps_records, write_text
    from ..scale.jobs import predict_examples

    wspec = _worker_spec(info, spec.name, dev, batch_size, workers, allow_pickle=allow_pickle,
                         generation=generation)
    bar, _ = _progress_bar(len(examples), f"predict {spec.name} (ray)", dev, progress)
    try:
        res = predict_examples(examples, wspec, engine="ray", address=ray_address, progress=bar.update)
    except Exception as exc:  # noqa: BLE001 - scale failures become messages, others propagate
        return _scale_failure(exc)
    finally:
        bar.close()
    records = [json.loads(r) for r in res.outputs]
    try:
        write_text(out, dumps_records(spec, records, res.keys))
    except OSError as exc:
        _err(f"cannot write {out}: {exc.strerror or exc}")
        return 1
    print(f"wrote {len(records)} predictions of {spec.name} to {out}")
    print(f"timing: {_job_timing(res)}")
    return 0


def _predict_folder(info, spec, in_dir: Path, out_dir: Path, dev: str, batch_size: int, progress: bool, *,
                    allow_pickle: bool, generation: dict | None, engine: str, ray_address: str | None,
                    workers: int | None, chunk_records: int | None) -> int:
    """A folder of shards -> Parquet shards plus a manifest, resuming finished shards."""
    from ..scale.jobs import predict_folder
    from ..scale.shards import DEFAULT_CHUNK_RECORDS, MANIFEST, JobMismatch, ShardError

    if spec is None:
        _err(f"model {info.name!r} names no task: pass --task")
        return 2
    if out_dir.exists() and not out_dir.is_dir():
        _err(f"--out must be a folder for a folder of shards ({out_dir} is a file)")
        return 2
    wspec = _worker_spec(info, spec.name, dev, batch_size, workers, allow_pickle=allow_pickle,
                         generation=generation)
    bars: list = []

    def on_plan(shards, pending) -> None:
        total = sum(s.records for s in shards)
        todo = sum(s.records for s in pending)
        print(f"read {len(shards)} shard(s) of {spec.name} ({total} records) from {in_dir}; "
              f"{len(pending)} to predict ({todo} records)", file=sys.stderr)
        bar, _ = _progress_bar(todo, f"predict {spec.name} ({engine})", dev, progress)
        bars.append(bar)

    def log(msg: str) -> None:
        if bars:
            bars[0].write(msg, file=sys.stderr)
        else:
            print(msg, file=sys.stderr)

    def advance(n: int) -> None:
        if bars:
            bars[0].update(n)

    try:
        res = predict_folder(in_dir, out_dir, wspec, engine=engine, address=ray_address, model=info.name,
                             chunk_records=chunk_records or DEFAULT_CHUNK_RECORDS, progress=advance,
                             log=log, on_plan=on_plan)
    except (JobMismatch, ShardError) as exc:
        return _scale_failure(exc)
    except ValueError as exc:     # no shards, not a folder
        _err(str(exc))
        return 1
    except Exception as exc:  # noqa: BLE001 - scale failures become messages, others propagate
        return _scale_failure(exc)
    finally:
        for bar in bars:
            bar.close()
    print(f"wrote {res.records} predictions of {spec.name} in {res.shards_done} shard(s) to {out_dir} "
          f"(manifest {out_dir / MANIFEST}); {res.shards_skipped} shard(s) were already done")
    print(f"timing: {_job_timing(res)}")
    return 0


@_exit_code
def cmd_run(model: str, split: str = "dev", *, db: str | None = None, dataset: int | None = None,
            name: str | None = None, device: str = "cpu", batch_size: int = 32, progress: bool = True,
            task: str | None = None, allow_pickle: bool = False, generation: dict | None = None,
            extra_dirs: Sequence[str] = (), json_out: bool = False, engine: str = "local",
            ray_address: str | None = None, workers: int | None = None, limit: int | None = None) -> int:
    """Predict a split stored in the workspace with a model and store the predictions as a
    run (scored, analysed and exported like an imported predictions file). With ``json_out``
    one JSON object: ``{"run_id", "metrics", "training_overlap"}``. ``engine="ray"`` predicts
    on Ray (see :func:`cmd_predict`). ``endpoint:NAME`` runs a declared LLM endpoint (its JSON
    adds ``requests`` and ``tokens``; ``limit``: the first N examples)."""
    token = _json_errors.set(json_out)
    try:
        if is_endpoint(model):
            return endpoint_commands.run_endpoint(model, split, db=db, dataset=dataset, name=name, task=task,
                                                  limit=limit, json_out=json_out,
                                                  progress=progress and not json_out, err=_err)
        if limit is not None:
            _err("--limit applies to endpoint models (endpoint:NAME)")
            return 2
        return _cmd_run(model, split, db=db, dataset=dataset, name=name, device=device,
                        batch_size=batch_size, progress=progress and not json_out, task=task,
                        allow_pickle=allow_pickle, generation=generation, extra_dirs=extra_dirs,
                        json_out=json_out, engine=engine, ray_address=ray_address, workers=workers)
    finally:
        _json_errors.reset(token)


def _cmd_run(model: str, split: str, *, db: str | None, dataset: int | None, name: str | None,
             device: str, batch_size: int, progress: bool, task: str | None, allow_pickle: bool,
             generation: dict | None, extra_dirs: Sequence[str], json_out: bool, engine: str = "local",
             ray_address: str | None = None, workers: int | None = None) -> int:
    from ..runs.record import ModelTaskMismatch, model_run, overlap_sentence
    from .inputs import open_existing

    _check_engine(engine, workers)
    dev, info, spec = _choose(model, task, device, batch_size, allow_pickle, extra_dirs, engine)
    ws = open_existing(db, _err)
    if isinstance(ws, int):
        return ws
    try:
        if dataset is not None:
            target = ws.datasets.get(dataset)
        elif spec is None:
            _err(f"model {info.name!r} names no task: pass --task or --dataset")
            return 2
        else:
            target = ws.datasets.find(spec.name, split)
        if target is None:
            what = f"dataset {dataset}" if dataset is not None else f"{spec.name} {split} split"
            _err(f"no {what} in {ws.path} (see `list`; add it with `ingest`)")
            return 1
        if spec is not None and target.task != spec.name:
            _err(f"model {info.name!r} is for task {spec.name}, but dataset {target.dataset_id} is "
                 f"{target.task} {target.split}")
            return 2
        predictor = job = None
        if engine == "ray":
            from ..scale.jobs import ray_model_run

            wspec = _worker_spec(info, target.task, dev, batch_size, workers, allow_pickle=allow_pickle,
                                 generation=generation, mode="examples")
            bar, _ = _progress_bar(target.records, f"run {target.task} {target.split} (ray)", dev, progress)
            try:
                result, job = ray_model_run(ws, target.dataset_id, wspec, address=ray_address, name=name,
                                            progress=bar.update)
            except ModelTaskMismatch as exc:
                _err(str(exc))
                return 1
            except Exception as exc:  # noqa: BLE001 - scale failures become messages, others propagate
                return _scale_failure(exc)
            finally:
                bar.close()
        else:
            predictor = _load(info, target.task, dev, allow_pickle, generation, batch_size)
            bar, on_retry = _progress_bar(target.records, f"run {target.task} {target.split}", dev, progress)
            try:
                result = model_run(ws, target.dataset_id, predictor, name=name, batch_size=batch_size,
                                   progress=bar.update, on_retry=on_retry)
            except (ModelTaskMismatch, DeviceError) as exc:
                _err(str(exc))
                return 1
            finally:
                bar.close()
    finally:
        ws.close()
    ev = result.evaluation
    overlap = result.training_overlap
    if json_out:
        print_json({"run_id": result.run_id, "metrics": ev.summary(),
                    "training_overlap": None if overlap is None else {
                        k: overlap[k] for k in ("examples", "share", "metrics_without_overlap")}})
        return 0
    ci = ev.intervals.get(ev.headline)
    shown = "n/a" if ev.value is None else f"{ev.value:.4f}"
    print(f"stored run #{result.run_id} of {terminal_text(info.name)} on {target.task} "
          f"{terminal_text(target.split)}: {ev.headline} = "
          f"{shown}" + (f" (95% CI {ci[0]:.4f}-{ci[1]:.4f})" if ci else ""))
    if overlap and overlap["examples"]:
        print(f"warning: {terminal_text(overlap_sentence(overlap, info.name))}")
    if job is not None:
        print(f"timing: {_job_timing(job)}")
    elif _timing(predictor):
        print(f"timing: {_timing(predictor)}")
    return 0


def _generation_args(args) -> dict | None:
    gen = {}
    for k in ("max_new_tokens", "temperature", "top_p", "seed"):
        v = getattr(args, k, None)
        if v is not None:
            gen[k] = v
    if getattr(args, "do_sample", False):
        gen["do_sample"] = True
    return gen or None


def run_models(args) -> int:
    return cmd_models(args.json, extra_dirs=args.dir or (), markdown=args.markdown)


def run_predict(args) -> int:
    return cmd_predict(args.model, args.input, args.out, device=args.device,
                       batch_size=args.batch_size, progress=not args.no_progress, task=args.task,
                       allow_pickle=args.allow_pickle, generation=_generation_args(args),
                       extra_dirs=args.dir or (), engine=args.engine, ray_address=args.ray_address,
                       workers=args.workers, chunk_records=args.chunk_records)


def run_run(args) -> int:
    return cmd_run(args.model, args.split, db=args.db, dataset=args.dataset, name=args.name,
                   device=args.device, batch_size=args.batch_size, progress=not args.no_progress,
                   task=args.task, allow_pickle=args.allow_pickle, generation=_generation_args(args),
                   extra_dirs=args.dir or (), json_out=args.json, engine=args.engine,
                   ray_address=args.ray_address, workers=args.workers, limit=args.limit)


def _model_options(p) -> None:
    """Options predict and run share: task, device, batch size, pickle, folders, decoding."""
    p.add_argument("--task", help="task name (default: the model's task)")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N or auto")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--allow-pickle", action="store_true",
                   help="allow pytorch_model.bin (pickle) weights; only for checkpoints you trust")
    p.add_argument("--dir", action="append", metavar="FOLDER", help="extra model folder; repeatable")
    e = p.add_argument_group("engine (large jobs)")
    e.add_argument("--engine", choices=ENGINES, default="local",
                   help="local (default: this process) or ray (Ray Data over an actor pool of the model; "
                        "pip install -r requirements-ray.txt)")
    e.add_argument("--ray-address", metavar="ADDR",
                   help="join this Ray cluster (e.g. auto, or HEAD:6379 from `ray start --head`); "
                        "default: a local Ray for the job")
    e.add_argument("--workers", type=int, metavar="N",
                   help="model actors with --engine ray (default: one per CPU core, or 1 with --device cuda)")
    g = p.add_argument_group("generation (causal LMs)")
    g.add_argument("--max-new-tokens", type=int)
    g.add_argument("--do-sample", action="store_true", help="sample instead of greedy decoding")
    g.add_argument("--temperature", type=float)
    g.add_argument("--top-p", type=float)
    g.add_argument("--seed", type=int)


def build_parser_hooks(subparsers) -> None:
    """Add the ``models``, ``predict`` and ``run`` subcommands to an argparse subparsers object (their
    ``func`` takes the parsed args and returns an exit code, like the other commands)."""
    m = subparsers.add_parser("models", help="list built-in and user models")
    m.add_argument("--json", action="store_true", help="print one JSON object")
    m.add_argument("--markdown", action="store_true",
                   help="print the built-in models' dev scores beside the paper's BERT-base (README table)")
    m.add_argument("--dir", action="append", metavar="FOLDER",
                   help="extra model folder (or folder of model folders); repeatable")
    m.set_defaults(func=run_models)

    p = subparsers.add_parser("predict", help="predict an official input file with a model and "
                                               "write the official submission file")
    p.add_argument("--model", required=True,
                   help="model name (see `models`), model folder, or endpoint:NAME (a declared LLM endpoint)")
    p.add_argument("--input", required=True,
                   help="input file in the task's official format (e.g. a test split), or a folder of "
                        "JSON-lines / Parquet shards")
    p.add_argument("--out", required=True,
                   help="output folder (official submission file name) or file; for a folder of shards, "
                        "a folder of Parquet shards plus manifest.json (a rerun resumes)")
    p.add_argument("--chunk-records", type=int, metavar="N",
                   help="records a worker reads at a time from a shard (default 2048)")
    _model_options(p)
    p.set_defaults(func=run_predict)

    r = subparsers.add_parser("run", help="predict a split stored in the workspace with a model and "
                                           "store the predictions as a scored run")
    r.add_argument("--model", required=True,
                   help="model name (see `models`), model folder, or endpoint:NAME (a declared LLM endpoint)")
    r.add_argument("--split", default="dev", help="split of the model's task (default dev)")
    r.add_argument("--dataset", type=int, help="dataset id instead of task and split (see `list`)")
    r.add_argument("--name", help="run name (default: MODEL on SPLIT)")
    r.add_argument("--db", help="workspace file (default $CBLUE_STUDIO_DB or workspace/cblue_studio.duckdb)")
    r.add_argument("--json", action="store_true",
                   help='print one JSON object: {"run_id", "metrics", "training_overlap"} (endpoints add '
                        '"requests" and "tokens")')
    r.add_argument("--limit", type=int, metavar="N", help="endpoint models: only the first N examples")
    _model_options(r)
    r.set_defaults(func=run_run)


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (``python -m cblue_core.cli.models``) until the CLI wires the hooks."""
    parser = argparse.ArgumentParser(prog="python -m cblue_core.cli.models")
    build_parser_hooks(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
