"""A table as CSV for a spreadsheet: UTF-8 with a byte-order mark (so Excel reads Chinese text),
list cells joined by ``|``, and text that a spreadsheet would run as a formula made inert."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

# A cell starting with one of these is a formula in Excel, LibreOffice and Google Sheets; data
# (a predicted span, a user's label) must never become one (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def inert(value: Any) -> Any:
    """A cell value a spreadsheet shows as text: lists and arrays joined by ``|``, a formula-like
    string prefixed with ``'``; numbers and missing values as they are.

    >>> inert("=1+1"), inert(["a", "b"]), inert(3), inert("头痛")
    ("'=1+1", 'a|b', 3, '头痛')
    """
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        value = "|".join("" if v is None else str(v) for v in value)
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def table_csv(frame: pd.DataFrame) -> bytes:
    """The frame as CSV bytes (header row, no index)."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    out = frame.copy()
    for col in out.columns:
        if not (is_numeric_dtype(out[col]) or is_bool_dtype(out[col])):
            out[col] = out[col].astype(object).map(inert)
    text: str = out.to_csv(index=False)
    return text.encode("utf-8-sig")
