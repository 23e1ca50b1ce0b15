"""Predictions files -> typed predictions aligned with a gold split, by the task's key.

A predictions file is read with the task's codec (an official submission file has the shape of
the task's records; PromptCBLUE predictions are prompt records whose ``target`` is the
generation; CliMedBench predictions are ``{"id", "prediction"}``). Predictions are matched to
gold by the task's key field (text, id, sample_id or dialog_id):

- a gold key with no prediction is *missing*: the file is refused (the official format checkers
  require every test key), unless ``allow_missing`` scores it as an empty prediction;
- a prediction key not in the gold is *extra*: reported and ignored (the checkers ignore them);
- a key predicted twice is *duplicated*: reported, and the last one counts (as a JSON object
  keyed by it would);
- a file sharing no key with the gold cannot be matched and is refused.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..records import Example
from ..tasks import TaskSpec
from .errors import Defect, FileRefused
from .limits import MAX_FILE_BYTES
from .offsets import INCLUSIVE
from .validate import LoadedDataset, validate


@dataclass
class MatchReport:
    file: str
    task: str
    gold: int
    predicted: int
    matched: int
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    warnings: list[Defect] = field(default_factory=list)

    def lines(self, show: int = 5) -> list[str]:
        out = [(f"{self.matched} of {self.gold} gold examples matched by {self.task} key; "
               f"{self.predicted} predictions in the file")]
        for name, keys in (("missing (no prediction)", self.missing), ("extra (not in gold)", self.extra),
                           ("duplicated", self.duplicated)):
            if keys:
                sample = ", ".join(repr(k[:30]) for k in keys[:show])
                out.append(f"{len(keys)} {name}: {sample}{' ...' if len(keys) > show else ''}")
        return out


@dataclass
class MatchedPredictions:
    report: MatchReport
    predictions: list[Example]       # aligned with the gold list; empty Examples for missing ones
    loaded: LoadedDataset


def empty_prediction(gold: Example) -> Example:
    return Example(key=gold.key, index=gold.index, text=gold.text, text2=gold.text2,
                   turns=list(gold.turns) and [t.__class__(t.speaker, t.text, t.turn_id) for t in gold.turns],
                   meta=dict(gold.meta), raw=None)


def match_predictions(task: TaskSpec, gold: list[Example], source: str | Path | bytes, *,
                      name: str | None = None, allow_missing: bool = False,
                      convention: str = INCLUSIVE, max_bytes: int = MAX_FILE_BYTES) -> MatchedPredictions:
    """Read a predictions file and align it with ``gold``; raise FileRefused when it cannot be.

    ``convention``: the gold file's offset convention, used for predicted offsets that carry
    no mention string to detect their own. ``max_bytes``: larger files are refused unread.
    """
    label = name or (str(source) if not isinstance(source, (bytes, bytearray)) else "<upload>")
    loaded = validate(source, task, name=label, predictions=True, default_convention=convention,
                      max_bytes=max_bytes)
    if not loaded.report.ok:
        raise FileRefused(loaded.report.errors)
    by_key: dict[str, Example] = {}
    duplicated: list[str] = []
    for ex in loaded.examples:
        if ex.key in by_key:
            duplicated.append(ex.key)
        by_key[ex.key] = ex
    gold_keys = {g.key for g in gold}
    missing = [g.key for g in gold if g.key not in by_key]
    extra = [k for k in by_key if k not in gold_keys]
    report = MatchReport(label, task.name, len(gold), len(loaded.examples),
                         len(gold) - len(missing), missing, extra, duplicated,
                         [w for w in loaded.report.warnings if w.code != "duplicate_key"])
    if report.matched == 0:
        raise FileRefused([Defect(label, f"no prediction matches a gold {task.key_field}: "
                                  "is this the right task and split?", code="unmatched",
                                  expected=f"predictions keyed by {task.key_field} as in the gold file")])
    if missing and not allow_missing:
        raise FileRefused([Defect(label, line, code="unmatched",
                                  expected=f"one prediction per gold {task.key_field}")
                           for line in report.lines()[1:]])
    aligned = []
    for g in gold:
        p = by_key.get(g.key)
        if p is None:
            p = empty_prediction(g)
        p.index = g.index
        aligned.append(p)
    return MatchedPredictions(report, aligned, loaded)
