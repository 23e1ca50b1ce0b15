"""AppTest fixtures: the real app on a throwaway workspace filled with the sample data."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="session")
def workspace_file(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("apptest") / "workspace.duckdb"


@pytest.fixture
def app(workspace_file, monkeypatch):
    """A fresh AppTest of app.py; every test shares one sample workspace file (one process)."""
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(workspace_file))

    def make(query: dict | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        return at
    return make


def html_of(at: AppTest) -> str:
    """All HTML the page rendered with st.html."""
    return "\n".join(str(getattr(e, "body", "") or getattr(e.proto, "body", "")) for e in at.get("html"))
