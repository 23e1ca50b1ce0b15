"""``models``, ``run`` and ``predict`` for ``--model endpoint:NAME`` (called from
:mod:`cblue_core.cli.models` when the model names an endpoint).

Exit codes as there: 0 success (a run with failed prompts too: it is stored, marked partial,
and says how many); 1 a workspace, file or dataset that cannot be used (an answer the workspace
refused to store too: no run is stored, the answers stored before it are kept); 2 a usage error
(unknown or badly declared endpoint, a task endpoints cannot answer).
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..models.endpoints.config import EndpointConfig, EndpointConfigError, get_endpoint, load_endpoints
from ..models.endpoints.prompts import UnsupportedTask, supports
from ..models.endpoints.runner import AnswerNotStored, RunStats
from ..tasks import TaskSpec, UnknownTaskError, get_task
from .output import print_json, terminal_text

ErrorSink = Callable[[str], None]


def endpoint_rows() -> tuple[list[dict[str, Any]], str | None]:
    """The declared endpoints as ``models`` lists them, and why the file could not be read."""
    try:
        declared = load_endpoints()
    except EndpointConfigError as exc:
        return [], str(exc)
    return [{"name": c.ref, "model": c.model, "base_url": c.public_url, "mode": c.mode,
             "max_concurrency": c.max_concurrency, "key_from": c.api_key_env} for c in declared.values()], None


def print_endpoints(json_out: bool) -> dict[str, Any] | None:
    """Print the declared endpoints under the model table (or return them for the JSON object)."""
    rows, problem = endpoint_rows()
    if json_out:
        return {"endpoints": rows, **({"endpoints_problem": problem} if problem else {})}
    if problem:
        print(f"endpoints: PROBLEM: {terminal_text(problem)}")
    for r in rows:
        # the operator's declarations, but printed like every stored value
        print("  ".join(terminal_text(r[k]) for k in ("name", "mode", "model", "base_url"))
              + f"  (concurrency {r['max_concurrency']})")
    return None


def _config(model: str, err: ErrorSink) -> EndpointConfig | None:
    try:
        cfg = get_endpoint(model)
        cfg.api_key()   # an unset key variable is said now, not once per prompt
    except EndpointConfigError as exc:
        err(str(exc))
        return None
    return cfg


def _task(name: str | None, err: ErrorSink) -> TaskSpec | None:
    try:
        spec = get_task(name or "PromptCBLUE")
    except UnknownTaskError as exc:
        err(str(exc))
        return None
    if not supports(spec):
        err(f"endpoints answer PromptCBLUE and CliMedBench prompts, not {spec.name}")
        return None
    return spec


def _bar(total: int, desc: str, progress: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="prompt", file=sys.stderr, disable=not progress, dynamic_ncols=True)


def summary_line(stats: RunStats) -> str:
    return (f"requests: {stats.sent} sent, {stats.cached} cached, {stats.failed} failed; tokens: "
            f"{stats.prompt_tokens} prompt, {stats.completion_tokens} completion; {stats.wall_s:.2f} s "
            f"({stats.tokens_per_s:.1f} tokens/s)")


def _say_failures(stats: RunStats) -> None:
    for line in stats.failures[:20]:
        print(f"failed: {terminal_text(line)}", file=sys.stderr)
    if stats.failed:
        more = f" ({stats.failed - 20} more not shown)" if stats.failed > 20 else ""
        print(f"warning: {stats.failed} prompt(s) failed after retries and are scored as empty answers; "
              f"the run is partial{more}", file=sys.stderr)
    if stats.usage_unusable:
        print(f"note: {stats.usage_unusable} answer(s) came with token counts that are not counts "
              "(negative, fractional, not numbers or over 10^9); stored as unknown", file=sys.stderr)
    if stats.length_capped:
        print(f"note: {stats.length_capped} answer(s) ran past max_answer_chars and were cut "
              "(finish_reason length_cap)", file=sys.stderr)


def run_endpoint(model: str, split: str, *, db: str | None, dataset: int | None, name: str | None,
                 task: str | None, limit: int | None, json_out: bool, progress: bool, err: ErrorSink) -> int:
    from ..runs.endpoint import endpoint_run
    from .inputs import open_existing

    cfg = _config(model, err)
    spec = _task(task, err) if dataset is None else None
    if cfg is None or (dataset is None and spec is None):
        return 2
    if limit is not None and limit < 1:
        err(f"--limit must be at least 1 (got {limit})")
        return 2
    ws = open_existing(db, err)
    if isinstance(ws, int):
        return ws
    try:
        target = ws.datasets.get(dataset) if dataset is not None else ws.datasets.find(spec.name, split)  # type: ignore[union-attr]
        if target is None:
            what = f"dataset {dataset}" if dataset is not None else f"{spec.name} {split} split"  # type: ignore[union-attr]
            err(f"no {what} in {ws.path} (see `list`; add it with `ingest`)")
            return 1
        total = min(target.records, limit) if limit else target.records
        bar = _bar(total, f"{cfg.ref} on {target.task} {target.split}", progress)
        try:
            result = endpoint_run(ws, target.dataset_id, cfg, name=name, limit=limit, progress=bar.update)
        except UnsupportedTask as exc:
            err(str(exc))
            return 2
        except AnswerNotStored as exc:
            err(str(exc))
            return 1
        finally:
            bar.close()
    finally:
        ws.close()
    stats = result.output.stats
    _say_failures(stats)
    ev = result.run.evaluation
    if json_out:
        print_json({"run_id": result.run.run_id, "metrics": ev.summary(), "training_overlap": None,
                    **{k: v for k, v in stats.to_json().items() if k in ("requests", "tokens", "answers")}})
        return 0
    shown = "n/a" if ev.value is None else f"{ev.value:.4f}"
    print(f"stored run #{result.run.run_id} of {cfg.ref} on {target.task} {target.split}: {ev.headline} = {shown}"
          + (" (partial)" if stats.failed else ""))
    print(summary_line(stats))
    return 0


def predict_endpoint(model: str, input_path: str, out_path: str, *, task: str | None, progress: bool,
                     err: ErrorSink, output_path: Callable[[TaskSpec, str], Path]) -> int:
    """Answer an official input file and write the official submission file (no cache: no
    workspace is involved)."""
    from ..io.writers import write_dataset
    from ..models.base import model_input
    from ..models.endpoints.predict import endpoint_predict
    from .inputs import read_input

    cfg = _config(model, err)
    spec = _task(task, err)
    if cfg is None or spec is None:
        return 2
    if Path(input_path).expanduser().is_dir():
        err("an endpoint predicts one official input file; for a split of many files, ingest them and "
            "use `run` (its answers are cached and resumable)")
        return 2
    loaded = read_input(input_path, spec, err)
    if loaded is None:
        return 1
    examples = loaded.examples
    print(f"read {len(examples)} {spec.name} records from {input_path}", file=sys.stderr)
    bar = _bar(len(examples), f"{cfg.ref} on {Path(input_path).name}", progress)
    try:
        out = endpoint_predict(cfg, spec, [model_input(spec, ex) for ex in examples], progress=bar.update)
    finally:
        bar.close()
    for pred, src in zip(out.predictions, examples):
        pred.raw = src.raw    # the file's other fields go back out as they came in
    _say_failures(out.stats)
    dest = output_path(spec, out_path)
    try:
        write_dataset(spec, out.predictions, dest, use_raw=False)
    except OSError as exc:
        err(f"cannot write {dest}: {exc.strerror or exc}")
        return 1
    print(f"wrote {len(out.predictions)} predictions of {spec.name} to {dest}")
    print(summary_line(out.stats))
    return 0
