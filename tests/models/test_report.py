"""The built-in models' score table: computed from the cards, identical to the README's."""
from __future__ import annotations

from pathlib import Path

from cblue_core.models.base import ModelCard
from cblue_core.models.registry import ModelInfo, scan
from cblue_core.models.report import PAPER_BERT_BASE, scores_table, strongest_baseline, target

ROOT = Path(__file__).resolve().parents[2]


def card(task: str, headline: str, value: float, **extra) -> ModelCard:
    return ModelCard(
        name=task.lower(), task=task, kind="test-kind", size_bytes=3 * 1024 * 1024,
        training={"time_s": 125},
        dev_metrics={"headline": headline, "metrics": {headline: value},
                     "intervals": {headline: [value - 0.01, value + 0.01]}},
        baselines={"majority_class": {"metrics": {headline: 0.2}},
                   "dictionary": {"metrics": {headline: 0.3}},
                   "no_headline": {"metrics": {"other": 0.9}}},
        extra=extra)


def info(c: ModelCard, source: str = "built-in") -> ModelInfo:
    return ModelInfo(name=c.name, task=c.task, kind=c.kind, path=Path("/x") / c.name, source=source,
                     size_bytes=c.size_bytes, card=c)


def test_row_values_and_missing_tasks():
    table = scores_table([info(card("KUAKE-QIC", "accuracy", 0.7422)),
                          info(card("CMeIE", "f1", 0.35, not_comparable_with_leaderboard=True)),
                          info(card("CHIP-STS", "macro_f1", 0.9), source="user")])
    lines = table.splitlines()
    assert len(lines) == 2 + len(PAPER_BERT_BASE)
    qic = next(l for l in lines if l.startswith("| KUAKE-QIC"))
    assert qic == ("| KUAKE-QIC | `kuake-qic` (test-kind) | accuracy | 74.2 (73.2-75.2) (under target) | 84.3 | "
                   "75.9 |  |  | dictionary 30.0 | 2 min | 3.0 MB |")
    assert "0.35" not in table and " not comparable (under target) |" in next(l for l in lines if l.startswith("| CMeIE"))
    # user models never fill the built-in table
    assert next(l for l in lines if l.startswith("| CHIP-STS")).startswith("| CHIP-STS | none shipped")


def test_held_out_size_comes_from_the_card():
    c = card("CMeIE", "f1", 0.41, not_comparable_with_leaderboard=True)
    c.training["data"] = {"eval_examples": 717}
    assert "41.0 (40.0-42.0) on 717 held-out dev records, not comparable (under target) |" in scores_table([info(c)])


def test_strongest_baseline_ignores_other_metrics():
    assert strongest_baseline(card("CMeEE", "f1", 0.5), "f1") == ("dictionary", 0.3)
    assert strongest_baseline(ModelCard(name="x", task="CMeEE", kind="k"), "f1") is None


def test_targets_replaced_model_and_dev_overlap():
    assert [target(t) for t in ("CMeEE", "CHIP-CDN", "CHIP-CTC", "CHIP-STS", "KUAKE-QIC", "KUAKE-QTR",
                                "KUAKE-QQR", "CMeIE")] == [55.9, 49.9, 62.3, 74.7, 75.9, 54.0, 76.2, 45.0]
    new = card("KUAKE-QIC", "accuracy", 0.7642, replaces={"name": "kuake-qic", "kind": "ngram-classifier",
                                                         "headline": "accuracy", "dev": 0.7422,
                                                         "low": 0.7227, "high": 0.7611})
    encoder = ModelCard(name="encoder", task="", kind="mlm-encoder",
                        extra={"dev_overlap": {"KUAKE-QIC": {"dev": 8, "dev_texts": 1955}}})
    table = scores_table([info(new), info(encoder)])
    qic = next(l for l in table.splitlines() if l.startswith("| KUAKE-QIC"))
    assert qic == ("| KUAKE-QIC | `kuake-qic` (test-kind) | accuracy | 76.4 (75.4-77.4) | 84.3 | 75.9 | "
                   "replaced `kuake-qic` (ngram-classifier) 74.2 (72.3-76.1) | 8 of 1,955 | dictionary 30.0 | 2 min | "
                   "3.0 MB |")
    assert "encoder" not in table.split("\n", 2)[2].split("|")[1]      # the encoder is no task row


def test_models_kept_over_are_shown_beside_the_shipped_one():
    kept = card("CHIP-STS", "macro_f1", 0.7821, kept_over=[
        {"name": "chip-sts", "kind": "encoder-classifier", "headline": "macro_f1", "dev": 0.7137, "low": 0.70,
         "high": 0.727}, {"name": "odd", "kind": "k", "headline": "macro_f1", "dev": None}])
    sts = next(l for l in scores_table([info(kept)]).splitlines() if l.startswith("| CHIP-STS"))
    assert "| kept over `chip-sts` (encoder-classifier) 71.4 (70.0-72.7) |" in sts and "odd" not in sts


def test_readme_table_is_the_cards_table():
    table = scores_table(list(scan(ROOT / "models", "built-in")))   # the registry is isolated in tests
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert table in readme, "README's model table is stale: paste `python -m cblue_core models --markdown`"
