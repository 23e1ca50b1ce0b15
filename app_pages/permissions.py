"""What the signed-in user's role lets a page offer. A control whose action the role does not
allow is disabled with a note; the store refuses the write anyway (cblue_core.store.access), so
a page that forgets still cannot write."""
from __future__ import annotations

from app_pages.common import read_only, workspace
from cblue_core.auth.roles import Role, allows, required


def role(*, report: bool = True) -> Role | None:
    """The acting user's role now (None: nobody is signed in); ``report``: as :func:`workspace`."""
    return workspace(report=report).role()


def role_allows(action: str) -> bool:
    """Whether the role allows ``action`` (read-only mode aside: a page to read stays listed)."""
    now = role(report=False)
    return now is not None and allows(now, action)


def allowed(action: str) -> bool:
    """Whether a control doing ``action`` is usable: not read-only mode, and the role allows it."""
    if read_only():
        return False
    now = role()
    return now is not None and allows(now, action)


def why_not(action: str, otherwise: str = "") -> str:
    """A control's help: why the role disables it, else ``otherwise`` (also in read-only mode,
    which says so in its own notice)."""
    if read_only() or allowed(action):
        return otherwise
    need = required(action)
    now = role()
    return (f"Needs the {getattr(need, 'label', 'system')} role; you are "
            f"{'not signed in' if now is None else 'a ' + now.label}.")
