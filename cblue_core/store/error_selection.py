"""Which of a run's error rows a page or command asks for: one typed selection, turned into one
SQL condition, so that every filter is applied in the query and totals count the whole selection.

The pages and ``python -m cblue_core errors`` build an :class:`ErrorSelection`; the run store
(:meth:`cblue_core.store.runs.RunStore.select_errors`) answers with :class:`ErrorRows`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .confusion import CORRECT_CATEGORIES, NONE, cell_condition

if TYPE_CHECKING:
    import pandas as pd

Seen = Literal["seen", "unseen"]
SEEN_CHOICES: tuple[Seen, ...] = ("seen", "unseen")
# A side of a confusion pair that has no item (missed: no prediction; spurious: no gold).
NO_LABEL = NONE

Labels = str | tuple[str, ...]


@dataclass(frozen=True)
class ErrorSelection:
    """Error rows of one run; a field left at None (or False) does not filter.

    ``gold_label``/``pred_label``: one label, or several (a merged "other" row of a matrix);
    ``∅`` stands for the side a missed or spurious row lacks, as the confusion matrix counts
    them (:func:`cblue_core.store.confusion.cell_condition`). ``indices``: the examples of a
    slice (or any set of record numbers). ``errors_only`` leaves the rows of correct items out.
    ``seen``: only the examples in ("seen") or out of ("unseen") the training records of the
    models of ``seen_runs`` (their union; the run itself when empty)."""

    category: str | None = None
    gold_label: Labels | None = None
    pred_label: Labels | None = None
    tag: str | None = None
    idx: int | None = None
    indices: tuple[int, ...] | None = None
    errors_only: bool = False
    seen: Seen | None = None
    seen_runs: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.seen is not None and self.seen not in SEEN_CHOICES:
            raise ValueError(f"seen must be one of {', '.join(SEEN_CHOICES)} (got {self.seen!r})")

    def where(self, run_id: int) -> tuple[str, list[Any]]:
        """The SQL condition over the ``errors`` table and its parameters."""
        where = ["run_id = ?"]
        params: list[Any] = [run_id]
        for col, val in (("category", self.category), ("idx", self.idx)):
            if val is not None:
                where.append(f"{col} = ?")
                params.append(val)
        if self.gold_label is not None or self.pred_label is not None:
            # the rows the confusion matrix counts in that cell, row or column
            cell, args = cell_condition(self.gold_label, self.pred_label)
            where.append(cell)
            params += args
        if self.tag is not None:
            where.append("list_contains(tags, ?)")
            params.append(self.tag)
        if self.indices is not None:
            # One list parameter, not a placeholder per index: a slice may hold thousands.
            where.append("idx IN (SELECT unnest(?::INTEGER[]))")
            params.append(list(self.indices))
        if self.errors_only:
            where.append("category NOT IN (SELECT unnest(?::VARCHAR[]))")
            params.append(list(CORRECT_CATEGORIES))
        if self.seen is not None:
            where.append(("" if self.seen == "seen" else "NOT ") + "idx IN (SELECT idx FROM run_seen_examples"
                         " WHERE run_id IN (SELECT unnest(?::INTEGER[])))")
            params.append(list(self.seen_runs or (run_id,)))
        return " AND ".join(where), params

    def describe(self) -> dict[str, str]:
        """The filters in force, as ``{name: value}`` for a caption or a report."""
        out: dict[str, str] = {}
        for name in ("category", "gold_label", "pred_label", "tag", "idx"):
            value = getattr(self, name)
            if isinstance(value, tuple):          # the labels of a merged "other" row or column
                out[name] = ", ".join(value)
            elif value is not None:
                out[name] = str(value)
        if self.indices is not None:
            out["examples"] = f"{len(self.indices):,} chosen"
        if self.errors_only:
            out["rows"] = "errors only"
        if self.seen is not None:
            out["training records"] = f"{self.seen} only"
        return out


@dataclass(frozen=True)
class ErrorRows:
    """The first ``limit`` rows of a selection, and its size counted over all of it."""

    rows: pd.DataFrame
    total_rows: int          # count(*) over the whole selection
    examples: int            # count(DISTINCT idx) over the whole selection
    limit: int | None

    @property
    def truncated(self) -> bool:
        return len(self.rows) < self.total_rows
