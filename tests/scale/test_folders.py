"""Hostile folders: manifests naming files outside their folder, FIFOs, malformed manifests,
deep JSON and overlong lines are refused with a message (file, record or field) and exit 1;
nothing hangs, and no exit prints a traceback or a panic."""
from __future__ import annotations

import json
import os
import threading

import pytest

from cblue_core.cli import main
from cblue_core.scale.folders import MAX_RECORD_BYTES, OutsideFolder, member_path
from cblue_core.scale.shards import MANIFEST, find_shards, output_files

from .conftest import SAMPLE, qic_queries, read_records, write_jsonl, write_parquet

PRED = SAMPLE / "CMeEE" / "CMeEE_dev.pred.json"


def _import(folder, workspace, capsys) -> tuple[int, str]:
    rc = main(["import-run", "--task", "CMeEE", "--split", "dev", "--pred", str(folder), "--db", workspace])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "panicked" not in err
    return rc, err


def _predict(inp, out, capsys) -> tuple[int, str]:
    rc = main(["predict", "--model", "kuake-qic", "--input", str(inp), "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "panicked" not in err
    return rc, err


def _manifest(folder, shards) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_text(json.dumps(shards), encoding="utf-8")


@pytest.mark.parametrize("name", ["/etc/passwd", "../../x.parquet", "a/../../x.parquet", "~/x.parquet", "", 5, None])
def test_member_names_outside_the_folder_are_refused_from_their_text(tmp_path, name):
    with pytest.raises(OutsideFolder):
        member_path(tmp_path, name, "manifest")


def test_a_link_leading_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "x.parquet").write_bytes(b"PAR1")
    (tmp_path / "out" / "a.parquet").symlink_to(tmp_path / "x.parquet")
    with pytest.raises(OutsideFolder, match="leads outside the folder"):
        output_files(tmp_path / "out")


def test_manifest_entries_outside_the_folder_do_not_import_or_probe(tmp_path, workspace, capsys):
    outside = tmp_path / "elsewhere.parquet"
    write_parquet(outside, read_records(PRED))
    folder = tmp_path / "pred"
    messages = []
    for name in (str(outside), "../elsewhere.parquet", "../no-such.parquet", "/no/such.parquet"):
        _manifest(folder, {"shards": [{"output": name}]})
        rc, err = _import(folder, workspace, capsys)
        assert rc == 1 and "not inside the folder" in err
        messages.append(err.replace(name, "NAME"))
    # the same answer whether the file outside exists or not
    assert messages[1] == messages[2] and messages[0] == messages[3]


def test_a_fifo_in_a_folder_is_refused_instead_of_hanging(tmp_path, workspace, capsys):
    folder = tmp_path / "pred"
    write_parquet(folder / "a.parquet", read_records(PRED))
    os.mkfifo(folder / "b.parquet")
    result: list = []
    t = threading.Thread(target=lambda: result.append(_import(folder, workspace, capsys)), daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "import-run hangs on a FIFO"
    rc, err = result[0]
    assert rc == 1 and "b.parquet" in err and "not a regular file" in err
    # predict's input folders too, where a FIFO used to be skipped without a word
    inp = tmp_path / "in"
    write_jsonl(inp / "a.jsonl", qic_queries(3))
    os.mkfifo(inp / "b.jsonl")
    with pytest.raises(ValueError, match="b.jsonl.*not a regular file"):
        find_shards(inp)


@pytest.mark.parametrize("manifest, field", [
    ([], "expected a JSON object"),
    ({"shards": 5}, "field 'shards': expected a list"),
    ({"shards": ["a.parquet"]}, r"shards\[0\]: expected an object"),
    ({"shards": [{"output": 5}]}, r"shards\[0\].output"),
    ({"job": [], "shards": []}, "field 'job'"),
])
def test_a_malformed_manifest_names_what_is_wrong(tmp_path, workspace, capsys, manifest, field):
    folder = tmp_path / "pred"
    write_parquet(folder / "a.parquet", read_records(PRED))
    _manifest(folder, manifest)
    rc, err = _import(folder, workspace, capsys)
    assert rc == 1 and MANIFEST in err
    assert __import__("re").search(field, err), err
    # the same manifest in predict's output folder
    inp = tmp_path / "in"
    write_jsonl(inp / "a.jsonl", qic_queries(3))
    rc, err = _predict(inp, folder, capsys)
    assert rc == 1 and MANIFEST in err and "use another output folder" in err


def test_predict_refuses_malformed_entries_of_its_own_manifest(tmp_path, capsys):
    inp, out = tmp_path / "in", tmp_path / "out"
    write_jsonl(inp / "a.jsonl", qic_queries(3))
    _manifest(out, {"job": {"task": "KUAKE-QIC", "model": "kuake-qic"},
                    "shards": [{"input": "a.jsonl", "output": "a.parquet", "records": "3"}]})
    rc, err = _predict(inp, out, capsys)
    assert rc == 1 and "shards[0].records: expected an integer" in err


def test_missing_shards_are_named(tmp_path, workspace, capsys):
    folder = tmp_path / "pred"
    write_parquet(folder / "a.parquet", read_records(PRED))
    _manifest(folder, {"shards": [{"output": "a.parquet"}, {"output": "gone-1.parquet"},
                                  {"output": "sub/gone-2.parquet"}]})
    rc, err = _import(folder, workspace, capsys)
    assert rc == 1 and "2 shard(s) that are missing: 'gone-1.parquet', 'sub/gone-2.parquet'" in err


def test_deep_json_in_shards_is_a_message_not_a_recursion_error(tmp_path, workspace, capsys):
    deep = '{"id": "x", "query": ' + "[" * 50_000 + "]" * 50_000 + "}"
    inp = tmp_path / "in"
    write_jsonl(inp / "a.jsonl", qic_queries(2))
    with (inp / "a.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(deep + "\n")
    rc, err = _predict(inp, tmp_path / "out", capsys)
    assert rc == 1 and "a.jsonl, record 2 (line 3)" in err and "nested deeper than" in err
    # a JSON array shard
    (inp / "a.jsonl").unlink()
    (inp / "b.json").write_text("[" + deep + "]", encoding="utf-8")
    rc, err = _predict(inp, tmp_path / "out2", capsys)
    assert rc == 1 and "b.json" in err and "nested deeper than" in err
    # a record column of a predictions folder
    folder = tmp_path / "pred"
    write_parquet(folder / "a.parquet", [{"record": json.dumps(r, ensure_ascii=False)} for r in read_records(PRED)]
                  + [{"record": '{"text": ' + "[" * 50_000 + "]" * 50_000 + "}"}])
    rc, err = _import(folder, workspace, capsys)
    assert rc == 1 and "nested deeper than" in err


def test_an_overlong_line_is_refused_before_any_model_sees_it(tmp_path, capsys):
    inp = tmp_path / "in"
    write_jsonl(inp / "a.jsonl", qic_queries(2) + [{"id": "long", "query": "头" * (MAX_RECORD_BYTES // 3 + 10)}])
    rc, err = _predict(inp, tmp_path / "out", capsys)
    assert rc == 1 and "a.jsonl, record 2 (line 3)" in err and "longer than" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").glob("*.parquet"))


def test_chunks_of_long_lines_are_cut_by_bytes_as_well_as_records(tmp_path, monkeypatch):
    from cblue_core.scale import shards

    monkeypatch.setattr(shards, "MAX_CHUNK_BYTES", 2_000)
    path = write_jsonl(tmp_path / "a.jsonl", qic_queries(40))
    plan = shards.plan_shard(0, path, chunk_records=2048)
    assert len(plan.chunks) > 1 and sum(c.count for c in plan.chunks) == 40
    assert all(c.stop - c.start < 2_000 for c in plan.chunks)
    texts = [t for c in plan.chunks for _, _, t in shards.read_chunk(path, "jsonl", c)]
    assert [json.loads(t)["id"] for t in texts] == [f"q{i}" for i in range(40)]
