"""``python -m cblue_core pretrain``: pretrain the shared character encoder (CPU, resumable).

:func:`add_pretrain_parser` registers the subcommand; the heavy imports happen only when it runs,
so that ``--help`` stays fast.
"""
from __future__ import annotations

import os
import sys


def run_pretrain(args) -> int:
    from ..models.builtin.common import DEFAULT_TRAIN_THREADS
    from ..models.encoder.continuation import STAGE_RECIPE
    from ..models.encoder.pretrain import pretrain

    parts = ["python -m cblue_core pretrain", f"--data {args.data}", f"--out {args.out}"]
    parts += [f"--continue-from {args.continue_from}"] if args.continue_from else []
    parts += [f"--seed {args.seed}"] if args.seed else []
    threads = os.environ.get("CBLUE_TRAIN_THREADS", "")
    env = f"CBLUE_TRAIN_THREADS={threads} " if threads and threads != str(DEFAULT_TRAIN_THREADS) else ""
    try:
        result = pretrain(args.data, args.out, seed=args.seed, resume=args.resume,
                          max_minutes=args.max_minutes, max_steps=args.max_steps,
                          progress=not args.no_progress, command=env + " ".join(parts),
                          init_from=args.continue_from,
                          overrides=dict(STAGE_RECIPE) if args.continue_from else None)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    st = result.state
    if not result.finished:
        print(f"stopped at step {st['step']} of {result.config.steps} (checkpoint in "
              f"{result.out_dir / 'checkpoint'}); continue with --resume")
        return 0
    loss, acc = st["heldout_curve"][-1][1:]
    print(f"pretrained the encoder: {st['step']} steps, {st['tokens']} tokens, {st['cpu_s'] / 3600:.2f} CPU "
          f"hours; held-out masked-token loss {loss:.4f}, accuracy {acc:.4f}; saved to {result.out_dir}")
    return 0


def add_pretrain_parser(subparsers) -> None:
    """Add the ``pretrain`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "pretrain", help="pretrain the shared character encoder by masked-language modelling on the "
                         "train text of a CBLUE folder (CPU; checkpoints, resume)")
    p.add_argument("--data", required=True, help="a CBLUE folder, e.g. ../shared/cblue (train splits and "
                                                 "reference lists are read; never dev or test)")
    p.add_argument("--out", required=True, help="the model folder to write (checkpoint/ inside while training)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true", help="continue from out/checkpoint")
    p.add_argument("--continue-from", metavar="FOLDER", default=None,
                   help="start from this finished encoder folder (its weights and vocabulary) as a new stage "
                        "of pretraining: 9,000 more updates, peak learning rate 3e-4 after 300 warm-up steps, "
                        "bf16 autocast where the CPU has native bf16 (fp32 elsewhere); "
                        "the card keeps both stages' curves on one step axis")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="stop (checkpointed) after this many minutes of this invocation; --resume continues")
    p.add_argument("--max-steps", type=int, default=None,
                   help="stop (checkpointed) once the run has made this many updates; the recipe's "
                        "length and learning-rate schedule do not change")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr (log lines only)")
    p.set_defaults(func=run_pretrain)
