"""The ``import-run`` command (wired into ``python -m cblue_core`` by :func:`build_parser_hooks`):
predictions made elsewhere (an official predictions file, or a folder of Parquet shards such as
``predict --input FOLDER`` writes) imported as a scored run of a stored split.

    python -m cblue_core import-run (--dataset ID | --task T --split S) --pred FILE_OR_FOLDER
        [--name NAME] [--allow-missing] [--db FILE] [--json]

``--json`` prints ``{"run_id", "metrics", "match": {"matched", "missing", "extra", "duplicates"}}``
(the match counts). Exit codes: 0 stored; 1 predictions refused, no such workspace or split;
2 a usage error or a locked workspace.
"""
from __future__ import annotations

from pathlib import Path

from .output import fail, print_json


def cmd_import_run(pred: str, *, dataset: int | None = None, task: str | None = None, split: str | None = None,
                   name: str | None = None, allow_missing: bool = False, db: str | None = None,
                   json_out: bool = False) -> int:
    from ..io.errors import FileRefused
    from ..scale.imports import import_predictions
    from ..store.workspace import WorkspaceError, WorkspaceLocked, connect, default_db_path
    from ..tasks import UnknownTaskError, get_task

    if dataset is None and not (task and split):
        return fail(json_out, 2, "pass --dataset ID, or --task and --split")
    if dataset is not None and (task or split):
        return fail(json_out, 2, "pass --dataset ID or --task and --split, not both")
    if task:
        try:
            task = get_task(task).name
        except UnknownTaskError as exc:
            return fail(json_out, 2, str(exc))
    path = Path(db) if db else default_db_path()
    if not path.is_file():
        return fail(json_out, 1, f"no workspace at {path} (create one with `ingest`, or start the app)")
    if not Path(pred).expanduser().exists():
        return fail(json_out, 1, f"no predictions at {pred}")
    try:
        ws = connect(path)
    except (WorkspaceLocked, WorkspaceError) as exc:
        return fail(json_out, 2, str(exc))
    try:
        target = ws.datasets.get(dataset) if dataset is not None else ws.datasets.find(str(task), str(split))
        if target is None:
            what = f"dataset {dataset}" if dataset is not None else f"{task} {split} split"
            return fail(json_out, 1, f"no {what} in {ws.path} (see `list`; add it with `ingest`)")
        try:
            result = import_predictions(ws, target.dataset_id, pred, name=name, allow_missing=allow_missing)
        except FileRefused as refused:
            defects = [str(d) for d in refused.defects]
            return fail(json_out, 1, "predictions refused",
                        shown="predictions refused:\n  " + "\n  ".join(defects[:20]), defects=defects)
        except ValueError as exc:
            return fail(json_out, 1, str(exc))
    finally:
        ws.close()
    ev, m = result.evaluation, result.match
    match = {"matched": m.matched if m else 0, "missing": len(m.missing) if m else 0,
             "extra": len(m.extra) if m else 0, "duplicates": len(m.duplicated) if m else 0}
    if json_out:
        print_json({"run_id": result.run_id, "metrics": ev.summary(), "match": match})
        return 0
    shown = "n/a" if ev.value is None else f"{ev.value:.4f}"
    print(f"stored run #{result.run_id} on {target.task} {target.split} from {pred}: {ev.headline} = {shown}")
    for line in (m.lines() if m else []):
        print(f"  {line}")
    return 0


def run_import_run(args) -> int:
    return cmd_import_run(args.pred, dataset=args.dataset, task=args.task, split=args.split, name=args.name,
                          allow_missing=args.allow_missing, db=args.db, json_out=args.json)


def build_parser_hooks(subparsers) -> None:
    """Add the ``import-run`` subcommand to an argparse subparsers object (its ``func`` takes the
    parsed args and returns an exit code, like the other commands)."""
    p = subparsers.add_parser("import-run", help="import predictions made elsewhere (a file or a folder of "
                                                 "Parquet shards) as a scored run of a stored split")
    p.add_argument("--dataset", type=int, help="dataset id (see `list`)")
    p.add_argument("--task", help="task of the split (with --split)")
    p.add_argument("--split", help="split name, e.g. dev (with --task)")
    p.add_argument("--pred", required=True, help="predictions file, or folder of Parquet shards (with or "
                                                 "without manifest.json)")
    p.add_argument("--name", help="run name (default: the file or folder name)")
    p.add_argument("--allow-missing", action="store_true",
                   help="score gold keys without a prediction as empty predictions instead of refusing")
    p.add_argument("--db", help="workspace file (default $CBLUE_STUDIO_DB or workspace/cblue_studio.duckdb)")
    p.add_argument("--json", action="store_true",
                   help='print {"run_id", "metrics", "match": {"matched", "missing", "extra", "duplicates"}}')
    p.set_defaults(func=run_import_run)
