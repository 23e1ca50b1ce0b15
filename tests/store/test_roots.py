"""The sidebar opens workspace files under the allowed roots only."""
from __future__ import annotations

import pytest

from cblue_core.store.errors import WorkspaceError
from cblue_core.store.roots import allowed_roots, check_workspace_path


@pytest.fixture
def roots(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CBLUE_STUDIO_DB", raising=False)
    monkeypatch.delenv("CBLUE_STUDIO_ROOTS", raising=False)
    (tmp_path / "workspace").mkdir()
    return tmp_path


def test_default_root_is_the_working_directorys_workspace_folder(roots):
    assert allowed_roots() == [(roots / "workspace").resolve()]
    assert check_workspace_path("workspace/other.duckdb") == (roots / "workspace" / "other.duckdb").resolve()
    assert check_workspace_path(str(roots / "workspace" / "sub" / "x.duckdb")).name == "x.duckdb"


@pytest.mark.parametrize("text", ["/tmp/elsewhere.duckdb", "workspace/../evil.duckdb", "/etc/passwd",
                                  "~/.cache/x.duckdb", "workspace/notes.txt", "", "a\x00b.duckdb"])
def test_paths_outside_the_roots_are_refused(roots, text):
    with pytest.raises(WorkspaceError):
        check_workspace_path(text)


def test_a_symlink_out_of_the_root_is_refused(roots, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (roots / "workspace" / "link").symlink_to(outside)
    with pytest.raises(WorkspaceError, match="may only be opened under"):
        check_workspace_path("workspace/link/x.duckdb")


def test_env_adds_roots(roots, tmp_path_factory, monkeypatch):
    extra = tmp_path_factory.mktemp("team")
    db_dir = tmp_path_factory.mktemp("dbdir")
    monkeypatch.setenv("CBLUE_STUDIO_ROOTS", str(extra))
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db_dir / "main.duckdb"))
    assert set(allowed_roots()) == {(roots / "workspace").resolve(), extra.resolve(), db_dir.resolve()}
    assert check_workspace_path(str(extra / "t.duckdb")).parent == extra.resolve()
    assert check_workspace_path(str(db_dir / "b.duckdb")).parent == db_dir.resolve()
