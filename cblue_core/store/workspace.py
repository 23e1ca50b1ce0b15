"""The DuckDB workspace: the only module that talks to the database.

One database file per workspace. DuckDB lets a single process open a file read-write and then
no other process at all, so the app holds one connection per process and hands each session
its own cursor (:meth:`Workspace.cursor`); the CLI opens the file only when the app is not
running and says so plainly when it is locked (:class:`WorkspaceLocked`).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import duckdb
import pyarrow as pa

from ..io.errors import short_error
from ..io.resources import Category, IcdTerm, Schema
from ..io.validate import LoadedDataset, ValidationReport
from ..io.codecs import DecodeContext, codec_for
from ..io.offsets import EXCLUSIVE, INCLUSIVE
from ..records import Example
from ..tasks import get_task
from .annotations import ANNOTATION_DDL, AnnotationStore
from .runs import RunStore
from .slices import SliceStore
from .schema import DDL, EXAMPLE_COLUMNS, SCHEMA_VERSION

ENV_DB = "CBLUE_STUDIO_DB"


def default_db_path() -> Path:
    """``$CBLUE_STUDIO_DB``, else ``workspace/cblue_studio.duckdb`` under the working directory."""
    env = os.environ.get(ENV_DB)
    return Path(env) if env else Path.cwd() / "workspace" / "cblue_studio.duckdb"


class WorkspaceLocked(RuntimeError):
    """Another process holds the database file."""


class WorkspaceError(RuntimeError):
    """A database problem worth showing to the user as a message."""


@dataclass(frozen=True)
class DatasetInfo:
    dataset_id: int
    task: str
    split: str
    name: str
    source: str
    records: int
    annotations: int
    offset_convention: str
    sha256: str
    created_at: str


@dataclass(frozen=True)
class IngestResult:
    dataset_id: int
    created: bool          # False when the same content was already in the workspace
    records: int
    message: str


@dataclass(frozen=True)
class ExamplePage:
    total: int
    rows: Any              # pandas DataFrame of EXAMPLE_COLUMNS for the page
    error: str | None = None


def connect(path: str | Path | None = None, read_only: bool = False) -> "Workspace":
    """Open (creating if needed) the workspace database at ``path``: by default the one
    :func:`default_db_path` names; ``":memory:"`` for a throwaway in-memory workspace."""
    if path is None:
        path = default_db_path()
    target = Path(path) if path != ":memory:" else None
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(target) if target else ":memory:", read_only=read_only)
    except duckdb.IOException as exc:
        msg = str(exc)
        if "lock" in msg.lower():
            raise WorkspaceLocked(
                f"The workspace {target} is open in another process (the app or another command). "
                "DuckDB allows only one process to open it: stop that process, or use another "
                f"workspace with --db or ${ENV_DB}.") from None
        raise WorkspaceError(f"cannot open the workspace {target}: {msg}") from None
    ws = Workspace(con, target)
    if not read_only:
        ws._ensure_schema()
    return ws


class Workspace(RunStore, SliceStore, AnnotationStore):
    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path | None):
        self.con = con
        self.path = path

    # ------------------------------------------------------------------ plumbing
    def cursor(self) -> "Workspace":
        """A view of the same database on its own cursor (one per session or thread)."""
        return Workspace(self.con.cursor(), self.path)

    def close(self) -> None:
        self.con.close()

    def _ensure_schema(self) -> None:
        self.con.execute(DDL)
        self.con.execute(ANNOTATION_DDL)
        self.con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])

    def _transaction(self):
        return _Transaction(self.con)

    # ------------------------------------------------------------------ datasets
    def find_dataset_by_hash(self, task: str, split: str, sha256: str) -> int | None:
        row = self.con.execute("SELECT dataset_id FROM datasets WHERE task=? AND split=? AND sha256=?",
                               [task, split, sha256]).fetchone()
        return row[0] if row else None

    def ingest(self, loaded: LoadedDataset | "PreparedDataset", name: str | None = None,
               source: str | None = None, split: str | None = None) -> IngestResult:
        """Store a validated dataset in one transaction; the same content twice is not duplicated."""
        prepared = loaded if isinstance(loaded, PreparedDataset) else prepare(loaded)
        rep = prepared.report
        if not rep.ok:
            raise WorkspaceError(f"{rep.file} was refused by validation; nothing was stored")
        split = split or rep.split or "dev"
        existing = self.find_dataset_by_hash(rep.task, split, rep.sha256)
        if existing is not None:
            return IngestResult(existing, False, rep.records,
                                f"{rep.file} is already in the workspace (dataset {existing})")
        tables = prepared.tables()
        n = tables["examples"].num_rows
        with self._transaction():
            dataset_id = self.con.execute(
                "INSERT INTO datasets (task, split, name, source, sha256, container, offset_convention,"
                " records, annotations, report) VALUES (?,?,?,?,?,?,?,?,?,?) RETURNING dataset_id",
                [rep.task, split, name or Path(rep.file).name, source or rep.file, rep.sha256,
                 rep.container, rep.offset_convention, n, rep.annotations,
                 json.dumps(rep.to_json(), ensure_ascii=False)]).fetchone()[0]
            for table, arrow in tables.items():
                if arrow.num_rows:
                    cols = ", ".join(arrow.column_names)
                    self.con.execute(f"INSERT INTO {table} BY NAME SELECT ? AS dataset_id, {cols} FROM arrow",
                                     [dataset_id])
        return IngestResult(dataset_id, True, n,
                            f"stored {n} records of {rep.task} {split} as dataset {dataset_id}")

    def _append(self, table: str, columns: dict[str, list]) -> None:
        if not columns or not next(iter(columns.values())):
            return
        arrow = pa.table(columns)  # noqa: F841  (DuckDB scans the local by name)
        self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM arrow")

    def delete_dataset(self, dataset_id: int) -> None:
        with self._transaction():
            self.con.execute("DELETE FROM gold_version_heads WHERE version_id IN "
                             "(SELECT version_id FROM gold_versions WHERE dataset_id=?)", [dataset_id])
            for table in ("gold_spans", "gold_triples", "gold_terms", "examples", "annotation_events",
                          "gold_versions"):
                self.con.execute(f"DELETE FROM {table} WHERE dataset_id=?", [dataset_id])
            runs = [r[0] for r in self.con.execute("SELECT run_id FROM runs WHERE dataset_id=?",
                                                   [dataset_id]).fetchall()]
            for run in runs:
                self.con.execute("DELETE FROM predictions WHERE run_id=?", [run])
                self.con.execute("DELETE FROM errors WHERE run_id=?", [run])
            self.con.execute("DELETE FROM runs WHERE dataset_id=?", [dataset_id])
            self.con.execute("DELETE FROM datasets WHERE dataset_id=?", [dataset_id])

    def datasets(self, task: str | None = None) -> list[DatasetInfo]:
        sql = ("SELECT dataset_id, task, split, name, source, records, annotations, offset_convention,"
               " sha256, CAST(created_at AS VARCHAR) FROM datasets")
        params: list = []
        if task:
            sql += " WHERE task = ?"
            params.append(task)
        sql += " ORDER BY task, split, dataset_id"
        return [DatasetInfo(*row) for row in self.con.execute(sql, params).fetchall()]

    def dataset(self, dataset_id: int) -> DatasetInfo | None:
        for d in self.datasets():
            if d.dataset_id == dataset_id:
                return d
        return None

    def find_dataset(self, task: str, split: str) -> DatasetInfo | None:
        """The most recently ingested dataset for a task split."""
        matches = [d for d in self.datasets(task) if d.split == split]
        return matches[-1] if matches else None

    def dataset_report(self, dataset_id: int) -> dict:
        row = self.con.execute("SELECT report FROM datasets WHERE dataset_id=?", [dataset_id]).fetchone()
        return json.loads(row[0]) if row and row[0] else {}

    # ------------------------------------------------------------------ examples
    def _decoder(self, dataset_id: int):
        row = self.con.execute("SELECT task, name, offset_convention FROM datasets WHERE dataset_id=?",
                               [dataset_id]).fetchone()
        if not row:
            raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
        task = get_task(row[0])
        conv = row[2] if row[2] in (INCLUSIVE, EXCLUSIVE) else INCLUSIVE
        ctx = DecodeContext(row[1], task, conv)
        codec = codec_for(task)
        return lambda raw, idx: codec.decode(json.loads(raw), idx, ctx)

    def example(self, dataset_id: int, idx: int) -> Example | None:
        row = self.con.execute("SELECT raw FROM examples WHERE dataset_id=? AND idx=?",
                               [dataset_id, idx]).fetchone()
        return self._decoder(dataset_id)(row[0], idx) if row else None

    def examples(self, dataset_id: int) -> list[Example]:
        decode = self._decoder(dataset_id)
        rows = self.con.execute("SELECT idx, raw FROM examples WHERE dataset_id=? ORDER BY idx",
                                [dataset_id]).fetchall()
        return [decode(raw, idx) for idx, raw in rows]

    def query_examples(self, dataset_id: int, *, substring: str = "", regex: str = "",
                       types: Iterable[str] = (), nested_only: bool = False, predicate: str = "",
                       limit: int = 50, offset: int = 0) -> ExamplePage:
        """Filter a dataset's examples; a bad regex or SQL predicate comes back as ``error``."""
        where = ["dataset_id = ?"]
        params: list[Any] = [dataset_id]
        if substring:
            where.append("(contains(text, ?) OR contains(coalesce(text2, ''), ?) OR contains(key, ?))")
            params += [substring, substring, substring]
        if regex:
            where.append("(regexp_matches(text, ?) OR regexp_matches(coalesce(text2, ''), ?))")
            params += [regex, regex]
        types = list(types)
        if types:
            where.append("list_has_any(types, ?)")
            params.append(types)
        if nested_only:
            where.append("nesting_depth > 1")
        if predicate.strip():
            problem = check_predicate(self.con, predicate)
            if problem:
                return ExamplePage(0, _empty_frame(), problem)
            where.append(f"({predicate})")
        cols = ", ".join(EXAMPLE_COLUMNS)
        base = f"SELECT {cols} FROM examples WHERE {' AND '.join(where)}"
        try:
            total = self.con.execute(f"SELECT count(*) FROM ({base})", params).fetchone()[0]
            frame = self.con.execute(f"{base} ORDER BY idx LIMIT {int(limit)} OFFSET {int(offset)}",
                                     params).df()
        except duckdb.Error as exc:
            return ExamplePage(0, _empty_frame(), short_error(exc))
        return ExamplePage(total, frame)

    def stats(self, dataset_id: int) -> "DatasetStats":
        from .stats import compute_stats
        return compute_stats(self.con, dataset_id)

    # ------------------------------------------------------------------ resources
    def ingest_resource(self, kind: str, name: str, sha256: str, rows: list) -> IngestResult:
        if self.con.execute("SELECT 1 FROM resources WHERE kind=? AND sha256=?", [kind, sha256]).fetchone():
            return IngestResult(0, False, len(rows), f"{name} is already in the workspace")
        table = RESOURCE_TABLES[kind]
        columns = _columns_of(rows)
        with self._transaction():
            self.con.execute(f"DELETE FROM {table}")  # one current list per kind
            self.con.execute("DELETE FROM resources WHERE kind=?", [kind])
            self._append(table, columns)
            self.con.execute("INSERT INTO resources (kind, name, sha256, rows) VALUES (?,?,?,?)",
                             [kind, name, sha256, len(rows)])
        return IngestResult(0, True, len(rows), f"stored {len(rows)} rows of {kind} from {name}")

    def resources(self) -> list[tuple[str, str, int]]:
        return self.con.execute("SELECT kind, name, rows FROM resources ORDER BY kind").fetchall()

    def icd_terms(self) -> list[IcdTerm]:
        return [IcdTerm(c or "", t) for c, t in self.con.execute("SELECT code, term FROM icd_terms").fetchall()]

    def schemas(self) -> list[Schema]:
        return [Schema(*r) for r in self.con.execute(
            "SELECT subject_type, predicate, object_type FROM cmeie_schemas").fetchall()]

    def categories(self) -> list[Category]:
        return [Category(*r) for r in self.con.execute(
            "SELECT label, zh, topic_group FROM ctc_categories").fetchall()]


