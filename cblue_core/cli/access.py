"""The ``users`` and ``audit`` commands (wired into ``python -m cblue_core`` by
:func:`build_parser_hooks`): roles stored in a workspace and its audit trail.

    python -m cblue_core users list [--db FILE] [--json]
    python -m cblue_core users add NAME --role ROLE [--db FILE] [--json]
    python -m cblue_core users set-role NAME ROLE [--db FILE] [--json]
    python -m cblue_core users remove NAME [--db FILE] [--json]
    python -m cblue_core audit [--user U] [--action A] [--outcome done|refused] [--limit N] [--db FILE] [--json]

The command line acts as the OS account that runs it, with admin rights as the owner of the
file it opens (it could write it with any DuckDB client): its changes are audited under that
name, source "cli". ``users list --json`` prints ``{"users": [{"name", "role"}]}``; ``audit
--json`` prints ``{"events": [{"at", "user", "action", "target", "detail", "outcome",
"source"}]}``, newest first. Exit codes: 0 done; 1 no such workspace or user, or a refused
value; 2 a usage error or a locked workspace.
"""
from __future__ import annotations

from pathlib import Path

from ..auth.names import NameRefused, checked_name
from ..auth.roles import ROLE_NAMES, Role
from ..render.terminal import terminal_text
from ..store.audit import OUTCOMES, AuditFilter
from ..store.workspace import connect, default_db_path
from .output import fail, open_existing, print_json

DB_HELP = "workspace file (default $CBLUE_STUDIO_DB or workspace/cblue_studio.duckdb)"


def cmd_users(args) -> int:
    if args.users_command == "list":
        ws = open_existing(args.db)
    else:   # naming the first admin of a new workspace creates it
        ws = connect(Path(args.db) if args.db else default_db_path())
    try:
        if args.users_command == "list":
            users = ws.users.all()
            if args.json:
                print_json({"users": [u.to_json() for u in users]})
            elif not users:
                print("no roles stored (everyone is a viewer, but the local and command-line user and "
                      "the names in $CBLUE_STUDIO_ADMINS, who are admins)")
            for u in [] if args.json else users:
                print(f"{terminal_text(u.name):<24} {u.role.label:<10} "
                      f"granted by {terminal_text(u.granted_by)} at {u.granted_at}")
            return 0
        if args.users_command == "remove":
            if not ws.users.remove(args.name):
                return fail(args, 1, f"{terminal_text(args.name)} has no stored role (see `users list`)")
            return _done(args, f"removed {terminal_text(args.name)}'s role: a viewer again",
                         {"name": args.name, "role": None})
        try:
            name = checked_name(args.name)
        except NameRefused as exc:
            return fail(args, 1, f"{exc}: '{terminal_text(args.name[:80])}'")
        known = ws.users.role_of(name) is not None
        if args.users_command == "set-role" and not known:
            return fail(args, 1, f"{terminal_text(name)} has no stored role: add them with `users add`")
        if args.users_command == "add" and known:
            return fail(args, 1, f"{terminal_text(name)} already has a role: change it with "
                                  "`users set-role`")
        try:
            user = ws.users.set_role(name, Role.parse(args.role))
        except ValueError as exc:
            return fail(args, 1, str(exc))
        return _done(args, f"{terminal_text(user.name)} is now {user.role.label}", user.to_json())
    finally:
        ws.close()


def _done(args, message: str, row: dict) -> int:
    if args.json:
        print_json(row)
    else:
        print(message)
    return 0


def cmd_audit(args) -> int:
    if args.limit < 0:
        return fail(args, 2, "--limit must be 0 or more")
    ws = open_existing(args.db)
    try:
        events = ws.audit.events(AuditFilter(user=args.user, action=args.action, outcome=args.outcome,
                                             since=args.since, until=args.until, limit=args.limit))
    finally:
        ws.close()
    if args.json:
        print_json({"events": [e.to_json() for e in events]})
        return 0
    for e in events:
        print(f"{e.at}  {terminal_text(e.user or '(nobody)'):<16} {e.outcome:<8} "
              f"{terminal_text(e.action):<20} {terminal_text(e.target)}"
              + (f"  ({terminal_text(e.detail)})" if e.detail else ""))
    if not events:
        print("no audit events" + (" match" if any((args.user, args.action, args.outcome)) else ""))
    return 0


def build_parser_hooks(subparsers) -> None:
    """Add the ``users`` and ``audit`` subcommands to an argparse subparsers object."""
    u = subparsers.add_parser("users", help="roles stored in the workspace (viewer, annotator, curator, admin)")
    which = u.add_subparsers(dest="users_command", required=True)
    for name, help_text in (("list", "list the stored roles"), ("add", "give a new user a role"),
                            ("set-role", "change a user's role"), ("remove", "forget a user's role")):
        c = which.add_parser(name, help=help_text)
        if name != "list":
            c.add_argument("name")
        if name == "add":
            c.add_argument("--role", required=True, choices=ROLE_NAMES)
        if name == "set-role":
            c.add_argument("role", choices=ROLE_NAMES)
        c.add_argument("--db", help=DB_HELP)
        c.add_argument("--json", action="store_true")
        c.set_defaults(func=cmd_users)

    a = subparsers.add_parser("audit", help="who did what and when in the workspace, newest first")
    a.add_argument("--user", help="only this user's events")
    a.add_argument("--action", help="only this action (gold.save) or family (gold)")
    a.add_argument("--outcome", choices=OUTCOMES)
    a.add_argument("--since", help="from this UTC time on (YYYY-MM-DD[ HH:MM:SS])")
    a.add_argument("--until", help="before this UTC time")
    a.add_argument("--limit", type=int, default=100, help="events to print (default 100)")
    a.add_argument("--db", help=DB_HELP)
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=cmd_audit)
