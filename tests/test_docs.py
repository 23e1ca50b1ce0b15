"""Documents the code cites (in notes shown on pages and in docstrings) live in the project."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_cited_docs_exist_in_the_repository():
    cited = set()
    for path in list((ROOT / "cblue_core").rglob("*.py")) + list((ROOT / "app_pages").rglob("*.py")):
        cited |= set(re.findall(r"\b(?:docs/)?[\w-]+\.md\b", path.read_text(encoding="utf-8")))
    assert "docs/metrics.md" in cited
    missing = sorted(c for c in cited if not (ROOT / c).is_file() and not (ROOT / "docs" / c).is_file())
    assert not missing, f"cited but not in the project: {missing}"


def test_the_readme_shows_the_tested_nginx_config_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"^```nginx\n(.*?)^```$", readme, flags=re.DOTALL | re.MULTILINE)
    assert shown == [(ROOT / "docs/deploy/nginx-proxy.conf").read_text(encoding="utf-8")]
