"""The helpers that put values on a page: md_name (names shown as typed when Markdown gives them
no meaning), num/pct (numbers only), plot_text/plot_labels (Plotly's HTML subset made inert)."""
from __future__ import annotations

import pytest

from app_pages.common import md, num, pct, plot_labels, plot_text
from app_pages.markdown import md_name


def test_md_name_keeps_plain_names_and_escapes_the_rest():
    for name in ("CMeEE_test.json", "CHIP-CDN_test.json", "KUAKE-IR_test.tsv", "患者_1.json", "dev"):
        assert md_name(name) == name
    for name in ("![x](http://a.invalid/x.png)", "_a_", "a__b", "a_.b", "www.attacker.invalid",
                 "x_www.attacker.invalid", "a<b", "`x`", "a b", "", None):
        assert md_name(name) == md(name)


def test_num_and_pct_take_numbers_only():
    assert (num(0.86466, ".4f"), num(None), num(1234, ","), pct(0.25)) == ("0.8647", "n/a", "1,234", "25.0%")
    for bad in ("![x](y)", True, [1]):
        with pytest.raises(TypeError):
            num(bad)
        with pytest.raises(TypeError):
            pct(bad)


def test_plot_text_escapes_plotly_markup_and_maps_back():
    label = "<a href=http://attacker.invalid>x</a> & <b>"
    shown = plot_text(label)
    assert shown == "&lt;a href=http://attacker.invalid&gt;x&lt;/a&gt; &amp; &lt;b&gt;"
    assert plot_text("dis") == "dis" and plot_text(None) == ""
    labels = [label, "&lt;", "<", "dis"]
    back = plot_labels(labels)
    assert len(back) == len(labels) and all(back[plot_text(v)] == v for v in labels)
