"""Record codecs: one official record <-> one :class:`Example`, per record shape.

A task names its codec in the registry. ``decode`` raises :class:`RecordError` for structural
problems (missing field, wrong type) and reports annotation-level defects (a mention that is
not the text slice, an unknown label) through ``ctx.warn`` while keeping the record as read.
``encode`` writes the official (submission) form; for an unchanged example it returns the raw
record, so reading then writing gives back the same records.
"""
from __future__ import annotations

from ...tasks import TaskSpec
from .base import Codec, DecodeContext, Record, RecordError
from .dialogue import DialogueGenerationCodec, ImcsCodec, ImcsPredictionCodec, MdcfnpcCodec
from .llm import ClimedbenchCodec, ClimedbenchPredictionCodec, PromptCodec
from .retrieval import RetrievalCodec, RetrievalPredictionCodec
from .text import (
    CausalCodec,
    EntitiesCodec,
    EventsCodec,
    PairLabelCodec,
    SingleLabelCodec,
    SpoCodec,
    TermsCodec,
    TreeCodec,
)

__all__ = ["CODECS", "Codec", "DecodeContext", "Record", "RecordError", "codec_for"]


CODECS: dict[str, Codec] = {
    "entities": EntitiesCodec(),
    "spo": SpoCodec(),
    "terms": TermsCodec(),
    "single_label": SingleLabelCodec(),
    "pair_label": PairLabelCodec(),
    "events": EventsCodec(),
    "imcs": ImcsCodec(),
    "mdcfnpc": MdcfnpcCodec(),
    "retrieval": RetrievalCodec(),
    "dialogue_generation": DialogueGenerationCodec(),
    "tree": TreeCodec(),
    "causal": CausalCodec(),
    "prompt": PromptCodec(),
    "climedbench": ClimedbenchCodec(),
    "imcs_prediction": ImcsPredictionCodec(),
    "retrieval_prediction": RetrievalPredictionCodec(),
    "climedbench_prediction": ClimedbenchPredictionCodec(),
}


def codec_for(task: TaskSpec, predictions: bool = False) -> Codec:
    """The codec for the task's data files, or for its predictions (submission) files."""
    return CODECS[(task.pred_codec or task.codec) if predictions else task.codec]
