"""Summary statistics of one stored dataset, computed in SQL and returned typed."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb


@dataclass(frozen=True)
class DatasetStats:
    examples: int
    annotations: int
    label_counts: dict[str, int]                 # labels, entity types, predicates, acts
    text_lengths: list[int]                      # one per example, for a histogram
    nesting_depths: dict[int, int]               # depth -> number of examples
    triples_per_example: dict[int, int]          # count -> number of examples
    span_lengths: dict[int, int] = field(default_factory=dict)
    sub_tasks: dict[str, int] = field(default_factory=dict)  # PromptCBLUE task / CliMedBench scenario
    # The count columns that are not 0 for every example of the split: a CHIP-CDN split has
    # terms but no spans, and a column of zeros tells its reader nothing.
    used_counts: tuple[str, ...] = ()


COUNT_COLUMNS = ("n_spans", "n_triples", "n_terms", "n_events", "n_turns", "nesting_depth")


def _pairs(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> dict[Any, int]:
    return {k: int(v) for k, v in con.execute(sql, params).fetchall() if k is not None}


def compute_stats(con: duckdb.DuckDBPyConnection, dataset_id: int) -> DatasetStats:
    p = [dataset_id]
    n = (con.execute("SELECT count(*) FROM examples WHERE dataset_id=?", p).fetchone() or (0,))[0]
    ann = con.execute("SELECT coalesce(annotations, 0) FROM datasets WHERE dataset_id=?", p).fetchone()
    labels: dict[str, int] = {}
    for sql in (
        "SELECT type, count(*) FROM gold_spans WHERE dataset_id=? AND version=0 GROUP BY 1",
        "SELECT predicate, count(*) FROM gold_triples WHERE dataset_id=? AND version=0 GROUP BY 1",
        "SELECT label, count(*) FROM examples WHERE dataset_id=? AND label IS NOT NULL AND label<>'' GROUP BY 1",
    ):
        for k, v in _pairs(con, sql, p).items():
            labels[k] = labels.get(k, 0) + v
    maxima = con.execute(f"SELECT {', '.join(f'max({c})' for c in COUNT_COLUMNS)} FROM examples"
                         " WHERE dataset_id=?", p).fetchone() or ()
    used = tuple(c for c, m in zip(COUNT_COLUMNS, maxima) if m)
    lengths = [r[0] for r in con.execute(
        "SELECT text_length FROM examples WHERE dataset_id=? ORDER BY idx", p).fetchall()]
    return DatasetStats(
        examples=int(n),
        annotations=int(ann[0]) if ann else 0,
        label_counts=dict(sorted(labels.items(), key=lambda kv: -kv[1])),
        text_lengths=lengths,
        nesting_depths=_pairs(con, "SELECT nesting_depth, count(*) FROM examples WHERE dataset_id=? GROUP BY 1 ORDER BY 1", p),
        triples_per_example=_pairs(con, "SELECT n_triples, count(*) FROM examples WHERE dataset_id=? GROUP BY 1 ORDER BY 1", p),
        span_lengths=_pairs(con, "SELECT end_pos-start_pos, count(*) FROM gold_spans WHERE dataset_id=? AND version=0 GROUP BY 1 ORDER BY 1", p),
        used_counts=used,
        sub_tasks=_pairs(con, "SELECT sub_task, count(*) FROM examples WHERE dataset_id=? AND sub_task IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1", p),
    )
