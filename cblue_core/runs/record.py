"""Runs: predictions for a stored split (imported from a file, or from a model), scored and
analysed, stored in the workspace, exported back as the official submission file.

:func:`record_run` is the one way a run enters the workspace, whatever made the predictions,
so that model runs and imported runs are stored, scored and analysed the same way.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.predictions import MatchReport, match_predictions
from ..io.writers import write_submission
from ..models.base import Predictor, model_input
from ..models.devices import predict_with_oom_retry
from ..models.provenance import overlapping
from ..records import Example
from ..store.runs import error_table
from ..store.training_sets import TrainingSet, from_overlap
from ..store.workspace import Workspace, WorkspaceError
from ..tasks import TaskSpec, get_task
from .evaluation import Evaluation, evaluate


@dataclass
class RunResult:
    run_id: int
    evaluation: Evaluation
    match: MatchReport | None = None
    training_overlap: dict[str, Any] | None = None


class Unknown:
    """Marks a run that is no model's (an imported file): nothing is said about training data."""


UNKNOWN = Unknown()


def reference_lists(ws: Workspace, task_name: str) -> dict:
    """The reference lists a task's error taxonomy uses, from the workspace (only those: the
    others are not read)."""
    from ..analysis.taxonomy import REFERENCE_LISTS

    wanted = REFERENCE_LISTS.get(get_task(task_name).scorer, ())
    out: dict = {}
    if "schemas" in wanted:
        out["schemas"] = ws.resources.schemas() or None
    if "icd_terms" in wanted:
        out["icd_terms"] = [t.term for t in ws.resources.icd_terms()] or None
    return out


def record_run(ws: Workspace, dataset_id: int, predictions: list[Example], *, name: str,
               source: str, model: str | None = None, params: dict | None = None,
               device: str | None = None, match: MatchReport | None = None,
               n_boot: int = 1000, training_records: frozenset[str] | None | Unknown = UNKNOWN,
               first: int | None = None) -> RunResult:
    """Score aligned predictions against the stored gold split (its ``first`` examples when
    given: a run on the start of a split) and store them as a run.

    For a model run, ``training_records`` are the fingerprints of the records the model was
    trained on (None when the model declares none): the run's metrics then carry
    ``training_overlap``, with the score on the examples the model never saw."""
    info = ws.datasets.get(dataset_id)
    if info is None:
        raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
    task = get_task(info.task)
    gold = ws.datasets.examples(dataset_id)
    if first is not None:
        gold = gold[:first]
    ev = evaluate(task, gold, predictions, n_boot=n_boot, **reference_lists(ws, task.name))
    summary = ev.summary()
    if match is not None:
        summary["match"] = match.lines()
    # Stored with the run, so that every page can keep only the seen or the unseen examples (a
    # model run that was not told its records is settled later: cblue_core.runs.seen_split).
    training: TrainingSet | None = TrainingSet(False, model) if source != "model" else None
    seen: list[int] = []
    if not isinstance(training_records, Unknown):
        summary["training_overlap"] = training_overlap(task, gold, predictions, training_records, n_boot=n_boot,
                                                       **reference_lists(ws, task.name))
        training, seen = from_overlap(summary["training_overlap"], model)
    run_id = ws.runs.create(dataset_id, name, source=source, predictions=predictions,
                           metrics=summary, errors=error_table(ev.error_rows), model=model,
                           params=params, device=device, training=training, seen=seen)
    return RunResult(run_id, ev, match, summary.get("training_overlap"))


def import_run(ws: Workspace, dataset_id: int, source: str | Path | bytes, *, name: str | None = None,
               file_name: str | None = None, allow_missing: bool = False) -> RunResult:
    """Import a predictions file (official submission or PromptCBLUE/CliMedBench predictions)
    as a run; raises FileRefused (nothing stored) when it cannot be read or matched."""
    info = ws.datasets.get(dataset_id)
    if info is None:
        raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
    task = get_task(info.task)
    gold = ws.datasets.examples(dataset_id)
    label = file_name or (str(source) if not isinstance(source, (bytes, bytearray)) else "<upload>")
    matched = match_predictions(task, gold, source, name=label, allow_missing=allow_missing,
                                convention=_convention(info.offset_convention))
    run_name = name or Path(label).name
    return record_run(ws, dataset_id, matched.predictions, name=run_name, source="import",
                      params={"file": label, "allow_missing": allow_missing}, match=matched.report)


