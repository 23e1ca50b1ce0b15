"""The ``evaluate`` command: a predictions file scored against a gold file, as the official
scorer does."""
from __future__ import annotations

import argparse

from ..io.errors import FileRefused
from ..io.validate import validate
from .output import fail, print_json


def cmd_evaluate(args) -> int:
    from ..io.predictions import match_predictions
    from ..runs.evaluation import evaluate

    gold_ds = validate(args.gold, args.task)
    if not gold_ds.report.ok:
        msg = f"gold file refused: {gold_ds.report.errors[0]}"
        return fail(args, 1, msg, shown=msg)
    task = gold_ds.task
    try:
        matched = match_predictions(task, gold_ds.examples, args.pred, allow_missing=args.allow_missing)
    except FileRefused as refused:
        defects = [str(d) for d in refused.defects]
        return fail(args, 1, "predictions refused", shown="predictions refused:\n  " + "\n  ".join(defects),
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
        print_json(out)
        return 0
    print(f"{task.name}: {ev.headline} = {scaled(ev.value, ev.scale)}"
          + (f"  (95% CI {scaled(ev.intervals[ev.headline][0], ev.scale)}-"
             f"{scaled(ev.intervals[ev.headline][1], ev.scale)})" if ev.headline in ev.intervals else ""))
    for k, v in ev.metrics.items():
        if k != ev.headline:
            print(f"  {k}: {scaled(v, ev.scale)}")
    for line in matched.report.lines() + ev.notes:
        print(f"  note: {line}")
    return 0


def scaled(value, scale: int) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4f}" if scale == 1 else f"{value:.4f} (0-100)"


def resamples(text: str) -> int:
    """An argparse type: a bootstrap count within the core's bound."""
    from ..metrics.bootstrap import check_resamples

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of resamples, not {text!r:.40}") from None
    try:
        return check_resamples(n)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(sub) -> None:
    ev = sub.add_parser("evaluate", help="score a predictions file against a gold file")
    ev.add_argument("--task", help="task name (inferred from the gold file name when omitted)")
    ev.add_argument("--gold", required=True)
    ev.add_argument("--pred", required=True)
    ev.add_argument("--json", action="store_true")
    ev.add_argument("--allow-missing", action="store_true",
                    help="score gold keys without a prediction as empty predictions instead of refusing")
    ev.add_argument("--bootstrap", type=resamples, default=1000,
                    help="bootstrap resamples, 0 to 100,000 (0: no intervals)")
    ev.add_argument("--seed", type=int, default=0)
    ev.set_defaults(func=cmd_evaluate)
