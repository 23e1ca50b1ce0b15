"""Does confident learning find planted gold errors better than simpler queues?

For KUAKE-QIC and CHIP-CTC: copy the dev file into a temporary folder with 5% of its labels
flipped to another class at random (seeded; the copy is never kept), predict it with the
shipped built-in model, then rank the records three ways:

- ``cleanlab``: :func:`cblue_core.annotation.label_issues.find_label_issues` (confident learning);
- ``disagree``: the records whose gold label is not the model's label, most confident first;
- ``random``: all records in a seeded random order.

For CMeEE (span issues, :mod:`cblue_core.annotation.span_issues`) the noise is 5% of the gold
*spans*, half dropped, half retyped to another type, and the items are (record, extent):
``cleanlab`` per span, ``disagree`` the predicted spans gold lacks or types otherwise (most
confident first), ``random`` every predicted or gold extent. A planted error is findable only
where the model predicts a span at its extent (the run stores no other probability); the
count is printed. The shipped CMeEE model predicts about 9 records a second on two busy cores,
so the full dev file (5,000) takes about ten minutes: ``--limit`` for a quicker look.

For each queue: precision of its first k items (k = the number of flips) against the flipped
records, and how many flips are among its first 200 items. Records the model was trained on
are left out of every queue (there should be none in dev; the count is printed).

    python bench/label_issues.py [--tasks KUAKE-QIC CHIP-CTC CMeEE] [--rate 0.05] [--seed 0] [--limit N]

Uses ../shared/cblue (or $CBLUE_SHARED/cblue). Prints the figures, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from cblue_core.annotation.label_issues import find_label_issues
from cblue_core.annotation.span_issues import find_span_issues
from cblue_core.io.validate import load
from cblue_core.models.base import model_input
from cblue_core.models.loading import load_predictor
from cblue_core.models.provenance import overlapping
from cblue_core.tasks import Kind, get_task

SHARED = Path(os.environ.get("CBLUE_SHARED", ROOT.parent / "shared"))
MODELS = {"KUAKE-QIC": "kuake-qic", "CHIP-CTC": "chip-ctc", "CMeEE": "cmeee"}
DEFAULT_TASKS = ["KUAKE-QIC", "CHIP-CTC"]   # CMeEE takes ten minutes on two cores: asked for by name
FIRST = 200


def flipped_copy(task_name: str, folder: Path, rate: float, seed: int, limit: int | None) -> tuple[Path, set[int]]:
    """The dev file with ``rate`` of its labels changed to another class; the flipped positions."""
    task = get_task(task_name)
    src = SHARED / "cblue" / task_name / task.files["dev"]
    records = json.loads(src.read_text(encoding="utf-8"))
    if limit:
        records = records[:limit]
    classes = [lab.code for lab in task.labels]
    rng = random.Random(seed)
    flips = set(rng.sample(range(len(records)), round(rate * len(records))))
    for i in flips:
        records[i]["label"] = rng.choice([c for c in classes if c != records[i]["label"]])
    out = folder / task.files["dev"]
    out.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return out, flips


def span_flipped_copy(task_name: str, folder: Path, rate: float, seed: int,
                      limit: int | None) -> tuple[Path, set[tuple[int, int, int]]]:
    """The dev file with ``rate`` of its gold spans dropped or retyped (half each); the planted
    errors as (record, start, end) with ``end`` exclusive."""
    task = get_task(task_name)
    records = json.loads((SHARED / "cblue" / task_name / task.files["dev"]).read_text(encoding="utf-8"))
    if limit:
        records = records[:limit]
    types = [lab.code for lab in task.labels]
    spans = [(r, n) for r, rec in enumerate(records) for n in range(len(rec["entities"]))]
    rng = random.Random(seed)
    chosen = rng.sample(spans, round(rate * len(spans)))
    dropped = set(chosen[::2])
    flips = set()
    for r, n in chosen:
        ent = records[r]["entities"][n]
        flips.add((r, ent["start_idx"], ent["end_idx"] + 1))
        if (r, n) not in dropped:
            ent["type"] = rng.choice([t for t in types if t != ent["type"]])
    for r, rec in enumerate(records):
        rec["entities"] = [e for n, e in enumerate(rec["entities"]) if (r, n) not in dropped]
    out = folder / task.files["dev"]
    out.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return out, flips


def found(queue: list, flips: set, n: int) -> int:
    return sum(1 for i in queue[:n] if i in flips)


def bench_task(task_name: str, rate: float, seed: int, limit: int | None, batch_size: int) -> dict:
    task = get_task(task_name)
    spans = task.kind is Kind.SPANS
    with tempfile.TemporaryDirectory(prefix="label-issues-") as tmp:
        path, flips = (span_flipped_copy if spans else flipped_copy)(task_name, Path(tmp), rate, seed, limit)
        gold = load(path, task_name).examples
    predictor = load_predictor(MODELS[task_name], task=task_name, device="cpu")
    start = time.perf_counter()
    preds = predictor.predict([model_input(task, ex) for ex in gold], batch_size=batch_size)
    predict_s = time.perf_counter() - start
    seen = {gold[i].index for i in overlapping(gold, predictor.training_records or frozenset())}
    flips = {f for f in flips if (f[0] if spans else f) not in seen}
    start = time.perf_counter()
    result = (find_span_issues if spans else find_label_issues)(task, gold, preds, seen)
    rank_s = time.perf_counter() - start
    queues, extra = (span_queues if spans else label_queues)(gold, preds, seen, result, flips)
    order = queues["random"]
    random.Random(seed + 1).shuffle(order)
    k = len(flips)
    return {"task": task_name, "records": len(gold), "flipped": k, **extra,
            "excluded_training": result.excluded_training, "cleanlab_issues": len(result.issues),
            "disagreements": len(queues["disagree"]),
            "precision_at_k": {q: round(found(v, flips, k) / k, 4) if k else None for q, v in queues.items()},
            "random_expected_precision": round(k / len(order), 4) if order else None,
            f"found_in_first_{FIRST}": {q: found(v, flips, FIRST) for q, v in queues.items()},
            "predict_s": round(predict_s, 1), "rank_s": round(rank_s, 2)}


def label_queues(gold, preds, seen, result, flips) -> tuple[dict[str, list], dict]:
    """Records: confident learning, the model's disagreements (surest first), all (unshuffled)."""
    by_index = {p.index: p for p in preds}
    disagree = [ex.index for ex in gold if ex.index not in seen and by_index[ex.index].label != ex.label]
    return {"cleanlab": [i.idx for i in result.issues],
            "disagree": sorted(disagree, key=lambda i: -max(by_index[i].meta["probabilities"].values())),
            "random": [ex.index for ex in gold if ex.index not in seen]}, {}


