"""Command line: ``python -m cblue_core COMMAND ...``. Everything the app does, scriptable."""
from __future__ import annotations

import argparse
import json
import math
import os
import select
import sys
from collections.abc import Sized
from pathlib import Path
from typing import NoReturn, cast

from .io.errors import FileRefused
from .io.resources import READERS, resource_kind
from .io.validate import validate
from .logs import log_exception, log_path, one_line
from .models.encoder.command import add_pretrain_parser
from .render.terminal import terminal_cell, terminal_text
from .store.workspace import WorkspaceError, WorkspaceLocked, connect, default_db_path
from .tasks import REGISTRY, UnknownTaskError, get_task

# Exit statuses beyond a command's own 0 (success), 1 (input refused) and 2 (usage):
EXIT_UNEXPECTED = 3      # a bug or an unforeseen condition: one line here, the traceback in the log
EXIT_INTERRUPTED = 130   # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_CLOSED_PIPE = 141   # 128 + SIGPIPE, as a shell reports a writer that `head` stopped
MESSAGE_CHARS = 300      # of an unexpected exception's message on stderr, so that it stays one line


def _print_json(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def _fail(args, code: int, message: str, shown: str | None = None, **extra) -> int:
    """Say why a command failed: ``shown`` (default ``error: message``) on stderr and, under
    ``--json``, ``{"error": message, **extra}`` as the one JSON object on stdout."""
    try:
        print(f"error: {message}" if shown is None else shown, file=sys.stderr)
    except OSError:   # nowhere left to say it
        pass
    if getattr(args, "json", False):
        try:
            _print_json({"error": message, **extra})
            sys.stdout.flush()
        except BrokenPipeError:
            return _output_closed()
    return code


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
    from .ingest import IngestInterrupted, ingest_paths

    ws = connect(args.db)
    try:
        outcomes = ingest_paths(ws, args.paths, args.task, args.split, args.strict,
                                make_default=args.make_default)
    except IngestInterrupted as stop:
        _print_outcomes(stop.outcomes)
        stored = sum(1 for o in stop.outcomes if o.ok and o.kind in STORED_KINDS)
        print(f"error: {stop}; {stored} file(s) stored completely before it, none of the rest stored",
              file=sys.stderr)
        return 128 + stop.signum
    finally:
        ws.close()
    failed = _print_outcomes(outcomes)
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


def _print_outcomes(outcomes) -> int:
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


def _open_existing(db: str | None):
    """The workspace a reading command names; it must exist (a typo must not create one). Opened
    for writing so that a workspace of an older schema is migrated on the way."""
    path = Path(db) if db else default_db_path()
    if not path.is_file():
        raise WorkspaceError(f"no workspace at {path} (create one with `ingest`, or start the app)")
    return connect(path)


def cmd_list(args) -> int:
    ws = _open_existing(args.db)
    rows = ws.datasets.all(args.task)
    if args.json:
        _print_json({"datasets": [d.__dict__ for d in rows],
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
        return _fail(args, 2, "--limit must be 0 or more")
    if args.timeout is not None and args.timeout <= 0:
        return _fail(args, 2, "--timeout must be more than 0 seconds")
    path = Path(args.db) if args.db else default_db_path()
    if not path.is_file():
        return _fail(args, 1, f"no workspace at {path}")
    ws = _open_existing(str(path))
    try:
        if args.dataset is not None:
            info = ws.datasets.get(args.dataset)
            what = f"dataset {args.dataset}"
        elif args.task and args.split:
            info = ws.datasets.find(get_task(args.task).name, args.split)
            what = f"{args.task} {args.split} split"
        else:
            return _fail(args, 2, "query needs --dataset ID, or --task and --split")
        if info is None:
            return _fail(args, 1, f"no {what} in {path} (see `list`)")
        page = ws.datasets.query(info.dataset_id, predicate=args.where or "", limit=args.limit,
                                 timeout=args.timeout)
    finally:
        ws.close()
    if page.error:
        return _fail(args, 1, page.error)
    frame = page.rows
    if args.json:
        rows = [{k: _plain(v) for k, v in rec.items()} for rec in frame.to_dict(orient="records")]
        _print_json({"total": page.total, "rows": rows})
        return 0
    print(f"{page.total:,} matching examples in {info.task} {info.split} (dataset {info.dataset_id})"
          + (f"; the first {len(frame):,}" if len(frame) < page.total else ""))
    if len(frame):
        shown = frame[["idx", "text", "label", "types", "n_spans", "text_length"]].copy()
        shown["text"] = shown["text"].map(lambda t: (t or "")[:60])
        print(shown.map(terminal_cell).to_string(index=False, max_colwidth=60))
    return 0


def _plain(value: object) -> object:
    """A cell as JSON: lists for arrays, None for missing values, Python numbers."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def cmd_export(args) -> int:
    """A stored split at a gold version, in its official format or for an annotation tool."""
    from .annotation.export import export_dataset

    ws = _open_existing(args.db)
    try:
        if args.dataset is not None:
            info = ws.datasets.get(args.dataset)
            what = f"dataset {args.dataset}"
        elif args.task and args.split:
            info = ws.datasets.find(get_task(args.task).name, args.split)
            what = f"{args.task} {args.split} split"
        else:
            return _fail(args, 2, "export needs --dataset ID, or --task and --split")
        if info is None:
            return _fail(args, 1, f"no {what} in {ws.path} (see `list`)")
        version = None if args.version in (None, "current") else args.version
        try:
            paths = export_dataset(ws, info.dataset_id, args.out, args.format, version)
        except ValueError as exc:   # an unknown version, or a task the format cannot hold
            return _fail(args, 1, str(exc))
    finally:
        ws.close()
    print(f"wrote {info.records} records of {info.task} {info.split} ({version or 'current'} gold) "
          f"as {args.format}: " + ", ".join(str(p) for p in paths))
    return 0


def cmd_evaluate(args) -> int:
    from .evaluation import evaluate
    from .io.predictions import match_predictions

    gold_ds = validate(args.gold, args.task)
    if not gold_ds.report.ok:
        msg = f"gold file refused: {gold_ds.report.errors[0]}"
        return _fail(args, 1, msg, shown=msg)
    task = gold_ds.task
    try:
        matched = match_predictions(task, gold_ds.examples, args.pred, allow_missing=args.allow_missing)
    except FileRefused as refused:
        defects = [str(d) for d in refused.defects]
        return _fail(args, 1, "predictions refused", shown="predictions refused:\n  " + "\n  ".join(defects),
                     defects=defects)
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
                     progress=not args.no_progress, max_minutes=args.max_minutes,
                     architecture=args.architecture, encoder=args.encoder)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    metrics = card.dev_metrics.get("metrics", {})
    headline = card.dev_metrics.get("headline", "")
    print(f"trained {card.name} ({card.kind}) for {card.task} in {card.training.get('time_s', 0):.0f} s; "
          f"dev {headline} = {metrics.get(headline, float('nan')):.4f}; saved to {args.out}")
    return 0


def cmd_ship_model(args) -> int:
    from dataclasses import asdict

    from .models.builtin.shipping import ship
    from .models.registry import BUILTIN_DIR

    try:
        decision = ship(args.folder, args.models_dir or BUILTIN_DIR)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        _print_json(asdict(decision))
    else:
        print(decision.reason)
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


def program_name(argv0: str | None = None) -> str:
    """How the user called us, for the usage line: ``python -m cblue_core`` runs ``__main__.py``;
    the installed ``cblue-studio`` script runs under its own name."""
    name = Path(sys.argv[0] if argv0 is None else argv0).name
    return "python -m cblue_core" if name in ("__main__.py", "") or name.startswith("python") else name


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = _Parser(prog=prog or program_name(), description="CBLUE Studio command line")
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

    ev = sub.add_parser("evaluate", help="score a predictions file against a gold file")
    ev.add_argument("--task", help="task name (inferred from the gold file name when omitted)")
    ev.add_argument("--gold", required=True)
    ev.add_argument("--pred", required=True)
    ev.add_argument("--json", action="store_true")
    ev.add_argument("--allow-missing", action="store_true",
                    help="score gold keys without a prediction as empty predictions instead of refusing")
    ev.add_argument("--bootstrap", type=_resamples, default=1000,
                    help="bootstrap resamples, 0 to 100,000 (0: no intervals)")
    ev.add_argument("--seed", type=int, default=0)
    ev.set_defaults(func=cmd_evaluate)

    tr = sub.add_parser("train", help="train a built-in model on a CBLUE folder (CPU)")
    tr.add_argument("--task", required=True)
    tr.add_argument("--data", required=True, help="a CBLUE folder, e.g. ../shared/cblue or sample_data/cblue")
    tr.add_argument("--out", required=True, help="the model folder to write")
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--resume", action="store_true", help="continue from out/checkpoint")
    tr.add_argument("--max-minutes", type=float, default=30)
    tr.add_argument("--architecture", choices=["scratch", "encoder"],
                    help="scratch: trained from nothing; encoder: a head on the shared pretrained encoder "
                         "(default: the task's shipped architecture, or encoder with --encoder)")
    tr.add_argument("--encoder", metavar="FOLDER",
                    help="the pretrained encoder folder for --architecture encoder (default models/encoder)")
    tr.add_argument("--no-progress", action="store_true")
    tr.set_defaults(func=cmd_train)

    sh = sub.add_parser("ship-model", help="replace a built-in model in models/ by a newly trained one "
                                           "if its dev score is higher")
    sh.add_argument("folder", help="the newly trained model folder")
    sh.add_argument("--models-dir", help="the built-in models folder (default: the repository's models/)")
    sh.add_argument("--json", action="store_true")
    sh.set_defaults(func=cmd_ship_model)

    from .models.commands import build_parser_hooks
    build_parser_hooks(sub)   # models, predict, run
    add_pretrain_parser(sub)  # pretrain
    from .scale.commands import build_parser_hooks as scale_parser_hooks
    scale_parser_hooks(sub)   # import-run
    from .errors_command import build_parser_hooks as errors_parser_hooks
    errors_parser_hooks(sub)  # errors
    from .label_issues_command import build_parser_hooks as label_issues_hooks
    label_issues_hooks(sub)   # label-issues
    from .access_commands import build_parser_hooks as access_hooks
    access_hooks(sub)         # users, audit

    t = sub.add_parser("tasks", help="list the supported tasks")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=cmd_tasks)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = None
    try:
        args = build_parser().parse_args(argv)
        code = args.func(args)
        sys.stdout.flush()   # so that a closed pipe shows here, not as a traceback at interpreter exit
        return code
    except _UsageError as exc:
        # argparse has printed the usage line; the message keeps its "prog: error:" form.
        return _fail(_or_argv(None, argv), 2, str(exc), shown=str(exc))
    except (WorkspaceLocked, WorkspaceError, UnknownTaskError) as exc:
        return _fail(_or_argv(args, argv), 2, str(exc))
    except BrokenPipeError as exc:
        return _output_closed() if _stdout_closed() else _unexpected(args, argv, exc)
    except KeyboardInterrupt:
        return _fail(_or_argv(args, argv), EXIT_INTERRUPTED, "interrupted")
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, details in the log
        return _unexpected(args, argv, exc)


def _resamples(text: str) -> int:
    """An argparse type: a bootstrap count within the core's bound."""
    from .metrics.bootstrap import check_resamples

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of resamples, not {text!r:.40}") from None
    try:
        return check_resamples(n)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose usage errors reach main (which owes --json a JSON answer)
    instead of exiting. Subcommand parsers are made of the same class."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise _UsageError(f"{self.prog}: error: {message}")


class _JsonOnly:
    """Stands in for parsed arguments where there are none (a usage error)."""

    def __init__(self, json_out: bool) -> None:
        self.json = json_out


def _or_argv(args, argv: list[str]):
    return args if args is not None else _JsonOnly("--json" in argv)


def _unexpected(args, argv: list[str], exc: Exception) -> int:
    """An exception no command expects: a line on stderr (and --json's object), the traceback
    only in the log, exit status 3."""
    command = getattr(args, "command", None) or "(parsing arguments)"
    target = log_path(getattr(args, "db", None))
    logged: str | None = None
    try:
        logged = str(log_exception(f"python -m cblue_core {command}", exc, target))
        details = f"details: {logged}"
    except OSError as log_exc:
        details = f"no details: cannot write {target}: {log_exc.strerror or type(log_exc).__name__}"
    summary = one_line(exc, MESSAGE_CHARS)
    return _fail(args, EXIT_UNEXPECTED, summary, shown=f"error: {summary} ({details})", log=logged)


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone: a BrokenPipeError from another pipe is a bug."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):   # no poll (Windows), or no descriptor: assume so
        return True


def _output_closed() -> int:
    """The reader of stdout went away (``... | head``): stop quietly. Python would otherwise
    print a traceback when it flushes stdout at exit, so stdout now points at /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):   # no real file descriptor (stdout replaced in-process)
        pass
    return EXIT_CLOSED_PIPE

