"""Sharded inputs and outputs of large prediction jobs (no Ray here: both engines use this).

Input: a folder of shards, read in name order, each a file of the task's records:

* ``*.jsonl`` (or ``*.json`` holding JSON lines): one record per line, blank lines skipped;
* ``*.json`` holding a JSON array (an official file): read whole, as one chunk;
* ``*.parquet``: one record per row, its columns the record's fields.

A shard is planned in one streaming pass (its SHA-256, record count and chunk boundaries: byte
ranges of JSON lines, row groups of Parquet), so that a chunk can be read by any worker without
the rest of the file, and a job's memory does not grow with the corpus.

Output: one Parquet file per input shard (same stem), columns ``index`` (the record's position
in its shard), ``key`` (the task's key: text, id...) and ``record`` (the official submission
record as JSON), plus ``manifest.json``: the job (task, model) and the finished shards with
their record counts and the SHA-256 of input and output. A rerun skips every shard whose
output is still there with the recorded hash (and whose input has not changed).
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..io.atomic import atomic_writer, write_text_atomic
from ..io.bounded_json import read_json
from ..io.errors import FileRefused, short_error
from .folders import MAX_RECORD_BYTES, OutsideFolder, inside, member_path, record_too_long, regular_member
from .parquet_read import ParquetRefused, iter_rows, open_parquet

SHARD_SUFFIXES = {".jsonl": "jsonl", ".json": "json", ".parquet": "parquet"}
MANIFEST = "manifest.json"
MANIFEST_FORMAT = "cblue-studio/prediction-shards/1"
OUTPUT_COLUMNS = ("index", "key", "record")
DEFAULT_CHUNK_RECORDS = 2048
_READ_BLOCK = 1 << 20
MAX_MANIFEST_BYTES = 64 << 20
MAX_CHUNK_BYTES = 512 << 20       # record text one chunk may hold in a worker
OUTPUT_ROW_GROUP = 8192


class ShardError(Exception):
    """A record of an input shard that cannot be read, decoded or predicted: where and why."""

    def __init__(self, file: str, record: int | None, message: str, line: int | None = None):
        super().__init__(file, record, message, line)
        self.file, self.record, self.message, self.line = file, record, message, line

    def __str__(self) -> str:
        where = self.file
        if self.record is not None:
            where += f", record {self.record}"
        if self.line:
            where += f" (line {self.line})"
        return f"{where}: {self.message}"


class JobMismatch(ValueError):
    """An output folder that holds another job's shards (another task or model)."""


@dataclass(frozen=True)
class Chunk:
    """A slice of one shard that a worker reads on its own: records ``first`` .. ``first +
    count - 1``; ``start``/``stop`` are byte offsets (JSON lines) or row-group numbers (Parquet);
    ``line`` is the 1-based line of the first record (JSON lines; 0 otherwise)."""

    shard: int
    first: int
    count: int
    start: int
    stop: int
    line: int = 0


@dataclass
class InputShard:
    number: int
    path: Path
    kind: str                      # "jsonl", "json" (an array) or "parquet"
    records: int = 0
    sha256: str = ""
    size: int = 0
    chunks: list[Chunk] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def output_name(self) -> str:
        return f"{self.path.stem}.parquet"


