"""What every record codec shares: the codec interface, the decoding context that collects a
file's annotation warnings, and the structural error a codec raises."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from ...records import Example
from ...tasks import TaskSpec
from ..errors import Defect
from ..offsets import INCLUSIVE, OffsetItem

Record: TypeAlias = dict[str, Any]
"""One official record as JSON gives it (a KUAKE-IR record is its list of TSV columns)."""

class RecordError(ValueError):
    def __init__(self, field: str | None, message: str, expected: str | None = None):
        super().__init__(message)
        self.field, self.message, self.expected = field, message, expected


@dataclass
class DecodeContext:
    file: str
    task: TaskSpec
    convention: str = INCLUSIVE
    record: int = 0
    line: int | None = None
    warnings: list[Defect] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._labels = frozenset(self.task.label_codes)

    def warn(self, message: str, field: str | None = None, expected: str | None = None,
             code: str = "annotation") -> None:
        self.warnings.append(Defect(self.file, message, record=self.record, line=self.line,
                                    field=field, expected=expected, code=code))

    def check_label(self, value: str, field: str) -> None:
        if self._labels and value not in self._labels:
            self.warn(f"unknown label {value!r}", field=field,
                      expected=f"one of the {len(self._labels)} {self.task.name} labels",
                      code="unknown_label")

# ---------------------------------------------------------------- codecs


class Codec:
    """Base codec; subclasses implement decode/encode and, where mentions carry offsets,
    ``offset_items`` so that the file's convention can be detected before decoding.

    ``GOLD`` names the field a record holds its gold annotations in (None: a predictions
    codec, nothing to check); a train or dev split where no record has it carries no gold.
    """

    GOLD: ClassVar[str | None] = None

    def offset_items(self, rec: object, index: int, task: TaskSpec) -> list[OffsetItem]:
        return []

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        raise NotImplementedError

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record | str:
        raise NotImplementedError

    def key(self, rec: object, task: TaskSpec) -> str:
        return str(rec.get(task.key_field, "")) if isinstance(rec, dict) else ""

    def gold_field(self, task: TaskSpec) -> str | None:
        """Where a record of ``task`` holds its gold annotations, as messages name it."""
        return self.GOLD

    def carries_gold(self, rec: object, task: TaskSpec) -> bool:
        """Whether ``rec`` has the gold field at all (an empty list counts: no entities)."""
        gold = self.gold_field(task)
        return gold is None or (isinstance(rec, dict) and gold in rec)

