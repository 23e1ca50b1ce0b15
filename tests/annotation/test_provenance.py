"""The provenance of accepted suggestions: only those still in the saved annotation, each once,
per source; and its JSON form, as an event stores it."""
from __future__ import annotations

from cblue_core.annotation.model import Annotation
from cblue_core.annotation.provenance import (
    Provenance,
    Suggestion,
    SuggestionSource,
    kept_provenance,
    provenance_from_json,
    provenance_json,
)
from cblue_core.records import Span, Triple

RUN = SuggestionSource("run", "3")
MODEL = SuggestionSource("model", "cmeee")


def test_only_accepted_items_still_in_the_saved_annotation_are_kept():
    a, b, c = Span(0, 2, "dis", "高血"), Span(3, 5, "sym", "头痛"), Span(6, 8, "bod", "头部")
    saved = Annotation(spans=(a, Span(3, 5, "sym"), Span(9, 10, "dru")))   # text not set: same span
    accepted = {RUN: [Suggestion(a, 0.9), Suggestion(c, 0.4), Suggestion(a, 0.9)],   # c deleted again
                MODEL: [Suggestion(b, None)], SuggestionSource("run", "4"): [Suggestion(c, 0.1)]}
    kept = kept_provenance(accepted, saved)
    assert kept == (Provenance(RUN, (Suggestion(a, 0.9),)), Provenance(MODEL, (Suggestion(b, None),)))
    assert kept[0].summary() == "run 3: 1 accepted (0.90)" and kept[1].summary() == "model cmeee: 1 accepted (n/a)"


def test_labels_and_triples_round_trip_through_json():
    t = Triple("高血压", "临床表现", "头痛", "疾病", "症状", True)
    prov = (Provenance(RUN, (Suggestion(t, 0.8),)), Provenance(MODEL, (Suggestion("1", 0.75),)))
    assert kept_provenance({RUN: [Suggestion(t, 0.8)], MODEL: [Suggestion("1", 0.75)]},
                           Annotation(triples=(t,), label="1")) == prov
    assert kept_provenance({MODEL: [Suggestion("1", 0.75)]}, Annotation(label="2")) == ()
    assert provenance_from_json(provenance_json(prov)) == prov
    assert provenance_json(()) is None and provenance_from_json(None) == ()
