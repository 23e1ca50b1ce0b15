"""Who a store acts for, and the check every writing method makes.

A :class:`Access` binds a workspace handle to its acting user. A store's writing method is
declared with :func:`writes` (an action of :data:`cblue_core.auth.roles.ACTIONS`): before the
method runs, the actor's role is checked; a refusal raises :class:`PermissionDenied` and is
kept as a "refused" audit event in a transaction of its own (on a separate cursor, so that it
survives whatever the caller rolls back) while nothing else is written. An allowed write gets
its "done" audit event inside its own transaction, just before the commit
(:meth:`Database.before_commit`), so the event and the write are kept or lost together.
No actor bound means refused, never allowed.

Reading methods are listed per class in ``READS`` (tests/store/test_access.py checks
every public method is declared and that no reading one reaches a writing statement).
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import duckdb

from ..auth.roles import PermissionDenied, Role, System, configured_admins, effective_role, required
from ..auth.user import User
from ..io.logs import log_exception
from . import audit
from .database import Database

F = TypeVar("F", bound=Callable[..., Any])
Describe = Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True)
class Access:
    """The acting user of a workspace handle (None: nobody, so every write is refused) and
    whether the file is open read-only (then even a refusal cannot be recorded)."""

    actor: User | None = None
    read_only: bool = False
    admins: frozenset[str] = field(default_factory=configured_admins)

    def role(self, db: Database) -> Role | None:
        """The actor's role now (read at each check: a role change applies at once)."""
        if self.actor is None:
            return None
        row = db.one("SELECT role FROM workspace_users WHERE name = ?", [self.actor.name])
        stored = Role.parse(str(row[0])) if row else None
        return effective_role(self.actor, stored, self.admins)


class GuardedStore(Protocol):
    db: Database
    access: Access


@dataclass(frozen=True)
class WriteDeclaration:
    action: str


# Every declared writing method (the functions in the stores' class bodies), kept here rather
# than as an attribute set on the function, which the type checker cannot follow.
_DECLARED: dict[Hashable, WriteDeclaration] = {}


def _arguments(method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        bound = inspect.signature(method).bind(*args, **kwargs)
    except TypeError:
        return dict(kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def check(store: GuardedStore, action: str, target: str) -> User:
    """The acting user, when their role allows ``action``; else a refusal recorded and raised."""
    need = required(action)
    assert not isinstance(need, System)   # writes() refuses to declare one
    role = store.access.role(store.db)
    actor = store.access.actor
    if actor is not None and role is not None and role >= need:
        return actor
    denied = PermissionDenied(actor, role, action, need)
    if not store.access.read_only:
        # its own cursor: a caller rolling its transaction back must not take the refusal with it
        apart = store.db.cursor()
        try:
            audit.append(apart, audit.AuditEntry(actor, action, target, str(denied), audit.REFUSED))
        except duckdb.Error as exc:   # the refusal stands; the trail's gap is in the log
            log_exception(f"recording a refused {action}", exc)
        finally:
            apart.close()
    raise denied


def writes(action: str, target: Describe, detail: Describe | None = None) -> Callable[[F], F]:
    """Declare a store method as the writing ``action``: checked, then audited in its commit.
    ``target``/``detail`` describe the call from its arguments (by parameter name)."""
    # an undeclared action, or a system one, fails at import, not at the first call
    if isinstance(required(action), System):
        raise ValueError(f"{action} is a system write: declare it with writes_for_system")

    def declare(method: F) -> F:
        @functools.wraps(method)
        def guarded(self: GuardedStore, *args: Any, **kwargs: Any) -> Any:
            arguments = _arguments(method, (self, *args), kwargs)
            what = target(arguments)
            actor = check(self, action, what)
            entry = audit.AuditEntry(actor, action, what, detail(arguments) if detail else "", audit.DONE)
            pending = self.db.before_commit(lambda db: audit.append(db, entry))
            try:
                result = method(self, *args, **kwargs)
            except BaseException:
                self.db.drop_before_commit(pending)
                raise
            # still pending after a normal return: the method committed no transaction (it had
            # nothing to write, e.g. a file already stored); the attempt is recorded on its own
            if self.db.drop_before_commit(pending):
                audit.append(self.db, entry)
            return result

        _DECLARED[guarded] = WriteDeclaration(action)
        return cast(F, guarded)
    return declare


def writes_for_system(action: str) -> Callable[[F], F]:
    """Declare a store method as a system write (a cache; see :mod:`cblue_core.auth.roles`):
    any handle may make it, bound or not, and it is not audited."""
    if not isinstance(required(action), System):
        raise ValueError(f"{action} needs a role: declare it with writes")

    def declare(method: F) -> F:
        _DECLARED[method] = WriteDeclaration(action)
        return method
    return declare


def declaration(method: object) -> WriteDeclaration | None:
    """The write a store method is declared as, or None."""
    return _DECLARED.get(method) if isinstance(method, Hashable) else None
