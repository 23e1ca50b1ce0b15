"""Static checks of the house rules on the renderer's own source."""
import re
from pathlib import Path

import cblue_core.render as render_pkg

SRC = Path(render_pkg.__file__).parent


def test_renderer_returns_html_and_leaves_the_page_to_the_pages():
    for path in SRC.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import streamlit|from streamlit)", text, re.MULTILINE), path.name
        assert "annotated_text" not in text, path.name


def test_no_dispatch_on_task_names():
    for path in SRC.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"task\.name\s*(==|!=|in\b)", text), path.name
