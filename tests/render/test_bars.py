"""HTML bar charts (cblue_core.render.bars): every value written out beside its bar, bars and
intervals to scale, every string escaped, the stylesheet scoped."""
from __future__ import annotations

import re

from cblue_core.render.bars import Bar, BarPanel, bars_html

HOSTILE = '<img src=x onerror="alert(1)">'


def test_every_value_is_written_and_drawn_to_scale():
    bars = (Bar("dis", 0.8, "0.800"), Bar("sym", 0.25, "0.250"), Bar("bad", 1.7, "1.700"))
    html = bars_html([BarPanel("F1 per label", "F1 (0-1)", bars)], scale=1.0)
    for b in bars:
        assert f'<div class="cbr-bars-l">{b.label}</div>' in html and f">{b.text}<" in html
    assert re.findall(r'class="cbr-bars-b" style="width:([\d.]+)%"', html) == ["80.00", "25.00", "100.00"]
    counts = bars_html([BarPanel("n", "rows", (Bar("a", 50, "50"), Bar("b", 200, "200")))])
    assert re.findall(r'style="width:([\d.]+)%"', counts) == ["25.00", "100.00"]     # the largest: full


def test_an_interval_is_drawn_across_its_bar():
    html = bars_html([BarPanel("t", "a", (Bar("x", 0.5, "0.5", low=0.3, high=0.9),))], scale=1.0)
    assert 'class="cbr-bars-i" style="left:30.00%;width:60.00%"' in html
    assert 'class="cbr-bars-i"' not in bars_html([BarPanel("t", "a", (Bar("x", 0.5, "0.5"),))])


def test_data_is_only_ever_escaped_and_the_style_scoped():
    html = bars_html([BarPanel(HOSTILE, HOSTILE, (Bar(HOSTILE, 1.0, HOSTILE, note=HOSTILE),))])
    assert "<img" not in html and "alert(1)\"" not in html
    assert html.count("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;") >= 4
    css = html[html.index("<style>") + 7:html.index("</style>")]
    rules = [r.split("{")[0] for r in css.split("}") if "{" in r and not r.strip().startswith("@media")]
    assert all(sel.strip().startswith(".cbr-bars") for rule in rules for sel in rule.split(","))
