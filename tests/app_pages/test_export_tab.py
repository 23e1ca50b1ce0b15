"""The Annotate page's Export tab on a split that brat and Label Studio cannot hold: it says why
(the example and the field) instead of offering a download whose build would fail with
Streamlit's generic "Failed to generate file" and nothing else."""
from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect
from tests.annotation.export.test_formats import HOSTILE
from tests.app_pages.conftest import APP


def test_the_export_tab_names_what_a_format_refuses(tmp_path, monkeypatch):
    source = tmp_path / "CMeEE_dev.json"
    source.write_text(json.dumps(HOSTILE, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "hostile.duckdb"
    ws = connect(db)
    assert ingest_file(ws, source).ok
    ws.close()
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/annotate.py")
    for k, v in {"task": "CMeEE", "split": "dev", "example": "0"}.items():
        at.query_params[k] = v
    at.run()
    at.session_state["ann_tab"] = "Export"
    at.run()
    assert not at.exception, at.exception
    buttons = [b.label for b in at.get("download_button")]
    assert len(buttons) == 2 and "Official" in buttons[0] and "doccano" in buttons[1]
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("brat" in w and "example 1, text" in w and "U+000D" in w for w in warnings), warnings
    assert any("Label Studio" in w and "example 0, spans[0].type" in w and "U+000B" in w for w in warnings), warnings
