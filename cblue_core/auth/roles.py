"""What each role may do in a workspace, declared once.

Four roles, each allowing what the one below it allows: a *viewer* browses and analyses, an
*annotator* edits and saves gold, a *curator* adjudicates and freezes gold versions, an *admin*
imports, runs, deletes, saves slices and gives roles. Every writing method of a store names one
action of :data:`ACTIONS`; an action maps to the least role that may do it, or to
:data:`SYSTEM` for writes the studio makes on its own behalf (derived data kept per run, the
answers of an LLM endpoint): those are caches, the same whoever triggers them, so they need no
role and leave no audit event.
"""
from __future__ import annotations

import os
from enum import IntEnum
from typing import Final

from .names import canonical_name
from .user import User

ENV_ADMINS = "CBLUE_STUDIO_ADMINS"


class Role(IntEnum):
    VIEWER = 0
    ANNOTATOR = 1
    CURATOR = 2
    ADMIN = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Role:
        """A role from its name ("viewer", "annotator", "curator", "admin")."""
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown role {text!r} (expected one of {', '.join(ROLE_NAMES)})") from None


ROLE_NAMES: Final = tuple(r.label for r in Role)


class System:
    """The requirement of a system write: no role, no audit event (see the module's docstring)."""

    def __repr__(self) -> str:
        return "SYSTEM"


SYSTEM: Final = System()

# action -> the least role that may do it (or SYSTEM). One line per writing store method.
ACTIONS: Final[dict[str, Role | System]] = {
    "dataset.ingest": Role.ADMIN,
    "dataset.delete": Role.ADMIN,
    "dataset.make_default": Role.ADMIN,
    "resource.ingest": Role.ADMIN,
    "run.create": Role.ADMIN,
    "run.delete": Role.ADMIN,
    "slice.save": Role.ADMIN,
    "slice.delete": Role.ADMIN,
    "responses.clear": Role.ADMIN,
    "role.set": Role.ADMIN,
    "role.remove": Role.ADMIN,
    "gold.save": Role.ANNOTATOR,
    "gold.revert": Role.ANNOTATOR,
    "gold.adjudicate": Role.CURATOR,
    "gold.version": Role.CURATOR,
    "gold.blind_mode": Role.CURATOR,
    # an annotator's own copy in a blind pass (store/blind_pass.py)
    "own.save": Role.ANNOTATOR,
    "own.revert": Role.ANNOTATOR,
    # a Live prompt to an LLM endpoint, spent on the operator's account (store/endpoint_calls.py)
    "endpoint.ask": Role.ANNOTATOR,
    # settled at first need when any visitor opens a run's errors (cblue_core.runs.seen_split)
    "run.training_set": SYSTEM,
    "derived.put": SYSTEM,
    "responses.put": SYSTEM,
}

# Where the name comes from decides whether a stored role is asked at all: the one user of a
# studio on its owner's machine ("local": no sign-in configured) and a process that opened the
# file itself ("cli", the file's owner, who could write it with any DuckDB client anyway) are admins.
ADMIN_SOURCES: Final = frozenset({"local", "cli"})


class PermissionDenied(PermissionError):
    """An action the acting user's role does not allow; nothing was written."""

    def __init__(self, user: User | None, role: Role | None, action: str, needed: Role | System) -> None:
        self.user, self.role, self.action, self.needed = user, role, action, needed
        needed_text = needed.label if isinstance(needed, Role) else "system"
        if user is None:
            text = f"{action} refused: no signed-in user is acting on this workspace (it needs {needed_text})"
        else:
            text = (f"{action} refused for {user.name} ({'no role' if role is None else role.label}): "
                    f"it needs the {needed_text} role")
        super().__init__(text)


def required(action: str) -> Role | System:
    """The least role ``action`` needs; KeyError names an undeclared action."""
    try:
        return ACTIONS[action]
    except KeyError:
        raise KeyError(f"undeclared action {action!r}: declare it in cblue_core.auth.roles.ACTIONS") from None


def configured_admins(environ: dict[str, str] | None = None) -> frozenset[str]:
    """The names ``$CBLUE_STUDIO_ADMINS`` lists (comma-separated, spaces around a name being the
    list's, not the name's), in the form the sign-in hands names over (:mod:`.names`)."""
    raw = (os.environ if environ is None else environ).get(ENV_ADMINS, "")
    return frozenset(canonical_name(n.strip()) for n in raw.split(",") if n.strip())


def effective_role(user: User, stored: Role | None, admins: frozenset[str] = frozenset()) -> Role:
    """The role ``user`` acts with: admin for a local or command-line user and for a name in
    ``admins``; else the role stored in the workspace; a signed-in user without one is a viewer."""
    if user.source in ADMIN_SOURCES or user.name in admins:
        return Role.ADMIN
    return stored if stored is not None else Role.VIEWER


def allows(role: Role, action: str) -> bool:
    need = required(action)
    return isinstance(need, System) or role >= need
