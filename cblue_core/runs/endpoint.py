"""Runs made by an LLM endpoint (``endpoint:NAME``): the split's inputs sent through the
runner (cached answers not sent again), stored and scored by :func:`cblue_core.runs.record.record_run`
exactly like an imported predictions file.

The run records the endpoint's public settings (never its key nor the key's variable), the wall
time, tokens per second and the requests sent, cached and failed; a run with failed prompts is
marked ``partial`` (those prompts are scored as empty answers) with one line per failure."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..models.base import model_input
from ..models.endpoints.config import EndpointConfig
from ..models.endpoints.predict import EndpointPredictions, endpoint_predict
from ..models.endpoints.prompts import UnsupportedTask, supports
from ..store.access import check
from ..store.workspace import Workspace, WorkspaceError
from ..tasks import get_task
from .record import RunResult, record_run

MAX_FAILURE_LINES = 20   # a run's settings keep this many; the count says how many more


@dataclass(frozen=True)
class EndpointRunResult:
    run: RunResult
    output: EndpointPredictions


def endpoint_run(ws: Workspace, dataset_id: int, cfg: EndpointConfig, *, name: str | None = None,
                 limit: int | None = None, progress: Callable[[int], None] | None = None,
                 n_boot: int = 1000) -> EndpointRunResult:
    """Ask ``cfg``'s endpoint about every example of a stored split (the first ``limit`` when
    given) and store the answers as a scored run.

    The role is checked before anything is sent (a refusal raises PermissionDenied, audited):
    storing the run would be refused anyway, after the operator had paid for every answer."""
    check(ws.runs, "run.create", f"dataset {dataset_id}")
    info = ws.datasets.get(dataset_id)
    if info is None:
        raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
    task = get_task(info.task)
    if not supports(task):
        raise UnsupportedTask(f"endpoint {cfg.name!r} cannot answer {task.name}: endpoints answer "
                              "PromptCBLUE and CliMedBench prompts")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1 (got {limit})")
    gold = ws.datasets.examples(dataset_id)
    if limit is not None:
        gold = gold[:limit]
    out = endpoint_predict(cfg, task, [model_input(task, ex) for ex in gold], cache=ws.responses,
                           progress=progress)
    stats = out.stats
    params = {**cfg.run_params(), "examples": len(gold), "seconds": round(stats.wall_s, 3),
              **stats.to_json(), "partial": out.partial}
    if limit is not None:
        params["limit"] = limit
    if stats.failures:
        params["failures"] = stats.failures[:MAX_FAILURE_LINES]
    run = record_run(ws, dataset_id, out.predictions, name=name or f"{cfg.ref} on {info.split}",
                     source="endpoint", model=cfg.ref, params=params, device=cfg.public_url,
                     n_boot=n_boot, training_records=None, first=limit)
    return EndpointRunResult(run, out)
