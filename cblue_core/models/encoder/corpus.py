"""The pretraining corpus: unlabelled text of the *train* splits and of the reference lists.

Read: the training file of every CBLUE 1.0 task and of CHIP-CDEE that exists under the data folder
(``text`` and ``text2`` of each record, never a label, a span or a normalised term), the ICD-10
term list and the CHIP-CTC category names. Never read: a dev or test file, so that dev stays an
honest evaluation of the models built on this encoder. Texts are NFC-normalised, stripped and
deduplicated; a fixed slice of them (chosen by the sha1 of the text, so it does not depend on
file order) is held out for model selection. Every file read is recorded with its sha1 and
counts (:class:`Source`).
"""
from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...io.resources import read_ctc_categories, read_icd10, resource_kind
from ...io.validate import load
from ...tasks import REGISTRY, Family, TaskSpec
from ..builtin.common import find_split

# Tasks whose training file is read: CBLUE 1.0 plus CHIP-CDEE (CBLUE 2.0, clinical findings).
EXTRA_TASKS = ("CHIP-CDEE",)
# Reference lists read: (kind as io.resources names it, the task folder that holds it).
RESOURCES = (("icd10", "CHIP-CDN"), ("ctc_categories", "CHIP-CTC"))
HELD_OUT_PER_MILLE = 20   # 2% of the distinct texts


def corpus_tasks() -> list[TaskSpec]:
    return [t for t in REGISTRY.values() if t.family == Family.CBLUE1 or t.name in EXTRA_TASKS]


@dataclass
class Source:
    """One file the corpus read: what it is, its fingerprint and what it gave."""

    path: str              # relative to the data folder
    kind: str              # "train" (a task's training split) or a reference-list kind
    task: str
    sha1: str
    bytes: int
    records: int           # records (or list rows) in the file
    texts: int             # non-empty texts taken from it, before deduplication
    chars: int


@dataclass
class Corpus:
    train: list[str]
    held_out: list[str]
    sources: list[Source] = field(default_factory=list)
    duplicates: int = 0    # texts dropped as repeats (within or across files)

    def summary(self) -> dict[str, Any]:
        return {
            "sources": [asdict(s) for s in self.sources],
            "texts": len(self.train) + len(self.held_out),
            "duplicates_dropped": self.duplicates,
            "train_texts": len(self.train), "train_chars": sum(map(len, self.train)),
            "held_out_texts": len(self.held_out), "held_out_chars": sum(map(len, self.held_out)),
            "held_out": f"{HELD_OUT_PER_MILLE / 10:g}% of the distinct texts, chosen by the sha1 of the "
                        "text (not by file order); used for model selection, never for training",
            "normalisation": "Unicode NFC, stripped; exact duplicates dropped",
        }


def normalise(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def is_held_out(text: str, per_mille: int = HELD_OUT_PER_MILLE) -> bool:
    """The fixed held-out slice: the first 8 hex digits of the text's sha1, modulo 1000."""
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest()[:8], 16) % 1000 < per_mille


def _sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def _source(data_dir: Path, path: Path, kind: str, task: str, records: int, texts: list[str]) -> Source:
    try:
        rel = str(path.relative_to(data_dir))
    except ValueError:
        rel = str(path)
    return Source(rel, kind, task, _sha1(path), path.stat().st_size, records, len(texts), sum(map(len, texts)))


def train_files(data_dir: str | Path) -> list[tuple[TaskSpec, Path]]:
    """The training file of every corpus task present under ``data_dir`` (no dev, no test)."""
    out = []
    for task in corpus_tasks():
        try:
            path = find_split(data_dir, task, "train")
        except FileNotFoundError:   # no folder for this task
            continue
        if path is not None:
            out.append((task, path))
    return out


def resource_files(data_dir: str | Path) -> list[tuple[str, str, Path]]:
    """``(kind, task, path)`` of the reference lists present (first file of each kind)."""
    out = []
    for kind, task_name in RESOURCES:
        folder = Path(data_dir) / task_name
        hits = sorted(p for p in folder.glob("*.xlsx") if resource_kind(p) == kind) if folder.is_dir() else []
        if hits:
            out.append((kind, task_name, hits[0]))
    return out


def _texts_of_train(task: TaskSpec, path: Path) -> tuple[int, list[str]]:
    examples = load(path, task).examples
    return len(examples), [t for e in examples for t in (normalise(e.text), normalise(e.text2)) if t]


def _texts_of_resource(kind: str, path: Path) -> tuple[int, list[str]]:
    if kind == "icd10":
        terms = read_icd10(path)
        return len(terms), [t for t in (normalise(x.term) for x in terms) if t]
    cats = read_ctc_categories(path)
    return len(cats), [t for t in (normalise(c.zh) for c in cats) if t]


def build_corpus(data_dir: str | Path, held_out_per_mille: int = HELD_OUT_PER_MILLE) -> Corpus:
    """Read, normalise, deduplicate and split the corpus of ``data_dir`` (a CBLUE folder)."""
    data_dir = Path(data_dir)
    sources: list[Source] = []
    seen: dict[str, None] = {}
    total = 0
    for task, path in train_files(data_dir):
        records, texts = _texts_of_train(task, path)
        sources.append(_source(data_dir, path, "train", task.name, records, texts))
        total += len(texts)
        seen.update(dict.fromkeys(texts))
    for kind, task_name, path in resource_files(data_dir):
        records, texts = _texts_of_resource(kind, path)
        sources.append(_source(data_dir, path, kind, task_name, records, texts))
        total += len(texts)
        seen.update(dict.fromkeys(texts))
    if not sources:
        raise FileNotFoundError(f"no training file or reference list under {data_dir}")
    train: list[str] = []
    held_out: list[str] = []
    for text in seen:
        (held_out if is_held_out(text, held_out_per_mille) else train).append(text)
    return Corpus(train, held_out, sources, duplicates=total - len(seen))
