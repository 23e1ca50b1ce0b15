"""The Ray engine on a local Ray of 2 CPUs, started once for this module: its output equals the
local engine's (a built-in span model, a built-in classifier, a tiny HF checkpoint), the work
really runs in at least 2 actor processes other than the driver, a killed folder job resumes to
the same output, a bad shard is named with its record, and no Ray process outlives the tests."""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from cblue_core.cli.models import cmd_predict
from cblue_core.scale import jobs
from cblue_core.scale.jobs import predict_folder
from cblue_core.scale.procs import descendants
from cblue_core.scale.ray_engine import WorkerSpec
from cblue_core.scale.shards import MANIFEST, ShardError
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect

from .conftest import ROOT, SAMPLE, qic_queries, write_jsonl, write_parquet

pytestmark = pytest.mark.slow   # see tests/conftest.py: not in the fast loop

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -r requirements-ray.txt)")

_RAY_PROC = ("ray::", "raylet", "gcs_server", "ray/_private", "ray/dashboard", "default_worker.py",
             "runtime_env/agent")


def ray_processes() -> dict[int, str]:
    """Live (not zombie) processes of any Ray: pid -> command line."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(k in cmd for k in _RAY_PROC):
            out[int(d.name)] = cmd.strip()[:120]
    return out


def wait_gone(pids: set[int], seconds: float = 30) -> dict[int, str]:
    deadline = time.monotonic() + seconds
    while True:
        left = {p: c for p, c in ray_processes().items() if p in pids}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


@pytest.fixture(scope="module")
def ray_address():
    """One local Ray (2 CPUs) for the module; afterwards none of its processes may be left."""
    if ray.is_initialized():
        ray.shutdown()
    before = set(ray_processes())
    ctx = ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.ERROR,
                   log_to_driver=False, object_store_memory=256 << 20,
                   runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    try:
        yield ctx.address_info["address"]
    finally:
        ours = (descendants() | set(ray_processes())) - before
        ray.shutdown()
        left = wait_gone(ours)
        assert not left, f"Ray processes left after shutdown: {left}"


def _spec(model: str, task: str, mode: str = "records", batch_size: int = 8) -> WorkerSpec:
    return WorkerSpec(model_path=model, task=task, device="cpu", mode=mode, batch_size=batch_size, workers=2)


def _workers(pids) -> set[int]:
    return set(pids) - {os.getpid()}


def spy(monkeypatch, owner, name: str) -> dict:
    """Wrap ``owner.name`` so that its last result lands in the returned dict (``"result"``)."""
    seen: dict = {}
    real = getattr(owner, name)

    def wrapper(*args, **kwargs):
        seen["result"] = out = real(*args, **kwargs)
        return out
    monkeypatch.setattr(owner, name, wrapper)
    return seen


def test_span_model_file_ray_equals_local(ray_address, tmp_path, monkeypatch):
    """CMeEE (built-in span model): the submission file of --engine ray is byte-identical."""
    seen = spy(monkeypatch, jobs, "predict_examples")
    src = SAMPLE / "CMeEE" / "CMeEE_dev.json"
    assert cmd_predict("cmeee", str(src), str(tmp_path / "local"), progress=False) == 0
    assert cmd_predict("cmeee", str(src), str(tmp_path / "ray"), progress=False, engine="ray", workers=2) == 0
    name = "CMeEE_test.json"
    local = (tmp_path / "local" / name).read_bytes()
    assert (tmp_path / "ray" / name).read_bytes() == local
    assert any(json.loads(local)[i]["entities"] for i in range(5))     # the model found entities
    res = seen["result"]
    assert res.engine == "ray" and res.records == 25
    assert len(_workers(res.pids)) >= 2, res.pids


def test_classifier_run_ray_equals_local(ray_address, tmp_path, monkeypatch, capsys):
    """KUAKE-QIC (built-in classifier): ``run --engine ray`` stores what a local run stores."""
    from cblue_core.cli.models import cmd_run

    seen = spy(monkeypatch, jobs, "ray_model_run")
    db = tmp_path / "ws.duckdb"
    ws = connect(db)
    ingest_file(ws, SAMPLE / "KUAKE-QIC" / "KUAKE-QIC_dev.json")
    ws.close()
    assert cmd_run("kuake-qic", "dev", db=str(db), batch_size=8, progress=False, json_out=True) == 0
    local = json.loads(capsys.readouterr().out)
    assert cmd_run("kuake-qic", "dev", db=str(db), batch_size=8, progress=False, json_out=True,
                   engine="ray", workers=2) == 0
    far = json.loads(capsys.readouterr().out)
    assert (local["run_id"], far["run_id"]) == (1, 2)
    assert local["metrics"]["metrics"] == far["metrics"]["metrics"]
    ws = connect(db, read_only=True)
    try:
        a, b = ws.runs.predictions(1), ws.runs.predictions(2)
        assert [(p.key, p.label) for p in a] == [(p.key, p.label) for p in b]
        # kuake-qic is a BERT head: a batch's padding moves its float outputs by ~1e-7, and Ray
        # workers see other batches than one local call does
        for x, y in zip(a, b):
            assert x.meta["probabilities"].keys() == y.meta["probabilities"].keys()
            assert list(x.meta["probabilities"].values()) == pytest.approx(list(y.meta["probabilities"].values()),
                                                                           abs=1e-5)
        params = ws.runs.get(2).params
        assert params["engine"] == "ray" and params["model"] == "kuake-qic" and params["examples"] == 24
    finally:
        ws.close()
    assert len(_workers(seen["result"][1].pids)) >= 2, seen["result"][1].pids


def test_hf_checkpoint_folder_ray_equals_local_and_bad_shard(ray_address, tiny, tmp_path):
    """A tiny HF sequence classifier on a folder of JSON-lines and Parquet shards, whose last
    shard has a broken record: the shards before it are written as the local engine writes
    them, and the broken one is named with its record and line."""
    recs = qic_queries(60)
    inp = tmp_path / "in"
    write_jsonl(inp / "a.jsonl", recs[:25])
    write_parquet(inp / "b.parquet", recs[25:], row_group_size=10)
    lines = [json.dumps(r, ensure_ascii=False) for r in qic_queries(30, seed=2)]
    lines[17] = "{broken"
    (inp / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = _spec(str(tiny.qic), "KUAKE-QIC")
    with pytest.raises(ShardError) as info:
        predict_folder(inp, tmp_path / "local", spec, engine="local", chunk_records=10)
    with pytest.raises(ShardError) as far:
        predict_folder(inp, tmp_path / "ray", spec, engine="ray", chunk_records=10)
    assert str(far.value) == str(info.value)
    assert str(far.value).startswith("c.jsonl, record 17 (line 18): not a JSON record")
    ml = json.loads((tmp_path / "local" / MANIFEST).read_text(encoding="utf-8"))
    mr = json.loads((tmp_path / "ray" / MANIFEST).read_text(encoding="utf-8"))
    assert [s["input"] for s in mr["shards"]] == ["a.jsonl", "b.parquet"] and not mr["complete"]
    assert [s["sha256"] for s in ml["shards"]] == [s["sha256"] for s in mr["shards"]]
    workers = {p for s in mr["shards"] for p in s["workers"]}
    assert len(_workers(workers)) >= 2, workers


def test_bad_shard_message_on_the_command_line(tmp_path, capsys):
    """The same failure through ``predict`` (local engine here; the Ray one is above): one
    line naming the file, the record and the line, exit 1, no traceback."""
    inp = tmp_path / "in"
    lines = [json.dumps(r, ensure_ascii=False) for r in qic_queries(5)]
    lines[2] = "{broken"
    write_jsonl(inp / "a.jsonl", qic_queries(3))
    (inp / "b.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cmd_predict("kuake-qic", str(inp), str(tmp_path / "out"), progress=False) == 1
    err = capsys.readouterr().err
    assert "error: bad record: b.jsonl, record 2 (line 3): not a JSON record" in err and "Traceback" not in err


def _cli(args: list[str], env: dict | None = None, script: str | None = None) -> subprocess.Popen:
    head = ["-c", script] if script else ["-m", "cblue_core"]
    return subprocess.Popen([sys.executable, *head, *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# `python -m cblue_core ARGS` that SIGKILLs itself the moment its first finished shard is on disk
# (Parquet file and manifest entry): a kill at a known point of a running Ray job.
KILLED_AFTER_FIRST_SHARD = """
import os, signal, sys
from cblue_core.cli import main
from cblue_core.scale import shards
real = shards.Manifest.add
def add(self, entry):
    real(self, entry)
    os.kill(os.getpid(), signal.SIGKILL)