def training_overlap(task: TaskSpec, gold: list[Example], pred: list[Example],
                     records: frozenset[str] | None, *, n_boot: int = 1000,
                     **refs: Any) -> dict[str, Any] | None:
    """How much of a split the model was trained on, and its score on the rest.

    None when the model declares no training records (a user checkpoint: we cannot know).
    ``{"examples": n overlapping, "share": n / total, "indices": [...],
    "metrics_without_overlap": {"headline", "metrics", "intervals", "per_label", "examples"} | None}``;
    the last is None when every example overlaps."""
    if records is None:
        return None
    idx = overlapping(gold, records)
    out: dict[str, Any] = {"examples": len(idx), "share": len(idx) / len(gold) if gold else 0.0,
                           "indices": [gold[i].index for i in idx]}
    seen = set(idx)
    keep = [i for i in range(len(gold)) if i not in seen]
    if not keep:
        out["metrics_without_overlap"] = None
        return out
    if not idx:
        sub_ev = evaluate(task, gold, pred, n_boot=n_boot, **refs)
    else:
        sub_ev = evaluate(task, [gold[i] for i in keep], [pred[i] for i in keep], n_boot=n_boot, **refs)
    summary = sub_ev.summary()
    # per_label too: the Errors page's per-label tab shows the unseen part without re-scoring it.
    out["metrics_without_overlap"] = {"headline": summary["headline"], "metrics": summary["metrics"],
                                      "intervals": summary.get("intervals", {}),
                                      "per_label": summary.get("per_label", {}), "examples": len(keep)}
    return out


def overlap_sentence(overlap: dict[str, Any], model: str | None) -> str:
    """The warning a run on its model's training records carries, wherever it is shown."""
    n, share = overlap["examples"], overlap["share"]
    rest = overlap.get("metrics_without_overlap")
    text = (f"{n:,} of these examples ({share:.1%}) were in the training data of "
            f"{model or 'the model'}, so the score above is optimistic")
    if rest:
        h = rest["headline"]
        value = rest["metrics"].get(h)
        ci = rest.get("intervals", {}).get(h)
        shown = "n/a" if value is None else f"{value:.4f}"
        text += (f"; on the {rest['examples']:,} examples it never saw: {h} = {shown}"
                 + (f" (95% CI {ci[0]:.4f}-{ci[1]:.4f})" if ci else ""))
    else:
        text += "; every example was in its training data, so no honest score exists"
    return text


class ModelTaskMismatch(ValueError):
    """A model asked to predict a split of another task."""


def model_run(ws: Workspace, dataset_id: int, predictor: Predictor, *, name: str | None = None,
              batch_size: int | None = None, progress: Callable[[int], None] | None = None,
              on_retry: Callable[[int, int], None] | None = None, n_boot: int = 1000) -> RunResult:
    """Predict every example of a stored split with a loaded model (inputs only) and store the
    predictions as a run, scored and analysed exactly like an imported file. The run records
    the model, its kind and settings (decoding parameters for language models), the device,
    the batch size and the time the predictions took. ``progress`` and ``on_retry`` are passed
    to :func:`~cblue_core.models.devices.predict_with_oom_retry`."""
    from ..models.loading import predictor_params

    info = ws.datasets.get(dataset_id)
    if info is None:
        raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
    task = get_task(info.task)
    model_task = predictor.task.name
    if model_task != task.name:
        raise ModelTaskMismatch(f"model {predictor.card.name!r} predicts {model_task}, but dataset "
                                f"{dataset_id} is {task.name} {info.split}")
    size = predictor.batch_size if batch_size is None else int(batch_size)
    if size < 1:
        raise ValueError(f"batch size must be at least 1 (got {size})")
    inputs = [model_input(task, ex) for ex in ws.datasets.examples(dataset_id)]
    used = [size]

    def retried(old: int, new: int) -> None:   # the run records the batch size that fitted
        used[0] = new
        if on_retry is not None:
            on_retry(old, new)

    start = time.perf_counter()
    preds = predict_with_oom_retry(predictor, inputs, size, progress=progress, on_retry=retried)
    seconds = time.perf_counter() - start
    params = {**predictor_params(predictor), "batch_size": used[0], "examples": len(inputs),
              "seconds": round(seconds, 3)}
    if used[0] != size:
        params["batch_size_requested"] = size
    return record_run(ws, dataset_id, preds, name=name or f"{predictor.card.name} on {info.split}",
                      source="model", model=predictor.card.name, params=params,
                      device=str(predictor.device), n_boot=n_boot,
                      training_records=predictor.training_records)


