"""The audit trail: who did what and when (table ``audit_events``, append-only).

:func:`append` is the only writer and is called by :mod:`cblue_core.store.access` alone: the
store of each write records it in the write's own transaction, and a refusal in a transaction
of its own. There is no update or delete: the trail is read with :meth:`AuditStore.events`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..auth.user import User
from .database import Database

DONE = "done"
REFUSED = "refused"
OUTCOMES = (DONE, REFUSED)
MAX_EVENTS = 10_000


@dataclass(frozen=True)
class AuditEntry:
    """An event about to be appended."""

    user: User | None
    action: str
    target: str
    detail: str
    outcome: str


@dataclass(frozen=True)
class AuditEvent:
    event_id: int
    at: str             # UTC, "YYYY-MM-DD HH:MM:SS"
    user: str | None
    source: str | None
    action: str
    target: str
    detail: str
    outcome: str

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "user": self.user, "action": self.action, "target": self.target,
                "detail": self.detail, "outcome": self.outcome, "source": self.source}


def append(db: Database, entry: AuditEntry) -> None:
    user = entry.user
    db.execute("INSERT INTO audit_events (user_name, source, action, target, detail, outcome)"
               " VALUES (?,?,?,?,?,?)",
               [None if user is None else user.name, None if user is None else user.source,
                entry.action, entry.target, entry.detail, entry.outcome])


@dataclass(frozen=True)
class AuditFilter:
    """Which events to list; None or empty means any."""

    user: str | None = None
    action: str | None = None       # an action, or its family before the dot ("gold")
    outcome: str | None = None
    since: str | None = None        # "YYYY-MM-DD[ HH:MM:SS]", inclusive
    until: str | None = None        # exclusive
    limit: int = 500


class AuditStore:
    READS = ("events", "users", "actions")

    def __init__(self, db: Database) -> None:
        self.db = db

    def events(self, selection: AuditFilter | None = None) -> list[AuditEvent]:
        """The events a filter selects, newest first (at most ``limit``, capped at MAX_EVENTS)."""
        f = selection or AuditFilter()
        if f.outcome and f.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {f.outcome!r} (expected {' or '.join(OUTCOMES)})")
        if f.limit < 0:
            raise ValueError("the limit must be 0 or more")
        where: list[str] = ["1=1"]
        params: list[Any] = []
        if f.user:
            where.append("user_name = ?")
            params.append(f.user)
        if f.action:
            where.append("(action = ? OR split_part(action, '.', 1) = ?)")
            params += [f.action, f.action]
        if f.outcome:
            where.append("outcome = ?")
            params.append(f.outcome)
        if f.since:
            where.append("happened_at >= TRY_CAST(? AS TIMESTAMP)")
            params.append(f.since)
        if f.until:
            where.append("happened_at < TRY_CAST(? AS TIMESTAMP)")
            params.append(f.until)
        params.append(min(f.limit, MAX_EVENTS))
        rows = self.db.rows(
            "SELECT event_id, strftime(happened_at, '%Y-%m-%d %H:%M:%S'), user_name, source, action, target, detail,"
            f" outcome FROM audit_events WHERE {' AND '.join(where)} ORDER BY event_id DESC LIMIT ?", params)
        return [AuditEvent(int(r[0]), str(r[1]), r[2], r[3], str(r[4]), str(r[5]), str(r[6]), str(r[7]))
                for r in rows]

    def users(self) -> list[str]:
        """Every name the trail mentions, for a filter's choices."""
        return [str(r[0]) for r in self.db.rows(
            "SELECT DISTINCT user_name FROM audit_events WHERE user_name IS NOT NULL ORDER BY 1")]

    def actions(self) -> list[str]:
        return [str(r[0]) for r in self.db.rows("SELECT DISTINCT action FROM audit_events ORDER BY 1")]
