"""Scaling out: records per second of the local engine against Ray with 1 and 2 workers, and the
peak memory of a streaming Ray job at 100,000 and 1,000,000 records.

1. throughput: a synthetic KUAKE-QIC corpus (query texts recombined from the sample queries) as
   JSON-lines shards, predicted with ``predict_folder`` by the built-in ``kuake-qic`` classifier
   and by a Hugging Face checkpoint (the BERT of bench/inference.py: 4 layers, hidden 256,
   random weights: speed does not depend on training), with ``engine="local"`` and with Ray
   (a local Ray started for each job) at 1 and 2 workers. ``records_per_s`` counts the whole
   job (Ray's start, the model loads, planning, writing); ``steady_records_per_s`` counts from
   the first predictions back to the last (the rate a long job converges to), and
   ``first_output_s`` is the time to those first predictions (the job's fixed start). Chunks
   are small (1,024 and 64 records) so that a job has enough blocks for the steady rate to
   mean something.
2. memory: the same classifier through Ray (2 workers) over 100,000 and 1,000,000 synthetic
   records; a sampler adds up the proportional set size (PSS: shared pages, the object store
   included, counted once) of the driver and every process under it (the raylet with the
   object store, GCS, workers) every 0.25 s. Target: peak(1M) / peak(100k) <= 1.2 (streaming).

    python bench/scale.py [--records N] [--hf-records N] [--big 100000,1000000] [--skip-throughput]

Prints one line per measurement and, last, one JSON object with everything.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Self

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from cblue_core.scale.jobs import predict_folder
from cblue_core.scale.procs import descendants
from cblue_core.scale.ray_engine import WorkerSpec

SHARD_RECORDS = 50_000


def query_pool() -> list[str]:
    texts = []
    for rel in ("KUAKE-QIC/KUAKE-QIC_train.json", "KUAKE-QIC/KUAKE-QIC_dev.json"):
        path = ROOT / "sample_data" / "cblue" / rel
        texts += [r["query"] for r in json.loads(path.read_text(encoding="utf-8"))]
    shared = ROOT.parent / "shared" / "cblue" / "KUAKE-QIC" / "KUAKE-QIC_train.json"
    if shared.is_file():
        texts += [r["query"] for r in json.loads(shared.read_text(encoding="utf-8"))]
    return texts


def write_corpus(folder: Path, n: int, seed: int = 0, shard_records: int = SHARD_RECORDS) -> Path:
    """``n`` synthetic KUAKE-QIC queries (two real queries spliced at random points) as JSON-lines
    shards of ``shard_records``."""
    rng = random.Random(seed)
    pool = query_pool()
    folder.mkdir(parents=True, exist_ok=True)
    for k, start in enumerate(range(0, n, shard_records)):
        with (folder / f"part-{k:05d}.jsonl").open("w", encoding="utf-8") as fh:
            for i in range(start, min(n, start + shard_records)):
                a, b = rng.choice(pool), rng.choice(pool)
                q = a[: rng.randint(1, max(1, len(a)))] + b[rng.randint(0, len(b) // 2):]
                fh.write(json.dumps({"id": f"q{i}", "query": q[:60]}, ensure_ascii=False) + "\n")
    return folder


def pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class MemorySampler:
    """Peak of the summed PSS of this process and all its descendants, sampled in a thread."""

    def __init__(self, every: float = 0.25):
        self.every, self.peak_kb, self.peak_driver_kb, self.samples = every, 0, 0, 0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            pids = [me, *descendants(me)]
            total = sum(pss_kb(p) for p in pids)
            self.samples += 1
            if total > self.peak_kb:
                self.peak_kb, self.peak_processes = total, len(pids)
            self.peak_driver_kb = max(self.peak_driver_kb, pss_kb(me))
            self._stop.wait(self.every)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def run_job(corpus: Path, out: Path, model: str, engine: str, workers: int, batch_size: int,
            chunk_records: int, threads: int | None = None) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    spec = WorkerSpec(model_path=model, task="KUAKE-QIC", device="cpu", mode="records", batch_size=batch_size,
                      workers=workers)
    if engine == "local" and threads:
        import torch

        torch.set_num_threads(threads)
    marks: list[tuple[float, int]] = []

    def progress(n: int) -> None:
        marks.append((time.perf_counter(), n))
    start = time.perf_counter()
    res = predict_folder(corpus, out, spec, engine=engine, model=Path(model).name,
                         chunk_records=chunk_records, progress=progress)
    wall = time.perf_counter() - start
    steady = None
    if len(marks) > 1 and marks[-1][0] > marks[0][0]:
        steady = sum(n for _, n in marks[1:]) / (marks[-1][0] - marks[0][0])
    return {"engine": engine, "workers": workers if engine == "ray" else 1, "records": res.records,
            "wall_s": round(wall, 2), "records_per_s": round(res.records / wall, 1),
            "steady_records_per_s": round(steady, 1) if steady else None,
            "first_output_s": round(marks[0][0] - start, 1) if marks else None,
            "worker_processes": len(set(res.pids) - {os.getpid()}) if engine == "ray" else 0}


def throughput(tmp: Path, records: int, hf_records: int) -> list[dict]:
    from inference import build_checkpoint

    rows = []
    corpus = write_corpus(tmp / "qic-corpus", records, shard_records=max(1, records // 4))
    hf_corpus = write_corpus(tmp / "hf-corpus", hf_records, seed=1, shard_records=max(1, hf_records // 4))
    chars = sorted({c for t in query_pool() for c in t})
    hf = tmp / "qic-bert"
    build_checkpoint(hf, chars)
    for name, model, folder, bs, chunk in (("kuake-qic", str(ROOT / "models" / "kuake-qic"), corpus, 256, 1024),
                                           ("hf-bert-4x256", str(hf), hf_corpus, 32, 64)):
        for engine, workers in (("local", 1), ("ray", 1), ("ray", 2)):
            row = {"model": name, **run_job(folder, tmp / "out", model, engine, workers, bs, chunk)}
            rows.append(row)
            print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    return rows


def memory(tmp: Path, sizes: list[int]) -> list[dict]:
    rows = []
    for n in sizes:
        corpus = write_corpus(tmp / f"mem-{n}", n)
        with MemorySampler() as mem:
            row = run_job(corpus, tmp / "mem-out", str(ROOT / "models" / "kuake-qic"), "ray", 2, 256, 2048)
        row.update({"model": "kuake-qic", "peak_total_pss_mb": round(mem.peak_kb / 1024, 1),
                    "peak_driver_pss_mb": round(mem.peak_driver_kb / 1024, 1),
                    "processes_at_peak": mem.peak_processes, "samples": mem.samples})
        rows.append(row)
        print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        shutil.rmtree(corpus, ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=20_000, help="kuake-qic throughput corpus")
    ap.add_argument("--hf-records", type=int, default=2_000, help="HF checkpoint throughput corpus")
    ap.add_argument("--big", default="100000,1000000", help="corpus sizes of the memory runs ('' for none)")
    ap.add_argument("--skip-throughput", action="store_true")
    args = ap.parse_args()
    out: dict = {"cpus": os.cpu_count(), "shard_records": SHARD_RECORDS}
    with tempfile.TemporaryDirectory(prefix="cblue-scale-") as tmpdir:
        tmp = Path(tmpdir)
        if not args.skip_throughput:
            out["throughput"] = throughput(tmp, args.records, args.hf_records)
        sizes = [int(x) for x in args.big.split(",") if x.strip()]
        if sizes:
            out["memory"] = memory(tmp, sizes)
            peaks = [r["peak_total_pss_mb"] for r in out["memory"]]
            if len(peaks) >= 2 and peaks[0]:
                out["memory_ratio_last_to_first"] = round(peaks[-1] / peaks[0], 3)
                print(f"peak memory ratio {sizes[-1]:,} / {sizes[0]:,} records: "
                      f"{out['memory_ratio_last_to_first']} (target <= 1.2)")
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
