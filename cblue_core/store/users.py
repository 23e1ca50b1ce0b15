"""The roles stored in a workspace (table ``workspace_users``): who is an annotator, a curator
or an admin. A name without a row is a viewer, unless the studio knows it as an admin on its
own (:func:`cblue_core.auth.roles.effective_role`)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..auth.names import canonical_name, checked_name
from ..auth.roles import Role
from .access import Access, writes
from .database import Database


@dataclass(frozen=True)
class WorkspaceUser:
    name: str
    role: Role
    granted_by: str
    granted_at: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role.label}


def _user(a: Mapping[str, Any]) -> str:
    # Untrimmed: a write refused for " ann" must not be audited as one for "ann".
    return f"user {canonical_name(str(a.get('name') or ''))}"


def _role(a: Mapping[str, Any]) -> str:
    role = a.get("role")
    return f"role {role.label if isinstance(role, Role) else role}"


class UserStore:
    READS = ("all", "role_of")

    def __init__(self, db: Database, access: Access | None = None) -> None:
        self.db = db
        self.access = access or Access()

    def all(self) -> list[WorkspaceUser]:
        return [WorkspaceUser(str(n), Role.parse(str(r)), str(g), str(t)) for n, r, g, t in self.db.rows(
            "SELECT name, role, granted_by, strftime(granted_at, '%Y-%m-%d %H:%M:%S') FROM workspace_users"
            " ORDER BY name")]

    def role_of(self, name: str) -> Role | None:
        """The role stored for ``name`` (None: none stored)."""
        row = self.db.one("SELECT role FROM workspace_users WHERE name = ?", [canonical_name(name)])
        return Role.parse(str(row[0])) if row else None

    @writes("role.set", target=_user, detail=_role)
    def set_role(self, name: str, role: Role) -> WorkspaceUser:
        """Give ``name`` a role (adding the user when new); a name :func:`checked_name` refuses
        raises :class:`cblue_core.auth.names.NameRefused` (a ValueError)."""
        name = checked_name(name)
        if not isinstance(role, Role):
            raise ValueError(f"not a role: {role!r}")
        granted_by = self.access.actor.name if self.access.actor else ""
        with self.db.transaction():
            self.db.execute("INSERT OR REPLACE INTO workspace_users (name, role, granted_by) VALUES (?,?,?)",
                            [name, role.label, granted_by])
        found = next(u for u in self.all() if u.name == name)
        return found

    @writes("role.remove", target=_user)
    def remove(self, name: str) -> bool:
        """Forget ``name``'s role (they are a viewer again); False when none was stored.

        The name is not checked: a row stored before the name rule must stay removable."""
        name = canonical_name(name or "")
        with self.db.transaction():
            gone = self.db.rows("DELETE FROM workspace_users WHERE name = ? RETURNING name", [name])
        return bool(gone)
