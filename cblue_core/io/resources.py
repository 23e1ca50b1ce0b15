"""Reference lists that come with the CBLUE tasks: the ICD-10 Beijing v601 term list (CHIP-CDN),
CHIP-CTC's category.xlsx and CMeIE's 53 schemas.

Each reader takes ``max_bytes``: larger files are refused unread (the app passes its upload limit).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import Defect, FileRefused
from .jsonfile import read_raw
from .limits import MAX_FILE_BYTES
from .xlsx import read_first_sheet


@dataclass(frozen=True)
class IcdTerm:
    code: str
    term: str


@dataclass(frozen=True)
class Category:
    label: str
    zh: str
    group: str


@dataclass(frozen=True)
class Schema:
    subject_type: str
    predicate: str
    object_type: str


@dataclass(frozen=True)
class SurgeryTerm:
    mention: str
    code: str
    term: str


RESOURCE_KINDS = ("icd10", "ctc_categories", "cmeie_schemas", "surgery_terms")


def resource_kind(path: str | Path) -> str | None:
    """Which reference list a file name points to, if any."""
    name = Path(path).name.lower()
    if name.endswith(".xlsx") and ("icd" in name or "国际疾病分类" in name):
        return "icd10"
    if name.endswith(".xlsx") and "category" in name:
        return "ctc_categories"
    if "schema" in name and name.endswith((".json", ".jsonl")):
        return "cmeie_schemas"
    if name.endswith(".tsv") and ("手术" in name or "surgery" in name):
        return "surgery_terms"
    return None


def read_icd10(source: str | Path | bytes, name: str | None = None, *,
               max_bytes: int = MAX_FILE_BYTES) -> list[IcdTerm]:
    """Column 1 = code, column 2 = standard term, no header (as in the official file)."""
    label = name or str(source)
    rows = read_first_sheet(source, label, max_bytes=max_bytes)
    out = []
    for i, row in enumerate(rows):
        code = row[0] if row else None
        term = row[1] if len(row) > 1 else None
        if not isinstance(term, str) or not term.strip():
            raise FileRefused([Defect(label, "no term in the second column", record=i, line=i + 1,
                                      field="column 2", expected="a standard ICD-10 term")])
        out.append(IcdTerm(str(code) if code is not None else "", term.strip()))
    return out


def read_ctc_categories(source: str | Path | bytes, name: str | None = None, *,
                        max_bytes: int = MAX_FILE_BYTES) -> list[Category]:
    label = name or str(source)
    rows = read_first_sheet(source, label, max_bytes=max_bytes)
    if not rows or "Label Name" not in rows[0]:
        raise FileRefused([Defect(label, "no 'Label Name' column in the header row", line=1,
                                  field="Label Name", expected="a header with 'Label Name'")])
    header = [str(h) if h is not None else "" for h in rows[0]]
    col = header.index("Label Name")
    zh_col = header.index("Chinese Label Name") if "Chinese Label Name" in header else None
    grp_col = header.index("Topic Group") if "Topic Group" in header else None
    out, group = [], ""
    for row in rows[1:]:
        if col >= len(row) or not row[col]:
            continue
        if grp_col is not None and grp_col < len(row) and row[grp_col]:
            group = str(row[grp_col])
        zh = str(row[zh_col]) if zh_col is not None and zh_col < len(row) and row[zh_col] else ""
        out.append(Category(str(row[col]).strip(), zh.strip(), group))
    return out


def read_schemas(source: str | Path | bytes, name: str | None = None, *,
                 max_bytes: int = MAX_FILE_BYTES) -> list[Schema]:
    raw = read_raw(source, name, max_bytes=max_bytes)
    out = []
    for i, rec in enumerate(raw.records):
        values = [rec.get(k) for k in _SCHEMA_FIELDS] if isinstance(rec, dict) else []
        strings = [v for v in values if isinstance(v, str)]
        if len(strings) != len(_SCHEMA_FIELDS):
            raise FileRefused([Defect(raw.name, "not a schema record", record=i, line=raw.lines[i],
                                      expected='{"subject_type", "predicate", "object_type"}, '
                                               "three strings")])
        out.append(Schema(*strings))
    return out


_SCHEMA_FIELDS = ("subject_type", "predicate", "object_type")


def read_surgery_terms(source: str | Path | bytes, name: str | None = None, *,
                       max_bytes: int = MAX_FILE_BYTES) -> list[SurgeryTerm]:
    """CBLUE 2.0 CHIP-CDN surgery list: ``mention<TAB>code<TAB>standard term`` per line."""
    raw = read_raw(source, name, container="tsv", max_bytes=max_bytes)
    out = []
    for i, cols in enumerate(raw.records):
        if len(cols) < 3:
            raise FileRefused([Defect(raw.name, f"{len(cols)} columns", record=i, line=raw.lines[i],
                                      expected="mention, code and standard term, tab-separated")])
        out.append(SurgeryTerm(cols[0].strip(), cols[1].strip(), cols[2].strip()))
    return out


READERS = {"icd10": read_icd10, "ctc_categories": read_ctc_categories,
           "cmeie_schemas": read_schemas, "surgery_terms": read_surgery_terms}
