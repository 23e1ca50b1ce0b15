"""Defects found while reading a file: where (file, record or line, field) and what was expected."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Defect:
    """One problem in a file. ``record`` is 0-based; ``line`` is 1-based (None when unknown)."""

    file: str
    message: str
    record: int | None = None
    line: int | None = None
    field: str | None = None
    expected: str | None = None
    code: str = "invalid"

    def __str__(self) -> str:
        where = [self.file]
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.record is not None:
            where.append(f"record {self.record}")
        if self.field:
            where.append(f"field {self.field!r}")
        text = f"{', '.join(where)}: {self.message}"
        if self.expected:
            text += f" (expected {self.expected})"
        return text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class FileRefused(ValueError):
    """A file that cannot be loaded at all; nothing from it is used or stored."""

    def __init__(self, defects: list[Defect]):
        self.defects = defects
        first = defects[0] if defects else None
        more = f" (+{len(defects) - 1} more)" if len(defects) > 1 else ""
        super().__init__(f"{first}{more}" if first else "file refused")


def short_error(exc: BaseException) -> str:
    """The first line of an exception's message (its type name when the message is empty):
    what a page or command shows instead of a trace."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
