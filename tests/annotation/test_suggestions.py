"""Suggestions for one example: from a stored run of the same split (with the scores its model
kept, or none) and from a built-in model predicted live; gold items are not offered again."""
from __future__ import annotations

import dataclasses

import pytest

from cblue_core.annotation.model import Annotation
from cblue_core.annotation.suggestions import (
    SuggestionSource,
    model_suggestions,
    run_sources,
    run_suggestions,
    suggestions_from_prediction,
)
from cblue_core.io.validate import load
from cblue_core.records import Span, Triple
from cblue_core.runs.record import import_run, record_run
from tests.annotation.conftest import CMEEE_DEV, CMEEE_PRED, CMEIE_DEV, ingest
from tests.conftest import SAMPLE_DATA

QQR_DEV = SAMPLE_DATA / "cblue/KUAKE-QQR/KUAKE-QQR_dev.json"


def test_parse_the_sources_the_page_writes():
    assert SuggestionSource.parse("run:3") == SuggestionSource("run", "3")
    assert SuggestionSource.parse("model:cmeee").key == "model:cmeee"
    assert SuggestionSource.parse(None) is None and SuggestionSource.parse("") is None
    for bad in ("run:x", "cmeee", "endpoint:a", "model:"):
        with pytest.raises(ValueError):
            SuggestionSource.parse(bad)


def test_a_scored_run_suggests_what_the_gold_lacks_with_its_scores(ws):
    did = ingest(ws, CMEEE_DEV)
    gold = load(CMEEE_DEV).examples
    ex = gold[5]
    extra = [Span(0, 3, "pro", ex.text[0:3]), Span(6, 11, "dis", ex.text[6:11])]
    spans = list(ex.spans) + extra
    preds = [dataclasses.replace(g, meta={}) for g in gold]
    preds[5] = dataclasses.replace(ex, spans=spans, meta={"span_probabilities": [0.99] * len(ex.spans) + [0.4, 0.87]})
    run_id = record_run(ws, did, preds, name="scored", source="model", n_boot=0).run_id
    source = SuggestionSource("run", str(run_id))
    got = run_suggestions(ws.runs, source, did, 5, Annotation.from_example(ex))
    assert got.scored and got.predicted
    assert [(s.item, s.score) for s in got.spans] == [(extra[0], 0.4), (extra[1], 0.87)]
    # once the gold holds one, only the other is offered
    held = Annotation.from_example(ex)
    held = dataclasses.replace(held, spans=held.spans + (extra[1],))
    assert [s.item for s in run_suggestions(ws.runs, source, did, 5, held).spans] == [extra[0]]


def test_an_imported_run_suggests_without_scores_and_only_for_its_own_dataset(ws, tmp_path):
    did = ingest(ws, CMEEE_DEV)
    other = ingest(ws, CMEIE_DEV)
    run_id = import_run(ws, did, CMEEE_PRED, name="sample").run_id
    ex = load(CMEEE_DEV).examples[5]
    got = run_suggestions(ws.runs, SuggestionSource("run", str(run_id)), did, 5, Annotation.from_example(ex))
    assert not got.scored and [(s.item.text, s.score) for s in got.spans] == [("中性粒细胞", None)]
    assert [r.run_id for r in run_sources(ws.runs, did)] == [run_id]
    assert run_sources(ws.runs, other) == []
    with pytest.raises(ValueError, match="another dataset"):
        run_suggestions(ws.runs, SuggestionSource("run", str(run_id)), other, 0, Annotation())
    with pytest.raises(ValueError, match="no run 99"):
        run_suggestions(ws.runs, SuggestionSource("run", "99"), did, 0, Annotation())


def test_triples_and_labels_from_a_prediction():
    source = SuggestionSource("run", "1")
    gold_triple = Triple("高血压", "临床表现", "头痛", "疾病", "症状", True)
    new = Triple("高血压", "药物治疗", "硝苯地平", "疾病", "其他", True)
    low = Triple("高血压", "病因", "肥胖", "疾病", "社会学", True)
    pred = load(CMEIE_DEV).examples[0]
    pred = dataclasses.replace(pred, triples=[gold_triple, low, new],
                               meta={"triple_scores": [0.9, 0.3, 0.8]})
    got = suggestions_from_prediction(source, pred, Annotation(triples=(gold_triple,)))
    assert [(s.item, s.score) for s in got.triples] == [(new, 0.8), (low, 0.3)]
    labelled = dataclasses.replace(pred, triples=[], label="1", meta={"probabilities": {"0": 0.2, "1": 0.8}})
    assert suggestions_from_prediction(source, labelled, Annotation(label="0")).label.item == "1"
    assert suggestions_from_prediction(source, labelled, Annotation(label="0")).label.score == 0.8
    assert suggestions_from_prediction(source, labelled, Annotation(label="1")).label is None
    assert not suggestions_from_prediction(source, None, Annotation()).predicted


def test_a_built_in_classifier_suggests_live_with_its_probability():
    from cblue_core.models.loading import load_predictor

    predictor = load_predictor("kuake-qqr", task="KUAKE-QQR")
    ex = load(QQR_DEV).examples[0]
    source = SuggestionSource("model", "kuake-qqr")
    predicted = predictor.predict([ex])[0]
    other = next(c for c in ("0", "1", "2") if c != predicted.label)
    got = model_suggestions(predictor, source, ex, Annotation(label=other))
    assert got.source == source and got.scored
    assert got.label.item == predicted.label
    assert got.label.score == pytest.approx(predicted.meta["probabilities"][predicted.label])
    assert model_suggestions(predictor, source, ex, Annotation(label=predicted.label)).label is None
