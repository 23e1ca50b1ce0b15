"""The processes a job starts, read from ``/proc`` (Linux; elsewhere every function finds none).

A local Ray started for a job (GCS, raylet, its agents and workers) runs as descendants of the
driver; :func:`descendants` lists them, :class:`ProcessId` names one so that a recycled pid is
never mistaken for it, and :func:`reap` waits for them to exit after ``ray.shutdown()`` and ends
the ones that do not, so that a job leaves no process behind.
"""
from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or None."""
    try:
        return (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split() or None
    except (OSError, IndexError):
        return None


@dataclass(frozen=True)
class ProcessId:
    """A process: its pid and its start time (clock ticks since boot), which together never
    name another process."""

    pid: int
    start: int

    @classmethod
    def of(cls, pid: int) -> ProcessId | None:
        fields = _stat(pid)
        try:
            return cls(pid, int(fields[19])) if fields else None
        except (IndexError, ValueError):
            return None

    def alive(self) -> bool:
        """Running (not a zombie) and still the same process."""
        fields = _stat(self.pid)
        return fields is not None and fields[0] != "Z" and ProcessId.of(self.pid) == self


def children() -> dict[int, list[int]]:
    """Parent pid -> child pids of every process."""
    out: dict[int, list[int]] = {}
    if not _PROC.is_dir():
        return out
    for d in _PROC.iterdir():
        if d.name.isdigit():
            fields = _stat(int(d.name))
            if fields and len(fields) > 1 and fields[1].isdigit():
                out.setdefault(int(fields[1]), []).append(int(d.name))
    return out


def descendants(pid: int | None = None) -> set[int]:
    """The pids of every process under ``pid`` (default: this process), not including it."""
    kids = children()
    out: set[int] = set()
    stack = [os.getpid() if pid is None else pid]
    while stack:
        for c in kids.get(stack.pop(), []):
            if c not in out:
                out.add(c)
                stack.append(c)
    return out


def identify(pids: set[int]) -> set[ProcessId]:
    return {p for p in (ProcessId.of(pid) for pid in pids) if p is not None}


def reap(procs: set[ProcessId], wait_s: float = 10.0) -> list[ProcessId]:
    """Wait up to ``wait_s`` for ``procs`` to exit, then SIGKILL those still running; the ones
    that had to be killed."""
    deadline = time.monotonic() + wait_s
    left = [p for p in procs if p.alive()]
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = [p for p in left if p.alive()]
    for p in left:
        if p.alive():
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGKILL)
    return left
