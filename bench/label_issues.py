"""Does confident learning find planted gold errors better than simpler queues?

For KUAKE-QIC and CHIP-CTC: copy the dev file into a temporary folder with 5% of its labels
flipped to another class at random (seeded; the copy is never kept), predict it with the
shipped built-in model, then rank the records three ways:

- ``cleanlab``: :func:`cblue_core.annotation.label_issues.find_label_issues` (confident learning);
- ``disagree``: the records whose gold label is not the model's label, most confident first;
- ``random``: all records in a seeded random order.

For each queue: precision of its first k items (k = the number of flips) against the flipped
records, and how many flips are among its first 200 items. Records the model was trained on
are left out of every queue (there should be none in dev; the count is printed).

    python bench/label_issues.py [--tasks KUAKE-QIC CHIP-CTC] [--rate 0.05] [--seed 0] [--limit N]

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
from cblue_core.io.validate import load
from cblue_core.models.base import model_input
from cblue_core.models.loading import load_predictor
from cblue_core.models.provenance import overlapping
from cblue_core.tasks import get_task

SHARED = Path(os.environ.get("CBLUE_SHARED", ROOT.parent / "shared"))
MODELS = {"KUAKE-QIC": "kuake-qic", "CHIP-CTC": "chip-ctc"}
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


def found(queue: list[int], flips: set[int], n: int) -> int:
    return sum(1 for i in queue[:n] if i in flips)


def bench_task(task_name: str, rate: float, seed: int, limit: int | None, batch_size: int) -> dict:
    task = get_task(task_name)
    with tempfile.TemporaryDirectory(prefix="label-issues-") as tmp:
        path, flips = flipped_copy(task_name, Path(tmp), rate, seed, limit)
        gold = load(path, task_name).examples
    predictor = load_predictor(MODELS[task_name], task=task_name, device="cpu")
    start = time.perf_counter()
    preds = predictor.predict([model_input(task, ex) for ex in gold], batch_size=batch_size)
    predict_s = time.perf_counter() - start
    seen = {gold[i].index for i in overlapping(gold, predictor.training_records or frozenset())}
    flips -= seen
    start = time.perf_counter()
    result = find_label_issues(task, gold, preds, seen)
    rank_s = time.perf_counter() - start
    queues = {"cleanlab": [i.idx for i in result.issues]}
    by_index = {p.index: p for p in preds}
    disagree = [ex.index for ex in gold if ex.index not in seen and by_index[ex.index].label != ex.label]
    queues["disagree"] = sorted(disagree, key=lambda i: -max(by_index[i].meta["probabilities"].values()))
    order = [ex.index for ex in gold if ex.index not in seen]
    random.Random(seed + 1).shuffle(order)
    queues["random"] = order
    k = len(flips)
    return {"task": task_name, "records": len(gold), "flipped": k, "excluded_training": result.excluded_training,
            "cleanlab_issues": len(result.issues), "disagreements": len(disagree),
            "precision_at_k": {q: round(found(v, flips, k) / k, 4) if k else None for q, v in queues.items()},
            "random_expected_precision": round(k / len(order), 4) if order else None,
            f"found_in_first_{FIRST}": {q: found(v, flips, FIRST) for q, v in queues.items()},
            "predict_s": round(predict_s, 1), "rank_s": round(rank_s, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=list(MODELS), choices=list(MODELS))
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
        print(f"{name}: {r['records']:,} dev records, {r['flipped']} flipped, {r['excluded_training']} "
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
