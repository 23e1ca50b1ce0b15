"""Command line: ``python -m cblue_core COMMAND ...``. Everything the app does, scriptable.

The parser is assembled here from one module per command family (each adds its subcommands);
:mod:`.output` holds the rules every command's output follows. A new command goes into its
family's module, or a new module added to :func:`build_parser`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from ..store.workspace import WorkspaceError, WorkspaceLocked
from ..tasks import UnknownTaskError
from . import access, datasets, encoder, errors, evaluation, label_issues, models, scale, training
from .output import EXIT_INTERRUPTED, fail, output_closed, stdout_closed, unexpected


def program_name(argv0: str | None = None) -> str:
    """How the user called us, for the usage line: ``python -m cblue_core`` runs ``__main__.py``;
    the installed ``cblue-studio`` script runs under its own name."""
    name = Path(sys.argv[0] if argv0 is None else argv0).name
    return "python -m cblue_core" if name in ("__main__.py", "") or name.startswith("python") else name


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = _Parser(prog=prog or program_name(), description="CBLUE Studio command line")
    sub = p.add_subparsers(dest="command", required=True)

    # in the order --help lists them
    datasets.add_parsers(sub)           # validate, ingest, list, query, export
    evaluation.add_parser(sub)          # evaluate
    training.add_parsers(sub)           # train, ship-model
    models.build_parser_hooks(sub)      # models, predict, run
    encoder.add_pretrain_parser(sub)    # pretrain
    scale.build_parser_hooks(sub)       # import-run
    errors.build_parser_hooks(sub)      # errors
    label_issues.build_parser_hooks(sub)  # label-issues
    access.build_parser_hooks(sub)      # users, audit
    datasets.add_tasks_parser(sub)      # tasks
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
        return fail(_or_argv(None, argv), 2, str(exc), shown=str(exc))
    except (WorkspaceLocked, WorkspaceError, UnknownTaskError) as exc:
        return fail(_or_argv(args, argv), 2, str(exc))
    except BrokenPipeError as exc:
        return output_closed() if stdout_closed() else unexpected(args, argv, exc)
    except KeyboardInterrupt:
        return fail(_or_argv(args, argv), EXIT_INTERRUPTED, "interrupted")
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, details in the log
        return unexpected(args, argv, exc)


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


