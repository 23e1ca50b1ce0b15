"""Real headless Chromium: open the app, go to a CMeEE example with nested entities."""
from __future__ import annotations

import pytest

from cblue_core.io.validate import load
from tests.conftest import SAMPLE_DATA

pytestmark = pytest.mark.browser


def test_nested_cmeee_example_in_chromium(app_url, page, output_dir):
    ex = next(e for e in load(SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.json").examples if e.depth >= 3)
    page.goto(f"{app_url}/?task=CMeEE&split=dev&example={ex.index}", timeout=60_000)
    # The span layers of our renderer: one element per entity, nested ones included.
    page.wait_for_selector(".cbr-bar", timeout=60_000)
    titles = page.eval_on_selector_all(".cbr-bar[title]", "els => els.map(e => e.title)")
    for span in ex.spans:
        assert any(t.endswith(f": {span.text}") for t in titles), span
    # Stacked layers: the nested spans sit on different levels (different vertical offsets).
    levels = page.eval_on_selector_all(".cbr-bar", "els => els.map(e => e.style.top)")
    assert len(set(levels)) >= 3
    assert "example=" in page.url
    page.screenshot(path=str(output_dir / "datasets_cmeee_nested.png"), full_page=True)


def test_regex_and_sql_filters_run_in_the_served_app(app_url, page):
    """The regex box and the SQL predicate run in worker processes of the real server, under
    the same checks (a pattern too long for the bound is refused, and the page says so)."""
    import re

    examples = load(SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.json").examples
    by_regex = sum(1 for e in examples if re.search("患|病", e.text))
    both = sum(1 for e in examples if re.search("患|病", e.text) and len(e.text) > 36)
    assert 0 < both < by_regex < len(examples)
    page.goto(f"{app_url}/datasets?task=CMeEE&split=dev", timeout=60_000)
    regex_box = page.get_by_label("Regular expression")
    regex_box.wait_for(timeout=60_000)
    regex_box.fill("患|病")
    regex_box.press("Enter")
    page.get_by_text(f"{by_regex} matching examples").wait_for(timeout=60_000)
    sql_box = page.get_by_label("SQL predicate", exact=False)
    sql_box.fill("text_length > 36")
    sql_box.press("Enter")
    page.get_by_text(f"{both} matching examples").wait_for(timeout=60_000)
    regex_box.fill("患" * 1_001)
    regex_box.press("Enter")
    page.get_by_text("the regular expression is longer than 1,000 characters").wait_for(timeout=60_000)
    page.get_by_text(f"{len(examples)} matching examples").wait_for(timeout=60_000)
