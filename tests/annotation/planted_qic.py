"""A KUAKE-QIC dev split with planted label errors and a model run that knows better, for the
model-driven review queues (core and page tests)."""
from __future__ import annotations

import json
from pathlib import Path

from cblue_core.models.provenance import fingerprint
from cblue_core.records import Example
from cblue_core.runs.record import record_run
from cblue_core.store.ingest import ingest_file

CLASSES = ("病情诊断", "病因分析", "治疗方案", "其他")
FLIPPED = {3: ("治疗方案", 0.97), 10: ("其他", 0.92), 17: ("病因分析", 0.95)}   # idx -> (truth, p)
TIE = 6           # the model splits 0.48 / 0.45 between this one's label and the next class
TRAINED = 17      # the model was trained on this record (one of the flips)
RECORDS = 32


def dist(best: str, p: float, second: str | None = None, q: float = 0.0) -> dict[str, float]:
    rest = [c for c in CLASSES if c not in (best, second)]
    out = {c: (1 - p - q) / len(rest) for c in rest}
    out[best] = p
    if second:
        out[second] = q
    return out


def planted_run(ws, folder: Path, limit: int | None = None) -> tuple[int, int]:
    """Ingest the split into ``ws`` and record the model run (on its first ``limit`` records
    when given); (dataset id, run id)."""
    records = [{"id": f"q{i}", "query": f"问题{i}",
                "label": next(c for c in CLASSES if c != FLIPPED[i][0]) if i in FLIPPED else CLASSES[i % 4]}
               for i in range(RECORDS)]
    path = folder / "KUAKE-QIC_dev.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    out = ingest_file(ws, path)
    assert out.ok, out.message
    did = out.result.dataset_id
    gold = ws.datasets.examples(did)
    preds = []
    for ex in gold[:limit]:
        truth, d = str(ex.label), dist(str(ex.label), 0.85)
        if ex.index in FLIPPED:
            truth, p = FLIPPED[ex.index]
            d = dist(truth, p)
        elif ex.index == TIE:
            d = dist(truth, 0.48, CLASSES[(TIE + 1) % 4], 0.45)
        preds.append(Example(key=ex.key, index=ex.index, label=truth, meta={"probabilities": d}))
    run = record_run(ws, did, preds, name="qic model", source="model", model="fake", n_boot=0,
                     training_records=frozenset({fingerprint(gold[TRAINED])}), first=limit)
    return did, run.run_id
