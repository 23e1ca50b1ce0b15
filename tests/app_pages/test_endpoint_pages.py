"""The Live and Runs pages with a declared LLM endpoint (a real ``transformers serve`` behind the
tests' fault proxy): the answer streamed escaped, then its structured answer marked against the
gold, in normal and demo mode; an endpoint run started from the Runs page with its figures."""
from __future__ import annotations

import re

import pytest

from app_pages.live_page.llm import DATASET, escaped_stream
from tests.models.conftest import tiny  # noqa: F401 - the tiny Llama the server serves
from tests.models.endpoints.conftest import endpoint, proxy, served, write_endpoints  # noqa: F401


def test_streamed_pieces_form_no_link_even_when_a_url_is_split():
    shown = "".join(escaped_stream(["答案：见 ht", "tp://evil.example/x ", "或 ww", "w.evil.example", "\n![img](y)"]))
    assert "http://" not in shown and "www." not in shown and "![" not in shown
    assert "  \n" in shown and "答案" in shown


@pytest.fixture
def pages(app, tmp_path, monkeypatch, proxy, served):  # noqa: F811 - fixtures imported above
    cfgs = [endpoint(proxy, served, name="tiny", max_tokens=6)]
    monkeypatch.setenv("CBLUE_STUDIO_ENDPOINTS", str(write_endpoints(tmp_path / "endpoints.toml", cfgs)))

    def open_page(page: str, query=None):
        at = app(query)
        at.run()
        at.switch_page(page)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        return at.run()
    return open_page


def ask(at, task: str):
    at.selectbox(key="live_task").set_value(task).run()
    at.selectbox(key="live_model").set_value("endpoint:tiny").run()
    at.radio(key="live_source").set_value(DATASET).run()
    return at.button(key="live_run").click().run()


@pytest.mark.parametrize("task", ["PromptCBLUE", "CliMedBench"])
def test_live_streams_then_marks_the_structured_answer(pages, proxy, task):  # noqa: F811 - the imported fixture
    at = ask(pages("pages/live.py"), task)
    assert not at.exception and not at.error, (at.exception, at.error)
    assert sum(proxy.finished.values()) == 1
    text = "\n".join(m.value for m in at.markdown)
    assert "Structured answer" in text and ("missed" in text or "right" in text)
    assert any("differs from the gold" in w.value for w in at.warning) or at.success
    assert {m.label for m in at.metric} >= {"Answer time / 耗时", "Endpoint / 端点"}


def test_live_demo_mode_hides_the_figures(pages, proxy):  # noqa: F811 - the imported fixture
    at = ask(pages("pages/live.py", {"demo": "1"}), "CliMedBench")
    assert not at.exception and not at.error
    assert not at.metric and "Structured answer" in "\n".join(m.value for m in at.markdown)


def test_live_says_why_when_the_stream_is_cut(pages, proxy):  # noqa: F811 - the imported fixture
    at = pages("pages/live.py")
    proxy.faults.append("cut")
    at = ask(at, "CliMedBench")
    assert not at.exception and any("stream" in e.value for e in at.error)


def test_runs_page_starts_an_endpoint_run_and_shows_its_figures(pages, proxy):  # noqa: F811 - the imported fixture
    at = pages("pages/runs.py")
    at.number_input(key="runs_endpoint_limit").set_value(3).run()
    at.button(key="runs_endpoint_go").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    assert any("Stored run" in s.value for s in at.success)
    labels = {m.label for m in at.metric}
    assert {"Requests sent", "From cache", "Failed", "Tokens/s"} <= labels
    assert sum(proxy.finished.values()) == 3
    run = re.search(r"#(\d+)", next(s.value for s in at.success if "Stored run" in s.value)).group(1)
    errors = pages("pages/errors.py", {"run": run})   # the taxonomy of a run on 3 of the split's examples
    assert not errors.exception and not errors.error, (errors.exception, errors.error)
    assert any(len(d.value) for d in errors.dataframe)
