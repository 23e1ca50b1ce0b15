"""The error log beside the workspace: where an unexpected exception's details go instead of
the screen. Shared by the command line and the app's pages (no Streamlit here).

What a record holds, and why so little: the files people load are clinical text, possibly
patient data, and exception messages routinely quote the input (``invalid literal for int():
'...'``, a ``KeyError`` on a label, a DuckDB error echoing a value). So a record keeps the
exception's type and its traceback's frames (file, line, function) only; never the message,
the source lines, the arguments or the local variables.
"""
from __future__ import annotations

import errno as errno_codes
import os
import re
import sys
import time
import traceback
from pathlib import Path
from types import TracebackType

from .. import __version__

ENV_LOG = "CBLUE_STUDIO_LOG"
ENV_DB = "CBLUE_STUDIO_DB"    # the workspace's variable (store.workspace.ENV_DB); read here
LOG_NAME = "cblue_studio.log"  # without importing the store, so that logging an error needs nothing else
MAX_BYTES = 2_000_000          # then the log is moved to cblue_studio.log.1 and a new one started

__all__ = ["ENV_LOG", "log_exception", "log_path", "one_line"]

# A frame line of a traceback formatted in another process (concurrent.futures passes a worker's
# traceback on as text). Only the three fields are kept: the rest of that text holds the message.
_REMOTE_FRAME = re.compile(r'^\s*File "([^"\n]+\.py)", line (\d+), in ([\w<>.]+)\s*$', re.ASCII)


def log_path(db: str | Path | None = None) -> Path:
    """``$CBLUE_STUDIO_LOG``; else ``cblue_studio.log`` in the folder of the workspace file
    (``db``, else ``$CBLUE_STUDIO_DB``), else in ``workspace/`` under the working directory."""
    env = os.environ.get(ENV_LOG)
    if env:
        return Path(env)
    for candidate in (db, os.environ.get(ENV_DB)):
        if candidate and str(candidate) != ":memory:":
            return Path(candidate).parent / LOG_NAME
    return Path.cwd() / "workspace" / LOG_NAME


def log_exception(where: str, exc: BaseException, path: str | Path | None = None) -> Path:
    """Append a timestamped record of ``exc`` (see the module's note on what it holds) to
    ``path`` (default :func:`log_path`) and return the file's path. ``where`` names the command
    or page; it must not carry input either. Raises OSError when the log cannot be written."""
    target = Path(path) if path is not None else log_path()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S%z")
    head = f"=== {stamp} pid {os.getpid()} cblue_core {__version__} python {sys.version.split()[0]}: {where}"
    lines = [head, *describe(exc)]
    text = "\n".join(lines) + "\n\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    _rotate(target)
    # 0o600: paths and frames are not patient data, but the log needs no other readers.
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))   # one write per record: processes sharing the log don't interleave
    finally:
        os.close(fd)
    return target


def one_line(exc: BaseException, limit: int = 300) -> str:
    """``Type: first line of the message`` (``Type`` alone when it is empty), at most ``limit``
    characters of message, unprintable characters (a terminal's escape codes) as ``?``: what the
    person who ran the command sees instead of a traceback. Unlike the log, it may quote input;
    it goes only to the screen of whoever supplied it."""
    text = _safe_str(exc).strip()
    first = text.splitlines()[0] if text else ""
    if len(first) > limit:
        first = first[:limit] + "..."
    first = "".join(c if c.isprintable() else "?" for c in first)
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def describe(exc: BaseException) -> list[str]:
    """The record's body for ``exc`` and the exceptions chained to it (causes first, as Python
    prints them)."""
    out: list[str] = []
    seen: set[int] = set()

    def walk(e: BaseException, depth: int) -> None:
        if id(e) in seen or depth > 20:
            return
        seen.add(id(e))
        if e.__cause__ is not None:
            walk(e.__cause__, depth + 1)
            out.append("The above exception was the direct cause of the following:")
        elif e.__context__ is not None and not e.__suppress_context__:
            walk(e.__context__, depth + 1)
            out.append("During handling of the above exception, another exception occurred:")
        out.append("Traceback (most recent call last; messages withheld):")
        out.extend(_frames(e.__traceback__))
        out.extend(_remote_frames(e))
        out.append(_headline(e))
        if isinstance(e, BaseExceptionGroup):
            for i, sub in enumerate(e.exceptions[:20], 1):
                out.append(f"--- sub-exception {i} of {len(e.exceptions)}")
                walk(sub, depth + 1)

    walk(exc, 0)
    return out


def _frames(tb: TracebackType | None) -> list[str]:
    # walk_tb, not format_tb: the formatted form adds source lines and, from 3.13, can add locals.
    return [f'  File "{frame.f_code.co_filename}", line {lineno}, in {frame.f_code.co_name}'
            for frame, lineno in traceback.walk_tb(tb)]


def _remote_frames(exc: BaseException) -> list[str]:
    tb_text = getattr(exc, "tb", None)   # concurrent.futures.process._RemoteTraceback
    if type(exc).__name__ != "_RemoteTraceback" or not isinstance(tb_text, str):
        return []
    frames = [f'  File "{m[1]}", line {m[2]}, in {m[3]}'
              for m in map(_REMOTE_FRAME.match, tb_text.splitlines()) if m]
    return ["  (in a worker process:)"] + frames if frames else []


def _headline(exc: BaseException) -> str:
    cls = type(exc)
    name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    detail = "message withheld"
    if isinstance(exc, OSError) and exc.errno is not None:
        # The errno's name and the system's text for it are fixed strings; the file name is not logged.
        code = errno_codes.errorcode.get(exc.errno, str(exc.errno))
        detail = f"errno {code}: {os.strerror(exc.errno)}; " + detail
    return f"{name} ({detail})"


def _rotate(target: Path) -> None:
    try:
        if target.stat().st_size > MAX_BYTES:
            os.replace(target, target.with_name(target.name + ".1"))
    except FileNotFoundError:
        pass


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not stop the record being written
        return ""