RESOURCE_TABLES = {"icd10": "icd_terms", "ctc_categories": "ctc_categories",
                   "cmeie_schemas": "cmeie_schemas", "surgery_terms": "surgery_terms"}
_RENAME = {"group": "topic_group"}


def _columns_of(rows: list) -> dict[str, list]:
    """Dataclass rows -> columns named as their table's columns."""
    names = list(rows[0].__dataclass_fields__) if rows else []
    return {_RENAME.get(n, n): [getattr(r, n) for r in rows] for n in names}


_COLUMN_TYPES = {"idx": pa.int32(), "turn": pa.int32(), "start_pos": pa.int32(), "end_pos": pa.int32(),
                 "combined": pa.bool_(), "types": pa.list_(pa.string())}


@dataclass
class PreparedDataset:
    """A validated dataset as plain column lists per table, ready to insert. Built without a
    database, so that several files are prepared in parallel processes; the Arrow tables are
    made only where they are inserted, because pyarrow's list conversion imports pandas and
    that import alone costs each worker process about a second."""

    report: ValidationReport
    columns: dict[str, dict[str, list]]

    def tables(self) -> dict[str, pa.Table]:
        return {name: pa.table({k: pa.array(v, type=_COLUMN_TYPES.get(k, pa.string()) if k in _COLUMN_TYPES
                                            or not v or isinstance(v[0], str) or v[0] is None else None)
                                for k, v in cols.items()})
                for name, cols in self.columns.items()}


