"""Minimal, fast reader for the first sheet of an .xlsx file (values only).

openpyxl takes over 3 s for the 40,474-row ICD-10 list; reading the sheet XML directly with
ElementTree takes a fraction of that. Only what the CBLUE resource files use is supported:
shared strings, inline strings, numbers and booleans.

An uploaded workbook is untrusted: whatever is wrong with it (not a zip, a member that
inflates past the limit, a missing sheet, XML that is not UTF-8 or not well nested, a cell
pointing at a shared string that does not exist) is refused with a one-line message.
"""
from __future__ import annotations

import html
import io
import re
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO
from xml.etree import ElementTree as ET

from .errors import Defect, FileRefused, short_error
from .limits import MAX_FILE_BYTES, MAX_XLSX_MEMBER_BYTES, check_regular_file, too_large

_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
# The sheet XML is regular enough for regular expressions, which run in C: 10x faster than
# ElementTree on the 40k-row ICD list. An element's body may not contain the start of another
# element of its kind: an unclosed <row> then fails at the next row instead of making every
# later row scan to the end of the text (quadratic on a hostile sheet).
_SI_RE = re.compile(r"<si>([^<]*(?:<(?!/?si>)[^<]*)*)</si>")
_T_RE = re.compile(r"<t(?:\s[^<>]*)?>([^<]*)</t>")
_ROW_RE = re.compile(r"<row\b[^<>]*?(?:/>|>([^<]*(?:<(?!/?row\b)[^<]*)*)</row>)")
_CELL_RE = re.compile(r"<c\b([^<>]*?)(?:/>|>([^<]*(?:<(?!/?c\b)[^<]*)*)</c>)")
_ROW_START_RE = re.compile(r"<row\b")
_CELL_START_RE = re.compile(r"<c\b")
_WORKSHEET_RE = re.compile(r"<(?:\w+:)?worksheet\b")
_V_RE = re.compile(r"<v>([^<]*)</v>")
_ATTR_R = re.compile(r'\br="([A-Z]+)(\d*)"')
_ATTR_T = re.compile(r'\bt="(\w+)"')

# Excel's own limits: cells past them cannot come from a spreadsheet, and padding a row out to
# a far column or keeping millions of empty rows would take memory the file does not.
MAX_COLUMNS = 16_384               # column XFD
MAX_ROWS = 1_048_576
MAX_CELLS = 10_000_000             # cells kept, empty ones before a value included
MAX_ZIP_ENTRIES = 10_000           # zipfile builds an object per entry before any is read
_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22
_MAX_COMMENT = 0xFFFF


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


def _refused(label: str, message: str, expected: str = "an Excel .xlsx file", *,
             record: int | None = None, field: str | None = None, code: str = "syntax") -> FileRefused:
    return FileRefused([Defect(label, message, record=record, line=None if record is None else record + 1,
                               field=field, expected=expected, code=code)])


def read_first_sheet(source: str | Path | bytes, name: str | None = None, *,
                     max_bytes: int = MAX_FILE_BYTES,
                     max_member_bytes: int = MAX_XLSX_MEMBER_BYTES) -> list[list[object]]:
    """The values of the first worksheet, row by row, trailing empty cells dropped.

    ``max_bytes`` bounds the file, ``max_member_bytes`` what any member inflates to.
    """
    label = name or (str(source) if not isinstance(source, (bytes, bytearray)) else "<upload>")
    fileobj: BinaryIO
    if isinstance(source, (bytes, bytearray)):
        if len(source) > max_bytes:
            raise too_large(label, len(source), max_bytes)
        fileobj = io.BytesIO(source)
    else:
        path = Path(source)
        check_regular_file(path, label, max_bytes)
        try:
            fileobj = path.open("rb")
        except OSError as exc:
            raise _refused(label, f"cannot be read: {exc.strerror or type(exc).__name__}",
                           "a readable file", code="unreadable") from None
    with fileobj:
        _check_directory(fileobj, label)
        try:
            zf = zipfile.ZipFile(fileobj)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
            raise _refused(label, f"not an .xlsx workbook ({short_error(exc)})") from None
        with zf:
            return _read_sheet(zf, label, max_member_bytes)


