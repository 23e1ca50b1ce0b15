"""Scoring and error-analysis speed, in one run:

1. score a 5,000-sentence CMeEE run (official micro-F1 + 1,000 bootstrap resamples), build its
   error taxonomy and store it in a workspace (target: under 2 s);
2. confusion-matrix and slice queries over 1,000,000 stored error rows (target: under 100 ms);
3. our PromptCBLUE scorer beside a straightforward per-record Python scoring loop on the
   same records (the peer).

    python bench/scoring.py            # uses ../shared (or $CBLUE_SHARED) when present
"""
from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np
import pyarrow as pa

from cblue_core.records import Example, Span
from cblue_core.runs.record import record_run
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect

SHARED = Path(os.environ.get("CBLUE_SHARED", ROOT.parent / "shared"))


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def noisy_predictions(gold: list[Example], seed: int = 0) -> list[Example]:
    rng = random.Random(seed)
    out = []
    for g in gold:
        spans = []
        for s in g.spans:
            r = rng.random()
            if r < 0.75:
                spans.append(s)
            elif r < 0.85:
                spans.append(Span(s.start, s.end, "dis" if s.type != "dis" else "sym", s.text))
            elif r < 0.93:
                spans.append(Span(s.start, max(s.start + 1, s.end - 1), s.type, s.text[:-1]))
        out.append(Example(g.key, g.index, g.text, spans=spans))
    return out


def bench_cmeee(tmp: Path) -> dict:
    ws = connect(tmp / "score.duckdb")
    src = SHARED / "cblue/CMeEE/CMeEE_dev.json"
    if not src.exists():
        src = ROOT / "sample_data/cblue/CMeEE/CMeEE_dev.json"
    ingest_file(ws, src, "CMeEE", "dev")
    info = ws.datasets.find("CMeEE", "dev")
    gold = ws.datasets.examples(info.dataset_id)
    pred = noisy_predictions(gold)
    timings = []
    for _ in range(3):
        t = time.perf_counter()
        result = record_run(ws, info.dataset_id, pred, name="bench", source="model")
        timings.append(time.perf_counter() - t)
    ws.close()
    return {"cmeee_sentences": len(gold), "cmeee_f1": round(result.evaluation.value, 4),
            "cmeee_error_rows": len(result.evaluation.error_rows),
            "score_taxonomy_store_s": round(min(timings), 3), "target_s": 2.0}


def bench_queries(tmp: Path, n_rows: int = 1_000_000) -> dict:
    ws = connect(tmp / "queries.duckdb")
    ingest_file(ws, ROOT / "sample_data/cblue/CMeEE/CMeEE_dev.json", "CMeEE", "dev")
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    run_id = ws.runs.create(did, "synthetic", source="bench", predictions=[], metrics={})
    rng = np.random.default_rng(0)
    types = np.array(["dis", "sym", "dru", "equ", "pro", "bod", "ite", "mic", "dep"])
    cats = np.array(["correct", "wrong_type", "wrong_boundary", "wrong_both", "missed", "spurious"])
    n_examples = 200_000
    gold_t = types[rng.integers(0, 9, n_rows)]
    pred_t = np.where(rng.random(n_rows) < 0.8, gold_t, types[rng.integers(0, 9, n_rows)])
    idx = rng.integers(0, n_examples, n_rows).astype(np.int32)
    errors = pa.table({"run_id": np.full(n_rows, run_id, np.int32), "idx": idx,
                       "category": cats[rng.integers(0, 6, n_rows)], "gold_label": gold_t,
                       "pred_label": pred_t, "gold_start": rng.integers(0, 100, n_rows).astype(np.int32)})
    errors_arrow = errors  # noqa: F841
    ws.db.con.execute("INSERT INTO errors BY NAME SELECT * FROM errors_arrow")
    # a slice needs examples: 200,000 synthetic example rows for the join
    ex = pa.table({"dataset_id": np.full(n_examples, did + 1, np.int32), "idx": np.arange(n_examples, dtype=np.int32),
                   "text_length": rng.integers(5, 200, n_examples).astype(np.int32),
                   "nesting_depth": rng.integers(0, 4, n_examples).astype(np.int32)})
    ex_arrow = ex  # noqa: F841
    ws.db.con.execute("INSERT INTO examples BY NAME SELECT * FROM ex_arrow")
    ws.db.con.execute("CHECKPOINT")
    confusion = best_of(lambda: ws.runs.confusion(run_id))
    cell = best_of(lambda: ws.runs.error_rows(run_id, gold_label="dis", pred_label="sym", limit=500))
    slice_sql = ("SELECT e.category, count(*) FROM errors e JOIN examples x ON x.idx = e.idx AND x.dataset_id = ?"
                 " WHERE e.run_id = ? AND (x.nesting_depth >= 2 AND x.text_length > 80) GROUP BY 1")
    slice_q = best_of(lambda: ws.db.con.execute(slice_sql, [did + 1, run_id]).fetchall())
    ws.close()
    return {"error_rows": n_rows, "confusion_query_ms": round(confusion * 1000, 1),
            "cell_rows_query_ms": round(cell * 1000, 1), "slice_query_ms": round(slice_q * 1000, 1),
            "target_ms": 100}


