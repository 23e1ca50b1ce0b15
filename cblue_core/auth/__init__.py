"""Who is acting: the signed-in user, how the studio knows them, and what their role lets them do."""
from __future__ import annotations

from .roles import ACTIONS, SYSTEM, PermissionDenied, Role, allows, effective_role
from .user import User, local_user

__all__ = ["ACTIONS", "SYSTEM", "PermissionDenied", "Role", "User", "allows", "effective_role", "local_user"]
