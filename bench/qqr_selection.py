"""KUAKE-QQR recipe selection on a slice grouped by query1 (no query shared with training).

Trains one n-gram pair model per (variant, seed) on the training part of
:func:`cblue_core.models.builtin.grouped_split.group_split` and prints its accuracy on the
selection slice, then the accuracy of each variant's probability-averaged seed ensemble. Dev is
never read: the figures here make the choices, dev gives only the shipped model's final score.

    CBLUE_TRAIN_THREADS=1 nice -n 10 python bench/qqr_selection.py [--data ../shared/cblue]
        [--variants base,extra] [--seeds 0,1,2] [--json out.json]

Variants are NgramConfig overrides on top of the shipped recipe (``VARIANTS``).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch

from cblue_core.models.builtin import common as C
from cblue_core.models.builtin import ngram, pair_gbm
from cblue_core.models.builtin.grouped_split import group_split
from cblue_core.tasks import get_task

VARIANTS: dict[str, dict] = {
    "base": {},
    "extra": {"extra": True},
    "extra-cw05": {"extra": True, "class_weight": 0.5},
    "extra-e8": {"extra": True, "epochs": 8},
    "gbm": {},          # pair_gbm: boosted trees over the 46 dense pair numbers, no n-gram bags
}


def run(data: str, variants: list[str], seeds: list[int], probs_dir: Path | None = None) -> dict:
    task = get_task("KUAKE-QQR")
    C.training_threads()
    train_ex, _ = C.load_split(data, task, "train")
    split = group_split(train_ex)
    fit_ex = [train_ex[i] for i in split.fit]
    sel_ex = [train_ex[i] for i in split.selection]
    labels = C.task_labels(task, train_ex)
    out: dict = {"split": split.describe(), "runs": [], "ensembles": []}
    print(out["split"], flush=True)
    for name in variants:
        probs = []
        for seed in seeds:
            t0 = time.perf_counter()
            if name == "gbm":
                p = gbm_probabilities(task, fit_ex, sel_ex, seed)
                probs.append(p)
                row = {"variant": name, "seed": seed, "selection_accuracy": round(accuracy(task, sel_ex, labels, p), 4),
                       "time_s": round(time.perf_counter() - t0, 1)}
                out["runs"].append(row)
                print(json.dumps(row), flush=True)
                continue
            params = {**ngram.DEFAULTS["KUAKE-QQR"], **VARIANTS[name]}
            cfg = ngram.NgramConfig(task=task.name, labels=C.task_labels(task, train_ex), pair=True, **params)
            C.set_seed(seed)
            feat, x, y = ngram.prepare(task, fit_ex, cfg)
            C.set_seed(seed)
            net = ngram.NgramNet(cfg)
            with tempfile.TemporaryDirectory() as tmp:
                ngram.fit(net, x, y, cfg, Path(tmp), seed=seed, resume=False, progress=False, max_minutes=10)
            sel_x = ngram.Featurizer.collate(feat.encode(sel_ex))
            with torch.inference_mode():
                p = torch.softmax(net.eval()(sel_x), dim=-1)
            probs.append(p)
            if probs_dir is not None:       # so ensembles of any seeds can be scored afterwards
                probs_dir.mkdir(parents=True, exist_ok=True)
                (probs_dir / f"{name}-{seed}.json").write_text(json.dumps(p.tolist()), encoding="utf-8")
            acc = accuracy(task, sel_ex, cfg.labels, p)
            row = {"variant": name, "seed": seed, "selection_accuracy": round(acc, 4),
                   "time_s": round(time.perf_counter() - t0, 1)}
            out["runs"].append(row)
            print(json.dumps(row), flush=True)
        if len(probs) > 1:
            acc = accuracy(task, sel_ex, labels, torch.stack(probs).mean(0))
            row = {"variant": name, "seeds": seeds, "ensemble_selection_accuracy": round(acc, 4)}
            out["ensembles"].append(row)
            print(json.dumps(row), flush=True)
    return out


def gbm_probabilities(task, fit_ex, sel_ex, seed: int) -> torch.Tensor:
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    labels = C.task_labels(task, fit_ex)
    x = np.asarray([pair_gbm.features(e.text, e.text2) for e in fit_ex])
    y = np.asarray([labels.index(C.gold_label(task, e.label)) for e in fit_ex])
    model = HistGradientBoostingClassifier(random_state=seed, **pair_gbm.PARAMS).fit(x, y)
    forest = pair_gbm.Forest.from_sklearn(model)
    return torch.from_numpy(forest.probabilities(np.asarray([pair_gbm.features(e.text, e.text2) for e in sel_ex])))


def accuracy(task, examples, labels, probs: torch.Tensor) -> float:
    gold = [C.gold_label(task, e.label) for e in examples]
    pred = [labels[i] for i in probs.argmax(-1).tolist()]
    return sum(g == p for g, p in zip(gold, pred)) / len(gold)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "cblue"))
    ap.add_argument("--variants", default="base,extra")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--json", default=None)
    ap.add_argument("--probs-dir", default=None, help="write each run's selection-slice probabilities here")
    args = ap.parse_args()
    names = [v for v in args.variants.split(",") if v]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    out = run(args.data, names, [int(s) for s in args.seeds.split(",")],
              Path(args.probs_dir) if args.probs_dir else None)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
