"""Which datasets are in a blind pass (blind double annotation, as INCEpTION does it: each
annotator works on their own copy of the examples, and a curator merges their work into the gold).

A curator (or admin) starts or ends a dataset's pass (``blind_datasets``). What it changes is
decided elsewhere: :mod:`cblue_core.store.own_copies` gives a user below the curator role their
own copy to edit, and :class:`~cblue_core.store.annotations.AnnotationStore` refuses them a gold save.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .access import Access, writes
from .database import Database
from .datasets import DatasetStore


@dataclass(frozen=True)
class BlindSetting:
    """A dataset in a blind pass: who put it there, and when (UTC)."""

    dataset_id: int
    set_by: str
    set_at: str


def dataset_target(a: Mapping[str, Any]) -> str:
    return f"dataset {a.get('dataset_id')}"


class BlindPassStore:
    READS = ("setting",)

    def __init__(self, db: Database, datasets: DatasetStore, access: Access | None = None) -> None:
        self.db = db
        self.datasets = datasets
        self.access = access or Access()

    def setting(self, dataset_id: int) -> BlindSetting | None:
        """The dataset's blind pass, or None when its annotators edit the shared gold."""
        row = self.db.one("SELECT dataset_id, set_by, strftime(set_at, '%Y-%m-%d %H:%M:%S') FROM blind_datasets"
                          " WHERE dataset_id=?", [dataset_id])
        return BlindSetting(*row) if row else None

    @writes("gold.blind_mode", target=dataset_target, detail=lambda a: "on" if a.get("on") else "off")
    def set_blind(self, dataset_id: int, on: bool) -> None:
        """Start (``on``) or end the dataset's blind pass. Own copies are kept either way: they
        stay on the Agreement tab, and come back if a pass starts again."""
        self.datasets.task_of(dataset_id)     # an unknown dataset is refused
        actor = self.access.actor
        assert actor is not None   # the write was checked
        with self.db.transaction():
            if not on:
                self.db.execute("DELETE FROM blind_datasets WHERE dataset_id=?", [dataset_id])
            elif self.setting(dataset_id) is None:
                self.db.execute("INSERT INTO blind_datasets (dataset_id, set_by) VALUES (?, ?)",
                                [dataset_id, actor.name])
