"""Suggestions in the Annotate page's span editor, in real Chromium on a served app: a run's
scored spans drawn dashed; one accepted with a click, one rejected with a key, then Save: the
event records exactly the accepted one, with its score; accept all on another example; nothing
is written before Save."""
from __future__ import annotations

import dataclasses

import pytest
from playwright.sync_api import expect

from cblue_core.records import Span
from tests.browser.conftest import ROOT, streamlit_server

pytestmark = pytest.mark.browser

EDITOR = 'iframe[title*="span_editor"]'
PARTLY, ALL = 3, 4                       # the CMeEE dev examples the run suggests spans for
SCORES = (0.87, 0.62, 0.41)


def _new_spans(ex) -> list[Span]:
    """Three spans the gold does not hold: the text's first characters, typed apart."""
    held = {(s.start, s.end, s.type) for s in ex.spans}
    out = [Span(a, a + 2, t, ex.text[a:a + 2]) for a, t in ((0, "ite"), (2, "equ"), (4, "mic"))]
    assert not any((s.start, s.end, s.type) in held for s in out)
    return out


@pytest.fixture(scope="module")
def suggest_app(tmp_path_factory):
    """The sample workspace with a CMeEE dev run (run 1) whose model suggests three scored spans
    beyond the gold on examples PARTLY and ALL."""
    from cblue_core.runs.record import record_run
    from cblue_core.store.ingest import bootstrap_sample_data
    from cblue_core.store.workspace import connect

    db = tmp_path_factory.mktemp("suggest") / "workspace.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, ROOT / "sample_data")
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    gold = ws.datasets.examples(did)
    preds = [dataclasses.replace(g, meta={}) for g in gold]
    new = {}
    for i in (PARTLY, ALL):
        new[i] = _new_spans(gold[i])
        preds[i] = dataclasses.replace(gold[i], spans=list(gold[i].spans) + new[i], meta={
            "span_probabilities": [0.99] * len(gold[i].spans) + list(SCORES)})
    run_id = record_run(ws, did, preds, name="span model", source="model", n_boot=0).run_id
    ws.close()
    with streamlit_server(db, tmp_path_factory.mktemp("log")) as url:
        yield url, run_id, new


def _open(page, url: str, index: int, run_id: int):
    page.goto(f"{url}/annotate?task=CMeEE&split=dev&example={index}", timeout=60_000)
    frame = page.frame_locator(EDITOR)
    frame.locator(".se-ch").first.wait_for(timeout=60_000)
    page.get_by_role("combobox", name="Suggestions from").click()
    page.get_by_role("option", name=f"run {run_id} · span model").click()
    frame.locator(".se-bar.se-sugg").first.wait_for(timeout=30_000)
    return frame


def _key(s: Span) -> str:
    return f"{s.start}:{s.end}:{s.type}"


def _save(page, frame) -> None:
    frame.locator("#status").click()                    # the keyboard in the editor
    page.keyboard.press("Control+s")
    expect(frame.locator("#status")).to_contain_text("已保存 / saved: event #", timeout=30_000)


def test_accept_one_reject_one_then_save_records_only_the_accepted(suggest_app, page, output_dir):
    url, run_id, new = suggest_app
    first, second, third = new[PARTLY]
    frame = _open(page, url, PARTLY, run_id)
    labels = frame.locator(".se-bar.se-sugg .se-lbl").all_text_contents()
    assert sorted(labels) == sorted(["ite 0.87", "equ 0.62", "mic 0.41"]), labels
    n_gold = frame.locator(".se-list li").count()

    frame.locator(f'.se-sugg-list li[data-s="{_key(first)}"] .se-ok').click()       # accept with a click
    expect(frame.locator(".se-list li")).to_have_count(n_gold + 1, timeout=30_000)
    page.get_by_text("Unsaved changes").first.wait_for(timeout=30_000)
    frame.locator(f'.se-bar.se-sugg[data-s="{_key(second)}"]').first.click()        # reject with a key
    page.keyboard.press("x")
    expect(frame.locator(f'.se-sugg-list li[data-s="{_key(second)}"]')).to_have_count(0, timeout=30_000)
    page.wait_for_timeout(1500)                             # the page has run with the rejection
    expect(frame.locator(f'.se-bar[data-s="{_key(second)}"]')).to_have_count(0)
    # nothing is written before Save: the example has no event yet
    assert page.get_by_text("No edits yet").count() == 1
    page.screenshot(path=str(output_dir / "annotate_suggestions.png"), full_page=True)

    _save(page, frame)
    history = page.locator('[data-testid="stCaptionContainer"]', has_text="suggestions of")
    history.first.wait_for(timeout=30_000)
    assert f"run {run_id}: 1 accepted (0.87)" in history.first.text_content()
    # the one left (third) is still offered; the rejected one is not
    expect(frame.locator(f'.se-sugg-list li[data-s="{_key(third)}"]')).to_have_count(1, timeout=30_000)
    assert frame.locator(f'.se-sugg-list li[data-s="{_key(second)}"]').count() == 0


def test_accept_all_then_save(suggest_app, page):
    url, run_id, _ = suggest_app
    frame = _open(page, url, ALL, run_id)
    n_gold = frame.locator(".se-list li").count()
    frame.locator("#b-accept-all").click()
    expect(frame.locator(".se-list li")).to_have_count(n_gold + 3, timeout=30_000)
    assert frame.locator(".se-bar.se-sugg").count() == 0
    page.get_by_text("Unsaved changes").first.wait_for(timeout=30_000)
    assert page.get_by_text("No edits yet").count() == 1
    _save(page, frame)
    history = page.locator('[data-testid="stCaptionContainer"]', has_text="suggestions of")
    history.first.wait_for(timeout=30_000)
    assert f"run {run_id}: 3 accepted (0.87, 0.62, 0.41)" in history.first.text_content()
    # the source stays picked while another tab is open (only the open tab runs)
    page.get_by_role("tab", name="Versions").click()
    page.get_by_role("tab", name="Edit").click()
    picked = page.get_by_role("combobox", name="Suggestions from")
    expect(picked).to_have_value(f"run {run_id} · span model", timeout=30_000)
