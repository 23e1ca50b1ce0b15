"""Files written whole or not at all, through a temporary name nobody can plant.

A temporary name that can be guessed (``.out.tmp-<pid>``) lets anyone who can write to the
target folder put a symbolic link there first, and the writer then overwrites the link's
target. Here the temporary file gets a random name and is created with ``O_CREAT | O_EXCL |
O_NOFOLLOW`` (a name that exists, link or not, is never opened), in the target's own folder, so
that :func:`os.replace` moves it into place atomically: a reader sees the old file or the new
one, never half of one, and a link at the target is replaced, not followed.
"""
from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_ATTEMPTS = 16


def _create_temporary(target: Path) -> tuple[int, Path]:
    for _ in range(_ATTEMPTS):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
        try:
            # 0o666 under the process umask: the same mode as a file opened with open(..., "w").
            return os.open(tmp, _FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target} after {_ATTEMPTS} attempts")


@contextmanager
def atomic_writer(path: str | Path, mode: str = "wb", *, encoding: str | None = None,
                  newline: str | None = None) -> Iterator[IO[Any]]:
    """A file object to write ``path``'s new content to; the content replaces ``path`` when the
    block ends without an exception, and is deleted otherwise (``path`` is then unchanged).
    ``mode`` is ``"wb"`` or ``"w"`` (text, with ``encoding`` and ``newline`` as for open())."""
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', not {mode!r}")
    target = Path(path)
    fd, tmp = _create_temporary(target)
    try:
        with os.fdopen(fd, mode, encoding=encoding, newline=newline) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Replace ``path`` with ``data`` atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path) as fh:
        fh.write(data)
    return Path(path)


def write_text_atomic(path: str | Path, text: str, *, encoding: str = "utf-8", newline: str | None = None) -> Path:
    """Replace ``path`` with ``text`` atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path, "w", encoding=encoding, newline=newline) as fh:
        fh.write(text)
    return Path(path)
