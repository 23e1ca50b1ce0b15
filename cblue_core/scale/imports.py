"""Predictions made elsewhere, imported as a run: an official predictions file, or a folder of
Parquet shards (``predict --input FOLDER`` writes one; any folder of ``*.parquet`` files whose rows
are submission records, either as a ``record`` JSON column or as the record's own columns).

A folder's shards are the regular files inside it that its manifest names (or every
``*.parquet`` in name order): :func:`.shards.output_files`. Each is read with pyarrow under the
bounds of :mod:`.parquet_read` (row groups, values, decoded memory), in shard order then row
order, and no more than MAX_IMPORT_BYTES of records are taken in all, as for a single predictions
file; the records are then matched and scored exactly like the same predictions in one file
(:func:`cblue_core.runs.record.import_run`).
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.bounded_json import loads
from ..io.errors import FileRefused
from ..io.limits import MAX_FILE_BYTES, human_size
from .folders import MAX_RECORD_BYTES, record_too_long
from .parquet_read import iter_rows, open_parquet
from .shards import output_files

MAX_IMPORT_BYTES = MAX_FILE_BYTES
_GLOB_CHARS = set("*?[]{}")


def iter_folder_records(folder: str | Path) -> Iterator[Any]:
    """The records of a folder of Parquet shards, in the manifest's shard order (else name
    order) and row order. ValueError when the folder holds none, cannot be read or holds more
    than the bounds allow."""
    folder = Path(folder)
    files = output_files(folder)
    if not files:
        raise ValueError(f"no Parquet shards in {folder}")
    odd = [f for f in files if _GLOB_CHARS & set(f.name)]
    if odd:
        raise ValueError(f"{odd[0]}: a shard name with a glob character ({''.join(sorted(_GLOB_CHARS))}); rename it")
    # One file open at a time: a folder may hold thousands of shards.
    first = _column_names(files[0])
    for f in files[1:]:
        names = _column_names(f)
        if names != first:
            raise ValueError(f"{f}: columns {names} differ from those of {files[0].name} {first}")
    as_json = "record" in first and first.count("record") == 1 and set(first) <= {"index", "key", "record"}
    taken = 0
    for f in files:
        source = open_parquet(f, str(f))
        try:
            for k, row in enumerate(iter_rows(source)):
                text = row.get("record") if as_json else None
                size = len(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) else _row_size(row)
                if size > MAX_RECORD_BYTES:
                    raise ValueError(f"{f}, row {k}: {record_too_long(size)}")
                taken += size
                if taken > MAX_IMPORT_BYTES:
                    raise ValueError(f"{folder}: the shards hold more than {human_size(MAX_IMPORT_BYTES)} of "
                                     "records, over the limit of one predictions file")
                yield _record(row, as_json, text, f, k)
        finally:
            source.file.close()


def _column_names(path: Path) -> list[str]:
    source = open_parquet(path, str(path))
    try:
        return list(source.file.schema_arrow.names)
    finally:
        source.file.close()


def _record(row: dict[str, Any], as_json: bool, text: Any, path: Path, k: int) -> Any:
    if not as_json:
        return {c: v for c, v in row.items() if v is not None}
    try:
        return loads(text if isinstance(text, str) else "", f"{path.name}, row {k}")
    except FileRefused:
        raise                   # nested too deep: the refusal names the row already
    except ValueError as exc:
        raise ValueError(f"{path}, row {k}: the record column is not JSON ({exc})") from None


def _row_size(row: dict[str, Any]) -> int:
    return len(json.dumps(row, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))


def folder_as_file(task, folder: str | Path) -> bytes:
    """A folder's records serialised in the task's official container: the bytes of the
    equivalent predictions file."""
    from ..io.writers import dumps_records

    return dumps_records(task, list(iter_folder_records(folder))).encode("utf-8")


def import_predictions(ws, dataset_id: int, pred: str | Path, *, name: str | None = None,
                       allow_missing: bool = False):
    """Import a predictions file or a Parquet folder as a run of ``dataset_id``
    (:func:`cblue_core.runs.record.import_run`); raises FileRefused / ValueError as it does."""
    from ..runs.record import import_run
    from ..store.workspace import WorkspaceError
    from ..tasks import get_task

    path = Path(pred).expanduser()
    if not path.is_dir():
        return import_run(ws, dataset_id, path, name=name, allow_missing=allow_missing)
    info = ws.datasets.get(dataset_id)
    if info is None:
        raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
    data = folder_as_file(get_task(info.task), path)
    return import_run(ws, dataset_id, data, name=name or path.name, file_name=str(path),
                      allow_missing=allow_missing)
