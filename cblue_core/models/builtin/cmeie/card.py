"""What a CMeIE model's card and README say: the held-out warning and the README's text."""
from __future__ import annotations

from ....tasks import get_task
from ...base import ModelCard
from .. import common as C

# What a model trained on the dev split says of its score (card notes, README).
HELD_OUT_NOTE = ("scored on the held-out part of the dev split (see training.split): NOT comparable "
                 "with the leaderboard")
NOT_COMPARABLE = ("> **Not comparable with the CBLUE leaderboard.** No CMeIE train file is public: this "
                  "model trained on 80% of the dev file and is scored on the other 20%.")


def readme_text(card: ModelCard) -> str:
    tr = card.training
    d = tr["data"]
    dev = C.fmt_metric(card.dev_metrics) if card.dev_metrics else "not measured"
    base = "; ".join(f"{k} ({v['description']}): F1 {v['metrics']['f1']:.4f}"
                     for k, v in card.baselines.items()) or "n/a"
    tried = "\n".join(f"- {t}" for t in tr.get("tried", [])) or "- (not recorded)"
    warn = f"\n{NOT_COMPARABLE}\n" if card.extra.get("not_comparable_with_leaderboard") else ""
    members = tr.get("members") or []
    seeds = (f"{len(members)} networks, seeds {', '.join(str(m['seed']) for m in members)}, trained one after "
             f"the other; {tr['epochs']} epochs each" if members else f"seed {tr['seed']}, {tr['epochs']} epochs")
    return f"""# {card.name}: {card.task} ({card.kind})
{warn}
**Task.** {get_task(card.task).description}.

**Architecture.** {card.description}

**Data.** Train: {d['train']}. Scored on: {d['eval']}. Split: {tr['split']}. Schemas:
`{d['schemas']}`. Auxiliary entity data: {d['auxiliary'] or 'none'}. Scored with CBLUE Studio's
evaluator (micro-F1 over normalized (subject, predicate, object), 95% bootstrap interval).

**Training.** `{tr['command']}`; {seeds}, {tr['time_s']} s on
{tr['threads']} CPU thread(s). {tr['selection']}.

**Held-out score.** {dev}.

**Baseline.** {base}.

**What was tried.**
{tried}

**Limitations.** Trained on about 2,900 texts: rare predicates (病理分型, 相关（导致）, 发病部位 ...)
are seldom found; mentions longer than {card.training['hyperparameters']['max_span']} characters
are never proposed; ``combined`` follows the rule of the code (no `。`-separated sentence holds
both mentions), which agrees with the gold flag on about
{card.dev_metrics.get('extra', {}).get('combined_rule_agreement_with_gold', 'n/a')} of the
held-out triples (the flag is not scored). Research use only; not for clinical decisions.
"""
