"""Parquet shards read under bounds on rows, values and decoded memory.

A Parquet file describes its own size: 2 KB of dictionary and run-length encoding can stand for
millions of rows of a long string (3.65 GB and 37 s decoded). So the footer is checked before
any page is read (rows, leaf values and uncompressed bytes per row group), and rows are decoded
a batch at a time, with batches small enough that even the worst rows fit the memory bound: a
value can be no longer than the uncompressed column chunk that holds it, so a batch of ``b``
rows of a chunk that expands (dictionary or delta encoded) decodes to at most ``b`` times its
size; plain chunks decode to about their own size. And what a file decodes to is bounded by its
own size: JSON records compress about tenfold, so MAX_EXPANSION times the file (with a floor for
small files) is far more than any real shard needs.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.errors import short_error
from ..io.limits import human_size

MAX_ROW_GROUP_ROWS = 1 << 20          # pyarrow's default row group size
MAX_ROW_GROUP_VALUES = 1 << 24        # leaf values of all columns: lists repeated by RLE levels
MAX_ROW_GROUP_BYTES = 512 << 20       # uncompressed, as the footer says
MAX_BATCH_BYTES = 128 << 20           # what one decoded batch may take, worst case
MAX_BATCH_ROWS = 4096
MAX_EXPANSION = 200                   # decoded bytes per byte of the file
EXPANSION_FLOOR = 64 << 20
_EXPANDING = {"PLAIN_DICTIONARY", "RLE_DICTIONARY", "DELTA_BYTE_ARRAY"}


class ParquetRefused(ValueError):
    """A Parquet file that cannot be read, or whose footer asks for more than the bounds."""


@dataclass(frozen=True)
class BoundedParquet:
    """An open Parquet file whose footer is within the bounds."""

    file: Any           # pyarrow.parquet.ParquetFile
    size: int           # bytes on disk
    label: str          # how messages name it


def open_parquet(path: str | Path, label: str) -> BoundedParquet:
    """The Parquet file at ``path`` if every row group is within the bounds; else ParquetRefused."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a broken file
        raise ParquetRefused(f"{label}: not a readable Parquet file ({short_error(exc)})") from None
    meta = pf.metadata
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        values = sum(rg.column(c).num_values for c in range(rg.num_columns))
        size = sum(rg.column(c).total_uncompressed_size for c in range(rg.num_columns))
        for what, n, bound in (("rows", rg.num_rows, MAX_ROW_GROUP_ROWS),
                               ("values", values, MAX_ROW_GROUP_VALUES)):
            if n > bound:
                raise ParquetRefused(f"{label}: row group {g} holds {n:,} {what}, over the limit of {bound:,} "
                                     "(write smaller row groups)")
        if size > MAX_ROW_GROUP_BYTES:
            raise ParquetRefused(f"{label}: row group {g} is {human_size(size)} uncompressed, over the limit "
                                 f"of {human_size(MAX_ROW_GROUP_BYTES)} (write smaller row groups)")
    return BoundedParquet(pf, os.path.getsize(path), label)


def batch_rows(meta: Any, row_groups: Sequence[int]) -> int:
    """Rows per batch such that a batch of the given row groups decodes within MAX_BATCH_BYTES."""
    widest = 0
    for g in row_groups:
        rg = meta.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            if col.has_dictionary_page or _EXPANDING & set(col.encodings):
                widest = max(widest, col.total_uncompressed_size)
    return max(1, min(MAX_BATCH_ROWS, MAX_BATCH_BYTES // max(1, widest)))


def _plain(batch: Any, pa: Any) -> Any:
    """``batch`` with its dictionary columns decoded, so that ``nbytes`` counts what the rows
    hold (a dictionary column's own ``nbytes`` counts each distinct value once)."""
    if not any(pa.types.is_dictionary(f.type) for f in batch.schema):
        return batch
    cols = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in batch.columns]
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def iter_rows(source: BoundedParquet, row_groups: Sequence[int] | None = None) -> Iterator[dict[str, Any]]:
    """The rows of ``row_groups`` (all by default) as dicts; ParquetRefused when they decode to
    more than the file's expansion budget or cannot be read."""
    import pyarrow as pa

    pf, label = source.file, source.label
    groups = list(range(pf.metadata.num_row_groups)) if row_groups is None else list(row_groups)
    if not groups:
        return
    budget = max(MAX_EXPANSION * source.size, EXPANSION_FLOOR)
    decoded = 0
    try:
        for batch in pf.iter_batches(batch_size=batch_rows(pf.metadata, groups), row_groups=groups,
                                     use_threads=False):
            batch = _plain(batch, pa)
            decoded += batch.nbytes
            if decoded > budget:
                raise ParquetRefused(f"{label}: decodes to more than {human_size(budget)}, over {MAX_EXPANSION} "
                                     "times its size (a decompression bomb?)")
            yield from batch.to_pylist()
    except ParquetRefused:
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ParquetRefused(f"{label}: cannot read the Parquet rows ({short_error(exc)})") from None
