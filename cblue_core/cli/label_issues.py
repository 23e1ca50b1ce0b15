"""The ``label-issues`` command (wired into ``python -m cblue_core`` by :func:`build_parser_hooks`):
the gold labels of a run's split that its class probabilities say are probably wrong
(:mod:`cblue_core.annotation.label_issues`), or for a span task the gold spans its span
probabilities say are (:mod:`cblue_core.annotation.span_issues`: one issue per span, ``given``
and ``suggested`` read ``type 'text' [start, end)`` or ``(no span)``), or for CMeIE the gold
mentions its candidate subjects and objects say are (:mod:`cblue_core.annotation.mention_issues`),
most likely first.

    python -m cblue_core label-issues --run ID [--top N] [--rank-by self_confidence|normalized_margin]
        [--db FILE] [--json]

``--json`` prints ``{"issues": [{"idx", "key", "score", "reason", "given", "suggested"}],
"excluded_training": n}``. The examples the run's model was trained on (the run's stored
``training_overlap``) are left out. Exit codes: 0 ranked; 1 no such run, a task with neither
one class per record nor entity spans nor relations, a run without class (or span, or
candidate mention) probabilities; 2 a usage
error, or no such or a locked workspace (reported by :func:`cblue_core.cli.main`, like the other reading commands).
"""
from __future__ import annotations

from ..annotation.label_issues import RANKINGS, NoClassProbabilities, ProbabilitiesMissing
from ..annotation.model_queues import find_issues, training_indices
from .output import fail, open_existing, print_json, terminal_text


def cmd_label_issues(run_id: int, *, top: int | None = None, rank_by: str = "self_confidence",
                     db: str | None = None, json_out: bool = False) -> int:
    from ..tasks import get_task

    if top is not None and top < 1:
        return fail(json_out, 2, f"--top must be at least 1 (got {top})")
    ws = open_existing(db)
    try:
        run = ws.runs.get(run_id)
        if run is None:
            return fail(json_out, 1, f"no run {run_id} in {ws.path} (`run` and `import-run` print run ids; the app shows them)")
        gold = ws.datasets.examples(run.dataset_id)
        predictions = ws.runs.predictions(run_id)
        seen = training_indices(ws, run)
    finally:
        ws.close()
    try:
        result = find_issues(get_task(run.task), gold, predictions, seen or (), rank_by=rank_by)
    except (NoClassProbabilities, ProbabilitiesMissing) as exc:
        return fail(json_out, 1, f"run {run_id}: {exc}")
    if json_out:
        print_json(result.to_json(top))
        return 0
    shown = result.issues if top is None else result.issues[:top]
    print(f"run #{run_id} ({terminal_text(run.name)}, {run.task} {terminal_text(run.split)}): {len(result.issues):,} probable gold "
          f"errors among {result.examined:,} examples, {len(shown):,} shown; "
          + (f"{result.excluded_training:,} left out as training records of the model"
             if seen is not None else "training records unknown, none left out"))
    for rank, issue in enumerate(shown, 1):
        print(f"{rank:>4}. #{issue.idx} {terminal_text(issue.key)}  score {issue.score:.4f}  "
              f"{terminal_text(issue.reason)}")
    return 0


def run_label_issues(args) -> int:
    return cmd_label_issues(args.run, top=args.top, rank_by=args.rank_by, db=args.db, json_out=args.json)


def build_parser_hooks(subparsers) -> None:
    """Add the ``label-issues`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser("label-issues", help="gold labels (or entity spans) a run's probabilities say "
                                                   "are probably wrong (confident learning), most likely first")
    p.add_argument("--run", type=int, required=True, help="run id (printed by `run` and `import-run`)")
    p.add_argument("--top", type=int, metavar="N", help="show the first N only")
    p.add_argument("--rank-by", choices=RANKINGS, default="self_confidence",
                   help="cleanlab's label quality score to rank by (default self_confidence)")
    p.add_argument("--db", help="workspace file (default $CBLUE_STUDIO_DB or workspace/cblue_studio.duckdb)")
    p.add_argument("--json", action="store_true",
                   help='print {"issues": [{"idx", "key", "score", "reason", "given", "suggested"}], '
                        '"excluded_training": n}')
    p.set_defaults(func=run_label_issues)