def _check_directory(fileobj: BinaryIO, label: str) -> None:
    """Refuse a zip whose central directory lists more entries than a workbook has, before
    zipfile reads them all. Only the end-of-directory record is read; whatever else is wrong
    is left to zipfile to report."""
    size = fileobj.seek(0, io.SEEK_END)
    tail_size = min(size, _EOCD_SIZE + _MAX_COMMENT)
    fileobj.seek(size - tail_size)
    tail = fileobj.read(tail_size)
    fileobj.seek(0)
    # As zipfile does: the record without a comment first, then the last one in the tail.
    pos = len(tail) - _EOCD_SIZE if tail[-_EOCD_SIZE:-_EOCD_SIZE + 4] == _EOCD else tail.rfind(_EOCD)
    if pos < 0 or len(tail) - pos < _EOCD_SIZE:
        return
    entries = int.from_bytes(tail[pos + 10:pos + 12], "little")
    if entries > MAX_ZIP_ENTRIES:  # 0xFFFF, the zip64 marker, included: no workbook needs it
        raise _refused(label, f"the zip directory lists {entries:,} entries",
                       f"an .xlsx workbook (at most {MAX_ZIP_ENTRIES:,} entries)", code="limit")


def _read_member(zf: zipfile.ZipFile, member: str, label: str, cap: int) -> bytes:
    """A member's bytes, refused when it inflates past ``cap``: first by the size its header
    declares, then while inflating, since a header can lie."""
    try:
        info = zf.getinfo(member)
    except KeyError:
        raise _refused(label, f"the workbook has no {member}") from None
    if info.file_size > cap:
        raise too_large(label, info.file_size, cap, what=f"member {member} uncompressed")
    chunks = []
    total = 0
    try:
        with zf.open(info) as f:
            while chunk := f.read(1 << 20):
                total += len(chunk)
                if total > cap:
                    raise too_large(label, total, cap, what=f"member {member} uncompressed (at least)")
                chunks.append(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError,
            ValueError) as exc:
        # RuntimeError: an encrypted member; NotImplementedError: an unknown compression.
        raise _refused(label, f"member {member} cannot be decompressed ({short_error(exc)})") from None
    return b"".join(chunks)


def _read_xml(zf: zipfile.ZipFile, member: str, label: str, cap: int) -> str:
    data = _read_member(zf, member, label, cap)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refused(label, f"member {member} is not UTF-8 XML: byte 0x{data[exc.start]:02x} at "
                       f"offset {exc.start} cannot be decoded", code="encoding") from None


def _read_sheet(zf: zipfile.ZipFile, label: str, cap: int) -> list[list[object]]:
    names = set(zf.namelist())
    shared: list[str] = []
    if "xl/sharedStrings.xml" in names:
        xml = _read_xml(zf, "xl/sharedStrings.xml", label, cap)
        shared = [_unescape("".join(_T_RE.findall(si))) for si in _SI_RE.findall(xml)]
    sheet = _first_sheet_path(zf, names, label, cap)
    xml = _read_xml(zf, sheet, label, cap)
    if not _WORKSHEET_RE.search(xml):
        raise _refused(label, f"{sheet} is not worksheet XML (no <worksheet> element)")
    row_bodies = _ROW_RE.findall(xml)
    if len(row_bodies) != len(_ROW_START_RE.findall(xml)):
        raise _refused(label, f"malformed XML in {sheet}: a <row> element is not closed")
    if len(row_bodies) > MAX_ROWS:
        raise _refused(label, f"{len(row_bodies):,} rows in {sheet}", f"at most {MAX_ROWS:,} rows",
                       code="limit")
    padding = MAX_CELLS   # cells left to keep, empty ones before a value included
    rows: list[list[object]] = []
    for r, row_xml in enumerate(row_bodies):
        row: list[object] = []
        cells = _CELL_RE.findall(row_xml)
        # str.count is cheap but also counts <color> in rich text: the regex settles a mismatch.
        if len(cells) != row_xml.count("<c") and len(cells) != len(_CELL_START_RE.findall(row_xml)):
            raise _refused(label, f"malformed XML in {sheet}: a <c> element of row {r + 1} is not "
                           "closed", record=r)
        padding -= len(cells)
        for attrs, body in cells:
            ref = _ATTR_R.search(attrs)
            idx = _col_index(ref.group(1)) if ref else len(row)
            if idx > len(row):
                if idx >= MAX_COLUMNS:
                    where = _cell_name(ref, r, len(row))
                    raise _refused(label, f"cell {where} lies beyond column XFD", "at most 16,384 columns",
                                   record=r, field=f"cell {where}", code="limit")
                padding -= idx - len(row)
                if padding < 0:
                    break
                row.extend([None] * (idx - len(row)))
            kind = _ATTR_T.search(attrs)
            row.append(_cell_value(kind.group(1) if kind else None, body, shared, label, r, ref, len(row)))
        if padding < 0:
            raise _refused(label, f"more than {MAX_CELLS:,} cells in {sheet}, empty ones before a value "
                           "included", f"at most {MAX_CELLS:,} cells", record=r, code="limit")
        while row and row[-1] is None:
            row.pop()
        rows.append(row)
    return rows


