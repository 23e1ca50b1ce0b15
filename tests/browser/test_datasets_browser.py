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
