"""The built-in models' scores beside the CBLUE paper's BERT-base, as one Markdown table.

The README's table is this function's output (a test keeps them equal), so the numbers shown to
users always come from the model cards, which our own evaluator wrote.
"""
from __future__ import annotations

from collections.abc import Sequence

from .registry import ModelInfo

# CBLUE paper (Zhang et al., ACL 2022), Table 4, BERT-base test scores (%).
PAPER_BERT_BASE: dict[str, float] = {
    "CMeEE": 62.1, "CMeIE": 54.0, "CHIP-CDN": 55.4, "CHIP-CTC": 69.2, "CHIP-STS": 83.0,
    "KUAKE-QIC": 84.3, "KUAKE-QTR": 60.0, "KUAKE-QQR": 84.7,
}
TARGET_FRACTION = 0.75

HEADER = ("| task | model | metric | dev score (95% CI) | BERT-base (paper) | 75% target | "
          "strongest baseline | train time | size |\n|---|---|---|---|---|---|---|---|---|")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def strongest_baseline(card, headline: str) -> tuple[str, float] | None:
    scored = [(name, b["metrics"][headline]) for name, b in (card.baselines or {}).items()
              if isinstance(b, dict) and headline in (b.get("metrics") or {})]
    return max(scored, key=lambda t: t[1]) if scored else None


def row(task: str, model: ModelInfo | None) -> str:
    paper = PAPER_BERT_BASE[task]
    target = f"{paper * TARGET_FRACTION:.1f}"
    if model is None or model.card is None or not model.card.dev_metrics:
        return f"| {task} | none shipped | | | {paper} | {target} | | | |"
    card = model.card
    dev = card.dev_metrics
    head = dev["headline"]
    lo, hi = dev.get("intervals", {}).get(head, (None, None))
    score = _pct(dev["metrics"][head]) + (f" ({_pct(lo)}-{_pct(hi)})" if lo is not None else "")
    if card.extra.get("not_comparable_with_leaderboard"):
        held = (card.training.get("data") or {}).get("eval_examples")
        score += f" on {held} held-out dev records, not comparable" if held else " not comparable"
    base = strongest_baseline(card, head)
    base_txt = f"{base[0].replace('_', ' ')} {_pct(base[1])}" if base else ""
    minutes = max(1, round(card.training.get("time_s", 0) / 60))
    size = f"{card.size_bytes / 1024 / 1024:.1f} MB"
    return (f"| {task} | `{model.name}` ({card.kind}) | {head} | {score} | {paper} | {target} | "
            f"{base_txt} | {minutes} min | {size} |")


def scores_table(models: Sequence[ModelInfo]) -> str:
    """One row per CBLUE 1.0 task (paper order), the first built-in model of that task."""
    by_task: dict[str, ModelInfo] = {}
    for m in models:
        if m.source == "built-in" and m.ok and m.task in PAPER_BERT_BASE:
            by_task.setdefault(m.task, m)
    return "\n".join([HEADER] + [row(t, by_task.get(t)) for t in PAPER_BERT_BASE])


__all__ = ["PAPER_BERT_BASE", "TARGET_FRACTION", "scores_table", "strongest_baseline"]
