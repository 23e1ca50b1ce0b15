"""Inference speed and memory, in one run:

1. per built-in model: load time (target < 3 s) and p50/p95 latency of one 100-character
   sentence on CPU after warm-up (target p50 < 50 ms);
2. batch throughput of our Hugging Face predictor against the transformers ``pipeline`` on the
   same checkpoint and the same sentences, at the same batch size, threads and dtype (target
   >= 2x, ``speedup_vs_pipeline_same_batch``), with identical labels and logits within 1e-4;
3. peak memory (resident set) of the process.

The throughput sentences are the sample data's texts in random order (mixed lengths, as in a
real batch job); the latency sentence is 100 characters.

    python bench/inference.py [--sentences N] [--repeats R] [--threads T] [--skip-builtin | --only-builtin]

The checkpoint of part 2 is a BERT encoder (4 layers, hidden 256, character vocabulary) with a
sequence-classification head, randomly initialised: speed and equality of outputs do not depend
on the weights having been trained, and no checkpoint can be downloaded here.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from cblue_core.io.validate import load
from cblue_core.records import Example


def sentences_100(n: int) -> list[str]:
    """Real-looking 100-character sentences built from the sample CMeEE texts."""
    texts = [e.text for e in load(ROOT / "sample_data/cblue/CMeEE/CMeEE_dev.json").examples]
    joined = "".join(texts)
    return [(joined[i * 37 % len(joined):] + joined)[:100] for i in range(n)]


def mixed_sentences(n: int, seed: int = 0) -> list[str]:
    """Texts of the sample data in a random order, lengths from a few characters to ~150, as a
    real batch job sees them (the pipeline pads each batch to its longest member in input
    order; our predictor sorts by length first)."""
    import random

    texts = []
    for rel in ("cblue/CMeEE/CMeEE_dev.json", "cblue/CMeEE/CMeEE_train.json", "cblue/KUAKE-QIC/KUAKE-QIC_dev.json",
                "cblue/CHIP-CTC/CHIP-CTC_dev.json", "cblue/CHIP-STS/CHIP-STS_dev.json"):
        texts += [e.text for e in load(ROOT / "sample_data" / rel).examples]
    rng = random.Random(seed)
    out = [texts[rng.randrange(len(texts))] for _ in range(n)]
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_builtin(sentences: list[str], threads: int = 2) -> list[dict]:
    import torch

    from cblue_core.models.loading import load_predictor
    from cblue_core.models.registry import list_models
    from cblue_core.tasks import Kind, get_task

    torch.set_num_threads(threads)
    # Imported once per process (the app's server pays it once): timed apart from the models'
    # loads, as torch's import is, so that the first model on the encoder is not charged for it.
    start = time.perf_counter()
    import transformers  # noqa: F401
    from transformers import BertModel  # noqa: F401
    print(f"transformers import: {time.perf_counter() - start:.2f} s")
    rows = []
    for info in list_models():
        if info.source != "built-in" or not info.ok or info.role != "model":     # the encoder predicts nothing
            continue
        task = get_task(info.task)
        start = time.perf_counter()
        predictor = load_predictor(info.path, task=info.task)
        load_s = time.perf_counter() - start
        make = (lambda s: Example("b", 0, s[:50], text2=s[50:])) if task.kind is Kind.PAIR else \
            (lambda s: Example("b", 0, s))
        for s in sentences[:5]:                      # warm-up
            predictor.predict([make(s)])
        times = []
        for s in sentences[:100]:
            t = time.perf_counter()
            predictor.predict([make(s)])
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        rows.append({"model": info.name, "task": info.task, "load_s": round(load_s, 3),
                     "p50_ms": round(statistics.median(times), 2),
                     "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
                     "size_mb": round(info.size_bytes / 1e6, 2)})
    return rows


def build_checkpoint(folder: Path, chars: list[str]) -> None:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars
    tok = BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=False,
                            tokenize_chinese_chars=True)
    labels = ["病情诊断", "病因分析", "治疗方案", "就医建议", "指标解读", "疾病表述", "后果表述",
              "注意事项", "功效作用", "医疗费用", "其他"]
    config = BertConfig(vocab_size=len(vocab), hidden_size=256, num_hidden_layers=4,
                        num_attention_heads=4, intermediate_size=1024, max_position_embeddings=160,
                        num_labels=len(labels), id2label=dict(enumerate(labels)),
                        label2id={l: i for i, l in enumerate(labels)})
    config.cblue_task = "KUAKE-QIC"
    model = BertForSequenceClassification(config)
    model.save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)


def bench_pipeline(sentences: list[str], batch_size: int = 32, repeats: int = 3, threads: int = 2) -> dict:
    """Our predictor (tokenized once, length-bucketed batches of at most ``batch_size``, the
    last layer for the first token only) against the pipeline with its default settings (one
    text at a time) and with the same batch size, the same threads and the same dtype (float32).
    Each is timed ``repeats`` times, alternating, and the best time counts (the machine is
    shared: the best run is the least disturbed one). The logits of every sentence must agree
    with the pipeline's within 1e-4."""
    import torch
    from transformers import pipeline

    from cblue_core.models.loading import load_predictor

    torch.set_num_threads(threads)
    chars = sorted({c for s in sentences for c in s})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "qic-bert"
        build_checkpoint(folder, chars)
        ours = load_predictor(folder, task="KUAKE-QIC")
        peer = pipeline("text-classification", model=str(folder), tokenizer=str(folder), device=-1,
                        dtype=torch.float32)
        examples = [Example(str(i), i, s) for i, s in enumerate(sentences)]
        ours.predict(examples[:batch_size], batch_size=batch_size)   # warm-up
        peer(sentences[:batch_size], batch_size=batch_size)

        def timed(fn):
            t = time.perf_counter()
            out = fn()
            return out, time.perf_counter() - t
        ours_s, default_s, batched_s = [], [], []
        for _ in range(max(1, repeats)):
            ours_out, s1 = timed(lambda: ours.predict(examples, batch_size=batch_size))
            batched_out, s2 = timed(lambda: peer(sentences, batch_size=batch_size))
            ours_s.append(s1)
            batched_s.append(s2)
        default_out, s3 = timed(lambda: peer(sentences))
        default_s.append(s3)
        # logits: ours in input order against the pipeline's raw scores (no softmax)
        our_logits, _ = ours.logits(examples, batch_size=batch_size)
        label2id = ours.model.config.label2id
        raw = peer(sentences, batch_size=batch_size, function_to_apply="none", top_k=None)
        ref = torch.tensor([[d["score"] for d in sorted(row, key=lambda d: label2id[d["label"]])]
                            for row in raw])
        max_diff = float((ref - our_logits).abs().max())
        fast_path = bool(ours.first_token_only)
    same = sum(o.label == p["label"] == q["label"] for o, p, q in zip(ours_out, default_out, batched_out))
    n = len(sentences)
    best_ours, best_batched = min(ours_s), min(batched_s)
    return {"sentences": n, "batch_size": batch_size, "threads": threads, "dtype": "float32",
            "repeats": repeats,
            "ours_sent_per_s": round(n / best_ours, 1),
            "pipeline_default_sent_per_s": round(n / min(default_s), 1),
            "pipeline_batched_sent_per_s": round(n / best_batched, 1),
            "speedup_vs_pipeline_default": round(min(default_s) / best_ours, 2),
            "speedup_vs_pipeline_same_batch": round(best_batched / best_ours, 2),
            "speedup_same_batch_each_round": [round(b / o, 2) for o, b in zip(ours_s, batched_s)],
            "identical_labels": f"{same}/{n}", "max_logit_diff": float(f"{max_diff:.2e}"),
            "logits_equal_1e-4": max_diff <= 1e-4, "first_token_last_layer": fast_path,
            "target_speedup_same_batch": 2.0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3, help="timed rounds of the pipeline comparison (best counts)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads, the same for both sides")
    ap.add_argument("--skip-builtin", action="store_true", help="only the pipeline comparison")
    ap.add_argument("--only-builtin", action="store_true", help="only the built-in models' load and latency")
    args = ap.parse_args()
    sents = sentences_100(max(args.sentences, 100))
    builtin = [] if args.skip_builtin else bench_builtin(sents, args.threads)
    for row in builtin:
        print("  ".join(f"{k}={v}" for k, v in row.items()))
    if not builtin and not args.skip_builtin:
        print("no built-in models under models/")
    if args.only_builtin:
        print(json.dumps({"builtin": builtin, "threads": args.threads}, ensure_ascii=False))
        return
    pipe = bench_pipeline(mixed_sentences(args.sentences), repeats=args.repeats, threads=args.threads)
    for k, v in pipe.items():
        print(f"{k:>22}: {v}")
    result = {"builtin": builtin, "pipeline_comparison": pipe, "peak_rss_mb": round(peak_rss_mb(), 1)}
    print(f"{'peak_rss_mb':>22}: {result['peak_rss_mb']}")
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
