"""The warm-up imports every page's modules (read from the page files, so a new page needs no
entry), without the models' torch; a page whose import fails is logged and skipped."""
from __future__ import annotations

import json
import re
import subprocess
import sys

from app_pages import warm_up
from app_pages.navigation import PAGES, ROOT


def test_the_modules_are_those_the_page_files_import():
    expected = []
    for spec in PAGES:
        for name in re.findall(r"^from (app_pages\.[\w.]+) import", (ROOT / spec.file).read_text(),
                               re.MULTILINE):
            expected += [] if name in expected else [name]
    assert warm_up.page_modules() == expected
    assert {"app_pages.errors_tabs", "app_pages.datasets", "app_pages.runs"} <= set(expected)


def test_a_fresh_process_imports_the_pages_but_not_torch():
    code = ("import json, sys\nfrom app_pages.warm_up import import_pages\ndone = import_pages()\n"
            "print(json.dumps({'done': done, 'mods': [m for m in ('app_pages.errors_tabs', 'plotly', "
            "'pandas', 'torch') if m in sys.modules]}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["done"] == warm_up.page_modules()
    assert got["mods"] == ["app_pages.errors_tabs", "plotly", "pandas"]


def test_a_failing_page_is_logged_and_skipped(monkeypatch, tmp_path):
    monkeypatch.setenv("CBLUE_STUDIO_LOG", str(tmp_path / "log.txt"))
    monkeypatch.setattr(warm_up, "page_modules", lambda: ["app_pages.no_such_page", "app_pages.keys"])
    assert warm_up.import_pages() == ["app_pages.keys"]
    assert "warm-up: importing app_pages.no_such_page" in (tmp_path / "log.txt").read_text()
