"""Reference lists stored beside the datasets: the ICD-10 terms, CHIP-CTC categories, CMeIE
schemas and the CDN surgery list (one current list per kind)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from typing import Any

import pyarrow as pa

from ..io.resources import Category, IcdTerm, Schema
from .access import Access, writes
from .database import Database
from .datasets import IngestResult

RESOURCE_TABLES = {"icd10": "icd_terms", "ctc_categories": "ctc_categories",
                   "cmeie_schemas": "cmeie_schemas", "surgery_terms": "surgery_terms"}
_RENAME = {"group": "topic_group"}   # a reserved word in SQL


def _columns_of(rows: Sequence[Any]) -> dict[str, list[Any]]:
    """Dataclass rows -> columns named as their table's columns."""
    names = [f.name for f in fields(rows[0])] if rows and is_dataclass(rows[0]) else []
    return {_RENAME.get(n, n): [getattr(r, n) for r in rows] for n in names}


class ResourceStore:
    READS = ("all", "icd_terms", "schemas", "categories")

    def __init__(self, db: Database, access: Access | None = None) -> None:
        self.db = db
        self.access = access or Access()

    @writes("resource.ingest", target=lambda a: f"{a.get('kind')} from {a.get('name')}")
    def ingest(self, kind: str, name: str, sha256: str, rows: Sequence[Any]) -> IngestResult:
        if self.db.one("SELECT 1 FROM resources WHERE kind=? AND sha256=?", [kind, sha256]):
            return IngestResult(0, False, len(rows), f"{name} is already in the workspace")
        table = RESOURCE_TABLES[kind]
        columns = _columns_of(rows)
        with self.db.transaction():
            self.db.execute(f"DELETE FROM {table}")  # one current list per kind
            self.db.execute("DELETE FROM resources WHERE kind=?", [kind])
            if columns:
                self.db.insert_arrow(table, pa.table(columns))
            self.db.execute("INSERT INTO resources (kind, name, sha256, rows) VALUES (?,?,?,?)",
                            [kind, name, sha256, len(rows)])
        return IngestResult(0, True, len(rows), f"stored {len(rows)} rows of {kind} from {name}")

    def all(self) -> list[tuple[str, str, int]]:
        return [(k, n, r) for k, n, r in self.db.rows("SELECT kind, name, rows FROM resources ORDER BY kind")]

    def icd_terms(self) -> list[IcdTerm]:
        return [IcdTerm(c or "", t) for c, t in self.db.rows("SELECT code, term FROM icd_terms")]

    def schemas(self) -> list[Schema]:
        return [Schema(*r) for r in self.db.rows(
            "SELECT subject_type, predicate, object_type FROM cmeie_schemas")]

    def categories(self) -> list[Category]:
        return [Category(*r) for r in self.db.rows("SELECT label, zh, topic_group FROM ctc_categories")]
