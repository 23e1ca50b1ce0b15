"""The CMeIE lexicon's training side: the gazetteer of the training records' subjects and
objects and of CMeEE's entities, with each training text's leave-one-out features (the
gazetteer itself: :mod:`..lexicon`)."""
from __future__ import annotations

from collections.abc import Sequence

from ..lexicon import Lexicon, LexiconBuilder


def training_lexicon(records: Sequence, item_records: Sequence[int], item_texts: Sequence[str],
                     aux: Sequence[tuple[str, Sequence[tuple[int, int, int]]]], aux_labels: Sequence[str],
                     max_len: int) -> tuple[Lexicon, tuple[list, list]]:
    """The lexicon of the CMeIE training records' subjects and objects (classes ``CMeIE subject
    <type>``, ``CMeIE object <type>``) and of the auxiliary CMeEE pieces' entities (``CMeEE
    <type>``; label ids from 1 as :func:`.data.aux_items` gives them), with the leave-one-out
    features of each main item (``item_records[i]``: its record) and each auxiliary piece."""
    b = LexiconBuilder(max_len)
    rec_terms = [b.add(m for t in e.triples for m in ((t.subject, f"CMeIE subject {t.subject_type}"),
                                                      (t.object, f"CMeIE object {t.object_type}")))
                 for e in records]
    aux_terms = [b.add((text[s:e], f"CMeEE {aux_labels[k - 1]}") for s, e, k in spans) for text, spans in aux]
    lexicon = b.lexicon()
    own = [b.own_only(t) for t in rec_terms]
    main_ids = [lexicon.feature_ids(text, own[r]) for text, r in zip(item_texts, item_records)]
    aux_ids = [lexicon.feature_ids(text, b.own_only(t)) for (text, _), t in zip(aux, aux_terms)]
    return lexicon, (main_ids, aux_ids)
