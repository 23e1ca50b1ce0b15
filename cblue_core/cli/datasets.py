"""The dataset commands: ``validate``, ``ingest``, ``list``, ``query``, ``export`` and ``tasks``."""
from __future__ import annotations

import sys
from collections.abc import Sized
from pathlib import Path
from typing import cast

from ..io.errors import FileRefused
from ..io.resources import READERS, resource_kind
from ..io.validate import validate
from ..store.datasets import DatasetInfo
from ..store.workspace import connect, default_db_path
from ..tasks import REGISTRY, get_task
from .output import fail, json_cell, open_existing, print_json, terminal_cell, terminal_text


def cmd_validate(args) -> int:
    path = Path(args.path)
    kind = resource_kind(path)
    if kind:
        reader = READERS[kind]
        try:
            rows = cast(Sized, reader(path))
        except FileRefused as refused:
            errors = [str(d) for d in refused.defects]
            out = {"file": str(path), "task": kind, "records": 0, "annotations": 0,
                   "offset_convention": "none", "warnings": [], "errors": errors}
            print_json(out) if args.json else print(f"{path}: REFUSED\n  " + "\n  ".join(errors))
            return 1
        n = len(rows)
        out = {"file": str(path), "task": kind, "records": n, "annotations": n,
               "offset_convention": "none", "warnings": [], "errors": []}
        print_json(out) if args.json else print(f"{path}: ok; reference list {kind}, {n} rows")
        return 0
    loaded = validate(path, args.task, strict=args.strict)
    rep = loaded.report
    if args.json:
        print_json(rep.to_json())
    else:
        print(rep.summary())
        if rep.label_distribution:
            top = ", ".join(f"{k}: {v}" for k, v in list(rep.label_distribution.items())[:15])
            print(f"  labels: {top}")
        for d in rep.errors:
            print(f"  ERROR   {d}")
        for d in rep.warnings[:50]:
            print(f"  warning {d}")
        if len(rep.warnings) > 50:
            print(f"  ... {len(rep.warnings) - 50} more warnings (use --json for all)")
    return 0 if rep.ok else 1


def cmd_ingest(args) -> int:
    from ..store.ingest import IngestInterrupted, ingest_paths

    ws = connect(args.db)
    try:
        outcomes = ingest_paths(ws, args.paths, args.task, args.split, args.strict,
                                make_default=args.make_default)
    except IngestInterrupted as stop:
        print_outcomes(stop.outcomes)
        stored = sum(1 for o in stop.outcomes if o.ok and o.kind in STORED_KINDS)
        print(f"error: {stop}; {stored} file(s) stored completely before it, none of the rest stored",
              file=sys.stderr)
        return 128 + stop.signum
    finally:
        ws.close()
    failed = print_outcomes(outcomes)
    print(ingest_summary(outcomes))
    return 1 if failed else 0


STORED_KINDS = ("dataset", "resource")


def ingest_summary(outcomes) -> str:
    """The closing line of `ingest`: what was stored, passed over and refused, in files and records."""
    stored = [o for o in outcomes if o.ok and o.kind in STORED_KINDS]
    records = sum(o.result.records for o in stored
                  if o.kind == "dataset" and o.result is not None and o.result.created)
    skipped = sum(1 for o in outcomes if o.kind == "skipped")
    refused = sum(1 for o in outcomes if not o.ok)
    datasets = sum(1 for o in stored if o.kind == "dataset")
    return (f"done: {datasets:,} dataset(s) and {len(stored) - datasets:,} reference list(s) stored or already"
            f" present ({records:,} new records), {skipped:,} file(s) skipped, {refused:,} refused")


def print_outcomes(outcomes) -> int:
    """Print one line per file (and its first warnings); return how many were refused."""
    failed = 0
    for o in outcomes:
        mark = "skipped" if o.kind == "skipped" else "ok     " if o.ok else "REFUSED"
        failed += 0 if o.ok else 1
        print(f"{mark} {o.path}: {o.message}")
        if o.report is not None:
            for d in o.report.warnings[:5]:
                print(f"        warning {d}")
            if len(o.report.warnings) > 5:
                print(f"        ... {len(o.report.warnings) - 5} more warnings (see `validate`)")
    return failed


def cmd_list(args) -> int:
    ws = open_existing(args.db)
    rows = ws.datasets.all(args.task)
    if args.json:
        print_json({"datasets": [d.__dict__ for d in rows],
                     "resources": [{"kind": k, "name": n, "rows": r} for k, n, r in ws.resources.all()]})
        return 0
    if not rows:
        print(f"no datasets in {ws.path}")
    for d in rows:
        print(f"{d.dataset_id:>4}  {terminal_text(d.task):<14} {terminal_text(d.split):<10} {d.records:>7} records "
              f"{d.annotations:>8} annotations  {terminal_text(d.name)}")
    for kind, name, n in ws.resources.all():
        print(f"      {terminal_text(kind):<14} {n:>7} rows  {terminal_text(name)}")
    return 0


