"""Shipping a newly trained built-in model: it replaces the model in ``models/`` only when its dev
score is higher, and its card then records what it replaced; a model of another kind that scores
no higher is recorded in the shipped model's card as the model it was kept over (weights
untouched). The README's score table shows both.

    python -m cblue_core ship-model /path/to/new/kuake-qic [--models-dir models] [--json]
"""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..registry import BUILTIN_DIR
from ..report import KEPT_OVER, REPLACES, replaced_summary
from . import common as C

SKIPPED = ("checkpoint",)       # training state, never shipped


@dataclass(frozen=True)
class ShipDecision:
    task: str
    folder: str                 # where the model is (or would be) shipped
    headline: str
    new: float
    old: float | None           # the shipped model's dev score, None when none was shipped
    shipped: bool
    reason: str


def _headline(card, where: Path) -> tuple[str, float]:
    dev = card.dev_metrics or {}
    head = dev.get("headline")
    value = (dev.get("metrics") or {}).get(head)
    if head is None or value is None:
        raise ValueError(f"{where}: the model card has no dev score (dev_metrics.headline)")
    return head, float(value)


def _scored_on(card) -> object:
    """What a dev score was computed on: scores are compared only on the same examples."""
    data = (card.training or {}).get("data") or {}
    return data.get("eval_examples", data.get("dev_examples"))


def _names_encoder_beside(folder: Path) -> bool:
    """Whether the model names its encoder "encoder" beside it (models/encoder once shipped)."""
    config = folder / "config.json"
    return config.is_file() and C.read_json(config).get("encoder") == "encoder"


def reproducing_command(command: str, folder_name: str, *, beside_encoder: bool) -> str:
    """The card's training command as it reproduces the shipped model: written to
    ``models/<folder_name>``, with the shipped encoder (the default) when the model uses the one
    beside it.

    >>> reproducing_command("python -m cblue_core train --task KUAKE-QIC --data ../shared/cblue "
    ...     "--out /work/x/kuake-qic --architecture encoder --encoder /work/x/encoder", "kuake-qic",
    ...     beside_encoder=True)
    'python -m cblue_core train --task KUAKE-QIC --data ../shared/cblue --out models/kuake-qic --architecture encoder'
    """
    command = re.sub(r"--out \S+", f"--out models/{folder_name}", command)
    return re.sub(r" --encoder \S+", "", command) if beside_encoder else command


KEPT_OVER_NOTE, REPLACES_NOTE = "**Kept over.**", "**Replaces.**"


def with_note(readme: str, marker: str, sentence: str) -> str:
    """``readme`` ending with the one-paragraph note ``marker sentence`` (an earlier note with
    that marker is dropped, so re-recording never stacks notes)."""
    readme = re.sub(rf"\n\n{re.escape(marker)}[^\n]*", "", readme)
    return readme.rstrip() + f"\n\n{marker} {sentence}\n"


def record_kept_over(dest: Path, kept, candidate) -> None:
    """Note in the shipped model's card and README (``dest``) the model of another kind it
    scored at least as well as (one note per kind, the latest replacing an earlier one)."""
    notes = [n for n in kept.extra.get(KEPT_OVER) or [] if isinstance(n, dict) and n.get("kind") != candidate.kind]
    summary = replaced_summary(candidate)
    # named as it would have shipped (the training folder's name says nothing to a reader)
    summary.update(name=dest.name, time_s=(candidate.training or {}).get("time_s"))
    kept.extra[KEPT_OVER] = sorted(notes + [summary], key=lambda n: str(n.get("kind")))
    readme_path = dest / "README.md"
    readme = None
    if readme_path.is_file():
        lines = [f"`{n['name']}` ({n['kind']}), dev {n['headline']} {n['dev']:.4f}" for n in kept.extra[KEPT_OVER]]
        readme = with_note(readme_path.read_text(encoding="utf-8"), KEPT_OVER_NOTE,
                           "This model scored higher on dev than " + "; ".join(lines) + ".")
    C.finish_card(dest, kept, readme)


