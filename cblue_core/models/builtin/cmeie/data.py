"""CMeIE's data for training: the split of the dev file, the schemas, the span labels, and the
gold mentions and pairs of each training piece."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ....annotation.validation import schema_types
from ....io.resources import read_schemas, resource_kind
from ....records import Example, Triple
from ....render.mentions import find_all
from ....tasks import TaskSpec, get_task
from .. import common as C
from ..spans import Piece, chunk

SUBJ = "SUBJ"
SPLIT_SEED = 0
TRAIN_FRACTION = 0.8


# Per training piece: gold subject occurrences, gold mention occurrences (``(start, end)``), and
# the predicate ids of each ``(subject start, subject end, object start, object end)`` pair.
PiecePairs = tuple[list[tuple[int, int]], list[tuple[int, int]], dict[tuple[int, int, int, int], set[int]]]


def piece_pairs(text: str, triples: Sequence[Triple], pred_index: dict[str, int], max_span: int
                ) -> PiecePairs:
    """Gold subject occurrences, every gold mention occurrence, and the predicates of each
    (subject occurrence, object occurrence) pair of one training piece."""
    subj: set[tuple[int, int]] = set()
    ment: set[tuple[int, int]] = set()
    pos: dict[tuple[int, int, int, int], set[int]] = {}
    for t in triples:
        k = pred_index.get(t.predicate)
        if k is None or not t.subject or not t.object or max(len(t.subject), len(t.object)) > max_span:
            continue
        so = [(a, a + len(t.subject)) for a in find_all(text, t.subject)]
        oo = [(a, a + len(t.object)) for a in find_all(text, t.object)]
        subj.update(so)
        ment.update(so)
        ment.update(oo)
        for a in so:
            for b in oo:
                if a != b:
                    pos.setdefault(a + b, set()).add(k)
    return sorted(subj), sorted(ment), pos


TYPE = "T:"   # label prefix of object-type labels ("T:症状"); predicates are labels of their own


def mention_spans(ex: Example, lab: dict[str, int], max_span: int) -> list[tuple[int, int, int]]:
    """Every occurrence of every subject (``SUBJ``) and object (its predicate and ``T:<type>``)."""
    spans = set()
    for t in ex.triples:
        for m, k in ((t.subject, lab[SUBJ]), (t.object, lab.get(t.predicate)),
                     (t.object, lab.get(TYPE + t.object_type))):
            if k is None or not m or len(m) > max_span:
                continue
            for s in find_all(ex.text, m):
                spans.add((s, s + len(m), k))
    return sorted(spans)


class Schemas:
    def __init__(self, rows: Sequence[tuple[str, str, str]]):
        self.rows = [tuple(r) for r in rows]
        self.by_pred: dict[str, list[tuple[str, str]]] = {}
        for s, p, o in self.rows:
            self.by_pred.setdefault(p, []).append((s, o))

    @property
    def object_types(self) -> list[str]:
        return sorted(schema_types(self.rows)[1])

    def types(self, predicate: str, object_type: str | None = None) -> tuple[str, str] | None:
        """(subject type, object type) of a predicate: the schema with that object type when
        given, preferring a 疾病 subject (the subject of 98% of the triples)."""
        opts = self.by_pred.get(predicate)
        if not opts:
            return None
        if object_type is not None:
            opts = [pair for pair in opts if pair[1] == object_type] or opts
        for pair in opts:
            if pair[0] == "疾病":
                return pair
        return opts[0]


def find_schemas(data_dir: str | Path, task: TaskSpec) -> Path | None:
    folder = C.task_dir(data_dir, task)
    hits = sorted(p for p in folder.glob("*.json*") if resource_kind(p) == "cmeie_schemas")
    return hits[0] if hits else None


def load_schemas(data_dir: str | Path, task: TaskSpec, train: Sequence[Example]) -> tuple[Schemas, Path | None]:
    """The task's schemas file beside the data, or (none there) the schemas of the training triples."""
    path = find_schemas(data_dir, task)
    rows = ([(s.subject_type, s.predicate, s.object_type) for s in read_schemas(path)]
            if path else sorted({(t.subject_type, t.predicate, t.object_type) for e in train for t in e.triples}))
    return Schemas(rows), path


def span_labels(task: TaskSpec, schemas: Schemas) -> list[str]:
    """The span head's labels: ``SUBJ``, the predicates, ``T:<object type>``."""
    return [SUBJ] + list(task.label_codes) + [TYPE + t for t in schemas.object_types]


def split_data(data_dir: str | Path, task: TaskSpec):
    train_ex, train_path = C.load_split(data_dir, task, "train")
    dev_ex, dev_path = C.load_split(data_dir, task, "dev")
    if train_ex:
        return train_ex, dev_ex, {
            "train": C.data_source(train_path), "eval": C.data_source(dev_path),
            "split": "official-style train file for training, dev file for the score"}
    if not dev_ex:
        raise FileNotFoundError(f"no {task.name} train or dev file under {data_dir}")
    tr_idx, ho_idx = C.seeded_split(len(dev_ex), SPLIT_SEED, TRAIN_FRACTION)
    return [dev_ex[i] for i in tr_idx], [dev_ex[i] for i in ho_idx], {
        "train": f"{C.data_source(dev_path)} records numpy.random.RandomState({SPLIT_SEED}).permutation"
                 f"(n)[:round({TRAIN_FRACTION} n)] ({len(tr_idx)} records)",
        "eval": f"{C.data_source(dev_path)} the other {len(ho_idx)} records (held out)",
        "split": f"no CMeIE train file exists: fixed {int(TRAIN_FRACTION * 100)}/"
                 f"{100 - int(TRAIN_FRACTION * 100)} split of the dev file by a seeded shuffle "
                 f"(seed {SPLIT_SEED}, independent of the training seed); the reported score is on the "
                 "held-out part only and is NOT comparable with the leaderboard",
        "held_out_indices": ho_idx}


def aux_items(data_dir: str | Path, max_chars: int, limit: int | None = None):
    """CMeEE training sentences for the auxiliary head (none when the file is absent)."""
    try:
        ee = get_task("CMeEE")
        ex, path = C.load_split(data_dir, ee, "train")
    except FileNotFoundError:
        return [], [], None
    labels = list(ee.label_codes)
    lab = {l: i + 1 for i, l in enumerate(labels)}
    items: list[Piece] = []
    for e in ex[:limit]:
        sp = [(s.start, s.end, lab[s.type]) for s in e.spans if s.type in lab and 0 <= s.start < s.end]
        items.extend(p for p in chunk(e.text, sp, max_chars) if p[0])
    return items, labels, path