def _cell_name(ref: re.Match[str] | None, row: int, column: int) -> str:
    return f"{ref.group(1)}{ref.group(2)}" if ref else f"{_column_name(column)}{row + 1}"


def _column_name(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = chr(65 + rem) + name
    return name


def _first_sheet_path(zf: zipfile.ZipFile, names: set[str], label: str, cap: int) -> str:
    target = _first_sheet_target(zf, names, label, cap)
    if target is not None:
        if target not in names:
            raise _refused(label, f"the workbook's first sheet {target} is missing")
        return target
    sheets = sorted(n for n in names if n.startswith("xl/worksheets/sheet"))
    if not sheets:
        raise _refused(label, "the workbook has no worksheet")
    return sheets[0]


def _first_sheet_target(zf: zipfile.ZipFile, names: set[str], label: str, cap: int) -> str | None:
    """The member the workbook names as its first sheet; None when the workbook does not say
    (the sheets are then taken in name order, as before)."""
    if "xl/workbook.xml" not in names or "xl/_rels/workbook.xml.rels" not in names:
        return None
    try:
        wb = ET.fromstring(_read_member(zf, "xl/workbook.xml", label, cap))
        rels = ET.fromstring(_read_member(zf, "xl/_rels/workbook.xml.rels", label, cap))
    except ET.ParseError:
        return None
    first = wb.find(f"{_NS}sheets/{_NS}sheet")
    rid = first.get(f"{_REL_NS}id") if first is not None else None
    for rel in rels:
        target = rel.get("Target")
        if rid is not None and rel.get("Id") == rid and target:
            target = target.lstrip("/")
            return target if target.startswith("xl/") else f"xl/{target}"
    return None


def _cell_value(kind: str | None, body: str, shared: list[str], label: str, row: int,
                ref: re.Match[str] | None, column: int) -> object:
    if kind == "inlineStr":
        return _unescape("".join(_T_RE.findall(body)))
    v = _V_RE.search(body)
    if v is None:
        return None
    text = v.group(1)
    if kind == "s":
        index = text.strip()
        # isdecimal, not isdigit: int() refuses "²"; ten digits: more strings than a member holds.
        if not (index.isdecimal() and len(index) <= 10) or int(index) >= len(shared):
            where = _cell_name(ref, row, column)
            raise _refused(label, f"cell {where} points at shared string {text[:20]!r}, which does not "
                           f"exist", f"an index below {len(shared)}, the number of shared strings",
                           record=row, field=f"cell {where}")
        return shared[int(index)]
    if kind == "b":
        return text == "1"
    if kind in ("str", "e", "d"):  # d: an ISO 8601 date, kept as written
        return _unescape(text)
    try:
        num = float(text)
    except ValueError:
        where = _cell_name(ref, row, column)
        raise _refused(label, f"cell {where} holds {text[:20]!r}, not a number", "a number",
                       record=row, field=f"cell {where}") from None
    return int(num) if num.is_integer() else num

