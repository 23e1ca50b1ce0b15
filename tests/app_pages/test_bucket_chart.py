"""The Buckets tab's HTML panels (app_pages.bucket_chart): a titled panel per feature with its
unit, every bucket in bucket order with its score, interval, gold items and examples written
out, and data escaped."""
from __future__ import annotations

import re

from app_pages.bucket_chart import bucket_html, bucket_panels, group_buckets
from cblue_core.analysis.buckets import CONS_EDGES, LENGTH_EDGES, BucketScore

HOSTILE = "<a href=http://x>y</a>"


def test_every_bucket_shows_its_score_interval_gold_items_and_examples_in_bucket_order():
    buckets = [BucketScore("entity length", name, i, 10 + i, 2, 3, 40 + i, 0.5 + 0.05 * i, 0.4 + 0.05 * i,
                           0.62 + 0.05 * i) for i, (_, name) in enumerate(LENGTH_EDGES)][::-1]
    [panel] = bucket_panels(buckets)
    assert panel.title == "Entity length"
    assert "F1" in panel.axis and "(characters)" in panel.axis
    assert [b.label for b in panel.bars] == [name for _, name in LENGTH_EDGES]
    first = panel.bars[0]
    assert (first.value, first.low, first.high) == (0.5, 0.4, 0.62)
    assert first.text == "0.500 (0.400–0.620)" and first.note == "n=13, 40 examples"
    html = bucket_html(buckets)
    for b in panel.bars:
        assert f">{b.text}<" in html and f">{b.note}<" in html
    # the bar and its interval drawn to scale (0-1)
    assert 'style="width:50.00%"' in html and 'style="left:40.00%;width:22.00%"' in html
    accuracy = bucket_panels(buckets, metric="accuracy")[0]
    assert accuracy.axis.startswith("accuracy")
    cons = [BucketScore("label consistency", n, i, 1, 0, 0, 1, 1.0, 1.0, 1.0) for i, (_, n) in enumerate(CONS_EDGES)]
    assert "(share of train occurrences with this label)" in bucket_panels(cons)[0].axis


def test_every_feature_has_a_titled_panel_two_a_row():
    features = ["entity length", "in the model's training records", "triples per example"]
    buckets = [BucketScore(f, f"b{i}", i, 5, 1, 1, 3, 0.5, 0.4, 0.6) for f in features for i in range(2)]
    html = bucket_html(buckets)
    assert re.findall(r'<div class="cbr-bars-t">([^<]*)</div>', html) == [
        "Entity length", "In the model&#x27;s training records", "Triples per example"]
    assert "--cbr-cols:2" in html


def test_a_hostile_bucket_is_only_ever_escaped():
    html = bucket_html([BucketScore(HOSTILE, HOSTILE, 0, 1, 1, 1, 1, 0.5, 0.4, 0.6)])
    assert "<a " not in html and "</a>" not in html
    assert "&lt;a href=http://x&gt;y&lt;/a&gt;" in html


def test_group_buckets_keeps_features_and_bucket_order():
    b = [BucketScore("f", "2", 2, 1, 0, 0, 1, 1, 1, 1), BucketScore("g", "x", 0, 1, 0, 0, 1, 1, 1, 1),
         BucketScore("f", "1", 1, 1, 0, 0, 1, 1, 1, 1)]
    groups = group_buckets(b)
    assert list(groups) == ["f", "g"] and [x.bucket for x in groups["f"]] == ["1", "2"]
