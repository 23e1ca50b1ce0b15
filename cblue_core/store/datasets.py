"""Stored datasets (one per ingested file) and their examples."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from ..io.codecs import DecodeContext, codec_for
from ..io.errors import short_error
from ..io.offsets import EXCLUSIVE, INCLUSIVE
from ..io.validate import LoadedDataset, ValidationReport
from ..io.writers import LINE_ENDINGS, detect_line_ending
from ..records import Example
from ..tasks import TaskSpec, get_task
from .access import Access, writes
from .database import Database
from .errors import WorkspaceError
from .filter_worker import FilterPool, FilterRequest
from .sandbox import time_limit
from .schema import EXAMPLE_COLUMN_TYPES, EXAMPLE_COLUMNS
from .session_gate import SessionGate
from .user_sql import PredicateRefused

if TYPE_CHECKING:
    import pandas as pd

    from .stats import DatasetStats


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
    rows: pd.DataFrame     # EXAMPLE_COLUMNS of the page's examples
    error: str | None = None


Decoder = Callable[[str, int], Example]

# Filter workers shared by every session of the process, keyed by split content: starting one
# copies the split's example columns (a few MB for a dev split).
_FILTERS = FilterPool()
_SESSIONS = SessionGate()


def _ingest_target(a: Mapping[str, Any]) -> str:
    loaded = a.get("loaded")
    report = getattr(loaded, "report", None)
    what = f"{report.task} {a.get('split') or report.split or 'dev'}" if report is not None else "a dataset"
    return f"{what} from {a.get('name') or (Path(report.file).name if report is not None else '?')}"


def _dataset(a: Mapping[str, Any]) -> str:
    return f"dataset {a.get('dataset_id')}"


class DatasetStore:
    READS = ("find_by_hash", "all", "get", "versions", "find", "report", "container", "line_ending",
             "task_of", "decoder", "example", "examples", "examples_at", "indices", "texts", "query",
             "matching", "check_predicate", "filtered", "mention_counts", "label_counts", "stats")

    def __init__(self, db: Database, access: Access | None = None) -> None:
        self.db = db
        self.access = access or Access()

    # ------------------------------------------------------------------ writing
    def find_by_hash(self, task: str, split: str, sha256: str) -> int | None:
        row = self.db.one("SELECT dataset_id FROM datasets WHERE task=? AND split=? AND sha256=?",
                          [task, split, sha256])
        return int(row[0]) if row else None

    @writes("dataset.ingest", target=_ingest_target,
            detail=lambda a: "made the default" if a.get("make_default") else "")
    def ingest(self, loaded: LoadedDataset | PreparedDataset, name: str | None = None,
               source: str | None = None, split: str | None = None,
               line_ending: str | None = None, make_default: bool = False) -> IngestResult:
        """Store a validated dataset in one transaction; the same content twice is not duplicated.

        The first dataset of a task split becomes its default (what :meth:`find` gives and every
        visitor opens); a later one is another version of the split, unless ``make_default``.
        ``line_ending``: the file's ("lf", "crlf", "cr"; :func:`detect_line_ending` of its bytes),
        for a caller that validated bytes; by default it is found when the dataset is prepared."""
        prepared = loaded if isinstance(loaded, PreparedDataset) else prepare(loaded)
        rep = prepared.report
        if not rep.ok:
            raise WorkspaceError(f"{rep.file} was refused by validation; nothing was stored")
        if line_ending is not None and line_ending not in LINE_ENDINGS:
            raise ValueError(f"unknown line ending {line_ending!r} (expected one of {', '.join(LINE_ENDINGS)})")
        line_ending = line_ending or prepared.line_ending
        split = split or rep.split or "dev"
        existing = self.find_by_hash(rep.task, split, rep.sha256)
        if existing is not None:
            if make_default:
                self.make_default(existing)
            return IngestResult(existing, False, rep.records,
                                f"{rep.file} is already in the workspace (dataset {existing})"
                                + (", now the default" if make_default else ""))
        tables = prepared.tables()
        n = tables["examples"].num_rows
        with self.db.transaction():
            dataset_id = int(self.db.scalar(
                "INSERT INTO datasets (task, split, name, source, sha256, container, offset_convention,"
                " records, annotations, report, line_ending) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
                " RETURNING dataset_id",
                [rep.task, split, name or Path(rep.file).name, source or rep.file, rep.sha256,
                 rep.container, rep.offset_convention, n, rep.annotations,
                 json.dumps(rep.to_json(), ensure_ascii=False), line_ending]))
            for table, arrow in tables.items():
                self.db.insert_arrow(table, arrow, prefix_sql="? AS dataset_id,", params=[dataset_id])
            verb = "INSERT OR REPLACE" if make_default else "INSERT OR IGNORE"
            self.db.execute(f"{verb} INTO default_datasets (task, split, dataset_id) VALUES (?,?,?)",
                            [rep.task, split, dataset_id])
            default = self._default_id(rep.task, split)
        note = "" if default == dataset_id else (f" (another version of the split: dataset {default} "
                                                 "stays the one everyone opens)")
        return IngestResult(dataset_id, True, n,
                            f"stored {n} records of {rep.task} {split} as dataset {dataset_id}{note}")

    @writes("dataset.delete", target=_dataset)
    def delete(self, dataset_id: int) -> None:
        """Remove a dataset with its gold, annotation history and runs."""
        with self.db.transaction():
            self.db.execute("DELETE FROM gold_version_heads WHERE version_id IN "
                            "(SELECT version_id FROM gold_versions WHERE dataset_id=?)", [dataset_id])
            for table in ("gold_spans", "gold_triples", "gold_terms", "examples", "annotation_events",
                          "gold_versions"):
                self.db.execute(f"DELETE FROM {table} WHERE dataset_id=?", [dataset_id])
            for table in ("run_derived", "predictions", "errors"):
                self.db.execute(f"DELETE FROM {table} WHERE run_id IN "
                                "(SELECT run_id FROM runs WHERE dataset_id=?)", [dataset_id])
            self.db.execute("DELETE FROM runs WHERE dataset_id=?", [dataset_id])
            self.db.execute("DELETE FROM default_datasets WHERE dataset_id=?", [dataset_id])
            self.db.execute("DELETE FROM datasets WHERE dataset_id=?", [dataset_id])
            # a split losing its default gets its first remaining dataset, stored, so that the next
            # dataset ingested is not taken for the split's first
            self.db.execute("INSERT OR IGNORE INTO default_datasets (task, split, dataset_id) "
                            "SELECT task, split, min(dataset_id) FROM datasets GROUP BY task, split")

    # ------------------------------------------------------------------ reading
    def all(self, task: str | None = None) -> list[DatasetInfo]:
        sql = ("SELECT dataset_id, task, split, name, source, records, annotations, offset_convention,"
               " sha256, strftime(created_at, '%Y-%m-%d %H:%M:%S') FROM datasets")
        params: list[Any] = []
        if task:
            sql += " WHERE task = ?"
            params.append(task)
        sql += " ORDER BY task, split, dataset_id"
        return [DatasetInfo(*row) for row in self.db.rows(sql, params)]

    def get(self, dataset_id: int) -> DatasetInfo | None:
        return next((d for d in self.all() if d.dataset_id == dataset_id), None)

    def versions(self, task: str, split: str) -> list[DatasetInfo]:
        """Every dataset of a task split, the first ingested first."""
        return [d for d in self.all(task) if d.split == split]

    def find(self, task: str, split: str) -> DatasetInfo | None:
        """The default dataset of a task split: the one chosen (:meth:`make_default`), else the
        first ingested. Never merely the latest: an upload must not change what others open."""
        matches = self.versions(task, split)
        chosen = self._default_id(task, split)
        return next((d for d in matches if d.dataset_id == chosen), matches[0] if matches else None)

    @writes("dataset.make_default", target=_dataset)
    def make_default(self, dataset_id: int) -> DatasetInfo:
        """Make a dataset the one its task split opens for everyone."""
        info = self.get(dataset_id)
        if info is None:
            raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
        with self.db.transaction():
            self.db.execute("INSERT OR REPLACE INTO default_datasets (task, split, dataset_id) VALUES (?,?,?)",
                            [info.task, info.split, dataset_id])
        return info

    def _default_id(self, task: str, split: str) -> int | None:
        row = self.db.one("SELECT dataset_id FROM default_datasets WHERE task=? AND split=?", [task, split])
        return int(row[0]) if row else None

    def report(self, dataset_id: int) -> dict[str, Any]:
        row = self.db.one("SELECT report FROM datasets WHERE dataset_id=?", [dataset_id])
        return dict(json.loads(row[0])) if row and row[0] else {}

    def container(self, dataset_id: int) -> str | None:
        """The container the dataset's file had ("array", "lines", "object", "tsv")."""
        row = self.db.one("SELECT container FROM datasets WHERE dataset_id=?", [dataset_id])
        return str(row[0]) if row and row[0] is not None else None

    def line_ending(self, dataset_id: int) -> str | None:
        """The line ending the dataset's file had ("lf", "crlf", "cr"); None when unknown (no line
        break, or ingested before schema 3)."""
        row = self.db.one("SELECT line_ending FROM datasets WHERE dataset_id=?", [dataset_id])
        return str(row[0]) if row and row[0] in LINE_ENDINGS else None

    def task_of(self, dataset_id: int) -> TaskSpec:
        row = self.db.one("SELECT task FROM datasets WHERE dataset_id=?", [dataset_id])
        if not row:
            raise ValueError(f"no dataset {dataset_id} in the workspace")
        return get_task(row[0])

    def decoder(self, dataset_id: int) -> Decoder:
        """Stored JSON text of a record -> its typed Example, by the dataset's task codec."""
        row = self.db.one("SELECT task, name, offset_convention FROM datasets WHERE dataset_id=?",
                          [dataset_id])
        if not row:
            raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
        task = get_task(row[0])
        conv = row[2] if row[2] in (INCLUSIVE, EXCLUSIVE) else INCLUSIVE
        ctx = DecodeContext(row[1], task, conv)
        codec = codec_for(task)

        def decode(raw: str, idx: int) -> Example:
            return codec.decode(json.loads(raw), idx, ctx)
        return decode

    def example(self, dataset_id: int, idx: int) -> Example | None:
        row = self.db.one("SELECT raw FROM examples WHERE dataset_id=? AND idx=?", [dataset_id, idx])
        return self.decoder(dataset_id)(row[0], idx) if row else None

    def examples(self, dataset_id: int) -> list[Example]:
        decode = self.decoder(dataset_id)
        rows = self.db.rows("SELECT idx, raw FROM examples WHERE dataset_id=? ORDER BY idx", [dataset_id])
        return [decode(raw, idx) for idx, raw in rows]

    def examples_at(self, dataset_id: int, idxs: Iterable[int]) -> dict[int, Example]:
        """Some examples by record number."""
        wanted = sorted(set(idxs))
        if not wanted:
            return {}
        decode = self.decoder(dataset_id)
        rows = self.db.rows("SELECT idx, raw FROM examples WHERE dataset_id=? AND list_contains(?, idx)",
                            [dataset_id, wanted])
        return {i: decode(raw, i) for i, raw in rows}

    def indices(self, dataset_id: int) -> list[int]:
        """Every record number of a dataset, in order."""
        return [int(r[0]) for r in self.db.rows("SELECT idx FROM examples WHERE dataset_id=? ORDER BY idx",
                                                [dataset_id])]

    def texts(self, dataset_id: int, idxs: Iterable[int]) -> dict[int, str]:
        """Some examples' texts by record number, without decoding the records."""
        wanted = sorted(set(idxs))
        if not wanted:
            return {}
        rows = self.db.rows("SELECT idx, text FROM examples WHERE dataset_id=? "
                            "AND idx IN (SELECT unnest(?::INTEGER[]))", [dataset_id, wanted])
        return {int(i): text or "" for i, text in rows}

    def query(self, dataset_id: int, *, substring: str = "", regex: str = "",
              types: Iterable[str] = (), nested_only: bool = False, predicate: str = "",
              limit: int = 50, offset: int = 0, timeout: float | None = None) -> ExamplePage:
        """Filter a dataset's examples; a bad regex or SQL predicate comes back as ``error``."""
        where = ["dataset_id = ?"]
        params: list[Any] = [dataset_id]
        if substring:
            where.append("(contains(text, ?) OR contains(coalesce(text2, ''), ?) OR contains(key, ?))")
            params += [substring, substring, substring]
        wanted_types = list(types)
        if wanted_types:
            where.append("list_has_any(types, ?)")
            params.append(wanted_types)
        if nested_only:
            where.append("nesting_depth > 1")
        if regex or predicate.strip():
            # The two filters a visitor types freely run bounded, in a worker (see filtered()).
            try:
                matching = self.filtered(dataset_id, FilterRequest(predicate, regex, EXAMPLE_COLUMN_TYPES),
                                         timeout=timeout)
            except PredicateRefused as exc:
                return ExamplePage(0, _empty_frame(), str(exc))
            where.append("idx IN (SELECT unnest(?::INTEGER[]))")
            params.append(matching)
        cols = ", ".join(EXAMPLE_COLUMNS)
        base = f"SELECT {cols} FROM examples WHERE {' AND '.join(where)}"
        try:
            total = int(self.db.scalar(f"SELECT count(*) FROM ({base})", params))
            frame = self.db.execute(f"{base} ORDER BY idx LIMIT {int(limit)} OFFSET {int(offset)}",
                                    params).df()
        except duckdb.Error as exc:
            return ExamplePage(0, _empty_frame(), short_error(exc))
        return ExamplePage(total, frame)

    def matching(self, dataset_id: int, predicate: str, *, timeout: float | None = None) -> list[int]:
        """Record numbers of the examples a user's SQL predicate selects (see :meth:`filtered`).
        Raises :class:`PredicateRefused` (a timeout too)."""
        if not predicate.strip():
            raise PredicateRefused("the filter is empty")
        return self.filtered(dataset_id, FilterRequest(predicate, columns=EXAMPLE_COLUMN_TYPES), timeout=timeout)

    def check_predicate(self, predicate: str, *, timeout: float | None = None) -> None:
        """:class:`PredicateRefused` unless a user's SQL predicate may run (a slice being saved):
        checked under the same bounds as :meth:`filtered`, with no examples behind it."""
        if not predicate.strip():
            raise PredicateRefused("the filter is empty")
        limit = time_limit(timeout)
        with _SESSIONS.hold(self.db.session, wait=limit):
            _FILTERS.matching_indices(None, lambda: None, FilterRequest(predicate, columns=EXAMPLE_COLUMN_TYPES),
                                      timeout=limit)

    def filtered(self, dataset_id: int, request: FilterRequest, *, timeout: float | None = None) -> list[int]:
        """Record numbers of the examples ``request`` keeps, never on the workspace connection:
        the predicate is allow-listed and rebuilt (:mod:`cblue_core.store.user_sql`) and run with
        the regular expression in a locked sandbox holding only this split's example columns
        (:mod:`cblue_core.store.sandbox`), both in a worker process killed after ``timeout``
        seconds (default ``$CBLUE_STUDIO_SQL_TIMEOUT``; :mod:`cblue_core.store.filter_worker`),
        one at a time per session (:mod:`cblue_core.store.session_gate`)."""
        row = self.db.one("SELECT task, sha256 FROM datasets WHERE dataset_id=?", [dataset_id])
        if row is None:
            raise WorkspaceError(f"no dataset {dataset_id} in the workspace")
        limit = time_limit(timeout)
        # The same content gives the same example columns, whichever workspace holds it.
        key = (str(row[0]), str(row[1]))
        with _SESSIONS.hold(self.db.session, wait=limit):
            return _FILTERS.matching_indices(key, lambda: self._example_columns(dataset_id), request,
                                             timeout=limit)

    def _example_columns(self, dataset_id: int) -> pa.Table:
        cols = ", ".join(EXAMPLE_COLUMNS)
        return self.db.arrow(f"SELECT {cols} FROM examples WHERE dataset_id=? ORDER BY idx", [dataset_id])

    def mention_counts(self, dataset_id: int) -> list[tuple[str, str, int]]:
        """(mention, type, n) over the split's gold spans as ingested, dialogue turns included:
        the training-set statistics of the bucketed analysis, read without decoding records."""
        return [(str(m), str(t), int(n)) for m, t, n in self.db.rows(
            "SELECT mention, type, count(*) FROM gold_spans WHERE dataset_id=? AND version=0"
            " AND mention IS NOT NULL GROUP BY ALL ORDER BY ALL", [dataset_id])]

    def label_counts(self, dataset_id: int) -> dict[str | None, int]:
        """{example label: n} over the split as ingested (None: examples without a label)."""
        return {None if k is None else str(k): int(n) for k, n in self.db.rows(
            "SELECT label, count(*) FROM examples WHERE dataset_id=? GROUP BY ALL", [dataset_id])}

    def stats(self, dataset_id: int) -> DatasetStats:
        from .stats import compute_stats

        return compute_stats(self.db.con, dataset_id)


