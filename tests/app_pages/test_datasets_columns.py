"""The Datasets page shows the count columns and metrics a split has (no column of zeros), labels
with their meaning, and numeric distributions on a linear axis."""
from __future__ import annotations

import pytest

from app_pages.datasets.browse import summary_figures
from app_pages.distribution_chart import distribution_figure
from cblue_core.store.stats import DatasetStats
from cblue_core.tasks import get_task


@pytest.mark.parametrize(("task", "shown", "hidden"), [
    ("CHIP-CDN", {"n_terms"}, {"n_spans", "n_triples", "nesting_depth"}),
    ("KUAKE-QQR", set(), {"n_spans", "n_triples", "n_terms", "nesting_depth"}),
    ("CMeEE", {"n_spans", "nesting_depth"}, {"n_triples", "n_terms"}),
])
def test_only_count_columns_the_split_uses(app, task, shown, hidden):
    at = app({"task": task, "split": "dev"}).run()
    assert not at.exception
    columns = set(at.dataframe[0].value.columns)
    assert shown <= columns and not hidden & columns
    labels = [m.label for m in at.metric]
    assert ("Max nesting depth" in labels) == ("nesting_depth" in shown)


def test_qqr_labels_carry_their_meaning(app):
    at = app({"task": "KUAKE-QQR", "split": "dev"}).run()
    labels = set(at.dataframe[0].value["label"])
    assert labels <= {lab.display() for lab in get_task("KUAKE-QQR").labels} | {"NA (not a KUAKE-QQR label)"}
    assert any("完全一致" in v for v in labels)


def test_distributions_use_a_linear_axis():
    lengths = {n: 100 - n for n in range(1, 61)}             # 60 entity lengths
    fig = distribution_figure(lengths, title="Entity length", x_title="length (characters)", y_title="entities")
    assert fig.layout.xaxis.type == "linear" and fig.layout.xaxis.tickvals is None
    assert fig.data[0].text is None                          # 60 numbers would overlap too
    few = distribution_figure({1: 5, 2: 3}, title="t", x_title="x", y_title="y")
    assert few.layout.xaxis.dtick == 1 and list(few.data[0].text) == ["5", "3"]


def test_summary_uses_them_for_spans_and_triples():
    stats = DatasetStats(examples=3, annotations=4, label_counts={"dis": 4}, text_lengths=[5, 6, 7],
                         nesting_depths={1: 2, 2: 1}, triples_per_example={0: 1, 2: 2},
                         span_lengths={2: 3, 4: 1}, used_counts=("n_spans", "n_triples", "nesting_depth"))
    linear = [f.layout.title.text for f in summary_figures(stats, get_task("CMeIE")) if f.layout.xaxis.type == "linear"]
    assert linear == ["Nesting depth per example", "Entity length", "Triples per example"]