def export_run(ws: Workspace, run_id: int, out_dir: str | Path) -> Path:
    """Write a run as the task's official submission file (name as the format checker requires)."""
    run = ws.runs.get(run_id)
    if run is None:
        raise WorkspaceError(f"no run {run_id} in the workspace")
    task = get_task(run.task)
    info = ws.datasets.get(run.dataset_id)
    # The split's own records: a prediction keeps their other fields (STS's `category`), and
    # the file keeps the split's line endings.
    return write_submission(task, ws.runs.predictions(run_id), out_dir,
                            convention=_convention(info.offset_convention if info else ""),
                            inputs=ws.datasets.examples(run.dataset_id),
                            line_ending=ws.datasets.line_ending(run.dataset_id))


def _convention(stored: str) -> str:
    """A dataset's offset convention for writing and reading its predictions (inclusive when
    the gold file had no offsets to tell)."""
    return stored if stored in ("inclusive", "exclusive") else "inclusive"


def run_evaluation(ws: Workspace, run_id: int, *, n_boot: int = 0,
                   indices: list[int] | None = None) -> Evaluation:
    """Re-score a stored run (all examples, or the ``indices`` of a slice); gives the
    per-example statistics that intervals, slices and comparisons need."""
    run = ws.runs.get(run_id)
    if run is None:
        raise WorkspaceError(f"no run {run_id} in the workspace")
    task = get_task(run.task)
    gold = ws.datasets.examples(run.dataset_id)
    pred = ws.runs.predictions(run_id)
    if len(pred) < len(gold):   # a run on the start of the split (run --limit)
        have = {p.index for p in pred}
        gold = [g for g in gold if g.index in have]
    if indices is not None:
        keep = set(indices)
        gold = [g for g in gold if g.index in keep]
        pred = [p for p in pred if p.index in keep]
    return evaluate(task, gold, pred, n_boot=n_boot, **reference_lists(ws, task.name))


def compare_runs(ws: Workspace, run_a: int, run_b: int, *, n_boot: int = 1000, seed: int = 0,
                 within: list[int] | None = None, overall: str = "all examples",
                 evaluation: Callable[[int], Evaluation | None] | None = None):
    """Paired comparison of two runs on the same split, overall and on every saved slice;
    ``within``: on those examples only (named ``overall``), e.g. the part neither model saw.
    ``evaluation(run_id)`` gives a run's per-example statistics (say the evaluation kept in the
    workspace, :func:`cblue_core.runs.derived.run_evaluation_kept`); by default each run is re-scored."""
    from ..analysis.compare import compare

    a, b = ws.runs.get(run_a), ws.runs.get(run_b)
    if a is None or b is None:
        raise WorkspaceError("both runs must exist")
    if a.dataset_id != b.dataset_id:
        raise WorkspaceError(f"runs {run_a} and {run_b} are on different splits")
    scored = evaluation or (lambda run_id: run_evaluation(ws, run_id))
    ev_a, ev_b = scored(run_a), scored(run_b)
    if ev_a is None or ev_b is None:
        raise WorkspaceError("both runs must exist")
    if ev_a.stats is None or ev_b.stats is None:
        raise WorkspaceError(f"{a.task} runs have no per-example statistics to compare")
    slices = {}
    for s in ws.slices.all(a.task):
        slices[s.name] = ws.slices.indices(a.dataset_id, s.predicate)
    return compare(ev_a.stats, ev_b.stats, ev_a.headline, slices=slices, n_boot=n_boot, seed=seed,
                   within=within, overall=overall)
