"""Rough edges a new user hit: defaults, counts, a refused filter, the import expander."""
from __future__ import annotations

from app_pages.common import counted


def test_counts_read_as_english():
    assert counted(1, "row") == "1 row" and counted(0, "row") == "0 rows"
    assert counted(1204, "matching example") == "1,204 matching examples"


def test_runs_page_opens_on_cmeee(app):
    at = app()
    at.run()
    at.switch_page("pages/runs.py").run()
    assert not at.exception
    label = at.selectbox(key="runs_dataset").format_func(at.selectbox(key="runs_dataset").value)
    assert label.startswith("CMeEE · dev")


def test_a_refused_filter_says_so_and_lists_without_it(app):
    at = app({"task": "CMeEE", "split": "dev"})
    at.run()
    at.text_input(key="ds_sql").input("text = read_text('/etc/passwd')").run()
    assert not at.exception
    assert any("Filter not applied" in e.value and "read" in e.value for e in at.error)
    caption = next(c.value for c in at.caption if "matching example" in c.value)
    assert not caption.startswith("0 ")
