"""User filters checked and run in worker processes that are killed at the time limit.

DuckDB looks at ``interrupt()`` only between chunks of rows, so the sandbox's own timeout does not
hold for a filter that is expensive per row: twenty ORed regular expressions ran 121 s past a 3 s
limit, and the pattern ``(?:(?:.?){30}){30}Z`` kept the server busy 50 s. A process can be stopped
at any instant, so here each filter runs in a worker process holding one split's example
columns in a :class:`~cblue_core.store.sandbox.PredicateSandbox` with one thread (its CPU time is
then at most its wall time), and the worker is killed when the limit passes: the caller gets
:class:`~cblue_core.store.sandbox.PredicateTimeout` within the limit plus the time a kill takes.
The filter's text is checked there too, not in the app: binding a predicate compiles its
regular expressions, about 0.35 s for that pattern, so twenty of them took 8 s before running.

A worker is a fresh interpreter running :func:`main`, not a :mod:`multiprocessing` child: those
re-run the parent's ``__main__``, which in the app is the page script being run. Workers stay
alive between filters, idle, keyed by the split's content. Starting one (about a second: the
interpreter, DuckDB, a copy of the split's columns) is not counted in the limit; at most
:data:`MAX_WORKERS` processes live, the least recently used idle ones are stopped first.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Final

import pyarrow as pa

from .sandbox import ExampleFilter, PredicateSandbox, PredicateTimeout, time_limit
from .user_sql import PredicateRefused, parse_predicate

__all__ = ["MAX_WORKERS", "FilterPool", "FilterRequest", "FilterWorker"]

MAX_WORKERS: Final = 4
# A worker's start: interpreter, imports, copy of the split's columns. Generous, and not the
# filter's limit: the first filter on a split would otherwise be stopped on a busy machine.
START_TIMEOUT: Final = 60.0


@dataclass(frozen=True)
class FilterRequest:
    """What a visitor typed, as typed: a SQL predicate over ``columns`` (name -> DuckDB type) and
    a regular expression for ``text`` and ``text2``; either may be empty."""

    predicate: str = ""
    regex: str = ""
    columns: Mapping[str, str] = field(default_factory=dict)

    def checked(self) -> ExampleFilter:
        """The predicate allow-listed and rebuilt (:class:`PredicateRefused` if it may not run)."""
        safe = parse_predicate(self.predicate, self.columns) if self.predicate.strip() else None
        return ExampleFilter(safe, self.regex)


def main() -> None:
    """A worker process: ``python -c '...main()' FD``, FD being its end of a socket pair."""
    _serve(Connection(int(sys.argv[1])))


def _serve(conn: Connection) -> None:
    """A worker's life: receive the split's columns (none for a worker that only checks
    filters), then answer requests until the pipe closes."""
    data = conn.recv_bytes()
    sandbox = PredicateSandbox(pa.ipc.open_stream(data).read_all(), threads=1) if data else None
    conn.send(("ready", None))
    while True:
        try:
            request, backstop = conn.recv()
        except (EOFError, OSError):
            return
        try:
            flt = request.checked()
            conn.send(("ok", sandbox.matching_indices(flt, timeout=backstop) if sandbox else []))
        except PredicateRefused as exc:
            conn.send(("refused", str(exc)))


def _ipc_bytes(table: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


class FilterWorker:
    """One worker process holding one split's example columns (``None``: one that only checks)."""

    def __init__(self, table: pa.Table | None) -> None:
        mine, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "from cblue_core.store.filter_worker import main; main()",
                 str(theirs.fileno())],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                # The app's import path, whatever directory it was started from.
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        self.conn = Connection(mine.detach())
        self.killed = False
        try:
            self.conn.send_bytes(_ipc_bytes(table) if table is not None else b"")
            if not self.conn.poll(START_TIMEOUT):
                raise PredicateRefused(f"the filter worker did not start within {START_TIMEOUT:g} s")
            self.conn.recv()
        except (EOFError, OSError):
            self.kill()
            raise PredicateRefused("the filter worker could not start") from None
        except BaseException:
            self.kill()
            raise

    @property
    def alive(self) -> bool:
        return not self.killed and self.process.poll() is None

    def matching_indices(self, request: FilterRequest, limit: float) -> list[int]:
        """The ``idx`` the request keeps (none for a worker without columns), or
        :class:`PredicateRefused` saying why not; the worker is killed (and
        :class:`PredicateTimeout` raised) when it has not answered after ``limit`` seconds."""
        try:
            # The sandbox's own interrupt stays as a second line, well after the kill.
            self.conn.send((request, limit * 4 + 1))
            answered = self.conn.poll(limit)
            status, value = self.conn.recv() if answered else ("timeout", [])
        except (EOFError, OSError):
            self.kill()
            raise PredicateRefused("the filter stopped its worker (out of memory?)") from None
        if status == "timeout":
            self.kill()
            raise PredicateTimeout(f"the filter ran longer than {limit:g} s and was stopped")
        if status == "refused":
            raise PredicateRefused(str(value))
        return [int(i) for i in value]

    def kill(self) -> None:
        self.killed = True
        if self.process.poll() is None:
            self.process.kill()
            # Reaped aside: tearing down a worker that filled RE2's caches took up to a second,
            # which the caller would otherwise wait on top of the limit.
            threading.Thread(target=self.process.wait, name="cblue-filter-reaper", daemon=True).start()
        self.conn.close()


