"""The app's pages and how a request reaches one.

``app.py`` calls :func:`main`. Every page file under ``pages/`` calls :func:`page_or_app` with
its render function. Both matter because Streamlit 1.67, when a deep link (``/errors?run=1``)
is the first request to a fresh server and a ``pages/`` folder sits beside the entry point,
runs that page file on its own, without ``app.py``: the page then hands over to :func:`main`,
which builds the navigation, draws the sidebar and runs the page as usual.

Navigation is drawn by the app (``st.navigation(position="hidden")`` and page links) so that
the demo can show nothing but itself, and the root URL opens the Datasets page at
``/datasets`` (a default page would only answer at ``/``).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[1]
ICON = ROOT / "assets" / "icon.png"


@dataclass(frozen=True)
class PageSpec:
    file: str           # relative to the project root
    title: str
    icon: str
    url_path: str
    needs: str | None = None   # the action whose role the page is for: its link shows to that role only


PAGES = (
    PageSpec("pages/datasets.py", "Datasets", ":material/dataset:", "datasets"),
    PageSpec("pages/live.py", "Live", ":material/bolt:", "live"),
    PageSpec("pages/runs.py", "Runs", ":material/flag:", "runs"),
    PageSpec("pages/errors.py", "Errors", ":material/search:", "errors"),
    PageSpec("pages/compare.py", "Compare", ":material/compare_arrows:", "compare"),
    PageSpec("pages/annotate.py", "Annotate", ":material/edit:", "annotate"),
    PageSpec("pages/admin.py", "Admin", ":material/admin_panel_settings:", "admin", needs="role.set"),
)

# Per thread, because every session's script runs in its own thread: a module-wide flag set by one
# visitor's run made another visitor's first deep link skip the app and lose its sidebar.
_running = threading.local()


def page_file(url_path: str) -> str:
    """The file of the page at ``url_path`` (for st.switch_page)."""
    return next(p.file for p in PAGES if p.url_path == url_path)


def main() -> None:
    """The entry point: page config, navigation, sidebar, then the page."""
    from app_pages.common import demo_mode, md, sidebar
    from app_pages.identity import require_user
    from app_pages.permissions import role_allows

    # A local icon: a Material icon name would make the browser fetch the icon font from Google.
    st.set_page_config(page_title="CBLUE Studio", page_icon=str(ICON), layout="wide")
    pages = [st.Page(p.file, title=p.title, icon=p.icon, url_path=p.url_path) for p in PAGES]
    first = pages[0]

    def start() -> None:              # "/" opens the Datasets page at its own URL
        st.switch_page(first, query_params=dict(st.query_params))

    page = st.navigation([st.Page(start, title="Start", url_path="start", default=True), *pages],
                         position="hidden")
    require_user()              # a visitor the studio cannot name sees why, and no page
    if not demo_mode():
        with st.sidebar:
            for spec, p in zip(PAGES, pages):
                if spec.needs is None or role_allows(spec.needs):
                    st.page_link(page=p, label=md(spec.title), icon=spec.icon)
    sidebar()
    _running.inside = True
    try:
        page.run()
    finally:
        _running.inside = False


def page_or_app(render: Callable[[], None]) -> None:
    """Run a page inside the app's navigation; run on its own (a first deep link), hand over."""
    if getattr(_running, "inside", False):
        render()
    else:
        main()
