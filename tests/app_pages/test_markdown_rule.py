"""No page puts user or file text into Markdown without md() (checked on the source)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.app_pages.markdown_rule import check_file, check_source

ROOT = Path(__file__).resolve().parents[2]
PAGE_FILES = sorted(p for folder in ("app_pages", "pages") if (ROOT / folder).is_dir()
                    for p in (ROOT / folder).rglob("*.py")) + [ROOT / "app.py"]
KNOWN_BAD = (Path(__file__).parent / "fixtures" / "known_bad_page.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_text_goes_through_md(path):
    findings = check_file(path, ROOT)
    assert not findings, "\n".join(map(str, findings))


def test_the_rule_catches_every_known_bad_line():
    findings = check_source(KNOWN_BAD, "known_bad_page.py")
    flagged = {f.line for f in findings}
    bad_lines = {i for i, line in enumerate(KNOWN_BAD.splitlines(), 1) if line.rstrip().endswith("# BAD")}
    good_lines = {i for i, line in enumerate(KNOWN_BAD.splitlines(), 1) if line.rstrip().endswith("# OK")}
    assert bad_lines and good_lines
    assert bad_lines <= flagged, f"missed: {sorted(bad_lines - flagged)}"
    assert not (good_lines & flagged), f"false alarms: {sorted(good_lines & flagged)}"
