"""What to try instead, for the DuckDB errors that a filter over the example columns commonly
meets. DuckDB's first line names the failure in its own terms (``'~~(VARCHAR[],
STRING_LITERAL)'``); a user who typed ``types LIKE '%dis%'`` needs to hear that ``types`` is a list.

>>> hint_for("Binder Error: No function matches the given name and argument types "
...          "'~~(VARCHAR[], STRING_LITERAL)'. You might need to add explicit type casts.")
"`types` is a list of the example's entity types: use list_contains(types, 'dis') or len(types) > 2"
>>> hint_for("Binder Error: Cannot compare values of type VARCHAR and type INTEGER_LITERAL")
"`label`, `key` and the texts are text: quote the value (label = '1')"
>>> hint_for("Parser Error: syntax error at or near \\"x\\"") is None
True
"""
from __future__ import annotations

import re

__all__ = ["hint_for", "with_hint"]

_LIST = "`types` is a list of the example's entity types: use list_contains(types, 'dis') or len(types) > 2"
_TEXT = "`label`, `key` and the texts are text: quote the value (label = '1')"
_NUMBER = "the n_* counts, idx, nesting_depth and text_length are numbers: compare them without quotes (n_spans > 3)"

_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"VARCHAR\[\]"), _LIST),
    (re.compile(r"Cannot compare values of type VARCHAR and type (INTEGER|DECIMAL|DOUBLE|BIGINT)"), _TEXT),
    (re.compile(r"Could not convert string .* when casting from source column"), _TEXT),
    (re.compile(r"Could not convert string '.*' to (INT|DOUBLE|DECIMAL|BIGINT)"), _NUMBER),
    (re.compile(r"Cannot compare values of type (INTEGER|BIGINT|DOUBLE) and type STRING_LITERAL"), _NUMBER),
)


def hint_for(message: str) -> str | None:
    """A plain-language suggestion for a DuckDB error message, or None when there is none."""
    for pattern, hint in _HINTS:
        if pattern.search(message):
            return hint
    return None


def with_hint(message: str) -> str:
    """The message, followed by its hint when there is one."""
    hint = hint_for(message)
    return message if hint is None else f"{message} Hint: {hint}."
