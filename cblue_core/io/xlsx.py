"""Minimal, fast reader for the first sheet of an .xlsx file (values only).

openpyxl takes over 3 s for the 40,474-row ICD-10 list; reading the sheet XML directly with
ElementTree takes a fraction of that. Only what the CBLUE resource files use is supported:
shared strings, inline strings, numbers and booleans.
"""
from __future__ import annotations

import html
import io
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

from .errors import Defect, FileRefused

_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
# The sheet XML is regular enough for regular expressions, which run in C: 10x faster than
# ElementTree on the 40k-row ICD list.
_SI_RE = re.compile(r"<si>(.*?)</si>", re.S)
_T_RE = re.compile(r"<t(?:\s[^>]*)?>(.*?)</t>", re.S)
_ROW_RE = re.compile(r"<row\b[^>]*?(?:/>|>(.*?)</row>)", re.S)
_CELL_RE = re.compile(r"<c\b([^>]*?)(?:/>|>(.*?)</c>)", re.S)
_V_RE = re.compile(r"<v>(.*?)</v>", re.S)
_ATTR_R = re.compile(r'\br="([A-Z]+)')
_ATTR_T = re.compile(r'\bt="(\w+)"')


def _col_index(ref: str) -> int:
    n = 0
    for ch in ref:
        if ch < "A":  # digits: the row number starts
            break
        n = n * 26 + (ord(ch) - 64)
    return n - 1


def _unescape(text: str) -> str:
    if "\r" in text:  # XML parsers normalise literal line ends (an escaped &#13; stays)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return html.unescape(text) if "&" in text else text


def read_first_sheet(source: str | Path | bytes, name: str | None = None) -> list[list[object]]:
    label = name or (str(source) if not isinstance(source, (bytes, bytearray)) else "<upload>")
    try:
        zf = zipfile.ZipFile(io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source)
    except (zipfile.BadZipFile, FileNotFoundError, IsADirectoryError) as exc:
        raise FileRefused([Defect(label, f"not an .xlsx workbook ({exc})", code="syntax",
                                  expected="an Excel .xlsx file")]) from None
    with zf:
        names = set(zf.namelist())
        shared: list[str] = []
        if "xl/sharedStrings.xml" in names:
            xml = zf.read("xl/sharedStrings.xml").decode("utf-8")
            shared = [_unescape("".join(_T_RE.findall(si))) for si in _SI_RE.findall(xml)]
        xml = zf.read(_first_sheet_path(zf, names)).decode("utf-8")
        rows: list[list[object]] = []
        for row_xml in _ROW_RE.findall(xml):
            row: list[object] = []
            for attrs, body in _CELL_RE.findall(row_xml):
                ref = _ATTR_R.search(attrs)
                idx = _col_index(ref.group(1)) if ref else len(row)
                while len(row) < idx:
                    row.append(None)
                kind = _ATTR_T.search(attrs)
                row.append(_cell_value(kind.group(1) if kind else None, body, shared))
            while row and row[-1] is None:
                row.pop()
            rows.append(row)
        return rows


def _first_sheet_path(zf: zipfile.ZipFile, names: set[str]) -> str:
    try:
        wb = ET.fromstring(zf.read("xl/workbook.xml"))
        rels = ET.fromstring(zf.read("xl/_rels/workbook.xml.rels"))
        first = wb.find(f"{_NS}sheets/{_NS}sheet")
        rid = first.get(f"{_REL_NS}id")
        for rel in rels:
            if rel.get("Id") == rid:
                target = rel.get("Target").lstrip("/")
                return target if target.startswith("xl/") else f"xl/{target}"
    except (KeyError, AttributeError, ET.ParseError):
        pass
    sheets = sorted(n for n in names if n.startswith("xl/worksheets/sheet"))
    if not sheets:
        raise FileRefused([Defect("xlsx", "the workbook has no worksheet", code="syntax")])
    return sheets[0]


def _cell_value(kind: str | None, body: str, shared: list[str]) -> object:
    if kind == "inlineStr":
        return _unescape("".join(_T_RE.findall(body)))
    v = _V_RE.search(body)
    if v is None:
        return None
    text = v.group(1)
    if kind == "s":
        return shared[int(text)]
    if kind == "b":
        return text == "1"
    if kind in ("str", "e"):
        return _unescape(text)
    num = float(text)
    return int(num) if num.is_integer() else num
