"""Who is acting: the signed-in user, how the studio knows them, and what their role lets them do."""
from __future__ import annotations

from .user import User, local_user

__all__ = ["User", "local_user"]
