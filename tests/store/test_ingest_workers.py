"""`ingest`'s worker processes die with the command: a SIGKILLed parent takes them with it
(Linux: PR_SET_PDEATHSIG), a SIGTERMed one stops them and says so in one line; either way the
workspace holds only complete datasets."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cblue_core.store.ingest import PARALLEL_MIN_BYTES
from cblue_core.store.workspace import connect

ROOT = Path(__file__).resolve().parents[2]
FILES = 3
RECORDS = 60_000   # about 26 MB and 5-10 s of validation per file: workers stay busy

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/proc/self/stat").exists(),
                       reason="finds worker processes through Linux's /proc"),
    pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="ingest uses one process on a single CPU"),
]


@pytest.fixture(scope="module")
def big_folder(tmp_path_factory) -> Path:
    """Synthetic CMeEE train files (made-up text, not the benchmark's) named as ingest expects."""
    folder = tmp_path_factory.mktemp("big") / "CMeEE"
    folder.mkdir()
    chars = "头痛发热咳嗽胸闷腹泻呕吐乏力心悸气短肺炎胃炎肝炎肾病血压血糖检查治疗手术药物症状部位"
    stems = [(chars * 4)[i % 37: i % 37 + 60 + i % 50] for i in range(500)]
    for k in range(FILES):
        records = []
        for i in range(RECORDS):
            text = f"{stems[i % len(stems)]}{k}-{i}。"
            records.append({"text": text, "entities": [
                {"start_idx": 2, "end_idx": 4, "type": "sym", "entity": text[2:5]},
                {"start_idx": 10, "end_idx": 15, "type": "dis", "entity": text[10:16]}]})
        # "_train." and not "_train_": the split is read from the name.
        (folder / f"CMeEE_train.part{k}.json").write_text(json.dumps(records, ensure_ascii=False),
                                                          encoding="utf-8")
    assert sum(p.stat().st_size for p in folder.iterdir()) >= PARALLEL_MIN_BYTES
    return folder


def _parents() -> dict[int, int]:
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:   # exited meanwhile
            continue
        out[int(stat.parent.name)] = int(text.rsplit(")", 1)[1].split()[1])
    return out


def _descendants(pid: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")   # a zombie has exited; only its parent's wait is missing


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _start_and_wait_for_workers(folder: Path, db: Path) -> tuple[subprocess.Popen, set[int]]:
    # Output to files, not pipes: the workers inherit the pipes, and reading them to the end
    # would wait for the workers, hiding the very thing tested.
    with open(db.parent / "out.txt", "wb") as out, open(db.parent / "err.txt", "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "cblue_core", "ingest", str(folder), "--db", str(db)],
                                stdout=out, stderr=err, cwd=ROOT,
                                env={**os.environ, "CBLUE_STUDIO_LOG": str(db.parent / "studio.log")})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = {p for p in _descendants(proc.pid) if "spawn_main" in _cmdline(p)}
        if len(workers) >= 2:
            time.sleep(1.5)   # past their start-up, into validating a file
            return proc, _descendants(proc.pid)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    pytest.fail(f"no worker processes appeared (status {proc.returncode}): {_read(db, 'err.txt')[-2000:]}")


def _read(db: Path, name: str) -> str:
    return (db.parent / name).read_text(encoding="utf-8")


def _assert_gone(pids: set[int], within: float) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        left = {p for p in pids if _alive(p)}
        if not left:
            return
        time.sleep(0.05)
    for p in left:   # don't leave them to the next test
        os.kill(p, signal.SIGKILL)
    pytest.fail(f"still running {within} s after the parent: {[_cmdline(p) for p in left]}")


def _assert_only_complete_datasets(db: Path) -> None:
    ws = connect(db)
    try:
        for d in ws.datasets.all():
            assert (d.task, d.split, d.records) == ("CMeEE", "train", RECORDS)
            n = ws.db.scalar("SELECT count(*) FROM examples WHERE dataset_id=?", [d.dataset_id])
            assert n == RECORDS
    finally:
        ws.close()


def test_sigkill_takes_the_workers_along(big_folder, tmp_path):
    db = tmp_path / "ws.duckdb"
    proc, children = _start_and_wait_for_workers(big_folder, db)
    proc.kill()
    proc.wait(timeout=30)
    # A worker left alone would go on validating its file (seconds) before noticing.
    _assert_gone(children, within=2)
    _assert_only_complete_datasets(db)


def test_sigterm_stops_the_pool_with_one_line(big_folder, tmp_path):
    db = tmp_path / "ws.duckdb"
    proc, children = _start_and_wait_for_workers(big_folder, db)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    _assert_gone(children, within=2)
    out, err = _read(db, "out.txt"), _read(db, "err.txt")
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in out, err
    assert lines[0].startswith("error: ingest stopped by SIGTERM; ")
    stored = sum(1 for line in out.splitlines() if line.startswith("ok "))
    assert lines[0].endswith(f"; {stored} file(s) stored completely before it, none of the rest stored")
    _assert_only_complete_datasets(db)
    assert not (tmp_path / "studio.log").exists()