def _dp_lcs(x: list, y: list) -> int:
    table = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
    for i, a in enumerate(x, 1):
        for j, b in enumerate(y, 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a == b else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


def peer_scores(gold: list[dict], pred: list[dict]) -> dict[str, float]:
    """The peer: a straightforward per-record Python loop computing the same kinds of official
    figures (set micro-F1 for extraction, per-label F1 for classification, ROUGE-L over the
    BasicTokenizer tokens with a textbook dynamic-programming LCS), without our vectorised or
    cached paths. Text2DT is left out (it is 6 of 4,300 records)."""
    from cblue_core.metrics.promptcblue import parse_record
    from cblue_core.metrics.promptcblue.basic_tokenizer import _basic_tokenize

    counts: dict[str, list] = {}
    for g, p in zip(gold, pred):
        task = g["task_dataset"]
        ga, pa_ = parse_record(g, strict=False).answer, parse_record(p, strict=False).answer
        c = counts.setdefault(task, [0, 0, 0, [], []])
        if isinstance(ga, list) and task != "Text2DT":
            gl = [json.dumps(x, ensure_ascii=False, sort_keys=True) for x in ga]
            pl = [json.dumps(x, ensure_ascii=False, sort_keys=True) for x in pa_]
            c[0] += sum(1 for x in set(pl) if x in gl)
            c[1] += sum(1 for x in set(pl) if x not in gl)
            c[2] += sum(1 for x in set(gl) if x not in pl)
        elif isinstance(ga, str) and task in ("MedDG",):
            gt = list(_basic_tokenize.__wrapped__(ga)) or ["无", "。"]
            pt = list(_basic_tokenize.__wrapped__(pa_)) or ["无", "。"]
            lcs = _dp_lcs(gt, pt)
            c[3].append(2 * lcs / (len(gt) + len(pt)))
        elif isinstance(ga, dict):
            for key, text in ga.items():
                gt = list(_basic_tokenize.__wrapped__(text)) or ["无", "。"]
                pt = list(_basic_tokenize.__wrapped__(pa_.get(key, ""))) or ["无", "。"]
                c[3].append(2 * _dp_lcs(gt, pt) / (len(gt) + len(pt)))
        elif isinstance(ga, str):
            c[3].append(ga)
            c[4].append(pa_)
    out = {}
    for task, (tp, fp, fn, xs, ys) in counts.items():
        if ys:   # classification: macro F1 over the labels present
            labels = sorted(set(xs) | set(ys))
            f1s = []
            for lab in labels:
                t = sum(1 for a, b in zip(xs, ys) if a == lab and b == lab)
                pp = sum(1 for b in ys if b == lab)
                gg = sum(1 for a in xs if a == lab)
                f1s.append(2 * t / (pp + gg) if pp + gg else 0.0)
            out[task] = sum(f1s) / len(f1s)
        elif xs:
            out[task] = sum(xs) / len(xs)
        else:
            out[task] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return out


def bench_promptcblue(copies: int = 50) -> dict:
    from cblue_core.metrics.promptcblue import evaluate_promptcblue
    from cblue_core.metrics.promptcblue.basic_tokenizer import _basic_tokenize

    ref = SHARED / "promptcblue/reference/inputs/dev_v2.jsonl"
    src = ref if ref.exists() else ROOT / "sample_data/promptcblue/dev.json"
    base = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    preds = {}
    pred_file = SHARED / "promptcblue/reference/inputs/pred_empty.jsonl"
    gold, pred = [], []
    for c in range(copies):
        for r in base:
            g = dict(r, sample_id=f"{r['sample_id']}-{c}")
            gold.append(g)
            # half perfect, half a shortened generation, so ROUGE has real work to do
            pred.append(dict(g, target=g["target"] if c % 2 else g["target"][: len(g["target"]) * 2 // 3]))
    del preds, pred_file

    def ours():
        _basic_tokenize.cache_clear()  # no help from an earlier repetition
        evaluate_promptcblue(gold, pred, on_parse_error="skip")
    ours_s = best_of(ours, repeat=3)
    peer_s = best_of(lambda: peer_scores(gold, pred), repeat=3)
    return {"promptcblue_records": len(gold), "ours_official_plus_clean_s": round(ours_s, 3),
            "peer_per_record_loop_official_only_s": round(peer_s, 3),
            "speedup_ours_vs_peer": round(peer_s / ours_s, 2),
            "note": "ours computes the official and the clean scores; the peer only the official kinds"}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        results = {**bench_cmeee(tmp), **bench_queries(tmp), **bench_promptcblue()}
    for k, v in results.items():
        print(f"{k:>36}: {v}")
    print(json.dumps(results, ensure_ascii=False))


if __name__ == "__main__":
    main()
