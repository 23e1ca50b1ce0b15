"""Bounds on the workspace files visitors create: depth below the root, per session, per server."""
from __future__ import annotations

import threading

import pytest

from cblue_core.store.errors import WorkspaceError
from cblue_core.store.new_workspaces import NewWorkspaceQuota, folder_depth


def test_depth_is_counted_below_the_nearest_root(tmp_path):
    roots = [tmp_path, tmp_path / "team"]
    assert folder_depth(tmp_path / "x.duckdb", roots) == 0
    assert folder_depth(tmp_path / "team" / "a" / "x.duckdb", roots) == 1
    q = NewWorkspaceQuota(max_depth=2)
    q.admit("s", tmp_path / "a" / "b" / "x.duckdb", roots)
    deep = tmp_path.joinpath(*["d"] * 300, "x.duckdb")
    with pytest.raises(WorkspaceError, match="at most 2 folders below its allowed root, not 300"):
        q.admit("s", deep, roots)
    assert q.created() == 1


def test_per_session_and_per_server_counts(tmp_path):
    q = NewWorkspaceQuota(per_session=2, per_server=5)
    roots = [tmp_path]
    for k in range(2):
        q.admit("s1", tmp_path / f"a{k}.duckdb", roots)
    q.admit("s1", tmp_path / "a0.duckdb", roots)           # the same file again: not counted twice
    with pytest.raises(WorkspaceError, match="this session has created 2"):
        q.admit("s1", tmp_path / "a2.duckdb", roots)
    for k in range(3):                                    # new sessions are cheap to make
        q.admit(f"t{k}", tmp_path / f"b{k}.duckdb", roots)
    with pytest.raises(WorkspaceError, match="this server has created 5"):
        q.admit("fresh", tmp_path / "c.duckdb", roots)
    assert (q.created(), q.created("s1"), q.created("fresh")) == (5, 2, 0)


def test_concurrent_sessions_never_pass_the_server_bound(tmp_path):
    q = NewWorkspaceQuota(per_session=100, per_server=20)

    def work(n: int) -> None:
        for k in range(10):
            try:
                q.admit(f"s{n}", tmp_path / f"{n}-{k}.duckdb", [tmp_path])
            except WorkspaceError:
                pass

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert q.created() == 20