def ship(candidate: str | Path, models_dir: str | Path = BUILTIN_DIR, *, folder_name: str | None = None
         ) -> ShipDecision:
    """Copy the model folder ``candidate`` to ``models_dir/<task folder>`` if its dev headline beats
    the shipped model's (or none is shipped); the old folder is removed, the new card records it."""
    from . import MODEL_DIRS

    candidate, models_dir = Path(candidate), Path(models_dir)
    card = C.read_card(candidate)
    if card.task not in MODEL_DIRS:
        raise ValueError(f"{candidate}: task {card.task!r} has no built-in model folder")
    head, new = _headline(card, candidate)
    dest = models_dir / (folder_name or MODEL_DIRS[card.task])
    old_card = C.read_card(dest) if (dest / C.CARD_FILE).is_file() else None
    old = None
    if old_card is not None:
        old_head, old = _headline(old_card, dest)
        if old_head != head or _scored_on(old_card) != _scored_on(card):
            raise ValueError(f"{candidate} and {dest} are not scored alike ({head} on {_scored_on(card)} "
                             f"examples against {old_head} on {_scored_on(old_card)}): not comparable")
        if new <= old:
            reason = f"kept {dest.name}: its dev {head} {old:.4f} >= the new model's {new:.4f}"
            if card.kind != old_card.kind:
                record_kept_over(dest, old_card, card)
                reason += f"; its card records the {card.kind} model it was kept over"
            return ShipDecision(card.task, str(dest), head, new, old, False, reason)
        if isinstance(old_card.extra.get(REPLACES), dict) and old_card.kind == card.kind:
            card.extra[REPLACES] = old_card.extra[REPLACES]     # still beside the from-scratch model
        else:
            card.extra[REPLACES] = replaced_summary(old_card)
        # the models the old one was kept over scored under it, so under the new one too
        kept = [n for n in old_card.extra.get(KEPT_OVER) or [] if isinstance(n, dict) and n.get("kind") != card.kind]
        if kept:
            card.extra[KEPT_OVER] = kept
    # Staged under a random name that mkdtemp creates (a planted link is never followed or
    # removed); copytree copies the candidate folder's mode onto it.
    staged = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".incoming", dir=models_dir))
    shutil.copytree(candidate, staged, ignore=shutil.ignore_patterns(*SKIPPED), dirs_exist_ok=True)
    readme = (staged / "README.md").read_text(encoding="utf-8") if (staged / "README.md").is_file() else None
    if card.name != dest.name:          # named by its folder in models/, not the one it was trained in
        if readme is not None:
            readme = re.sub(rf"^# {re.escape(card.name)}\b", f"# {dest.name}", readme, count=1)
        card.name = dest.name
    command = str((card.training or {}).get("command") or "")
    if command:
        shipped_command = reproducing_command(command, dest.name, beside_encoder=_names_encoder_beside(staged))
        card.training["command"] = shipped_command
        if readme is not None:
            readme = readme.replace(command, shipped_command)
    if readme is not None and REPLACES in card.extra:
        r = card.extra[REPLACES]
        readme = with_note(readme, REPLACES_NOTE, f"`{r['name']}` ({r['kind']}), dev {r['headline']} "
                                                  f"{r['dev']:.4f}, the model shipped before this one.")
    if readme is not None and card.extra.get(KEPT_OVER):
        readme = with_note(readme, KEPT_OVER_NOTE, "This model scored higher on dev than " + "; ".join(
            f"`{n['name']}` ({n['kind']}), dev {n['headline']} {n['dev']:.4f}" for n in card.extra[KEPT_OVER]) + ".")
    C.finish_card(staged, card, readme)
    if dest.exists():
        shutil.rmtree(dest)
    staged.rename(dest)
    was = f"{old:.4f}" if old is not None else "none shipped"
    return ShipDecision(card.task, str(dest), head, new, old, True,
                        f"shipped {candidate} as {dest.name}: dev {head} {new:.4f} (was {was})")