def prepare(loaded: LoadedDataset) -> PreparedDataset:
    ex_cols: dict[str, list] = {c: [] for c in (
        "idx", "key", "text", "text2", "label", "target", "sub_task", "types", "n_spans",
        "n_triples", "n_terms", "n_events", "n_turns", "nesting_depth", "text_length", "raw")}
    spans: dict[str, list] = {c: [] for c in ("idx", "turn", "start_pos", "end_pos", "type", "mention")}
    triples: dict[str, list] = {c: [] for c in ("idx", "subject", "predicate", "object",
                                                "subject_type", "object_type", "combined")}
    terms: dict[str, list] = {"idx": [], "term": []}
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    texts = loaded.raw_texts  # the file's own JSON text of each record: no re-serialising
    c = ex_cols
    for ex in loaded.examples:
        i = ex.index
        turns = ex.turns
        text = ex.text or ("\n".join(t.text for t in turns) if turns else "")
        n_spans = len(ex.spans) + (sum(len(t.spans) for t in turns) if turns else 0)
        meta = ex.meta
        c["idx"].append(i)
        c["key"].append(ex.key)
        c["text"].append(text)
        c["text2"].append(ex.text2)
        c["label"].append(ex.label)
        c["target"].append(ex.target)
        c["sub_task"].append((meta.get("task_dataset") or meta.get("scenario")) if meta else None)
        c["types"].append(_types_of(ex))
        c["n_spans"].append(n_spans)
        c["n_triples"].append(len(ex.triples))
        c["n_terms"].append(len(ex.terms))
        c["n_events"].append(len(ex.events))
        c["n_turns"].append(len(turns))
        c["nesting_depth"].append(ex.depth)
        c["text_length"].append(len(text))
        c["raw"].append(texts[i] if texts is not None else dumps(ex.raw))
        if n_spans:
            for turn_no, span_list in [(-1, ex.spans)] + [(n, t.spans) for n, t in enumerate(turns)]:
                for sp in span_list:
                    spans["idx"].append(i)
                    spans["turn"].append(turn_no)
                    spans["start_pos"].append(sp.start)
                    spans["end_pos"].append(sp.end)
                    spans["type"].append(sp.type)
                    spans["mention"].append(sp.text)
        for t in ex.triples:
            for k, v in zip(triples, (i, t.subject, t.predicate, t.object, t.subject_type,
                                      t.object_type, t.combined)):
                triples[k].append(v)
        for term in ex.terms:
            terms["idx"].append(i)
            terms["term"].append(term)
    return PreparedDataset(loaded.report, {"examples": ex_cols, "gold_spans": spans,
                                           "gold_triples": triples, "gold_terms": terms})