_COLUMN_TYPES = {"idx": pa.int32(), "turn": pa.int32(), "start_pos": pa.int32(), "end_pos": pa.int32(),
                 "combined": pa.bool_(), "types": pa.list_(pa.string())}


@dataclass
class PreparedDataset:
    """A validated dataset as plain column lists per table, ready to insert. Built without a
    database, so that several files are prepared in parallel processes; the Arrow tables are
    made only where they are inserted, because pyarrow's list conversion imports pandas and
    that import alone costs each worker process about a second."""

    report: ValidationReport
    columns: dict[str, dict[str, list[Any]]]
    line_ending: str | None = None

    def tables(self) -> dict[str, pa.Table]:
        return {name: pa.table({k: pa.array(v, type=_column_type(k, v)) for k, v in cols.items()})
                for name, cols in self.columns.items()}


def _column_type(name: str, values: list[Any]) -> pa.DataType | None:
    if name in _COLUMN_TYPES:
        return _COLUMN_TYPES[name]
    if not values or values[0] is None or isinstance(values[0], str):
        return pa.string()
    return None   # let Arrow infer (integer counts)


def prepare(loaded: LoadedDataset) -> PreparedDataset:
    ex_cols: dict[str, list[Any]] = {c: [] for c in (
        "idx", "key", "text", "text2", "label", "target", "sub_task", "types", "n_spans",
        "n_triples", "n_terms", "n_events", "n_turns", "nesting_depth", "text_length", "raw")}
    spans: dict[str, list[Any]] = {c: [] for c in ("idx", "turn", "start_pos", "end_pos", "type", "mention")}
    triples: dict[str, list[Any]] = {c: [] for c in ("idx", "subject", "predicate", "object",
                                                     "subject_type", "object_type", "combined")}
    terms: dict[str, list[Any]] = {"idx": [], "term": []}
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
                                           "gold_triples": triples, "gold_terms": terms},
                           line_ending=_line_ending_of(loaded))


