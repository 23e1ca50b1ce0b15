"""Every user filter of the datasets store (the regular expression box, SQL predicates, saved
slices) runs under one time bound that holds, one at a time per session."""
from __future__ import annotations

import json
import random
import threading
import time

import pytest

from cblue_core.store.ingest import ingest_file
from cblue_core.store.sandbox import PredicateTimeout
from cblue_core.store.slices import SliceError
from cblue_core.store.workspace import connect
from tests.store.test_filter_worker import ORED, PATHOLOGICAL

LIMIT = 1.0


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A CMeEE split of 400 varied 200-character texts: the pathological pattern takes about
    100 s over it unbounded."""
    rng = random.Random(1)
    chars = "患者口服阿莫西林后皮疹消退呼吸肌麻痹和中枢受累因不畅可并发肺炎等发热三天伴咳嗽，。、0123456789abc"
    records = [{"text": "".join(rng.choice(chars) for _ in range(200)), "entities": []} for _ in range(400)]
    folder = tmp_path_factory.mktemp("big")
    path = folder / "CMeEE_dev.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    ws = connect(folder / "ws.duckdb")
    ingest_file(ws, path)
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def dataset_id(workspace) -> int:
    info = workspace.datasets.find("CMeEE", "dev")
    assert info is not None
    # A worker holding the split is started (not counted in the limit) before anything is timed.
    assert workspace.datasets.matching(info.dataset_id, "idx < 2", timeout=30) == [0, 1]
    return info.dataset_id


def test_regex_box_is_stopped_within_twice_the_limit(workspace, dataset_id):
    start = time.perf_counter()
    page = workspace.datasets.query(dataset_id, regex=PATHOLOGICAL, timeout=LIMIT)
    elapsed = time.perf_counter() - start
    assert page.error and "stopped" in page.error and page.total == 0
    assert elapsed < 2 * LIMIT
    assert workspace.datasets.query(dataset_id, regex="^[0-9]", timeout=30).error is None


def test_ored_predicate_is_stopped_within_twice_the_limit(workspace, dataset_id):
    workspace.datasets.matching(dataset_id, "idx < 2", timeout=30)   # a worker in place of the killed one
    start = time.perf_counter()
    with pytest.raises(PredicateTimeout):
        workspace.datasets.matching(dataset_id, ORED, timeout=LIMIT)
    assert time.perf_counter() - start < 2 * LIMIT


def test_saving_a_slice_is_bounded_too(workspace, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_SQL_TIMEOUT", str(LIMIT))
    workspace.slices.save("warm", "idx < 2")   # a checking worker in place
    start = time.perf_counter()
    with pytest.raises(SliceError, match="stopped"):
        workspace.slices.save("costly", ORED)
    assert time.perf_counter() - start < 2 * LIMIT
    assert [s.name for s in workspace.slices.all()] == ["warm"]


def test_one_filter_per_session_at_a_time(workspace, dataset_id):
    mine, other = workspace.cursor(session="mine"), workspace.cursor(session="other")
    # Two idle workers, so that no worker's start is timed below.
    warming = [threading.Thread(target=ws.datasets.matching, args=(dataset_id, "idx < 2"), kwargs={"timeout": 30})
               for ws in (mine, other)]
    for thread in warming:
        thread.start()
    for thread in warming:
        thread.join()
    ended: dict[str, float] = {}

    def costly() -> None:
        mine.cursor().datasets.query(dataset_id, regex=PATHOLOGICAL, timeout=3.0)
        ended["costly"] = time.perf_counter()

    thread = threading.Thread(target=costly)
    thread.start()
    time.sleep(0.5)
    assert other.datasets.matching(dataset_id, "idx = 3", timeout=30) == [3]
    ended["other session"] = time.perf_counter()
    assert mine.datasets.matching(dataset_id, "idx = 3", timeout=30) == [3]
    ended["same session"] = time.perf_counter()
    thread.join()
    assert ended["other session"] < ended["costly"] <= ended["same session"]
