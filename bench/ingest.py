"""Time to validate and ingest every file of the real CBLUE folder, beside pandas.read_json.

    python bench/ingest.py [CBLUE_DIR]

Target (DESIGN.md): under 10 s in all on the 2-core machine. pandas.read_json only parses
(no validation, no offsets, no storage), so it is a floor for "reading the same bytes", not a
competitor doing the same work.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cblue_core.store.ingest import dataset_files, ingest_paths
from cblue_core.store.workspace import connect


def cblue_dir() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    shared = Path(os.environ.get("CBLUE_SHARED", ROOT.parent / "shared"))
    return shared / "cblue"


def pandas_peer(files: list[Path]) -> float:
    import pandas as pd

    start = time.perf_counter()
    for f in files:
        if f.suffix == ".json":
            head = f.read_text(encoding="utf-8-sig")[:1]
            pd.read_json(f, lines=head != "[", encoding="utf-8")
        elif f.suffix == ".xlsx":
            pd.read_excel(f, header=None)
        elif f.suffix in (".tsv",):
            pd.read_csv(f, sep="\t", header=None)
    return time.perf_counter() - start


def ours(folder: Path, workers: int | None) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = connect(Path(tmp) / "bench.duckdb")
        start = time.perf_counter()
        outcomes = ingest_paths(ws, [folder], workers=workers)
        elapsed = time.perf_counter() - start
        records = sum(o.result.records for o in outcomes if o.ok and o.result)
        refused = sum(not o.ok for o in outcomes)
        ws.close()
    return elapsed, records, refused


def main() -> None:
    folder = cblue_dir()
    if not folder.is_dir():
        print(f"no CBLUE folder at {folder}; pass one as the first argument")
        sys.exit(1)
    files = dataset_files(folder)
    size = sum(f.stat().st_size for f in files) / 1e6
    print(f"{len(files)} files, {size:.1f} MB, {os.cpu_count()} cores")
    par, records, refused = ours(folder, None)
    ser, _, _ = ours(folder, 1)
    peer = pandas_peer(files)
    result = {"files": len(files), "records_and_rows": records, "refused": refused,
              "ingest_parallel_s": round(par, 2), "ingest_serial_s": round(ser, 2),
              "pandas_read_only_s": round(peer, 2),
              "ratio_parallel_vs_pandas": round(par / peer, 2), "target_s": 10,
              "meets_target": par < 10}
    for k, v in result.items():
        print(f"{k:>26}: {v}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
