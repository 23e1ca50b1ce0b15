"""Predictions made elsewhere, imported as a run: an official predictions file, or a folder of
Parquet shards (``predict --input FOLDER`` writes one; any folder of ``*.parquet`` files whose rows
are submission records, either as a ``record`` JSON column or as the record's own columns).

A folder is read by DuckDB (``read_parquet``) on a private in-memory connection, with the file
list passed as a bound parameter (never spliced into SQL text, never globbed from user input),
in shard order then row order, and turned into records without pandas; the records are then
matched and scored exactly like the same predictions in one file
(:func:`cblue_core.runs.import_run`).
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .shards import output_files

FETCH_ROWS = 10_000
_GLOB_CHARS = set("*?[]{}")


def _columns(con, files: list[str]) -> list[str]:
    return [r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet($files)", {"files": files}).fetchall()]


def iter_folder_records(folder: str | Path) -> Iterator[Any]:
    """The records of a folder of Parquet shards, in the manifest's shard order (else name
    order) and row order. ValueError when the folder holds none or cannot be read."""
    import duckdb

    folder = Path(folder)
    files = [str(p.resolve()) for p in output_files(folder)]
    if not files:
        raise ValueError(f"no Parquet shards in {folder}")
    odd = [f for f in files if _GLOB_CHARS & set(Path(f).name)]
    if odd:
        raise ValueError(f"{odd[0]}: a shard name with a glob character ({''.join(sorted(_GLOB_CHARS))}); rename it")
    con = duckdb.connect(":memory:")
    try:
        try:
            cols = _columns(con, files)
        except duckdb.Error as exc:
            raise ValueError(f"{folder}: cannot read the Parquet shards ({str(exc).splitlines()[0]})") from None
        as_json = "record" in cols and cols.count("record") == 1 and set(cols) <= {"index", "key", "record"}
        fields = ["record"] if as_json else [c for c in cols if c not in ("filename", "file_row_number")]
        select = ", ".join('"' + c.replace('"', '""') + '"' for c in fields)
        cur = con.execute(
            f"SELECT {select} FROM read_parquet($files, filename = true, file_row_number = true) "
            "ORDER BY list_position($files, filename), file_row_number", {"files": files})
        while True:
            rows = cur.fetchmany(FETCH_ROWS)
            if not rows:
                break
            for row in rows:
                if as_json:
                    yield json.loads(row[0])
                else:
                    yield {c: v for c, v in zip(fields, row) if v is not None}
    finally:
        con.close()


def folder_as_file(task, folder: str | Path) -> bytes:
    """A folder's records serialised in the task's official container: the bytes of the
    equivalent predictions file."""
    from ..io.writers import dumps_records

    return dumps_records(task, list(iter_folder_records(folder))).encode("utf-8")


def import_predictions(ws, dataset_id: int, pred: str | Path, *, name: str | None = None,
                       allow_missing: bool = False):
    """Import a predictions file or a Parquet folder as a run of ``dataset_id``
    (:func:`cblue_core.runs.import_run`); raises FileRefused / ValueError as it does."""
    from ..runs import import_run
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
