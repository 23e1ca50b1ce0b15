"""A Live prompt to a declared endpoint, on a visitor's behalf: the role and the visitor's rate
limit are checked before anything is sent, the answer streams within its bounds
(:mod:`.streaming`), and the call is kept in the audit trail with its user, endpoint and tokens
(:mod:`cblue_core.store.endpoint_calls`), however it ended.

A read-only workspace cannot keep the audit event, so it sends nothing: an unaudited spend of
the operator's endpoint is what this module is here to prevent.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import duckdb

from ...auth.roles import PermissionDenied
from ...auth.user import User
from ...io.logs import log_exception
from ...store.access import check
from ...store.endpoint_calls import ASK
from .config import EndpointConfig
from .streaming import AnswerStream, StreamLimits, StreamOutcome
from .visitor_limits import SlidingWindow

if TYPE_CHECKING:
    from ...store.workspace import Workspace


class LiveRefused(Exception):
    """A Live prompt this workspace cannot allow whoever asks (nothing was sent)."""


READ_ONLY = ("this workspace is open read-only, so a call to an LLM endpoint could not be kept in "
             "its audit trail: Live sends none")


def visitor(user: User) -> str:
    """The rate limit's key: a name as the identity source knows it (a proxy's ``ann`` and an
    OIDC ``ann`` are different people)."""
    return f"{user.source}:{user.name}"


def admit(ws: Workspace, cfg: EndpointConfig, window: SlidingWindow) -> User:
    """The acting user, when they may send one prompt to ``cfg`` now; else raises (and sends
    nothing): :class:`LiveRefused` for a read-only workspace, PermissionDenied below the
    annotator role (the refusal audited), :class:`~.visitor_limits.RateLimited` over the limit.
    The role comes first, so a viewer's clicks do not use up a window."""
    if ws.read_only:
        raise LiveRefused(READ_ONLY)
    user = check(ws.endpoint_calls, ASK, cfg.ref)
    window.take(visitor(user))
    return user


class LiveAnswer:
    """One admitted Live prompt (admission happens here, before any request); iterate it once for
    the answer's pieces, as :class:`~.streaming.AnswerStream`. Its audit event is written when
    the iteration ends, whatever ended it (finished, a bound, the page stopping, a failure)."""

    def __init__(self, ws: Workspace, cfg: EndpointConfig, prompt: str, *, window: SlidingWindow,
                 limits: StreamLimits | None = None, should_stop: Callable[[], bool] | None = None,
                 client: Any = None, flush_s: float = 0.0) -> None:
        admit(ws, cfg, window)
        self.ws, self.cfg = ws, cfg
        self.stream = AnswerStream(cfg, prompt, client, limits=limits, should_stop=should_stop, flush_s=flush_s)
        self._recorded = False

    @property
    def outcome(self) -> StreamOutcome:
        return self.stream.outcome

    @property
    def limits(self) -> StreamLimits:
        return self.stream.limits

    def __iter__(self) -> Iterator[str]:
        try:
            yield from self.stream
        finally:
            self._record()

    def close(self) -> None:
        """Shut the request and keep the call's event now (a page stopped mid-answer)."""
        self.stream.close()
        self._record()

    def _record(self) -> None:
        if self._recorded or not self.stream.started:
            return
        self._recorded = True
        out = self.outcome
        try:
            self.ws.endpoint_calls.record(self.cfg.ref, self.cfg.model, out.prompt_tokens, out.completion_tokens,
                                          out.chars, out.ended(self.limits))
        except PermissionDenied:
            pass     # the role was taken away while the answer streamed: the refusal is the event kept
        except duckdb.Error as exc:   # the answer stands; the trail's gap is in the log
            log_exception(f"recording a Live call to {self.cfg.ref}", exc)
