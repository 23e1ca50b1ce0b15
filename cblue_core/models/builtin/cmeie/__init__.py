"""CMeIE relation extraction: candidate mentions from a span head, then a pair classifier.

CMeIE has no public training file. Without one, the model trains on a fixed split of the dev
file (a ``RandomState(0)`` permutation: first 80% train, last 20% held out) and reports its
score on the held-out 20% only; that number is **not comparable with the leaderboard** (other
data, a fifth of the size). When a ``CMeIE_train.json`` exists (e.g. the sample data), it is
used for training and the dev file for scoring.

Model, on the character BiLSTM span encoder of :mod:`..spans`:

1. A multi-label span head over ``SUBJ``, the 44 predicates and the 11 object types
   (``T:<type>``). A training mention (CMeIE gives strings, no offsets) is labelled at every
   occurrence in its text. It proposes candidate subjects (``SUBJ`` over
   ``subject_threshold``) and objects (any other label over ``threshold``).
2. A pair head scores every (candidate subject, candidate object) pair for each predicate from
   both spans' boundary states, the mean state between them, their signed distance and the span
   head's scores of both spans. It trains on the gold pairs of each text plus the span head's
   best-scoring wrong spans of the moment (the mistakes it must learn to reject); a predicate
   over ``pair_threshold`` makes a triple, and each (predicate, object) keeps its best subject
   only. Subject and object types come from the 53 schemas (the object type the span head
   prefers among those the predicate allows).

An auxiliary head learns CMeEE's 9 entity types on the CMeEE training file (when present beside
the CMeIE folder), and the encoder can start from a trained CMeEE model (``init_from``), so
that it has seen 15,000 more medical sentences: the relation data alone is small. With
``lexicon`` the characters also read a gazetteer of typed mentions (the training records'
subjects and objects, CMeEE's entities; :mod:`.lexicon`). With ``teacher`` (a trained CMeIE
model) the CMeEE sentences also carry that model's triples (:mod:`.self_training`).
``combined`` is True when no ``。``-separated sentence holds both mentions.

The package: :mod:`.data` (the split, schemas, labels and gold pairs), :mod:`.lexicon`, :mod:`.net`, :mod:`.decoding`,
:mod:`.model` (the predictor, saved and loaded), :mod:`.self_training`, :mod:`.training`, :mod:`.card` and :mod:`.recipe`.
"""
from __future__ import annotations

from ..lexicon import Lexicon
from .card import HELD_OUT_NOTE, NOT_COMPARABLE, readme_text
from .data import (
    SPLIT_SEED,
    SUBJ,
    TRAIN_FRACTION,
    TYPE,
    PiecePairs,
    Schemas,
    aux_items,
    find_schemas,
    load_schemas,
    mention_spans,
    piece_pairs,
    span_labels,
    split_data,
)
from .decoding import PairHit, RelationDecoding, Thresholds, best_mentions, one_subject_each, top_spans
from .model import KIND, RelationModel, load_model, save
from .net import LogitAverage, PairHead, RelNet
from .recipe import DEFAULTS, TINY
from .training import dictionary_baseline, encoder_folder, fit, pair_batch, train

__all__ = [
    "DEFAULTS",
    "HELD_OUT_NOTE",
    "KIND",
    "NOT_COMPARABLE",
    "SPLIT_SEED",
    "SUBJ",
    "TINY",
    "TRAIN_FRACTION",
    "TYPE",
    "Lexicon",
    "LogitAverage",
    "PairHead",
    "PairHit",
    "PiecePairs",
    "RelNet",
    "RelationDecoding",
    "RelationModel",
    "Schemas",
    "Thresholds",
    "aux_items",
    "best_mentions",
    "dictionary_baseline",
    "encoder_folder",
    "find_schemas",
    "fit",
    "load_model",
    "load_schemas",
    "mention_spans",
    "one_subject_each",
    "pair_batch",
    "piece_pairs",
    "readme_text",
    "save",
    "span_labels",
    "split_data",
    "top_spans",
    "train",
]
