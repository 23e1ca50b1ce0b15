"""An export written to disk (:func:`export_dataset`, the CLI's ``export``) or built as one
browser download (:func:`export_download`, the Annotate page's Export tab): the same files."""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...io.writers import write_text
from .archive import zip_files
from .common import dataset_task
from .formats import FORMATS, download_name, export_stem, format_files
from .official import export_official


def _is_folder(path: Path) -> bool:
    return path.is_dir() or not path.suffix


def export_dataset(ws, dataset_id: int, out: str | Path, fmt: str = "official",
                   version: str | None = None) -> list[Path]:
    """Write the split at ``version`` (None or "current": the current gold, "original": as
    ingested, else a named version) in ``fmt`` and return the paths written:

    - ``official``: the task's file (``out`` a file, or a folder: the split's official name);
    - ``brat``: ``.txt`` / ``.ann`` pairs, ``annotation.conf`` and ``visual.conf`` in the folder
      ``out`` (or, for ``out`` ending in ``.zip``, one zip archive);
    - ``doccano``: ``NAME.jsonl`` and ``NAME.README.txt`` (``out`` is ``NAME.jsonl``, or a folder:
      NAME is ``TASK_SPLIT[_VERSION]``);
    - ``label-studio``: ``NAME.json`` (tasks) and ``NAME.label_config.xml``, named the same way.

    A path without a suffix is a folder (created). Raises ValueError for an unknown format or
    version, or a task the format cannot hold."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (expected one of {', '.join(FORMATS)})")
    version = None if version == "current" else version
    info, task = dataset_task(ws, dataset_id)
    target = Path(out)
    if fmt == "official":
        if _is_folder(target):
            target.mkdir(parents=True, exist_ok=True)
        return [export_official(ws, dataset_id, version, target)]
    gold = ws.annotations.gold_examples(dataset_id, version)
    stem = export_stem(task, info.split, version)
    if fmt == "brat":
        files = format_files(task, gold, fmt, stem)
        if target.suffix.lower() == ".zip":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zip_files(dict(files)))
            return [target]
        target.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            (target / name).write_text(content, encoding="utf-8", newline="")
        return [target]
    folder, name = (target, stem) if _is_folder(target) else (target.parent, target.stem)
    built = format_files(task, gold, fmt, name)
    folder.mkdir(parents=True, exist_ok=True)
    return [write_text(folder / fname, content) for fname, content in built.items()]


@dataclass(frozen=True)
class Download:
    """One export as a browser download: a file name, its bytes and their media type."""

    file_name: str
    data: bytes
    mime: str


def export_download(ws, dataset_id: int, fmt: str, version: str | None = None) -> Download:
    """The split at ``version`` in ``fmt`` as one download: the official file itself (named as
    the official split file), or a zip of an annotation tool's files. Raises ValueError as
    :func:`export_dataset` does."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (expected one of {', '.join(FORMATS)})")
    version = None if version == "current" else version
    info, task = dataset_task(ws, dataset_id)
    file_name, mime = download_name(task, info.split, fmt, version)
    if fmt == "official":
        with tempfile.TemporaryDirectory() as tmp:
            data = export_official(ws, dataset_id, version, Path(tmp)).read_bytes()
        return Download(file_name, data, mime)
    files = format_files(task, ws.annotations.gold_examples(dataset_id, version), fmt, Path(file_name).stem)
    return Download(file_name, zip_files(files), mime)

