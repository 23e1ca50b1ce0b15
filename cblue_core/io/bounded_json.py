"""JSON parsed under the studio's limits, whatever file or column it comes from.

Python's ``json`` recurses once per nested array or object, so a line of ten thousand ``[``
ends in RecursionError, which no caller expects; the nesting depth is checked on the bytes
first (:func:`.limits.check_json_depth`, in C), and a file goes through
:func:`.limits.read_file_bytes` (regular files only, bounded size).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .limits import MAX_FILE_BYTES, MAX_JSON_DEPTH, check_json_depth, read_file_bytes


def loads(data: str | bytes, label: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(data)`` once its nesting is known to be at most ``max_depth``: FileRefused
    (a ValueError) naming ``label`` and the line when deeper, ValueError when not JSON."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    check_json_depth(raw, label, max_depth)
    return json.loads(data)


def read_json(path: str | Path, label: str | None = None, *, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """The JSON value in the regular file ``path`` (at most ``max_bytes``, BOM allowed);
    FileRefused or ValueError (not JSON, not UTF-8) otherwise."""
    path = Path(path)
    name = label or path.name
    data = read_file_bytes(path, name, max_bytes)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return loads(data.decode("utf-8"), name)