shards.Manifest.add = add
sys.exit(main(sys.argv[1:]))
"""


def test_killed_folder_job_resumes(ray_address, tmp_path):
    """A Ray folder job killed (SIGKILL) right after its first shard is written; the rerun, on a
    local Ray of its own, skips that shard, ends with the output of an uninterrupted local job,
    and leaves no Ray process behind."""
    inp = tmp_path / "in"
    recs = qic_queries(360)
    for k in range(6):
        write_jsonl(inp / f"part-{k}.jsonl", recs[k * 60:(k + 1) * 60])
    out = tmp_path / "out"
    args = ["predict", "--model", "kuake-qic", "--input", str(inp), "--out", str(out), "--engine", "ray",
            "--workers", "2", "--chunk-records", "20", "--batch-size", "8", "--no-progress"]
    proc = _cli([*args, "--ray-address", ray_address], script=KILLED_AFTER_FIRST_SHARD)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, stderr[-3000:]
    manifest = out / MANIFEST
    first = json.loads(manifest.read_text(encoding="utf-8"))
    assert not first["complete"] and [s["input"] for s in first["shards"]] == ["part-0.jsonl"]
    assert sorted(p.name for p in out.glob("*.parquet")) == ["part-0.parquet"]

    tmp = tempfile.mkdtemp(prefix="rr", dir="/tmp")     # short: Ray's socket paths must fit
    before = set(ray_processes())
    again = _cli(args, env={**os.environ, "RAY_TMPDIR": tmp})
    try:
        stdout, stderr = again.communicate(timeout=300)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert again.returncode == 0, stderr[-3000:]
    assert "1 shard(s) were already done" in stdout
    assert "resuming: 1 of 6 shard(s) already finished" in stderr
    final = json.loads(manifest.read_text(encoding="utf-8"))
    assert final["complete"] and final["records"] == 360
    assert final["shards"][0] == first["shards"][0]     # the finished shard was not redone
    reference = predict_folder(inp, tmp_path / "ref", _spec(str(ROOT / "models" / "kuake-qic"), "KUAKE-QIC"),
                               engine="local", model="kuake-qic")
    assert reference.records == 360
    ref = json.loads((tmp_path / "ref" / MANIFEST).read_text(encoding="utf-8"))
    assert [s["sha256"] for s in final["shards"]] == [s["sha256"] for s in ref["shards"]]
    # the rerun's own Ray is gone: no Ray process but this module's cluster
    stray = wait_gone(set(ray_processes()) - before - descendants(), 30)
    assert not stray, f"the job's local Ray left processes behind: {stray}"
