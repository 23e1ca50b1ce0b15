"""Self-training: CMeEE's training sentences, labelled with triples by a teacher CMeIE model.

The relation data is small (about 2,900 texts), while CMeEE's 15,000 training sentences come
from the same kind of textbook prose and already pass through the network for the auxiliary
entity head. With a ``teacher`` (a trained CMeIE model) each of those sentences also carries the
teacher's triples, and its span and pair heads learn from them as from a training record (with
weight ``pseudo_weight``).

Two guards keep the score honest: a sentence that shares a run of :data:`WINDOW` characters with
any CMeIE text of the run (training or scored) is left out (CMeEE and CMeIE quote the same
books), and a teacher must declare the records it learnt from, none of them scored here.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from ....records import Example
from ...provenance import overlapping, read_training_records
from ...registry import ModelNotFoundError, resolve, weights_sha1
from ..ngram import char_ngrams
from ..spans import Piece
from .data import PiecePairs, mention_spans, piece_pairs
from .model import KIND, RelationModel, load_model

WINDOW = 20


class TeacherLabels(NamedTuple):
    """The sentences kept, their teacher labels (span-head spans, pairs), and what the card says."""
    pieces: list[Piece]
    labels: list[tuple[list[tuple[int, int, int]], PiecePairs]]
    info: dict


def load_teacher(name_or_dir: str | Path, scored: Sequence[Example], own: frozenset[str] = frozenset()
                 ) -> tuple[RelationModel, Path, frozenset[str]]:
    """The teacher model, its folder and the fingerprints of its training records. Refused
    (ValueError) when it is not a CMeIE model (FileNotFoundError when there is none), declares no training records, or learnt from a
    record this run scores that the student does not learn from itself (``own``: the student's
    fingerprints; a CMeIE text that is also a CMeEE training sentence is learnt by both, for its
    entities, and the teacher passes on nothing more of it)."""
    try:
        info = resolve(str(name_or_dir))
    except ModelNotFoundError as exc:
        raise FileNotFoundError(f"teacher: no CMeIE model {str(name_or_dir)!r} ({exc}); train one without "
                                "a teacher first") from None
    if info.kind != KIND or info.problem is not None:
        raise ValueError(f"teacher: {name_or_dir} is a {info.kind} model, not a usable CMeIE model"
                         + (f" ({info.problem})" if info.problem else ""))
    folder = Path(info.path)
    records = read_training_records(folder)
    if records is None:
        raise ValueError(f"teacher: {folder} does not declare the records it learnt from "
                         "(training_records.sha1.gz), so it may have seen the records this run scores")
    seen = overlapping(scored, records - own)
    if seen:
        raise ValueError(f"teacher: {folder} learnt from {len(seen)} of the {len(scored)} records this run "
                         f"scores (the first at position {seen[0]}); its labels would leak them")
    return load_model(folder), folder, records


def unseen(pieces: Sequence[Piece], texts: Sequence[str], window: int = WINDOW) -> list[int]:
    """Positions of the pieces that share no ``window``-character run with any of ``texts`` (a
    piece shorter than that: that it is in none of them)."""
    joined = "\n".join(texts)      # a run across the separator holds "\n", which no piece has
    runs = set(char_ngrams(joined, (window,)))
    return [i for i, (text, _) in enumerate(pieces)
            if not (runs.intersection(char_ngrams(text, (window,))) if len(text) >= window else text in joined)]


def teacher_labels(teacher: RelationModel, pieces: Sequence[Piece], lab: dict[str, int],
                   pred_index: dict[str, int], max_span: int) -> list[tuple[list[tuple[int, int, int]], PiecePairs]]:
    """Per piece, the span-head targets and the pairs of the teacher's triples."""
    found = teacher.predict([Example(key=str(i), index=i, text=p[0]) for i, p in enumerate(pieces)])
    return [(mention_spans(ex, lab, max_span), piece_pairs(ex.text, ex.triples, pred_index, max_span))
            for ex in found]


def label_pieces(teacher_name: str | Path, pieces: Sequence[Piece], run_examples: Sequence[Example],
                 scored: Sequence[Example], own: frozenset[str], lab: dict[str, int], pred_index: dict[str, int],
                 max_span: int) -> tuple[TeacherLabels, frozenset[str]]:
    """The auxiliary pieces that share no run with ``run_examples``' texts, labelled by the teacher,
    and the teacher's training-record fingerprints (the student learnt from them too)."""
    teacher, folder, records = load_teacher(teacher_name, scored, own)
    keep = unseen(pieces, [e.text for e in run_examples])
    kept = [pieces[i] for i in keep]
    labels = teacher_labels(teacher, kept, lab, pred_index, max_span)
    info = {"model": str(teacher_name), "weights_sha1": weights_sha1(folder),
            "dev_metrics": teacher.card.dev_metrics.get("metrics", {}) if teacher.card.dev_metrics else {},
            "sentences": len(kept), "left_out_sharing_text": len(pieces) - len(kept),
            "window": WINDOW, "pairs": sum(len(pairs) for _, (_, _, pairs) in labels),
            "sentences_with_pairs": sum(1 for _, (_, _, pairs) in labels if pairs)}
    return TeacherLabels(kept, labels, info), records
