"""One predictor interface for every kind of model: typed examples in, typed predictions out.

A predictor takes gold-shaped :class:`~cblue_core.records.Example` objects (only their inputs
are read: ``text``, ``text2``, ``turns``, ``choices``, prompt ``text``...) and returns one
prediction :class:`Example` per input, in the same order, with the same ``key`` and ``index``,
filling the fields the task predicts (``spans``, ``triples``, ``terms``, ``label``, ``target``).
Predictions therefore flow into :func:`cblue_core.runs.record.record_run` exactly like imported ones.

Optional per-prediction extras go in ``meta`` (``meta["probabilities"]``: label -> probability;
``meta["generation"]``: the raw text of a causal LM).
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records import Example, Turn
from ..tasks import TaskSpec


@dataclass
class ModelCard:
    """What a model folder says about itself (``model_card.json`` beside the weights)."""

    name: str
    task: str
    kind: str                                   # e.g. "ngram-classifier", "span-encoder", "hf-token-classification"
    labels: list[str] = field(default_factory=list)
    description: str = ""
    training: dict[str, Any] = field(default_factory=dict)    # data, command, seed, time_s, tried
    dev_metrics: dict[str, Any] = field(default_factory=dict)  # Evaluation.summary() on dev
    baselines: dict[str, Any] = field(default_factory=dict)    # majority / dictionary baselines
    size_bytes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Timing:
    """Per-call timing of :meth:`Predictor.predict`."""

    examples: int
    seconds: float
    batches: int = 0
    device: str = "cpu"

    @property
    def per_example_ms(self) -> float:
        return 1000 * self.seconds / max(self.examples, 1)


class Predictor(ABC):
    """Base class: subclasses implement :meth:`_predict_batch` (and :meth:`to` if they hold
    tensors); :meth:`predict` adds batching by length, ordering and timing."""

    task: TaskSpec
    card: ModelCard
    device: str = "cpu"
    batch_size: int = 32
    last_timing: Timing | None = None
    # Fingerprints of the records the model was trained on (models.provenance); None: unknown.
    training_records: frozenset[str] | None = None

    @property
    def params(self) -> dict[str, Any]:
        """What a run made with this model records (device, dtype, decoding settings); a fresh
        dict, so no caller can change another predictor's record."""
        return {}

    @abstractmethod
    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        """Predictions for one batch, in the batch's order."""

    def to(self, device: str) -> Predictor:
        self.device = device
        return self

    def length_of(self, ex: Example) -> int:
        return len(ex.text) + len(ex.text2)

    def predict(self, examples: Sequence[Example], batch_size: int | None = None) -> list[Example]:
        """Predict every example: batches of similar length (less padding), results in input order."""
        size = batch_size or self.batch_size
        order = sorted(range(len(examples)), key=lambda i: self.length_of(examples[i]))
        out: list[Example | None] = [None] * len(examples)
        start = time.perf_counter()
        batches = 0
        for b in range(0, len(order), size):
            idx = order[b:b + size]
            preds = self._predict_batch([examples[i] for i in idx])
            batches += 1
            for i, p in zip(idx, preds):
                p.key, p.index = examples[i].key, examples[i].index
                out[i] = p
        self.last_timing = Timing(len(examples), time.perf_counter() - start, batches, self.device)
        return [p for p in out if p is not None]


# Metadata a codec keeps that is an answer, not an input (Text2DT's decision tree, the
# diagnosis of an IMCS-V2 dialogue).
_ANSWER_META = frozenset({"tree", "diagnosis"})


def model_input(task: TaskSpec, gold: Example) -> Example:
    """What a model may see of a gold example: its inputs only (texts, dialogue turns without
    their annotations, answer choices, prompt metadata), so that no gold answer can leak
    into a prediction whatever a predictor reads."""
    return Example(key=gold.key, index=gold.index, text=gold.text, text2=gold.text2,
                   label=gold.label if task.kind.label_is_input else None,
                   turns=[Turn(t.speaker, t.text, t.turn_id) for t in gold.turns],
                   choices=list(gold.choices),
                   meta={k: v for k, v in gold.meta.items() if k not in _ANSWER_META})


def folder_size(path: str | Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())
