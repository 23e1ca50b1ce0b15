"""Shards without Ray: planning in one pass, reading chunks, the manifest, the local engine's
folder jobs (resume, bad records) and their equality with the file path."""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from cblue_core.cli.models import cmd_predict
from cblue_core.scale.jobs import predict_folder
from cblue_core.scale.ray_engine import WorkerSpec
from cblue_core.scale.shards import (
    MANIFEST,
    JobMismatch,
    ShardError,
    find_shards,
    output_files,
    plan_shard,
    read_chunk,
)

from .conftest import ROOT, SAMPLE, qic_queries, read_records, write_jsonl, write_parquet

QIC = str(ROOT / "models" / "kuake-qic")


def _spec(**kw) -> WorkerSpec:
    return WorkerSpec(model_path=QIC, task="KUAKE-QIC", device="cpu", mode="records", batch_size=16,
                      workers=1, **kw)


def test_plan_jsonl_chunks_lines_and_hash(tmp_path):
    recs = qic_queries(10)
    path = write_jsonl(tmp_path / "a.jsonl", recs, blank_lines=True)
    shard = plan_shard(0, path, chunk_records=4)
    assert shard.kind == "jsonl" and shard.records == 10
    assert [c.count for c in shard.chunks] == [4, 4, 2]
    rows = [r for c in shard.chunks for r in read_chunk(path, "jsonl", c)]
    assert [i for i, _, _ in rows] == list(range(10))
    assert [json.loads(t) for _, _, t in rows] == recs
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line, text in rows:           # 1-based line numbers survive the blank lines
        assert lines[line - 1] == text
    import hashlib
    assert shard.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_plan_parquet_and_json_array(tmp_path):
    recs = qic_queries(9)
    pq_path = write_parquet(tmp_path / "b.parquet", recs, row_group_size=2)
    shard = plan_shard(1, pq_path, chunk_records=4)
    assert shard.kind == "parquet" and shard.records == 9 and sum(c.count for c in shard.chunks) == 9
    rows = [r for c in shard.chunks for r in read_chunk(pq_path, "parquet", c)]
    assert [json.loads(t) for _, _, t in rows] == recs and [i for i, _, _ in rows] == list(range(9))
    arr = tmp_path / "c.json"
    arr.write_text(json.dumps(recs, ensure_ascii=False), encoding="utf-8")
    shard = plan_shard(2, arr)
    assert shard.kind == "json" and shard.records == 9
    assert [json.loads(t) for c in shard.chunks for _, _, t in read_chunk(arr, "json", c)] == recs
    assert [p.name for p in find_shards(tmp_path)] == ["b.parquet", "c.json"]


def test_local_folder_job_equals_file_predict_and_resumes(tmp_path, capsys):
    recs = qic_queries(120)
    inp = tmp_path / "in"
    write_jsonl(inp / "p0.jsonl", recs[:50])
    write_parquet(inp / "p1.parquet", recs[50:100], row_group_size=16)
    write_jsonl(inp / "p2.jsonl", recs[100:])
    out = tmp_path / "out"
    assert cmd_predict("kuake-qic", str(inp), str(out), batch_size=16, progress=False, chunk_records=20) == 0
    cap = capsys.readouterr()
    assert "wrote 120 predictions of KUAKE-QIC in 3 shard(s)" in cap.out
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["complete"] and manifest["records"] == 120
    assert [s["input"] for s in manifest["shards"]] == ["p0.jsonl", "p1.parquet", "p2.jsonl"]
    got = [json.loads(r) for f in output_files(out) for r in pq.read_table(f).column("record").to_pylist()]
    # the same predictions as the official-file path on the same records
    whole = tmp_path / "KUAKE-QIC_test.json"
    whole.write_text(json.dumps(recs, ensure_ascii=False), encoding="utf-8")
    assert cmd_predict("kuake-qic", str(whole), str(tmp_path / "file"), batch_size=16, progress=False) == 0
    assert got == json.loads((tmp_path / "file" / "KUAKE-QIC_test.json").read_text(encoding="utf-8"))
    for f in output_files(out):
        assert pq.read_table(f).column("index").to_pylist() == sorted(pq.read_table(f).column("index").to_pylist())

    # a lost output shard is redone, the others are skipped
    before = {s["input"]: s["sha256"] for s in manifest["shards"]}
    (out / "p1.parquet").unlink()
    res = predict_folder(inp, out, _spec(), model="kuake-qic", chunk_records=20)
    assert (res.shards_done, res.shards_skipped, res.records) == (1, 2, 50)
    after = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert {s["input"]: s["sha256"] for s in after["shards"]} == before and after["complete"]
    res = predict_folder(inp, out, _spec(), model="kuake-qic")
    assert (res.shards_done, res.shards_skipped) == (0, 3)
    # a changed input shard is redone
    write_jsonl(inp / "p2.jsonl", recs[100:110])
    res = predict_folder(inp, out, _spec(), model="kuake-qic")
    assert (res.shards_done, res.records) == (1, 10)


def test_another_jobs_folder_is_refused(tmp_path):
    inp = tmp_path / "in"
    write_jsonl(inp / "p0.jsonl", qic_queries(5))
    out = tmp_path / "out"
    predict_folder(inp, out, _spec(), model="kuake-qic")
    with pytest.raises(JobMismatch, match="use another output folder"):
        predict_folder(inp, out, WorkerSpec(str(ROOT / "models" / "chip-ctc"), "CHIP-CTC", "cpu", "records", 8, 1),
                       model="chip-ctc")


def test_bad_record_named_with_file_and_record_local(tmp_path, capsys):
    inp = tmp_path / "in"
    write_jsonl(inp / "a.jsonl", qic_queries(4))
    bad = inp / "b.jsonl"
    lines = [json.dumps(r, ensure_ascii=False) for r in qic_queries(5, seed=1)]
    lines[3] = '{"id": "x", "query": 12'
    bad.write_text("\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:]) + "\n", encoding="utf-8")
    rc = cmd_predict("kuake-qic", str(inp), str(tmp_path / "out"), progress=False)
    err = capsys.readouterr().err
    assert rc == 1
    assert "b.jsonl, record 3 (line 5): not a JSON record" in err
    with pytest.raises(ShardError) as info:
        predict_folder(inp, tmp_path / "out2", _spec(), model="kuake-qic")
    assert (info.value.file, info.value.record, info.value.line) == ("b.jsonl", 3, 5)
    # a record of the wrong shape: the codec's field is named
    bad.write_text(json.dumps({"id": "y"}) + "\n", encoding="utf-8")
    with pytest.raises(ShardError, match=r"b.jsonl, record 0 \(line 1\): field 'query'"):
        predict_folder(inp, tmp_path / "out3", _spec(), model="kuake-qic")


def test_folder_input_needs_a_folder_output(tmp_path, capsys):
    inp = tmp_path / "in"
    write_jsonl(inp / "p0.jsonl", read_records(SAMPLE / "KUAKE-QIC" / "KUAKE-QIC_test.json"))
    (tmp_path / "f.json").write_text("[]", encoding="utf-8")
    assert cmd_predict("kuake-qic", str(inp), str(tmp_path / "f.json"), progress=False) == 2
    assert cmd_predict("kuake-qic", str(tmp_path / "empty"), str(tmp_path / "o"), progress=False) == 1