def find_shards(folder: str | Path) -> list[Path]:
    """The shard files of an input folder in name order (hidden files and the manifest skipped);
    ValueError when there is none, FileRefused or OutsideFolder (both ValueErrors) for a shard
    that is not a regular file inside the folder (a FIFO, a device, a link leading out)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"not a folder: {folder}")
    files = sorted(p for p in folder.iterdir()
                   if p.suffix.lower() in SHARD_SUFFIXES and not p.name.startswith(".") and p.name != MANIFEST)
    for p in files:
        regular_member(folder, p)
    if not files:
        raise ValueError(f"no shards in {folder} (expected *.jsonl, *.json or *.parquet files)")
    return files


def _starts_with_array(path: Path) -> bool:
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"[")


def plan_shard(number: int, path: str | Path, chunk_records: int = DEFAULT_CHUNK_RECORDS) -> InputShard:
    """Count a shard's records, hash it and cut it into chunks of ``chunk_records``, in one
    streaming pass (memory does not depend on the shard's size)."""
    path = Path(path)
    kind = SHARD_SUFFIXES.get(path.suffix.lower(), "jsonl")
    if kind == "json" and not _starts_with_array(path):
        kind = "jsonl"
    shard = InputShard(number, path, kind, size=path.stat().st_size)
    size = max(1, int(chunk_records))
    if kind == "parquet":
        return _plan_parquet(shard, size)
    if kind == "json":
        records = _json_array(path)
        shard.records, shard.sha256 = len(records), file_sha256(path)
        shard.chunks = [Chunk(number, 0, len(records), 0, shard.size)] if records else []
        return shard
    return _plan_lines(shard, size)


def _json_array(path: Path) -> list[Any]:
    try:
        records = read_json(path)
    except FileRefused as refused:
        raise ShardError(path.name, None, str(refused).removeprefix(f"{path.name}: ")) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ShardError(path.name, None, f"not a JSON array ({exc})") from None
    if not isinstance(records, list):
        raise ShardError(path.name, None, "not a JSON array of records")
    return records


def _plan_lines(shard: InputShard, size: int) -> InputShard:
    digest = hashlib.sha256()
    chunks: list[Chunk] = []
    offset = 0              # byte offset of the current line
    line_no = 0
    records = 0
    chunk_start = chunk_first = chunk_line = -1
    with shard.path.open("rb") as fh:
        # One line at a time, buffered, in C; never more than a record's bound of one line.
        while raw := fh.readline(MAX_RECORD_BYTES + 2):
            digest.update(raw)
            line_no += 1
            if len(raw) - raw.endswith(b"\n") - raw.endswith(b"\r\n") > MAX_RECORD_BYTES:
                raise ShardError(shard.name, records, f"a line longer than {MAX_RECORD_BYTES:,} bytes "
                                 "(a CBLUE record is a few kilobytes)", line_no)
            if raw.strip():
                if chunk_start < 0:
                    chunk_start, chunk_first, chunk_line = offset, records, line_no
                records += 1
                # A chunk ends at ``size`` records, or once its lines reach half the chunk bound
                # (one more record cannot then pass the bound that read_chunk checks).
                end = offset + len(raw)
                if records - chunk_first == size or end - chunk_start >= MAX_CHUNK_BYTES // 2:
                    chunks.append(Chunk(shard.number, chunk_first, records - chunk_first, chunk_start, end,
                                        chunk_line))
                    chunk_start = -1
            offset += len(raw)
    if chunk_start >= 0:
        chunks.append(Chunk(shard.number, chunk_first, records - chunk_first, chunk_start, offset, chunk_line))
    shard.records, shard.sha256, shard.chunks = records, digest.hexdigest(), chunks
    return shard


def _plan_parquet(shard: InputShard, size: int) -> InputShard:
    digest = hashlib.sha256()
    with shard.path.open("rb") as fh:
        for block in iter(lambda: fh.read(_READ_BLOCK), b""):
            digest.update(block)
    try:
        meta = open_parquet(shard.path, shard.name).file.metadata
    except ParquetRefused as exc:
        raise ShardError(shard.name, None, str(exc).removeprefix(f"{shard.name}: ")) from None
    chunks: list[Chunk] = []
    first = start = rows = 0
    for g in range(meta.num_row_groups):
        rows += meta.row_group(g).num_rows
        if rows >= size or g == meta.num_row_groups - 1:
            if rows:
                chunks.append(Chunk(shard.number, first, rows, start, g + 1))
            first, start, rows = first + rows, g + 1, 0
    shard.records, shard.sha256, shard.chunks = int(meta.num_rows), digest.hexdigest(), chunks
    return shard


def read_chunk(path: str | Path, kind: str, chunk: Chunk) -> Iterator[tuple[int, int, str]]:
    """``(record index, line or 0, record JSON text)`` for every record of ``chunk``. JSON is
    not parsed here (the worker decodes it and reports a bad record with its place); a record
    over MAX_RECORD_BYTES, or a chunk over MAX_CHUNK_BYTES, is a ShardError."""
    path = Path(path)
    total = 0
    for index, line, text in _chunk_texts(path, kind, chunk):
        n = len(text) if len(text) * 4 <= MAX_RECORD_BYTES else len(text.encode("utf-8", "surrogatepass"))
        if n > MAX_RECORD_BYTES:
            raise ShardError(path.name, index, record_too_long(n), line or None)
        total += n
        if total > MAX_CHUNK_BYTES:
            raise ShardError(path.name, index, f"the records from {chunk.first} on hold more than "
                             f"{MAX_CHUNK_BYTES >> 20} MiB of text in one row group: write smaller row groups")
        yield index, line, text


def _chunk_texts(path: Path, kind: str, chunk: Chunk) -> Iterator[tuple[int, int, str]]:
    if kind == "jsonl":
        with path.open("rb") as fh:
            fh.seek(chunk.start)
            data = fh.read(chunk.stop - chunk.start)
        index, line = chunk.first, chunk.line
        for raw in data.split(b"\n"):
            if raw.strip():
                yield index, line, raw.decode("utf-8", errors="surrogateescape").lstrip("\ufeff")
                index += 1
            line += 1
        return
    if kind == "json":
        records = _json_array(path)
        for i in range(chunk.first, chunk.first + chunk.count):
            yield i, 0, json.dumps(records[i], ensure_ascii=False)
        return
    try:
        rows = iter_rows(open_parquet(path, path.name), range(chunk.start, chunk.stop))
        for i, row in enumerate(rows):
            yield chunk.first + i, 0, json.dumps(row, ensure_ascii=False, default=str)
    except ParquetRefused as exc:
        raise ShardError(path.name, chunk.first, str(exc).removeprefix(f"{path.name}: ")) from None


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(_READ_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def write_output_shard(out_dir: str | Path, name: str, index: list[int], keys: list[str],
                       records: list[str]) -> tuple[Path, str]:
    """Write one output shard (rows in ``index`` order) atomically; its path and SHA-256."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    order = sorted(range(len(index)), key=index.__getitem__)
    table = pa.table({"index": pa.array([index[i] for i in order], pa.int64()),
                      "key": pa.array([keys[i] for i in order], pa.string()),
                      "record": pa.array([records[i] for i in order], pa.string())})
    out = Path(out_dir) / name
    with atomic_writer(out) as fh:
        pq.write_table(table, fh, compression="zstd", row_group_size=OUTPUT_ROW_GROUP)
    return out, file_sha256(out)


@dataclass
class ShardEntry:
    input: str
    output: str
    records: int
    sha256: str            # of the output file
    input_sha256: str
    seconds: float = 0.0
    workers: list[int] = field(default_factory=list)   # process ids that predicted it


class ManifestError(ValueError):
    """A ``manifest.json`` that is not one: unreadable, or a field of the wrong shape."""


_ENTRY_FIELDS = {"input": str, "output": str, "records": int, "sha256": str, "input_sha256": str}


def read_manifest(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The job and the shard entries of ``folder``'s manifest, each entry's ``output`` a file
    name inside the folder; ManifestError or OutsideFolder (ValueErrors) naming the field."""
    path = folder / MANIFEST
    label = str(path)
    inside(folder, path, label)
    try:
        data = read_json(path, label, max_bytes=MAX_MANIFEST_BYTES)
    except FileRefused as refused:
        raise ManifestError(str(refused)) from None
    except ValueError as exc:       # not JSON, not UTF-8
        raise ManifestError(f"{label}: not a readable manifest ({short_error(exc)})") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{label}: not a manifest (expected a JSON object with a \"shards\" list)")
    job, shards = data.get("job", {}), data.get("shards", [])
    if not isinstance(job, dict):
        raise ManifestError(f"{label}: field 'job': expected an object, not {type(job).__name__}")
    if not isinstance(shards, list):
        raise ManifestError(f"{label}: field 'shards': expected a list of objects, not {type(shards).__name__}")
    for k, e in enumerate(shards):
        if not isinstance(e, dict):
            raise ManifestError(f"{label}: shards[{k}]: expected an object, not {type(e).__name__}")
        member_path(folder, e.get("output"), f"{label}: shards[{k}].output")
    return job, shards


def _entry(e: dict[str, Any], where: str) -> ShardEntry:
    for k, kind in _ENTRY_FIELDS.items():
        if not isinstance(e.get(k), kind) or isinstance(e.get(k), bool):
            raise ManifestError(f"{where}.{k}: expected {'an integer' if kind is int else 'a string'}, "
                                f"not {e.get(k)!r:.40}")
    seconds = e.get("seconds", 0.0)
    workers = e.get("workers", [])
    return ShardEntry(**{k: e[k] for k in _ENTRY_FIELDS},
                      seconds=float(seconds) if isinstance(seconds, (int, float)) else 0.0,
                      workers=[w for w in workers if isinstance(w, int)] if isinstance(workers, list) else [])


class Manifest:
    """``manifest.json`` of an output folder: the job and its finished shards, rewritten
    atomically after each shard (a killed job leaves a consistent manifest)."""

    def __init__(self, out_dir: str | Path, job: dict[str, Any]):
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / MANIFEST
        self.job = dict(job)
        self.shards: dict[str, ShardEntry] = {}
        self.complete = False

    @classmethod
    def open(cls, out_dir: str | Path, job: dict[str, Any]) -> Manifest:
        """The folder's manifest (JobMismatch when it is another job's), or a new one."""
        m = cls(out_dir, job)
        if m.path.exists() or m.path.is_symlink():
            try:
                old, entries = read_manifest(m.out_dir)
                for field_name in ("task", "model"):
                    if old.get(field_name) != job.get(field_name):
                        raise JobMismatch(
                            f"{out_dir} holds predictions of {old.get('model')!r} for {old.get('task')}, not "
                            f"{job.get('model')!r} for {job.get('task')}: use another output folder")
                for n, e in enumerate(entries):
                    entry = _entry(e, f"{m.path}: shards[{n}]")
                    m.shards[entry.input] = entry
            except (ManifestError, OutsideFolder) as exc:
                raise JobMismatch(f"{exc}; use another output folder") from None
        elif any(m.out_dir.glob("*.parquet")) if m.out_dir.is_dir() else False:
            raise JobMismatch(f"{out_dir} holds Parquet files but no {MANIFEST}: use another output folder")
        return m

    def finished(self, shard: InputShard) -> bool:
        """Whether ``shard`` is done: recorded with the same input hash and record count, and
        its output file is there with the recorded hash."""
        e = self.shards.get(shard.name)
        if e is None or e.input_sha256 != shard.sha256 or e.records != shard.records:
            return False
        out = self.out_dir / e.output
        return out.is_file() and file_sha256(out) == e.sha256

    def add(self, entry: ShardEntry) -> None:
        self.shards[entry.input] = entry
        self.save()

    def save(self, *, complete: bool | None = None, order: list[str] | None = None) -> None:
        if complete is not None:
            self.complete = complete
        names = order or sorted(self.shards)
        shards = [asdict(self.shards[n]) for n in names if n in self.shards]
        data = {"format": MANIFEST_FORMAT, "job": self.job, "complete": self.complete,
                "records": sum(s["records"] for s in shards), "shards": shards,
                "columns": list(OUTPUT_COLUMNS), "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self.out_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path, json.dumps(data, ensure_ascii=False, indent=2))


def output_files(folder: str | Path) -> list[Path]:
    """The Parquet shards of a predictions folder: in the manifest's order when it has one
    (only the shards it records as finished), else every ``*.parquet`` in name order."""
    folder = Path(folder)
    mpath = folder / MANIFEST
    if mpath.exists() or mpath.is_symlink():
        _, entries = read_manifest(folder)
        names = [str(e["output"]) for e in entries]
        files = [folder / n for n in names]
        missing = [n for n, p in zip(names, files) if not (p.exists() or p.is_symlink())]
        if missing:
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ValueError(f"{folder}: the manifest lists {len(missing)} shard(s) that are missing: "
                             + ", ".join(repr(n) for n in missing[:5]) + more)
    else:
        files = sorted(p for p in folder.glob("*.parquet") if not p.name.startswith("."))
    for p in files:
        regular_member(folder, p)
    return files
