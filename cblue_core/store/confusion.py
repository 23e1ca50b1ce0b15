"""How a run's error rows become the cells of its confusion matrix, in SQL: the counts, and the
condition that selects the rows behind one cell, row or column, so the two always agree.

Each error row is one gold item, one predicted item, or a pair of them as the taxonomy paired
them (same or overlapping span, same arguments, same example). A cell is (gold label, predicted
label), with ``∅`` for "no item on this side":

- a **correct** pair is on the diagonal: the diagonal holds the true positives of each label;
- a pair whose labels differ is a **confusion**, cell (gold label, predicted label);
- a pair with the same label that is **not correct** (a span of the right type with other
  boundaries, a triple with the right predicate and other arguments) is no match: its gold item
  counts as missed, cell (gold label, ∅), and its predicted item as spurious, cell (∅, predicted
  label); on the diagonal it would pass for a true positive;
- an unpaired gold item is in the ∅ column, an unpaired prediction in the ∅ row.

So each gold item is counted once in the row of its label and each predicted item once in the
column of its label: a row sums to the label's gold items (support), a column to its predictions.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .database import Database

if TYPE_CHECKING:
    import pandas as pd

NONE = "∅"
CORRECT_CATEGORIES = ("correct", "correct_term")
_CORRECT_SQL = ", ".join(f"'{c}'" for c in CORRECT_CATEGORIES)
# A same-label pair that is no match (see the module doc): counted in the ∅ row and column.
SPLIT = f"coalesce(gold_label = pred_label AND category NOT IN ({_CORRECT_SQL}), false)"

Side = str | Sequence[str] | None


def _side(column: str, value: Side) -> tuple[str, list[Any]]:
    if isinstance(value, str) and value == NONE:
        return f"({column} IS NULL OR {SPLIT})", []
    labels = [value] if isinstance(value, str) else list(value or ())
    if not labels:
        return "false", []
    return f"{column} IN ({', '.join('?' for _ in labels)})", labels


def cell_condition(gold: Side, pred: Side) -> tuple[str, list[Any]]:
    """The SQL condition (with its parameters) on ``errors`` rows that selects the rows counted
    in the matrix cell (``gold``, ``pred``): a label, several labels (a merged "other"), ``∅``,
    or None for any (the Σ row or column). ``("true", [])`` when both sides are None."""
    parts: list[str] = []
    params: list[Any] = []
    for column, value in (("gold_label", gold), ("pred_label", pred)):
        if value is not None:
            sql, args = _side(column, value)
            parts.append(sql)
            params += args
    if gold not in (None, NONE) and pred not in (None, NONE):
        parts.append(f"NOT {SPLIT}")              # the diagonal: correct pairs only
    return (" AND ".join(parts) or "true"), params


def confusion_counts(db: Database, run_id: int, where: tuple[str, list[Any]] | None = None) -> pd.DataFrame:
    """(gold_label, pred_label, n) of one run, ∅ for a missing side, per the module doc;
    ``where``: a condition on its error rows and its parameters (an error selection's), else all."""
    condition, params = where or ("run_id = ?", [run_id])
    return db.execute(
        "WITH e AS (SELECT gold_label, pred_label, " + SPLIT + " AS split FROM errors WHERE " + condition + ")"
        " SELECT gold_label, pred_label, count(*) AS n FROM ("
        "   SELECT gold_label, CASE WHEN split THEN ? ELSE coalesce(pred_label, ?) END AS pred_label"
        "   FROM e WHERE gold_label IS NOT NULL"
        "   UNION ALL"
        "   SELECT ? AS gold_label, pred_label FROM e WHERE pred_label IS NOT NULL"
        "   AND (gold_label IS NULL OR split))"
        " GROUP BY ALL ORDER BY 1, 2", [*params, NONE, NONE, NONE]).df()