def cmd_query(args) -> int:
    """Examples of a stored split selected by a SQL predicate, checked and run on the same
    bounded path as the app's filter (see DatasetStore.filtered)."""
    if args.limit < 0:
        return fail(args, 2, "--limit must be 0 or more")
    if args.timeout is not None and args.timeout <= 0:
        return fail(args, 2, "--timeout must be more than 0 seconds")
    path = Path(args.db) if args.db else default_db_path()
    if not path.is_file():
        return fail(args, 1, f"no workspace at {path}")
    ws = open_existing(str(path))
    try:
        info = chosen_split(ws, args, "query", path)
        if isinstance(info, int):
            return info
        page = ws.datasets.query(info.dataset_id, predicate=args.where or "", limit=args.limit,
                                 timeout=args.timeout)
    finally:
        ws.close()
    if page.error:
        return fail(args, 1, page.error)
    frame = page.rows
    if args.json:
        rows = [{k: json_cell(v) for k, v in rec.items()} for rec in frame.to_dict(orient="records")]
        print_json({"total": page.total, "rows": rows})
        return 0
    print(f"{page.total:,} matching examples in {info.task} {info.split} (dataset {info.dataset_id})"
          + (f"; the first {len(frame):,}" if len(frame) < page.total else ""))
    if len(frame):
        shown = frame[["idx", "text", "label", "types", "n_spans", "text_length"]].copy()
        shown["text"] = shown["text"].map(lambda t: (t or "")[:60])
        print(shown.map(terminal_cell).to_string(index=False, max_colwidth=60))
    return 0


def chosen_split(ws, args, command: str, where) -> DatasetInfo | int:
    """The stored split ``--dataset ID`` or ``--task``/``--split`` names, or the exit code after
    saying why there is none (2: neither given; 1: not in the workspace)."""
    if args.dataset is not None:
        info, what = ws.datasets.get(args.dataset), f"dataset {args.dataset}"
    elif args.task and args.split:
        info, what = ws.datasets.find(get_task(args.task).name, args.split), f"{args.task} {args.split} split"
    else:
        return fail(args, 2, f"{command} needs --dataset ID, or --task and --split")
    if info is None:
        return fail(args, 1, f"no {what} in {where} (see `list`)")
    return info


def cmd_export(args) -> int:
    """A stored split at a gold version, in its official format or for an annotation tool."""
    from ..annotation.export import export_dataset

    ws = open_existing(args.db)
    try:
        info = chosen_split(ws, args, "export", ws.path)
        if isinstance(info, int):
            return info
        version = None if args.version in (None, "current") else args.version
        try:
            paths = export_dataset(ws, info.dataset_id, args.out, args.format, version)
        except ValueError as exc:   # an unknown version, or a task the format cannot hold
            return fail(args, 1, str(exc))
    finally:
        ws.close()
    print(f"wrote {info.records} records of {info.task} {info.split} ({version or 'current'} gold) "
          f"as {args.format}: " + ", ".join(str(p) for p in paths))
    return 0


def cmd_tasks(args) -> int:
    if args.json:
        print_json({"tasks": [{"name": t.name, "family": t.family.value, "kind": t.kind.value,
                                "labels": len(t.labels), "submission_file": t.submission_file,
                                "metric": t.metric} for t in REGISTRY.values()]})
    else:
        for t in REGISTRY.values():
            print(f"{t.name:<14} {t.family.value:<12} {t.kind.value:<28} {t.description}")
    return 0


def add_parsers(sub) -> None:
    """validate, ingest, list, query and export."""
    v = sub.add_parser("validate", help="validate a dataset file and print its report")
    v.add_argument("path")
    v.add_argument("--task", help="task name (inferred from the file name when omitted)")
    v.add_argument("--strict", action="store_true", help="refuse files with annotation defects too")
    v.add_argument("--json", action="store_true", help="print one JSON object")
    v.set_defaults(func=cmd_validate)

    i = sub.add_parser("ingest", help="validate and store files or folders in the workspace")
    i.add_argument("paths", nargs="+")
    i.add_argument("--task")
    i.add_argument("--split")
    i.add_argument("--strict", action="store_true")
    i.add_argument("--make-default", action="store_true",
                   help="open the stored file(s) by default for everyone (the first dataset of a "
                        "task split is its default until then)")
    i.add_argument("--db", help=f"workspace file (default ${'{'}CBLUE_STUDIO_DB{'}'} or {default_db_path()})")
    i.set_defaults(func=cmd_ingest)

    ls = sub.add_parser("list", help="list the datasets in the workspace")
    ls.add_argument("--task")
    ls.add_argument("--db")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)

    q = sub.add_parser("query", help="examples of a stored split that a SQL predicate selects")
    q.add_argument("--dataset", type=int, help="dataset id (see `list`)")
    q.add_argument("--task")
    q.add_argument("--split")
    q.add_argument("--where", help="a boolean expression over the example columns, e.g. "
                                   "\"nesting_depth > 1 AND list_contains(types, 'dis')\"")
    q.add_argument("--limit", type=int, default=20, help="rows to print (default 20; the total is always counted)")
    q.add_argument("--timeout", type=float, help="seconds before the filter is stopped (default "
                                                 "$CBLUE_STUDIO_SQL_TIMEOUT or 3)")
    q.add_argument("--db")
    q.add_argument("--json", action="store_true", help='print {"total": N, "rows": [...]}')
    q.set_defaults(func=cmd_query)

    e = sub.add_parser("export", help="write a stored split (at a gold version) in its official "
                                      "format or for brat, doccano or Label Studio")
    e.add_argument("--dataset", type=int, help="dataset id (see `list`)")
    e.add_argument("--task")
    e.add_argument("--split")
    e.add_argument("--out", required=True,
                   help="output file or folder (a path without a suffix is a folder); official: the "
                        "file; brat: a folder, or a .zip; doccano: NAME.jsonl (+ NAME.README.txt); "
                        "label-studio: NAME.json (+ NAME.label_config.xml)")
    e.add_argument("--format", default="official", choices=["official", "brat", "doccano", "label-studio"],
                   help="official (default), brat, doccano or label-studio")
    e.add_argument("--version", help="gold version: current (default), original (as ingested) or a "
                                     "named version")
    e.add_argument("--db")
    e.set_defaults(func=cmd_export)


def add_tasks_parser(sub) -> None:
    t = sub.add_parser("tasks", help="list the supported tasks")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=cmd_tasks)
