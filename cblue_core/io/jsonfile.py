"""Raw record loading: bytes -> list of JSON records, with the container detected from content.

CBLUE ships JSON arrays, JSON lines under a ``.json`` name (CMeIE), dialogue files that are one
JSON object keyed by dialogue id (IMCS-V2) and TSV (KUAKE-IR). Files are UTF-8, with or
without a byte-order mark; anything else is refused with the position of the first bad byte.
What no benchmark file holds and a parser or the store would choke on is refused too, with its
line: files over the size limit or that are not regular files, JSON nested too deep, integer
literals too long and strings holding a lone surrogate escape (see :mod:`.limits`).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import Defect, FileRefused
from .limits import MAX_FILE_BYTES, MAX_INT_DIGITS, check_json_depth, read_file_bytes, too_large


@dataclass
class RawFile:
    """Records as parsed from one file, before any task-specific decoding."""

    name: str
    container: str                  # "array", "lines", "object" or "tsv"
    records: list[Any]
    lines: list[int]                # 1-based line where each record starts
    sha256: str = ""
    texts: list[str] | None = None  # each record's JSON text as in the file (arrays, lines)


class _LongInteger(ValueError):
    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def _parse_int(literal: str) -> int:
    # int() of a long literal is quadratic, and past 4,300 digits it raises a ValueError that
    # would escape as a trace: refuse it before converting.
    if len(literal) - literal.startswith("-") > MAX_INT_DIGITS:
        raise _LongInteger(literal)
    return int(literal)


_DECODER = json.JSONDecoder(parse_int=_parse_int)


def _long_integer(name: str, literal: str, text: str, start: int = 0, record: int | None = None,
                  line: int | None = None) -> FileRefused:
    if line is None:
        pos = text.find(literal, start)
        line = _line_of(text, pos) if pos >= 0 else None
    digits = len(literal) - literal.startswith("-")
    return FileRefused([Defect(name, f"integer literal of {digits:,} digits", record=record, line=line,
                               code="limit", expected=f"an integer of at most {MAX_INT_DIGITS} digits")])


def decode_text(data: bytes, name: str) -> str:
    if not data or data.isspace():  # isspace, not strip: no copy of a large file
        raise FileRefused([Defect(name, "the file is empty", code="empty",
                                  expected="at least one record")])
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FileRefused([Defect(
            name, f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} cannot be decoded",
            line=line, code="encoding",
            expected="UTF-8 text (convert GBK/GB18030 files with iconv -f GB18030 -t UTF-8)")]) from None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def parse_json_container(text: str, name: str, data: bytes | None = None) -> RawFile:
    """Detect and parse a JSON array, a JSON object or JSON lines from the content.

    ``data``: the UTF-8 bytes ``text`` was decoded from, when the caller has them (the nesting
    depth is checked on bytes, before json sees the text).
    """
    check_json_depth(text.encode("utf-8", "surrogatepass") if data is None else data, name)
    raw = _parse_json_container(text, name)
    if _SURROGATE_ESCAPE_RE.search(text):
        _refuse_lone_surrogates(raw)
    return raw


def _parse_json_container(text: str, name: str) -> RawFile:
    stripped = text.lstrip()
    head = stripped[:1]
    if head == "[":
        fast = _parse_array(text, name)
        if fast is not None:
            return fast
    if head in "[{":
        try:
            value = _DECODER.decode(text)
        except json.JSONDecodeError as whole_err:
            if head == "{":
                return _parse_lines(text, name)  # many objects, one per line
            raise _json_refusal(name, whole_err) from None
        except _LongInteger as exc:
            raise _long_integer(name, exc.literal, text) from None
        offset = len(text) - len(stripped)
        if isinstance(value, list):
            return RawFile(name, "array", value, _array_lines(text, value, offset))
        if isinstance(value, dict):
            # One object: either a single JSON-lines record or a {key: record} mapping.
            if value and all(isinstance(v, dict) for v in value.values()) and not _looks_like_record(value):
                keys = list(value)
                return RawFile(name, "object", [{"__key__": k, **value[k]} for k in keys],
                               [1] * len(keys))
            return RawFile(name, "lines", [value], [_line_of(text, offset)])
    raise FileRefused([Defect(name, "not JSON: the content starts with "
                              f"{stripped[:20]!r}", line=_line_of(text, len(text) - len(stripped)),
                              code="syntax", expected="a JSON array, JSON lines or a JSON object")])


_WS = " \t\r\n"


def _parse_array(text: str, name: str) -> RawFile | None:
    """One pass over a JSON array: each element's value, start line and source text (stored
    as the record's raw JSON, so nothing is serialised again). None: not a well-formed array
    of values (the caller then reports the error from a whole-document parse)."""
    decode = _DECODER.raw_decode
    n = len(text)
    pos = text.index("[") + 1
    records: list[Any] = []
    lines: list[int] = []
    texts: list[str] = []
    line, last = 1, 0
    while True:
        while pos < n and text[pos] in _WS:
            pos += 1
        if pos < n and text[pos] == "]":
            break
        try:
            value, end = decode(text, pos)
        except json.JSONDecodeError:
            return None
        except _LongInteger as exc:
            raise _long_integer(name, exc.literal, text, pos, record=len(records)) from None
        line += text.count("\n", last, pos)
        last = pos
        records.append(value)
        lines.append(line)
        texts.append(text[pos:end])
        pos = end
        while pos < n and text[pos] in _WS:
            pos += 1
        if pos < n and text[pos] == ",":
            pos += 1
            continue
        if pos < n and text[pos] == "]":
            break
        return None
    if text[pos + 1:].strip():
        return None
    return RawFile(name, "array", records, lines, texts=texts)


def _looks_like_record(value: dict[str, Any]) -> bool:
    return any(k in value for k in ("text", "id", "input", "sample_id", "query", "dialog_id"))


def _parse_lines(text: str, name: str) -> RawFile:
    records: list[Any] = []
    lines: list[int] = []
    texts: list[str] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        texts.append(line.strip())
        try:
            records.append(_DECODER.decode(line))
        except json.JSONDecodeError as err:
            raise FileRefused([Defect(
                name, f"invalid JSON on this line: {err.msg} at column {err.colno}",
                line=lineno, record=len(records), code="syntax",
                expected="one complete JSON object per line")]) from None
        except _LongInteger as exc:
            raise _long_integer(name, exc.literal, text, record=len(records), line=lineno) from None
        lines.append(lineno)
    return RawFile(name, "lines", records, lines, texts=texts)


# A lone surrogate can only come from a \uD800-\uDFFF escape (the text was decoded as strict
# UTF-8), and json accepts one; the store cannot encode it, so only files with such an escape
# are searched record by record.
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_MAX_SURROGATE_DEFECTS = 20


def _refuse_lone_surrogates(raw: RawFile) -> None:
    defects = []
    for i, rec in enumerate(raw.records):
        path = _surrogate_path(rec, "")
        if path is None:
            continue
        defects.append(Defect(
            raw.name, "a string holds a lone surrogate escape (\\ud800-\\udfff without its pair), "
            "which is not a character", record=i, line=raw.lines[i], field=path or None, code="encoding",
            expected="valid Unicode text: surrogate escapes only in high-low pairs"))
        if len(defects) >= _MAX_SURROGATE_DEFECTS:
            break
    if defects:
        raise FileRefused(defects)


def _surrogate_path(value: Any, path: str) -> str | None:
    """The path of the first string (value or key) in ``value`` holding a lone surrogate.
    Recursion is bounded: the text passed the JSON depth limit."""
    if isinstance(value, str):
        return path if _SURROGATE_RE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            # The key itself may be the bad string: name it printably, it ends up in messages.
            sub = f"{path}.{_printable(key)}" if path else _printable(key)
            if _SURROGATE_RE.search(key):
                return sub
            found = _surrogate_path(item, sub)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _surrogate_path(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _printable(key: str) -> str:
    return key.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace") \
        if _SURROGATE_RE.search(key) else key


def _json_refusal(name: str, err: json.JSONDecodeError) -> FileRefused:
    truncated = err.pos >= len(err.doc.rstrip()) - 1 or not err.doc.rstrip().endswith(("]", "}"))
    msg = (f"truncated JSON: the file ends before the array is closed ({err.msg})" if truncated
           else f"invalid JSON: {err.msg} at column {err.colno}")
    return FileRefused([Defect(name, msg, line=err.lineno, code="syntax",
                               expected="a complete JSON array or one JSON object per line")])


def _array_lines(text: str, value: list[Any], offset: int) -> list[int]:
    """Approximate start line of each array element (exact for one-object-per-line layouts)."""
    if not value:
        return []
    lines: list[int] = []
    decoder = _DECODER
    pos = text.index("[", offset) + 1
    n = len(text)
    last = pos
    for _ in value:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        lines.append(_line_of(text, pos) if not lines else lines[-1] + text.count("\n", last, pos))
        last = pos
        try:
            _, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        pos = end
    while len(lines) < len(value):
        lines.append(lines[-1] if lines else 1)
    return lines


def parse_tsv(text: str, name: str, min_columns: int = 2) -> RawFile:
    records: list[Any] = []
    lines: list[int] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < min_columns:
            raise FileRefused([Defect(name, f"{len(cols)} tab-separated column(s)", line=lineno,
                                      record=len(records), code="syntax",
                                      expected=f"at least {min_columns} columns")])
        records.append(cols)
        lines.append(lineno)
    return RawFile(name, "tsv", records, lines)


def read_raw(source: str | Path | bytes, name: str | None = None, container: str = "json",
             max_bytes: int = MAX_FILE_BYTES) -> RawFile:
    """Read a file (path or bytes) into raw records; ``name`` labels messages for bytes input.

    ``max_bytes``: larger files are refused before they are read (the app passes its upload
    limit); so are paths that are not regular files (devices, pipes).
    """
    if isinstance(source, (bytes, bytearray)):
        data, label = bytes(source), name or "<upload>"
        if len(data) > max_bytes:
            raise too_large(label, len(data), max_bytes)
    else:
        path = Path(source)
        label = name or str(path)
        data = read_file_bytes(path, label, max_bytes)
    text = decode_text(data, label)
    raw = parse_tsv(text, label) if container == "tsv" else parse_json_container(text, label, data)
    if not raw.records:
        raise FileRefused([Defect(label, "the file holds no records", code="empty",
                                  expected="at least one record")])
    raw.sha256 = hashlib.sha256(data).hexdigest()
    return raw