_LINE_BREAK_SCAN = 50   # records whose JSON text is searched for a line break


def _line_ending_of(loaded: LoadedDataset) -> str | None:
    """The line ending of the file a dataset was read from: from the records' own JSON text when
    it spans lines (a pretty-printed array), else from the file, read again when the report's
    file is still the content that was validated (same SHA-256); None when neither tells."""
    for text in (loaded.raw_texts or [])[:_LINE_BREAK_SCAN]:
        found = detect_line_ending(text)
        if found is not None:
            return found
    rep = loaded.report
    path = Path(rep.file)
    try:
        if not rep.sha256 or not path.is_file():
            return None
        data = path.read_bytes()
    except OSError:
        return None
    return detect_line_ending(data) if hashlib.sha256(data).hexdigest() == rep.sha256 else None


def _types_of(ex: Example) -> list[str]:
    if not (ex.spans or ex.triples or ex.turns or ex.events):
        return [ex.label] if ex.label not in (None, "") else []
    types = {s.type for s in ex.spans} | {t.predicate for t in ex.triples}
    for turn in ex.turns:
        types |= {s.type for s in turn.spans}
        if turn.act:
            types.add(turn.act)
    types |= {e.tendency or "(present)" for e in ex.events}
    if ex.label:
        types.add(ex.label)
    return sorted(types)


def _empty_frame() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(columns=list(EXAMPLE_COLUMNS))
