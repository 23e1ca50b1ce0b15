"""Pages that need a run say how to make one, with a link to the page that does."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages.conftest import APP


@pytest.mark.parametrize("page", ["pages/errors.py", "pages/compare.py"])
def test_no_runs_links_to_the_runs_page(page, tmp_path, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(tmp_path / "workspace.duckdb"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(page).run()
    assert not at.exception
    info = " ".join(i.value for i in at.info)
    assert "No runs yet" in info and "built-in model" in info
    links = at.get("page_link")
    assert [link.proto.page for link in links if "Runs page" in link.proto.label] == ["runs"]
