"""The command line's output rules, shared by every command family: one JSON printer, the
plain-text escaping of stored values (:mod:`cblue_core.render.terminal`), one failure path with
its exit codes, and the opening of the workspace a reading command names."""
from __future__ import annotations

import json
import math
import os
import select
import sys
from pathlib import Path
from typing import Any

from ..io.logs import log_exception, log_path, one_line
from ..render.terminal import terminal_cell, terminal_text
from ..store.workspace import Workspace, WorkspaceError, connect, default_db_path

__all__ = ["EXIT_CLOSED_PIPE", "EXIT_INTERRUPTED", "EXIT_UNEXPECTED", "fail", "json_cell", "open_existing",
           "output_closed", "print_json", "stdout_closed", "terminal_cell", "terminal_text", "unexpected"]

# Exit statuses beyond a command's own 0 (success), 1 (input refused) and 2 (usage):
EXIT_UNEXPECTED = 3      # a bug or an unforeseen condition: one line here, the traceback in the log
EXIT_INTERRUPTED = 130   # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_CLOSED_PIPE = 141   # 128 + SIGPIPE, as a shell reports a writer that `head` stopped
MESSAGE_CHARS = 300      # of an unexpected exception's message on stderr, so that it stays one line


def print_json(obj: Any, indent: int | None = 2) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=indent))


def fail(args, code: int, message: str, shown: str | None = None, **extra) -> int:
    """Say why a command failed: ``shown`` (default ``error: message``) on stderr and, under
    ``--json`` (``args.json``, or ``args`` itself when a command passes the flag), ``{"error":
    message, **extra}`` as the one JSON object on stdout. Returns ``code``."""
    try:
        print(f"error: {message}" if shown is None else shown, file=sys.stderr)
    except OSError:   # nowhere left to say it
        pass
    if (args if isinstance(args, bool) else getattr(args, "json", False)):
        try:
            print_json({"error": message, **extra})
            sys.stdout.flush()
        except BrokenPipeError:
            return output_closed()
    return code


def open_existing(db: str | None) -> Workspace:
    """The workspace a reading command names; it must exist (a typo must not create one). Opened
    for writing so that a workspace of an older schema is migrated on the way."""
    path = Path(db) if db else default_db_path()
    if not path.is_file():
        raise WorkspaceError(f"no workspace at {path} (create one with `ingest`, or start the app)")
    return connect(path)


def json_cell(value: object) -> object:
    """A cell as JSON: lists for arrays, None for missing values, Python numbers."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def unexpected(args, argv: list[str], exc: Exception) -> int:
    """An exception no command expects: a line on stderr (and --json's object), the traceback
    only in the log, exit status 3."""
    command = getattr(args, "command", None) or "(parsing arguments)"
    target = log_path(getattr(args, "db", None))
    logged: str | None = None
    try:
        logged = str(log_exception(f"python -m cblue_core {command}", exc, target))
        details = f"details: {logged}"
    except OSError as log_exc:
        details = f"no details: cannot write {target}: {log_exc.strerror or type(log_exc).__name__}"
    summary = one_line(exc, MESSAGE_CHARS)
    return fail(args, EXIT_UNEXPECTED, summary, shown=f"error: {summary} ({details})", log=logged)


def stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone: a BrokenPipeError from another pipe is a bug."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):   # no poll (Windows), or no descriptor: assume so
        return True


def output_closed() -> int:
    """The reader of stdout went away (``... | head``): stop quietly. Python would otherwise
    print a traceback when it flushes stdout at exit, so stdout now points at /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):   # no real file descriptor (stdout replaced in-process)
        pass
    return EXIT_CLOSED_PIPE

