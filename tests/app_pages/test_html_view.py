from streamlit.testing.v1 import AppTest


def _app():
    from app_pages.html_view import show_html
    from cblue_core.records import Span
    from cblue_core.render.spans import spans_html

    show_html(spans_html("患者发热", [Span(2, 4, "sym")]))
    show_html("")  # nothing, no error


def test_show_html_uses_st_html():
    at = AppTest.from_function(_app).run(timeout=10)
    assert not at.exception
    blocks = at.get("html")
    assert len(blocks) == 1 and "cbr-seg" in blocks[0].proto.body
