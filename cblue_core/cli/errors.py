"""The ``errors`` command (wired into ``python -m cblue_core`` by :func:`build_parser_hooks`): the
error rows of a stored run that a selection holds, the Errors page's list from the command line.

    python -m cblue_core errors --run ID [--slice NAME | --where PREDICATE] [--category C]
        [--gold-label L] [--pred-label L] [--tag T] [--seen yes|no] [--limit N] [--db FILE] [--json]

``--json`` prints ``{"total_rows", "examples", "truncated", "rows": [...]}``: the totals are over
the whole selection whatever ``--limit`` is. A slice's predicate (``--slice`` or ``--where``) runs
in the same sandbox as the app's; with one, the rows of correct items are left out unless
``--category`` asks for a category. Exit codes: 0 listed; 1 no such workspace, run or slice, a
refused predicate, or a seen/unseen split that is unknown for the run; 2 a usage error or a
locked workspace.
"""
from __future__ import annotations

from pathlib import Path

from ..render.terminal import terminal_cell, terminal_text
from ..runs.seen_split import seen_split
from ..store.error_selection import ErrorSelection
from ..store.slices import SliceError
from ..store.workspace import Workspace, connect, default_db_path
from .output import fail, json_cell, print_json

SEEN_ARGUMENT = {"yes": "seen", "no": "unseen"}


class _Refused(Exception):
    """A selection the command cannot make; the message says why."""


def cmd_errors(args) -> int:
    if args.limit < 0:
        return fail(args, 2, "--limit must be 0 or more")
    path = Path(args.db) if args.db else default_db_path()
    if not path.is_file():
        return fail(args, 1, f"no workspace at {path} (create one with `ingest`, or start the app)")
    ws = connect(path)
    try:
        run = ws.runs.get(args.run)
        if run is None:
            return fail(args, 1, f"no run {args.run} in {path} (the Runs page lists them)")
        try:
            selection = _selection(ws, run, args)
        except _Refused as exc:
            return fail(args, 1, str(exc))
        found = ws.runs.select_errors(run.run_id, selection, limit=args.limit)
    finally:
        ws.close()
    if args.json:
        rows = [{k: json_cell(v) for k, v in rec.items()} for rec in found.rows.to_dict(orient="records")]
        print_json({"total_rows": found.total_rows, "examples": found.examples,
                     "truncated": found.truncated, "rows": rows})
        return 0
    print(f"{found.total_rows:,} error rows in {found.examples:,} examples of run #{run.run_id} "
          f"({terminal_text(run.name)}, {terminal_text(run.task)} {terminal_text(run.split)})"
          + (f"; the first {len(found.rows):,}" if found.truncated else ""))
    if len(found.rows):
        shown = found.rows[["idx", "category", "gold_label", "pred_label", "gold_text", "pred_text"]]
        cells = shown.astype(object).where(shown.notna(), "").map(terminal_cell)
        print(cells.to_string(index=False, max_colwidth=40))
    return 0


def _selection(ws: Workspace, run, args) -> ErrorSelection:
    indices = None
    predicate = args.where
    if args.slice is not None:
        saved = {s.name: s.predicate for s in ws.slices.all(run.task)}
        if args.slice not in saved:
            raise _Refused(f"no slice named {args.slice!r} for {run.task}"
                           + (f" (saved: {', '.join(map(terminal_text, sorted(saved)))})" if saved
                              else " (none saved)"))
        predicate = saved[args.slice]
    if predicate is not None:
        try:
            indices = tuple(ws.slices.indices(run.dataset_id, predicate))
        except SliceError as exc:
            raise _Refused(f"predicate refused: {exc}") from None
    seen = None
    if args.seen is not None:
        split = seen_split(ws, [run])
        if not split.known:
            raise _Refused(f"--seen {args.seen}: the seen/unseen split of run {run.run_id} is {split.reason}")
        seen = SEEN_ARGUMENT[args.seen]
    return ErrorSelection(category=args.category, gold_label=args.gold_label, pred_label=args.pred_label,
                          tag=args.tag, indices=indices, errors_only=indices is not None and args.category is None,
                          seen=seen)  # type: ignore[arg-type]


def build_parser_hooks(subparsers) -> None:
    """Add the ``errors`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser("errors", help="the error rows of a stored run that a selection holds (the "
                                             "Errors page's list)")
    p.add_argument("--run", type=int, required=True, help="run id (the Runs page lists them)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--slice", help="a saved slice's name: its examples' errors")
    which.add_argument("--where", help="a SQL predicate over the example columns (as `query --where`): "
                                       "its examples' errors")
    p.add_argument("--category", help="an error category (missed, spurious, wrong_type, correct, ...)")
    p.add_argument("--gold-label", help="the gold label, entity type or predicate (∅: none, a spurious row)")
    p.add_argument("--pred-label", help="the predicted label (∅: none, a missed row)")
    p.add_argument("--tag", help="a tag (nested, schema_violation, ...)")
    p.add_argument("--seen", choices=sorted(SEEN_ARGUMENT),
                   help="yes: only examples in the model's training records; no: only the others")
    p.add_argument("--limit", type=int, default=20,
                   help="rows to print (default 20; the totals always cover the whole selection)")
    p.add_argument("--db", help="workspace file (default $CBLUE_STUDIO_DB or workspace/cblue_studio.duckdb)")
    p.add_argument("--json", action="store_true",
                   help='print {"total_rows", "examples", "truncated", "rows": [...]}')
    p.set_defaults(func=cmd_errors)

