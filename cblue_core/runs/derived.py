"""What pages derive from a whole run, computed once and kept in the workspace.

A run never changes once stored, but its bucket scores took seconds to compute (the train
split read, bootstrap intervals per bucket) and its per-example statistics a full re-scoring,
on every server start. Each :class:`Derivation` names its result type, how to compute it, and
what its result depends on besides the run: the source of the modules that compute it, and
inputs read from the workspace (the train split used). Both go into the stored version, so a
code change or another train split makes a kept payload stale: it is computed again and
replaces the old one. Payloads are typed JSON (:mod:`cblue_core.io.typed_json`), read back into
the same dataclasses, whatever dataclasses a derivation returns.

A read-only workspace (demo mode) computes without keeping.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..analysis.buckets import BucketScore, TrainIndex, bucket_kind, run_buckets
from ..io.typed_json import TypedJsonError, dumps, loads
from ..metrics.types import ExampleStats
from ..records import Example
from ..store.error_selection import Seen
from ..store.runs import RunInfo
from ..store.workspace import Workspace
from ..tasks import get_task
from .evaluation import Evaluation
from .record import run_evaluation
from .seen_split import part_indices, seen_set

T = TypeVar("T")
log = logging.getLogger("cblue_studio.derived")


@dataclass(frozen=True)
class Derivation(Generic[T]):
    """One kind of derived data: ``compute(ws, run)`` returns a ``result``-typed value."""

    kind: str
    result: Any                             # the type a payload is read back as
    compute: Callable[[Workspace, RunInfo], T]
    sources: tuple[str, ...]                # modules (a package: all of it) whose code shapes the result
    inputs: Callable[[Workspace, RunInfo], str] = lambda ws, run: ""


@functools.cache
def code_version(sources: tuple[str, ...]) -> str:
    """A digest of the modules' source text (a package's: every module in it): any edit to
    them gives another version."""
    digest = hashlib.sha256()
    for name in sources:
        path = Path(str(importlib.import_module(name).__file__))
        files = sorted(path.parent.rglob("*.py")) if path.name == "__init__.py" else [path]
        for file in files:
            digest.update(str(file.relative_to(path.parent.parent)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def version_of(derivation: Derivation[Any], ws: Workspace, run: RunInfo) -> str:
    inputs = derivation.inputs(ws, run)
    return code_version(derivation.sources) + (f";{inputs}" if inputs else "")


def kept_or_computed(ws: Workspace, run_id: int, derivation: Derivation[T]) -> T | None:
    """The run's ``derivation``: the kept payload when current, else computed now and kept
    (not in a read-only workspace). None when there is no such run."""
    run = ws.runs.get(run_id)
    if run is None:
        return None
    version = version_of(derivation, ws, run)
    text = ws.derived.get(run_id, derivation.kind, version)
    if text is not None:
        try:
            return loads(text, derivation.result)   # type: ignore[no-any-return]
        except TypedJsonError as exc:      # written by other code under the same version: redo
            log.warning("run %d: kept %s unreadable (%s); computing it again", run_id, derivation.kind, exc)
    value = derivation.compute(ws, run)
    if not ws.read_only:
        ws.derived.put(run_id, derivation.kind, version, dumps(value))
    return value


# ====================================================================== the derivations
def _train_split(ws: Workspace, run: RunInfo) -> int | None:
    info = ws.datasets.find(run.task, "train")
    return None if info is None else info.dataset_id


def _train_input(ws: Workspace, run: RunInfo) -> str:
    # dataset ids are never reused: another train split (re-ingested, deleted) is another id
    return f"train={_train_split(ws, run)}"


def _bucket_inputs(ws: Workspace, run: RunInfo) -> str:
    # the seen/unseen feature appears once the run's training set is settled
    return f"{_train_input(ws, run)};seen={'known' if seen_set(ws, run.run_id) is not None else 'unknown'}"


def compute_buckets(ws: Workspace, run: RunInfo, only: Seen | None = None) -> list[BucketScore]:
    """The run's bucket scores; ``only``: on the examples in (or out of) its model's training
    records."""
    task, gold = get_task(run.task), ws.datasets.examples(run.dataset_id)
    kind = bucket_kind(task, gold)
    if kind is None:                        # e.g. CHIP-CDN terms: no predictions, no train split read
        return []
    pred = ws.runs.predictions(run.run_id)
    if only is not None:
        keep = set(part_indices(ws, run.dataset_id, (run.run_id,), only))
        gold, pred = [g for g in gold if g.index in keep], [p for p in pred if p.index in keep]
    train_id = _train_split(ws, run)
    train: list[Example] | TrainIndex | None = None
    if train_id is not None:
        # triples in the train split need its records; spans and labels only counts (1.8 s less
        # for CMeEE's 15,000 records)
        train = (ws.datasets.examples(train_id) if kind == "relation" else TrainIndex.from_counts(
            ws.datasets.mention_counts(train_id), ws.datasets.label_counts(train_id)))
    return run_buckets(task, gold, pred, train, seen=seen_set(ws, run.run_id))


def compute_evaluation(ws: Workspace, run: RunInfo) -> Evaluation:
    """The run re-scored for its per-example statistics (slices, comparisons), without its
    error rows: the workspace holds those already, one row each."""
    return dataclasses.replace(run_evaluation(ws, run.run_id), error_rows=[])


@dataclass(frozen=True)
class _KeptEvaluation:
    # Evaluation.stats is typed Any (not every task has statistics): named here so that it is
    # read back as the arrays it is
    evaluation: Evaluation
    stats: ExampleStats | None


_BUCKET_SOURCES = ("cblue_core.analysis.buckets", "cblue_core.metrics", "cblue_core.records", "cblue_core.io.codecs")
# one kept payload per view: every example, or the part in (out of) the training records
BUCKETS: dict[Seen | None, Derivation[list[BucketScore]]] = {
    only: Derivation(f"buckets:{only}" if only else "buckets", list[BucketScore],
                     functools.partial(compute_buckets, only=only), _BUCKET_SOURCES, _bucket_inputs)
    for only in (None, "seen", "unseen")}

_EVALUATION: Derivation[_KeptEvaluation] = Derivation(
    "evaluation", _KeptEvaluation,
    lambda ws, run: _kept(compute_evaluation(ws, run)),
    ("cblue_core.runs.evaluation", "cblue_core.metrics", "cblue_core.records", "cblue_core.io.codecs"))


def _kept(ev: Evaluation) -> _KeptEvaluation:
    return _KeptEvaluation(dataclasses.replace(ev, stats=None), ev.stats)


def run_buckets_kept(ws: Workspace, run_id: int, only: Seen | None = None) -> list[BucketScore]:
    """The run's bucket scores (see :func:`kept_or_computed`); [] when there is no such run.
    ``only``: on the examples in (or out of) its model's training records."""
    return kept_or_computed(ws, run_id, BUCKETS[only]) or []


def run_evaluation_kept(ws: Workspace, run_id: int) -> Evaluation | None:
    """The run's evaluation with its per-example statistics and no error rows (see
    :func:`derived`); None when there is no such run."""
    kept = kept_or_computed(ws, run_id, _EVALUATION)
    return None if kept is None else dataclasses.replace(kept.evaluation, stats=kept.stats)
