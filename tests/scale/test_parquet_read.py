"""Parquet under bounds: a footer asking for too many rows or values is refused before any page
is read, and a decompression bomb stops once it decodes past its expansion budget."""
from __future__ import annotations

import json
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cblue_core.cli import main
from cblue_core.scale import parquet_read
from cblue_core.scale.parquet_read import ParquetRefused, batch_rows, iter_rows, open_parquet
from cblue_core.scale.shards import ShardError, plan_shard, read_chunk


def _bomb(path, rows=300_000, width=3_600):
    """A few hundred kilobytes that decode to rows x width bytes: one dictionary value repeated."""
    record = json.dumps({"text": "x" * width, "entities": []})
    column = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array([record]))
    pq.write_table(pa.table({"record": column}), path, compression="zstd")
    return path


def test_a_decompression_bomb_stops_at_its_budget(tmp_path):
    path = _bomb(tmp_path / "a.parquet")
    assert path.stat().st_size < 1 << 20
    start = time.perf_counter()
    with pytest.raises(ParquetRefused, match=r"^a.parquet: decodes to more than 64 MiB, over 200 times its size"):
        for _ in iter_rows(open_parquet(path, "a.parquet")):
            pass
    assert time.perf_counter() - start < 20


def test_import_run_and_predict_refuse_a_bomb(tmp_path, workspace, capsys):
    folder = tmp_path / "pred"
    folder.mkdir()
    _bomb(folder / "a.parquet")
    rc = main(["import-run", "--task", "CMeEE", "--split", "dev", "--pred", str(folder), "--db", workspace])
    err = capsys.readouterr().err
    assert rc == 1 and "decompression bomb" in err and "Traceback" not in err
    shard = plan_shard(0, folder / "a.parquet", chunk_records=2048)
    with pytest.raises(ShardError, match="decompression bomb"):
        for chunk in shard.chunks:
            list(read_chunk(shard.path, shard.kind, chunk))


@pytest.mark.parametrize("bound, what", [("MAX_ROW_GROUP_ROWS", "rows"), ("MAX_ROW_GROUP_VALUES", "values")])
def test_a_footer_over_the_bounds_is_refused_before_reading(tmp_path, monkeypatch, bound, what):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"record": ["{}"] * 200}), path)
    monkeypatch.setattr(parquet_read, bound, 100)
    with pytest.raises(ParquetRefused, match=f"row group 0 holds 200 {what}"):
        open_parquet(path, "a.parquet")
    with pytest.raises(ShardError, match=f"a.parquet: row group 0 holds 200 {what}"):
        plan_shard(0, path)


def test_batches_shrink_with_the_widest_expanding_column(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"record": [json.dumps({"text": str(i) * 50}) for i in range(10_000)]}), path)
    meta = pq.ParquetFile(path).metadata
    widest = meta.row_group(0).column(0).total_uncompressed_size
    assert batch_rows(meta, [0]) == max(1, min(parquet_read.MAX_BATCH_ROWS, parquet_read.MAX_BATCH_BYTES // widest))
    # a real shard reads whole, in order
    assert [json.loads(r["record"])["text"][:1] for r in iter_rows(open_parquet(path, "a"))][:3] == ["0", "1", "2"]