class FilterPool:
    """Workers shared by every session of the process: idle ones kept per split key (least
    recently used stopped first), at most ``max_workers`` alive, busy ones included. A filter that
    finds every worker busy waits for one as long as its own limit, then is refused."""

    def __init__(self, max_workers: int = MAX_WORKERS) -> None:
        self.max_workers = max(1, int(max_workers))
        self._idle: OrderedDict[Hashable, list[FilterWorker]] = OrderedDict()
        self._alive = 0
        self._changed = threading.Condition()

    def matching_indices(self, key: Hashable, load: Callable[[], pa.Table | None], request: FilterRequest,
                         *, timeout: float | None = None) -> list[int]:
        """The ``idx`` of the split ``key`` (whose columns ``load`` gives) that ``request`` keeps."""
        limit = time_limit(timeout)
        worker = self._take(key, load, limit)
        try:
            result = worker.matching_indices(request, limit)
        except BaseException:
            self._release(key, worker)
            raise
        self._release(key, worker)
        return result

    def close(self) -> None:
        with self._changed:
            idle = [w for workers in self._idle.values() for w in workers]
            self._idle.clear()
            self._alive -= len(idle)
            self._changed.notify_all()
        for worker in idle:
            worker.kill()

    def _take(self, key: Hashable, load: Callable[[], pa.Table | None], limit: float) -> FilterWorker:
        deadline = time.monotonic() + limit
        evicted: FilterWorker | None = None
        with self._changed:
            while True:
                workers = self._idle.get(key, [])
                while workers:
                    worker = workers.pop()
                    if worker.alive:
                        self._idle.move_to_end(key)
                        return worker
                    self._alive -= 1   # died while idle (killed from outside, out of memory)
                if self._alive < self.max_workers:
                    self._alive += 1
                    break
                evicted = self._pop_least_recent()
                if evicted is not None:
                    break   # its place goes to the new worker
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PredicateTimeout(f"every filter worker stayed busy for {limit:g} s; "
                                           "try again in a moment")
                self._changed.wait(left)
        if evicted is not None:
            evicted.kill()
        try:
            return FilterWorker(load())
        except BaseException:
            with self._changed:
                self._alive -= 1
                self._changed.notify_all()
            raise

    def _pop_least_recent(self) -> FilterWorker | None:
        for key, workers in self._idle.items():
            if workers:
                worker = workers.pop(0)
                if not workers:
                    del self._idle[key]
                return worker
        return None

    def _release(self, key: Hashable, worker: FilterWorker) -> None:
        with self._changed:
            if worker.alive:
                self._idle.setdefault(key, []).append(worker)
                self._idle.move_to_end(key)
            else:
                self._alive -= 1
            self._changed.notify_all()