def span_queues(gold, preds, seen, result, flips) -> tuple[dict[str, list], dict]:
    """(record, start, end) items: confident learning per span, the predicted spans gold lacks
    or types otherwise (surest first), every predicted or gold extent (unshuffled)."""
    predicted = {(p.index, s.start, s.end) for p in preds if p.index not in seen for s in p.spans}
    by_index = {ex.index: ex for ex in gold}
    wrong = [(p.index, s.start, s.end, q) for p in preds if p.index not in seen
             for s, q in zip(p.spans, p.meta["span_probabilities"]) if s not in by_index[p.index].spans]
    units = sorted(predicted | {(ex.index, s.start, s.end) for ex in gold if ex.index not in seen for s in ex.spans})
    return {"cleanlab": [(i.idx, *i.extent) for i in result.issues if i.extent],
            "disagree": [w[:3] for w in sorted(wrong, key=lambda w: -w[3])],
            "random": units}, {"findable": len(flips & predicted)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=DEFAULT_TASKS, choices=list(MODELS))
    ap.add_argument("--rate", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, help="only the first N dev records (a quick look)")
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    if not (SHARED / "cblue").is_dir():
        print(f"error: no CBLUE data at {SHARED / 'cblue'} (set $CBLUE_SHARED)", file=sys.stderr)
        return 1
    results = []
    for name in args.tasks:
        r = bench_task(name, args.rate, args.seed, args.limit, args.batch_size)
        results.append(r)
        findable = f" ({r['findable']} at an extent the model predicts)" if "findable" in r else ""
        print(f"{name}: {r['records']:,} dev records, {r['flipped']} flipped{findable}, {r['excluded_training']} "
              f"excluded as training records; cleanlab flags {r['cleanlab_issues']}, the model disagrees "
              f"with gold on {r['disagreements']} (predict {r['predict_s']} s, rank {r['rank_s']} s)")
        for q in ("cleanlab", "disagree", "random"):
            p = r["precision_at_k"][q]
            expected = f" (expected {r['random_expected_precision']:.3f})" if q == "random" and p is not None else ""
            print(f"  {q:9s} precision@{r['flipped']} = {p if p is None else f'{p:.3f}'}{expected}; "
                  f"planted errors in first {FIRST}: {r[f'found_in_first_{FIRST}'][q]}")
    print(json.dumps({"bench": "label_issues", "rate": args.rate, "seed": args.seed, "results": results},
                     ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