def _types_of(ex: Example) -> list[str]:
    if not (ex.spans or ex.triples or ex.turns or ex.events):
        return [ex.label] if ex.label not in (None, "") else []
    types = {s.type for s in ex.spans} | {t.predicate for t in ex.triples}
    for turn in ex.turns:
        types |= {s.type for s in turn.spans}
        if turn.act:
            types.add(turn.act)
    types |= {e.tendency or "(present)" for e in ex.events}
    if ex.label not in (None, ""):
        types.add(ex.label)
    return sorted(types)


def _empty_frame():
    import pandas as pd
    return pd.DataFrame(columns=list(EXAMPLE_COLUMNS))


def check_predicate(con: duckdb.DuckDBPyConnection, predicate: str) -> str | None:
    """Why a user's WHERE predicate is not acceptable, or None.

    It must be a single boolean expression: no second statement, no subquery reaching other
    tables, and only the example columns listed in EXAMPLE_COLUMNS.
    """
    probe = f"SELECT count(*) FROM examples WHERE ({predicate})"
    try:
        statements = con.extract_statements(probe)
    except duckdb.Error as exc:
        return f"SQL error: {short_error(exc)}"
    if len(statements) != 1:
        return "the filter must be one expression (no ';' or second statement)"
    lowered = predicate.lower()
    for word in ("select", "from ", "read_", "copy", "attach", "pragma", "install", "load "):
        if word in lowered:
            return f"the filter may only use the example columns ({', '.join(EXAMPLE_COLUMNS)}); found {word.strip()!r}"
    try:
        con.execute(f"EXPLAIN {probe}")
    except duckdb.Error as exc:
        return f"SQL error: {short_error(exc)}"
    return None


class _Transaction:
    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def __enter__(self):
        self.con.execute("BEGIN TRANSACTION")
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.con.execute("COMMIT")
        else:
            self.con.execute("ROLLBACK")
        return False
