"""Real headless Chromium: the clinician demo on a typed sentence and on curated CMeEE and
CMeIE cases (right and wrong marked against the gold), with screenshots to look at."""
from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.browser


def open_demo(page, app_url, task, width=1400):
    page.set_viewport_size({"width": width, "height": 1800})
    page.goto(f"{app_url}/live?task={task}&demo=1", timeout=60_000)
    page.get_by_text("Research prototype, not for clinical use").wait_for(timeout=60_000)


def predict(page, shows: str | None = None):
    page.get_by_role("button", name="分析 / Predict").click(timeout=30_000)
    if shows:
        page.get_by_text(shows).first.wait_for(timeout=90_000)
    page.locator(".cbr").last.wait_for(timeout=60_000)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)


def test_demo_mode_prediction(app_url, page, output_dir):
    open_demo(page, app_url, "KUAKE-QIC")
    box = page.get_by_label("文本 / Text")
    box.fill("糖尿病人能喝牛奶吗？")
    box.press("Control+Enter")  # commit the text area
    predict(page)
    body = page.inner_text("body")
    assert "糖尿病人能喝牛奶吗" in page.content() and "Traceback" not in body
    assert "耗时" not in body and "Latency" not in body           # no developer figures in the demo
    assert page.locator('[data-testid="stSidebar"] input').count() == 0
    page.screenshot(path=str(output_dir / "live_demo.png"), full_page=True)


def overlapping_boxes(page, selector: str) -> list[tuple[str, str]]:
    """Pairs of visible elements matching ``selector`` whose boxes intersect (by more than a pixel)."""
    return page.eval_on_selector_all(selector, """els => {
        const boxes = els.map(e => [e.textContent, e.getBoundingClientRect()]).filter(([, r]) => r.width && r.height);
        const out = [];
        for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
            const [a, r] = boxes[i], [b, q] = boxes[j];
            if (Math.min(r.right, q.right) - Math.max(r.left, q.left) > 1 &&
                Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top) > 1) out.push([a, b]);
        }
        return out;
    }""")


@pytest.mark.parametrize(("task", "width"), [("CMeEE", 1400), ("CMeIE", 1400), ("KUAKE-QIC", 1400),
                                             ("CMeEE", 390), ("CMeIE", 390)])
def test_demo_curated_case_with_marks(app_url, page, output_dir, task, width):
    open_demo(page, app_url, task, width)
    page.get_by_text("精选病例 / Curated case").click()
    page.get_by_text("精选病例：").wait_for(timeout=60_000)
    assert "无实体" not in page.inner_text("body")              # nothing shown as a result yet
    predict(page, shows="标准答案 / Gold")
    body = page.inner_text("body")
    assert "matches the gold" in body or "differs from the gold" in body
    assert "Traceback" not in body and "\"text\":" not in body          # no raw JSON shown
    assert "待分析文本" not in body                                   # the result replaced the text
    assert page.locator('[data-testid="stSidebar"]').count() == 0 or page.locator(
        '[data-testid="stSidebar"] input').count() == 0
    assert overlapping_boxes(page, ".cbr .cbr-lbl") == []            # type labels never overlap
    wide = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wide <= 1, f"the page scrolls sideways by {wide} px"
    page.screenshot(path=str(output_dir / f"live_demo_{task.lower()}_{width}.png"), full_page=True)


def test_demo_switch_hides_the_developer_sidebar(app_url, page):
    page.set_viewport_size({"width": 1400, "height": 1200})
    page.goto(f"{app_url}/live", timeout=60_000)
    page.get_by_text("Live prediction").wait_for(timeout=60_000)
    page.locator('[data-testid="stSidebar"] input').first.wait_for(timeout=60_000)   # the developer sidebar
    page.get_by_text("Demo mode for clinicians / 演示模式").click()
    page.get_by_text("Research prototype, not for clinical use").wait_for(timeout=60_000)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    assert page.locator('[data-testid="stSidebar"] input').count() == 0
    assert "demo=1" in page.url


@pytest.fixture(scope="module")
def endpoint_app(tmp_path_factory):
    """A Streamlit server whose one declared endpoint is the tests' hostile server (in this
    process, loopback), on the sample workspace; the local user is an admin."""
    from cblue_core.models.endpoints.config import EndpointConfig
    from tests.browser.conftest import _prepare_workspace, streamlit_server
    from tests.models.endpoints.conftest import write_endpoints
    from tests.models.endpoints.hostile_server import HostileServer

    server = HostileServer()
    folder = tmp_path_factory.mktemp("live_endpoint")
    cfg = EndpointConfig(name="hostile", base_url=server.url, model="m", max_retries=0, timeout_s=60.0)
    _prepare_workspace(folder / "workspace.duckdb")
    endpoints = write_endpoints(folder / "endpoints.toml", [cfg])
    try:
        with streamlit_server(folder / "workspace.duckdb", folder, CBLUE_STUDIO_ENDPOINTS=str(endpoints)) as url:
            yield url, server
    finally:
        server.close()


def test_an_answer_without_spaces_shows_at_once_and_closing_the_tab_stops_the_stream(endpoint_app, browser):
    """Issue 35, item 4: a 4,000-letter word sent in four pieces 5 s apart. Before, nothing was
    shown until the end, and the server streamed all 20 s to a tab that was gone."""
    url, server = endpoint_app
    server.answer = lambda prompt: "a" * 4_000
    server.piece_delay_s = 5.0
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
    page = context.new_page()
    page.goto(f"{url}/live?task=PromptCBLUE", timeout=60_000)
    page.get_by_text("Live prediction").wait_for(timeout=60_000)
    box = page.get_by_label("提示 / Prompt")     # an endpoint's box: the endpoint is PromptCBLUE's one model
    box.wait_for(timeout=60_000)
    box.fill("找出句子中的疾病实体：患者咳嗽")
    box.press("Control+Enter")
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    asked = time.monotonic()
    page.get_by_role("button", name="分析 / Ask").click()
    page.get_by_text("a" * 990).first.wait_for(timeout=4_000)    # the first piece (less the guard's six letters), before the second
    assert time.monotonic() - asked < 5.0
    context.close()                                         # the visitor leaves
    assert server.streams_ended.wait(30)
    ended = time.monotonic() - asked
    # TCP tells a server only when it writes: it learns at its next piece or the one after
    assert ended < 16.0, f"the server streamed {ended:.1f} s, to the end of its answer"
