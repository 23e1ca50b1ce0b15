"""The ``train`` and ``ship-model`` commands: a built-in model trained on a CBLUE folder, and
shipped into ``models/`` when it scores higher."""
from __future__ import annotations

import sys

from .output import print_json


def cmd_train(args) -> int:
    from ..models.builtin import train

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

    from ..models.builtin.shipping import ship
    from ..models.registry import BUILTIN_DIR

    try:
        decision = ship(args.folder, args.models_dir or BUILTIN_DIR)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print_json(asdict(decision))
    else:
        print(decision.reason)
    return 0


def add_parsers(sub) -> None:
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
