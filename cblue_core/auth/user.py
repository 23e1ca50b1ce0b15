"""The acting user: a name the studio learnt from the OS account, a trusted proxy or an
OpenID Connect token, never from a box the visitor types into."""
from __future__ import annotations

import getpass
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class User:
    name: str
    source: str      # how the name is known: "local" (the OS account), "proxy", "oidc", "cli"


def local_user(source: str = "local") -> User:
    """The OS account running the process: the one user of a studio on its owner's machine."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):     # no passwd entry and no LOGNAME/USER (some containers)
        name = os.environ.get("USER", "")
    return User(name.strip() or "local", source)
