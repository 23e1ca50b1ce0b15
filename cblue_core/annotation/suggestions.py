"""Suggestions for one example's gold, from a stored run of the same split or from a model
predicted live on the example.

A prediction becomes :class:`Suggestions`: its spans, triples or label, each with the
confidence the source gives (built-in span models keep ``meta["span_probabilities"]``, the
relation model ``meta["triple_scores"]``, classifiers ``meta["probabilities"]``; an imported
run usually has none: then every score is None and :attr:`Suggestions.scored` says so). What
the gold already holds is not offered again. Only runs of the example's own dataset (same task,
split and version: the same ``dataset_id``) are sources; a run of another dataset is refused,
since its indices name other records.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..records import Example
from .model import Annotation
from .provenance import Suggestion, SuggestionSource

__all__ = ["Suggestion", "SuggestionSource", "Suggestions", "model_suggestions", "run_sources",
           "run_suggestions", "suggestions_from_prediction"]


class _Runs(Protocol):
    def get(self, run_id: int) -> Any: ...
    def all(self, dataset_id: int | None = None, task: str | None = None) -> list[Any]: ...
    def prediction(self, run_id: int, idx: int) -> Example | None: ...


class _Predictor(Protocol):
    def predict(self, examples: Sequence[Example], batch_size: int | None = None) -> list[Example]: ...


@dataclass(frozen=True)
class Suggestions:
    """What one source suggests for one example (gold items left out), best score first."""

    source: SuggestionSource
    spans: tuple[Suggestion, ...] = ()
    triples: tuple[Suggestion, ...] = ()
    label: Suggestion | None = None
    scored: bool = False          # the source gives confidences (else every score is None)
    predicted: bool = True        # False: the source has no prediction for this example

    @property
    def items(self) -> tuple[Suggestion, ...]:
        return self.spans + self.triples + ((self.label,) if self.label is not None else ())

    def __len__(self) -> int:
        return len(self.items)


def _aligned(scores: object, n: int) -> list[float | None]:
    """Per-item scores from a list the model keeps beside its items (None when absent or not
    aligned: a score on the wrong item would be worse than none)."""
    if isinstance(scores, list) and len(scores) == n and all(isinstance(s, (int, float)) for s in scores):
        return [float(s) for s in scores]
    return [None] * n


def _by_score(items: list[Suggestion]) -> tuple[Suggestion, ...]:
    return tuple(sorted(items, key=lambda s: -1.0 if s.score is None else -s.score))


def suggestions_from_prediction(source: SuggestionSource, pred: Example | None, gold: Annotation
                                ) -> Suggestions:
    """The items of ``pred`` that ``gold`` does not hold, each with its score."""
    if pred is None:
        return Suggestions(source, predicted=False)
    meta = pred.meta or {}
    taken = {Suggestion(s).identity for s in gold.spans} | {Suggestion(t).identity for t in gold.triples}
    spans = [Suggestion(s, p) for s, p in zip(pred.spans, _aligned(meta.get("span_probabilities"), len(pred.spans)))]
    triples = [Suggestion(t, p) for t, p in zip(pred.triples,
                                                _aligned(meta.get("triple_scores"), len(pred.triples)))]
    spans = list({s.identity: s for s in spans if s.identity not in taken}.values())
    triples = list({t.identity: t for t in triples if t.identity not in taken}.values())
    label = None
    if pred.label not in (None, "") and pred.label != gold.label:
        probs = meta.get("probabilities")
        p = probs.get(pred.label) if isinstance(probs, dict) else None
        label = Suggestion(str(pred.label), float(p) if isinstance(p, (int, float)) else None)
    scored = any(s.score is not None for s in [*spans, *triples, *([label] if label else [])]) or bool(
        meta.get("span_probabilities") or meta.get("triple_scores") or meta.get("probabilities"))
    in_text_order = sorted(spans, key=lambda s: (s.identity[1], -s.identity[2]))
    return Suggestions(source, tuple(in_text_order), _by_score(triples), label, scored=scored)


def run_sources(runs: _Runs, dataset_id: int) -> list[Any]:
    """The runs that may suggest for the dataset's examples: its own runs only."""
    return list(runs.all(dataset_id=dataset_id))


def run_suggestions(runs: _Runs, source: SuggestionSource, dataset_id: int, idx: int, gold: Annotation
                    ) -> Suggestions:
    """What run ``source`` predicted for example ``idx``; ValueError when the run is not one of
    the dataset's."""
    run_id = source.run_id
    info = runs.get(run_id) if run_id is not None else None
    if run_id is None or info is None:
        raise ValueError(f"no run {source.name} in the workspace to suggest from")
    if info.dataset_id != dataset_id:
        raise ValueError(f"run {run_id} was made on another dataset ({info.task} {info.split}, dataset "
                         f"{info.dataset_id}): only runs of this split and version can suggest")
    return suggestions_from_prediction(source, runs.prediction(run_id, idx), gold)


def model_suggestions(predictor: _Predictor, source: SuggestionSource, ex: Example, gold: Annotation
                      ) -> Suggestions:
    """The model's prediction on ``ex`` as suggestions (the text only goes in: not the gold)."""
    bare = Example(key=ex.key, index=ex.index, text=ex.text, text2=ex.text2)
    return suggestions_from_prediction(source, predictor.predict([bare])[0], gold)
