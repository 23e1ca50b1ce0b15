"""Command line: ``python -m cblue_core COMMAND ...``. Everything the app does, scriptable."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .io.errors import FileRefused
from .io.resources import READERS, resource_kind
from .io.validate import validate
from .io.writers import write_dataset
from .store.workspace import WorkspaceError, WorkspaceLocked, connect, default_db_path
from .tasks import REGISTRY, UnknownTaskError, get_task


def _print_json(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def cmd_validate(args) -> int:
    path = Path(args.path)
    kind = resource_kind(path)
    if kind:
        reader = READERS[kind]
        try:
            rows = reader(path)
        except FileRefused as refused:
            errors = [str(d) for d in refused.defects]
            out = {"file": str(path), "task": kind, "records": 0, "annotations": 0,
                   "offset_convention": "none", "warnings": [], "errors": errors}
            _print_json(out) if args.json else print(f"{path}: REFUSED\n  " + "\n  ".join(errors))
            return 1
        n = len(rows)
        out = {"file": str(path), "task": kind, "records": n, "annotations": n,
               "offset_convention": "none", "warnings": [], "errors": []}
        _print_json(out) if args.json else print(f"{path}: ok; reference list {kind}, {n} rows")
        return 0
    loaded = validate(path, args.task, strict=args.strict)
    rep = loaded.report
    if args.json:
        _print_json(rep.to_json())
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
    from .ingest import ingest_paths

    ws = connect(args.db)
    outcomes = ingest_paths(ws, args.paths, args.task, args.split, args.strict)
    failed = 0
    for o in outcomes:
        mark = "ok     " if o.ok else "REFUSED"
        failed += 0 if o.ok else 1
        print(f"{mark} {o.path}: {o.message}")
        if o.report is not None:
            for d in o.report.warnings[:5]:
                print(f"        warning {d}")
            if len(o.report.warnings) > 5:
                print(f"        ... {len(o.report.warnings) - 5} more warnings (see `validate`)")
    ws.close()
    return 1 if failed else 0


def cmd_list(args) -> int:
    ws = connect(args.db, read_only=Path(args.db or default_db_path()).exists())
    rows = ws.datasets.all(args.task)
    if args.json:
        _print_json({"datasets": [d.__dict__ for d in rows],
                     "resources": [{"kind": k, "name": n, "rows": r} for k, n, r in ws.resources.all()]})
        return 0
    if not rows:
        print(f"no datasets in {ws.path}")
    for d in rows:
        print(f"{d.dataset_id:>4}  {d.task:<14} {d.split:<10} {d.records:>7} records {d.annotations:>8} annotations  {d.name}")
    for kind, name, n in ws.resources.all():
        print(f"      {kind:<14} {n:>7} rows  {name}")
    return 0


def cmd_export(args) -> int:
    ws = connect(args.db, read_only=True)
    if args.dataset is not None:
        info = ws.datasets.get(args.dataset)
    else:
        if not args.task or not args.split:
            print("export needs --dataset ID, or --task and --split", file=sys.stderr)
            return 2
        info = ws.datasets.find(args.task, args.split)
    if info is None:
        print("no such dataset in the workspace (see `list`)", file=sys.stderr)
        return 1
    task = get_task(info.task)
    out = Path(args.out)
    if out.is_dir() or not out.suffix:
        out = out / task.files.get(info.split, f"{task.name}_{info.split}.json")
    write_dataset(task, ws.datasets.examples(info.dataset_id), out, use_raw=True,
                  convention=info.offset_convention if info.offset_convention in ("inclusive", "exclusive") else "inclusive")
    print(f"wrote {info.records} records of {task.name} {info.split} to {out}")
    return 0


def cmd_evaluate(args) -> int:
    from .evaluation import evaluate
    from .io.predictions import match_predictions

    gold_ds = validate(args.gold, args.task)
    if not gold_ds.report.ok:
        print(f"gold file refused: {gold_ds.report.errors[0]}", file=sys.stderr)
        return 1
    task = gold_ds.task
    try:
        matched = match_predictions(task, gold_ds.examples, args.pred, allow_missing=args.allow_missing)
    except FileRefused as refused:
        print("predictions refused:\n  " + "\n  ".join(str(d) for d in refused.defects), file=sys.stderr)
        return 1
    ev = evaluate(task, gold_ds.examples, matched.predictions, n_boot=args.bootstrap, seed=args.seed)
    if task.scorer == "promptcblue":
        out = {"task": task.name, "score": ev.metrics.get("score"),
               "tasks": {k.split(":", 1)[1]: v for k, v in ev.metrics.items() if k.startswith("task:")},
               "clean": ev.extra.get("clean"), "parse_failures": ev.extra.get("parse_failures"),
               "official": ev.extra.get("official"), "metrics": ev.metrics}
    else:
        out = {"task": task.name, "headline": ev.headline, "metrics": ev.metrics,
               "intervals": {k: list(v) for k, v in ev.intervals.items()}, "notes": ev.notes,
               "per_label": ev.per_label}
    out["match"] = matched.report.lines()
    if args.json:
        _print_json(out)
        return 0
    print(f"{task.name}: {ev.headline} = {_fmt(ev.value, ev.scale)}"
          + (f"  (95% CI {_fmt(ev.intervals[ev.headline][0], ev.scale)}-"
             f"{_fmt(ev.intervals[ev.headline][1], ev.scale)})" if ev.headline in ev.intervals else ""))
    for k, v in ev.metrics.items():
        if k != ev.headline:
            print(f"  {k}: {_fmt(v, ev.scale)}")
    for line in matched.report.lines() + ev.notes:
        print(f"  note: {line}")
    return 0


def _fmt(value, scale: int) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4f}" if scale == 1 else f"{value:.4f} (0-100)"


def cmd_train(args) -> int:
    from .models.builtin import train

    try:
        card = train(args.task, args.data, args.out, seed=args.seed, resume=args.resume,
                     progress=not args.no_progress, max_minutes=args.max_minutes)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    metrics = card.dev_metrics.get("metrics", {})
    headline = card.dev_metrics.get("headline", "")
    print(f"trained {card.name} ({card.kind}) for {card.task} in {card.training.get('time_s', 0):.0f} s; "
          f"dev {headline} = {metrics.get(headline, float('nan')):.4f}; saved to {args.out}")
    return 0


def cmd_tasks(args) -> int:
    if args.json:
        _print_json({"tasks": [{"name": t.name, "family": t.family.value, "kind": t.kind.value,
                                "labels": len(t.labels), "submission_file": t.submission_file,
                                "metric": t.metric} for t in REGISTRY.values()]})
    else:
        for t in REGISTRY.values():
            print(f"{t.name:<14} {t.family.value:<12} {t.kind.value:<28} {t.description}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m cblue_core", description="CBLUE Studio command line")
    sub = p.add_subparsers(dest="command", required=True)

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
    i.add_argument("--db", help=f"workspace file (default ${'{'}CBLUE_STUDIO_DB{'}'} or {default_db_path()})")
    i.set_defaults(func=cmd_ingest)

    ls = sub.add_parser("list", help="list the datasets in the workspace")
    ls.add_argument("--task")
    ls.add_argument("--db")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)

    e = sub.add_parser("export", help="write a stored split back in its official format")
    e.add_argument("--dataset", type=int)
    e.add_argument("--task")
    e.add_argument("--split")
    e.add_argument("--out", required=True, help="output file or folder")
    e.add_argument("--db")
    e.set_defaults(func=cmd_export)

    ev = sub.add_parser("evaluate", help="score a predictions file against a gold file")
    ev.add_argument("--task", help="task name (inferred from the gold file name when omitted)")
    ev.add_argument("--gold", required=True)
    ev.add_argument("--pred", required=True)
    ev.add_argument("--json", action="store_true")
    ev.add_argument("--allow-missing", action="store_true",
                    help="score gold keys without a prediction as empty predictions instead of refusing")
    ev.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (0: no intervals)")
    ev.add_argument("--seed", type=int, default=0)
    ev.set_defaults(func=cmd_evaluate)

    tr = sub.add_parser("train", help="train a built-in model on a CBLUE folder (CPU)")
    tr.add_argument("--task", required=True)
    tr.add_argument("--data", required=True, help="a CBLUE folder, e.g. ../shared/cblue or sample_data/cblue")
    tr.add_argument("--out", required=True, help="the model folder to write")
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--resume", action="store_true", help="continue from out/checkpoint")
    tr.add_argument("--max-minutes", type=float, default=30)
    tr.add_argument("--no-progress", action="store_true")
    tr.set_defaults(func=cmd_train)

    from .models.commands import build_parser_hooks
    build_parser_hooks(sub)   # models, predict, run

    t = sub.add_parser("tasks", help="list the supported tasks")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=cmd_tasks)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (WorkspaceLocked, WorkspaceError, UnknownTaskError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
