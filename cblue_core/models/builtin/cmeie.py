"""CMeIE relation extraction: candidate mentions from a span head, then a pair classifier.

CMeIE has no public training file. Without one, the model trains on a fixed split of the dev
file (a ``RandomState(0)`` permutation: first 80% train, last 20% held out) and reports its
score on the held-out 20% only; that number is **not comparable with the leaderboard** (other
data, a fifth of the size). When a ``CMeIE_train.json`` exists (e.g. the sample data), it is
used for training and the dev file for scoring.

Model, on the character BiLSTM span encoder of :mod:`.spans`:

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
that it has seen 15,000 more medical sentences: the relation data alone is small.
``combined`` is True when no ``。``-separated sentence holds both mentions.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import asdict
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from ...annotation.validation import combined_for, schema_types
from ...evaluation import evaluate
from ...io.resources import read_schemas, resource_kind
from ...records import Example, Triple
from ...render.mentions import find_all
from ...tasks import TaskSpec, get_task
from ..base import ModelCard
from . import common as C
from .spans import (
    Piece,
    PointerHead,
    SpanConfig,
    SpanNet,
    Vocab,
    batch_tensors,
    chunk,
    multilabel_ce,
    multilabel_targets,
    pointer_loss,
    span_scores,
    span_targets,
)

KIND = "span-relation"
SUBJ = "SUBJ"
SPLIT_SEED = 0
TRAIN_FRACTION = 0.8
# What a model trained on the dev split says of its score (card notes, README).
HELD_OUT_NOTE = ("scored on the held-out part of the dev split (see training.split): NOT comparable "
                 "with the leaderboard")
NOT_COMPARABLE = ("> **Not comparable with the CBLUE leaderboard.** No CMeIE train file is public: this "
                  "model trained on 80% of the dev file and is scored on the other 20%.")


class RelNet(SpanNet):
    """SpanNet with a multi-label span head (``labels``), the pair head (``n_predicates``) and
    an optional auxiliary entity head (``aux_labels``, CMeEE types; training only)."""

    def __init__(self, cfg: SpanConfig, n_predicates: int, pair_dim: int,
                 aux_labels: Sequence[str] = (), pair_scores: bool = False):
        super().__init__(cfg)
        self.aux_labels = list(aux_labels)
        d = 2 * cfg.hidden
        self.pair = PairHead(d, pair_dim, n_predicates, len(cfg.labels) if pair_scores else 0)
        if cfg.head != "pointer":
            self.out = nn.Linear(cfg.span_dim, len(cfg.labels))     # sigmoid per label
        if self.aux_labels:
            if cfg.head == "pointer":
                self.aux_pointer = PointerHead(d, cfg.span_dim, len(self.aux_labels), cfg.max_span)
            else:
                self.aux_start = nn.Linear(d, cfg.span_dim)
                self.aux_end = nn.Linear(d, cfg.span_dim)
                self.aux_width = nn.Embedding(cfg.max_span, cfg.span_dim)
                self.aux_out = nn.Linear(cfg.span_dim, len(self.aux_labels) + 1)

    def aux_logits(self, h: torch.Tensor) -> torch.Tensor:
        if self.cfg.head == "pointer":
            return self.aux_pointer(h)
        return span_scores(h, self.aux_start, self.aux_end, self.aux_width, self.aux_out, self.drop,
                           self.cfg.max_span)


class PairHead(nn.Module):
    """Predicate scores of a (subject span, object span) pair: the boundary states of both
    spans, the mean state of the characters between them and a signed log-distance bucket,
    through a two-layer MLP; one sigmoid per predicate (none over 0.5: no relation)."""
    BUCKETS = 12

    def __init__(self, n_in: int, d: int, n_predicates: int, n_span_labels: int = 0):
        super().__init__()
        self.n_predicates = n_predicates
        self.n_span_labels = n_span_labels
        if n_span_labels:     # the span head's scores of both spans, as features
            self.subj_scores = nn.Linear(n_span_labels, d)
            self.obj_scores = nn.Linear(n_span_labels, d)
        self.subj = nn.Linear(2 * n_in, d)
        self.obj = nn.Linear(2 * n_in, d)
        self.ctx = nn.Linear(n_in, d)
        self.dist = nn.Embedding(2 * self.BUCKETS + 1, d)
        self.out = nn.Sequential(nn.GELU(), nn.Linear(d, d), nn.GELU(), nn.Linear(d, n_predicates))

    @classmethod
    def bucket(cls, d: torch.Tensor) -> torch.Tensor:
        b = torch.log2(d.abs().float() + 1).floor().long().clamp(max=cls.BUCKETS)
        return torch.sign(d) * b + cls.BUCKETS

    def forward(self, h: torch.Tensor, pairs: torch.Tensor, span_scores: torch.Tensor | None = None
                ) -> torch.Tensor:
        """h (B, L, n_in); pairs (P, 5) rows ``(b, subj start, subj end, obj start, obj end)``
        (ends exclusive); span_scores (B, L, W, K) the span head's logits (detached: the pair
        loss trains the encoder through ``h`` only) -> (P, n_predicates) logits."""
        b, ss, se, os_, oe = pairs.unbind(1)
        cs = torch.cat([h.new_zeros(h.shape[0], 1, h.shape[2]), h.cumsum(1)], dim=1)
        lo = torch.minimum(se, oe)
        hi = torch.maximum(ss, os_)
        gap = (hi - lo).clamp(min=0)
        between = (cs[b, torch.maximum(hi, lo)] - cs[b, lo]) / gap.clamp(min=1).unsqueeze(1).float()
        x = (self.subj(torch.cat([h[b, ss], h[b, se - 1]], -1))
             + self.obj(torch.cat([h[b, os_], h[b, oe - 1]], -1))
             + self.ctx(between) + self.dist(self.bucket(os_ - ss)))
        if self.n_span_labels:
            if span_scores is None:
                raise ValueError("this pair head scores spans with the span head's logits: pass span_scores")
            sc = span_scores.detach()
            x = x + self.subj_scores(sc[b, ss, se - ss - 1]) + self.obj_scores(sc[b, os_, oe - os_ - 1])
        return self.out(x)


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


class PairHit(NamedTuple):
    """One predicate of one candidate (subject, object) pair, with the scores behind it."""

    subject: str
    predicate: str
    object: str
    score: float                # the pair head's probability of the predicate
    object_type: str | None     # the type the span head prefers among the predicate's schemas
    subject_score: float        # the span head's probabilities of the two candidates
    object_score: float


# (object threshold, subject threshold, pair threshold)
Thresholds = tuple[float, float, float]


class RelationDecoding:
    """The decoding of the CMeIE extractors (this module's and :mod:`.encoder_relations`'s):
    candidates from the span head's probabilities, the predicates of their pairs over
    ``pair_threshold`` (:class:`PairHit`), then triples: each (predicate, object) keeps its best
    subject, types come from the schemas. A subclass gives ``scored(texts)``: per text its hits
    and its candidate subjects and objects (mention -> probability, for display)."""

    max_subjects = 8      # candidates per text (or window), best first (an untrained model finds everything)
    max_objects = 40
    labels: list[str]

    def init_decoding(self, schemas: Schemas, predicates: Sequence[str], threshold: float,
                      subject_threshold: float, pair_threshold: float) -> None:
        self.schemas = schemas
        self.predicates = list(predicates)
        self.threshold, self.subject_threshold, self.pair_threshold = threshold, subject_threshold, pair_threshold
        self.subj_k = self.labels.index(SUBJ)
        self.obj_ks = [k for k, l in enumerate(self.labels) if l != SUBJ]
        self.type_ks = {l[len(TYPE):]: k for k, l in enumerate(self.labels) if l.startswith(TYPE)}
        self.type_names, self.type_cols = list(self.type_ks), list(self.type_ks.values())
        # (n_predicates, object types): the types each predicate's schemas allow
        self.allowed_types = torch.tensor([[o in {t for _, t in schemas.by_pred.get(p, [])} for o in self.type_names]
                                           for p in self.predicates], dtype=torch.bool
                                          ).reshape(len(self.predicates), len(self.type_names))

    @property
    def thresholds(self) -> Thresholds:
        return self.threshold, self.subject_threshold, self.pair_threshold

    def candidates(self, probs: torch.Tensor, n: int
                   ) -> tuple[list[tuple[int, int, float]], list[tuple[int, int, float]]]:
        """Candidate subjects and objects ``(start, end, probability)`` of one text's (L, W, K)
        span probabilities over its first ``n`` positions."""
        S = top_spans(probs[:, :, self.subj_k], n, self.max_subjects, self.subject_threshold)
        O = top_spans(probs[..., self.obj_ks].max(-1).values, n, self.max_objects, self.threshold)
        return S, O

    def pair_hits(self, pairs: Sequence[tuple[tuple[str, float], tuple[str, float]]], pair_probs: torch.Tensor,
                  obj_probs: torch.Tensor) -> list[list[PairHit]]:
        """Per candidate pair, its predicates over ``pair_threshold``: ``pairs`` are ``((subject,
        probability), (object, probability))``, ``pair_probs`` the pair head's (P, n_predicates)
        and ``obj_probs`` the span head's (P, K) probabilities of each object span. The object
        type of a hit is the one the span head prefers among those its predicate's schemas allow
        (tensors: an untrained model may give every pair every predicate)."""
        out: list[list[PairHit]] = [[] for _ in pairs]
        found = (pair_probs > self.pair_threshold).nonzero().tolist()
        if not found:
            return out
        allowed = self.allowed_types                                        # (n_predicates, T)
        tp = obj_probs[:, self.type_cols].unsqueeze(1).expand(-1, allowed.shape[0], -1)
        best = tp.masked_fill(~allowed, -1.0).argmax(-1).tolist() if self.type_cols else None
        some = allowed.any(-1).tolist()
        probs = pair_probs.tolist()
        for r, k in found:
            (subj, ps), (obj, po) = pairs[r]
            otype = self.type_names[best[r][k]] if best is not None and some[k] else None
            out[r].append(PairHit(subj, self.predicates[k], obj, probs[r][k], otype, ps, po))
        return out

    def decode(self, text: str, hits: Iterable[PairHit], thresholds: Thresholds | None = None
               ) -> tuple[list[Triple], list[float]]:
        """The triples of a text and their scores from its hits over ``thresholds`` (default the
        model's: hits found at lower ones give what those would have found)."""
        t_obj, t_subj, t_pair = thresholds or self.thresholds
        best: dict[tuple[str, str, str], tuple[float, str | None]] = {}
        for h in hits:
            key = (h.subject, h.predicate, h.object)
            if (h.score > t_pair and h.subject_score > t_subj and h.object_score > t_obj
                    and h.score > best.get(key, (-1.0,))[0]):
                best[key] = (h.score, h.object_type)
        triples, scores = [], []
        for (subj, pred, obj), (p, otype) in one_subject_each(best):
            types = self.schemas.types(pred, otype)
            if types is not None:
                triples.append(Triple(subj, pred, obj, types[0], types[1], combined_for(text, subj, obj)))
                scores.append(round(p, 4))
        return triples, scores

    def scored(self, texts: Sequence[str]) -> list[tuple[list[PairHit], dict[str, float], dict[str, float]]]:
        raise NotImplementedError

    def extract(self, texts: Sequence[str]) -> list[tuple[list[Triple], dict]]:
        """Per text: its triples, and the candidates and scores behind them (for display)."""
        out = []
        for text, (hits, subjects, objects) in zip(texts, self.scored(texts)):
            triples, scores = self.decode(text, hits)
            out.append((triples, {"triple_scores": scores,
                                  "subjects": [[m, round(p, 4)] for m, p in subjects.items()],
                                  "objects": [[m, round(p, 4)] for m, p in objects.items()]}))
        return out

    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        return [Example(key=ex.key, index=ex.index, text=ex.text, text2=ex.text2, triples=t, meta=m)
                for ex, (t, m) in zip(batch, self.extract([e.text for e in batch]))]


def best_mentions(found: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Mention -> its best probability, best first."""
    best: dict[str, float] = {}
    for m, p in found:
        best[m] = max(p, best.get(m, -1.0))
    return dict(sorted(best.items(), key=lambda kv: -kv[1]))


class RelationModel(RelationDecoding, C.NetPredictor):
    batch_size = 16

    def __init__(self, net: RelNet, vocab: Vocab, schemas: Schemas, card: ModelCard, task: TaskSpec,
                 threshold: float = 0.5, subject_threshold: float | None = None,
                 pair_threshold: float = 0.5):
        C.NetPredictor.__init__(self, net, card, task)
        self.vocab = vocab
        self.init_decoding(schemas, task.label_codes, threshold,
                           threshold if subject_threshold is None else subject_threshold, pair_threshold)

    def scored(self, texts: Sequence[str]) -> list[tuple[list[PairHit], dict[str, float], dict[str, float]]]:
        chars, bis, lengths = batch_tensors(self.vocab, texts)
        with torch.inference_mode():
            h = self.net.encode(chars.to(self.device), bis.to(self.device), lengths)
            logits = self.net.span_logits(h)
            P = torch.sigmoid(logits.float()).cpu()
            rows: list[tuple[int, int, int, int, int]] = []
            spans = []
            for i, text in enumerate(texts):
                S, O = self.candidates(P[i], len(text))
                spans.append((S, O))
                # a mention is never its own object: such pairs are not even scored
                rows.extend((i, a, b, c, d) for a, b, _ in S for c, d, _ in O if text[a:b] != text[c:d])
            probs = (torch.sigmoid(self.net.pair(h, torch.tensor(rows, device=h.device), logits)).float().cpu()
                     if rows else torch.zeros(0, len(self.predicates)))
        hits: list[list[PairHit]] = [[] for _ in texts]
        sp = [({(a, b): p for a, b, p in S}, {(c, d): p for c, d, p in O}) for S, O in spans]
        pairs = [((texts[i][a:b], sp[i][0][a, b]), (texts[i][c:d], sp[i][1][c, d])) for i, a, b, c, d in rows]
        obj_probs = (torch.stack([P[i, c, d - c - 1] for i, _, _, c, d in rows]) if rows
                     else torch.zeros(0, len(self.labels)))
        for (i, *_), found in zip(rows, self.pair_hits(pairs, probs, obj_probs)):
            hits[i] += found
        return [(hits[i], best_mentions((texts[i][a:b], p) for a, b, p in S),
                 best_mentions((texts[i][a:b], p) for a, b, p in O)) for i, (S, O) in enumerate(spans)]


# ---------------------------------------------------------------------- save / load

def save(folder: Path, net: RelNet, vocab: Vocab, schemas: Schemas, threshold: float,
         subject_threshold: float, pair_threshold: float = 0.5) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    # the auxiliary CMeEE head is a training device only: not shipped
    sd = {k: v for k, v in net.state_dict().items() if not k.startswith("aux_")}
    C.save_tensors(folder / "model.safetensors", sd, half=("",))
    pair = {"pair_dim": net.pair.subj.out_features, "n_predicates": net.pair.out[-1].out_features,
            "pair_scores": bool(net.pair.n_span_labels), "pair_threshold": pair_threshold}
    C.write_json(folder / "config.json", {**asdict(net.cfg), "threshold": threshold,
                                          "subject_threshold": subject_threshold, **pair})
    C.write_json(folder / "vocab.json", vocab.to_json())
    C.write_json(folder / "schemas.json", [{"subject_type": s, "predicate": p, "object_type": o}
                                           for s, p, o in schemas.rows])


def load_model(folder: str | Path, device: str = "cpu") -> RelationModel:
    folder = Path(folder)
    raw = C.read_json(folder / "config.json")
    threshold = raw.pop("threshold", 0.5)
    subject_threshold = raw.pop("subject_threshold", threshold)
    pair_threshold = raw.pop("pair_threshold", 0.5)
    if "pair_dim" not in raw:
        raise ValueError(f"{folder}: config.json has no pair head (pair_dim): a CMeIE model from an "
                         "older version; retrain it with `python -m cblue_core train --task CMeIE`")
    n_predicates, pair_dim = raw.pop("n_predicates"), raw.pop("pair_dim")
    pair_scores = raw.pop("pair_scores", DEFAULTS["pair_scores"])
    cfg = SpanConfig(**raw)
    v = C.read_json(folder / "vocab.json")
    net = RelNet(cfg, n_predicates, pair_dim, pair_scores=pair_scores)
    net.load_state_dict(C.load_tensors(folder / "model.safetensors"))
    schemas = Schemas([(r["subject_type"], r["predicate"], r["object_type"])
                       for r in C.read_json(folder / "schemas.json")])
    return RelationModel(net, Vocab(v["chars"], v["bigrams"]), schemas, C.read_card(folder),
                         get_task(cfg.task), threshold, subject_threshold, pair_threshold).to(device)


# ---------------------------------------------------------------------- training

DEFAULTS: dict = {"epochs": 14, "max_chars": 320, "batch_size": 16, "lr": 2e-3, "head": "pointer", "pair_dim": 128,
                      "pair_scores": False, "pair_loss": "mlce", "init_from": "cmeee",
                      "threshold": 0.2, "subject_threshold": 0.3, "pair_threshold": 0.2}
TINY = {"char_dim": 16, "bigram_dim": 8, "hidden": 16, "layers": 1, "span_dim": 16, "max_span": 12, "dropout": 0.0,
            "epochs": 2, "batch_size": 4, "lr": 1e-2, "min_bigram_count": 1, "pair_dim": 8, "init_from": None}


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
            "train": _rel(train_path), "eval": _rel(dev_path),
            "split": "official-style train file for training, dev file for the score"}
    if not dev_ex:
        raise FileNotFoundError(f"no {task.name} train or dev file under {data_dir}")
    tr_idx, ho_idx = C.seeded_split(len(dev_ex), SPLIT_SEED, TRAIN_FRACTION)
    return [dev_ex[i] for i in tr_idx], [dev_ex[i] for i in ho_idx], {
        "train": f"{_rel(dev_path)} records numpy.random.RandomState({SPLIT_SEED}).permutation"
                 f"(n)[:round({TRAIN_FRACTION} n)] ({len(tr_idx)} records)",
        "eval": f"{_rel(dev_path)} the other {len(ho_idx)} records (held out)",
        "split": f"no CMeIE train file exists: fixed {int(TRAIN_FRACTION * 100)}/"
                 f"{100 - int(TRAIN_FRACTION * 100)} split of the dev file by a seeded shuffle "
                 f"(seed {SPLIT_SEED}, independent of the training seed); the reported score is on the "
                 "held-out part only and is NOT comparable with the leaderboard",
        "held_out_indices": ho_idx}


def encoder_folder(name_or_dir: str | Path) -> Path:
    """The folder of a span-encoder model (a folder, or a built-in model's name: ``cmeee``).
    Raises FileNotFoundError (with what to do) when there is none, ValueError for another kind."""
    from ..registry import ModelNotFoundError, resolve
    try:
        info = resolve(str(name_or_dir))
    except ModelNotFoundError as exc:
        raise FileNotFoundError(
            f"init_from: no span-encoder model {str(name_or_dir)!r} ({exc}); the CMeIE model starts "
            "from the CMeEE one: train it first with `python -m cblue_core train --task CMeEE "
            "--data DIR --out models/cmeee`") from None
    if info.kind != "span-encoder" or info.problem is not None:
        raise ValueError(f"init_from: {name_or_dir} is a {info.kind} model, not a usable span encoder"
                         + (f" ({info.problem})" if info.problem else ""))
    return Path(info.path)


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


def fit(net: RelNet, vocab: Vocab, items, aux, cfg: SpanConfig, out_dir: Path, *, seed: int,
        resume: bool, progress: bool, max_minutes: float, pos_weight: float, aux_per_epoch: int,
        pair_loss: str = "mlce", pair_pos_weight: float = 1.0,
        max_steps: int | None = None) -> C.TrainState:
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda ep: max(0.1, 1 - ep / max(cfg.epochs, 1)))
    K = len(cfg.labels)
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.full((K,), pos_weight), reduction="none")
    ce = nn.CrossEntropyLoss(ignore_index=-100)
    pair_bce = nn.BCEWithLogitsLoss(reduction="none",
                                    pos_weight=torch.full((net.pair.n_predicates,), pair_pos_weight))
    subj_k = cfg.labels.index(SUBJ)
    obj_ks = [k for k, l in enumerate(cfg.labels) if l != SUBJ]
    step_losses: list[float] = []
    order = sorted(range(len(items)), key=lambda i: len(items[i][0]))
    main_batches = [order[b:b + cfg.batch_size] for b in range(0, len(order), cfg.batch_size)]

    def run_epoch(ep: int) -> float:
        net.train()
        jobs = [("main", b) for b in main_batches]
        if aux and aux_per_epoch:
            pick = torch.randperm(len(aux))[:aux_per_epoch].tolist()
            pick.sort(key=lambda i: len(aux[i][0]))
            jobs += [("aux", pick[b:b + 32]) for b in range(0, len(pick), 32)]
        perm = torch.randperm(len(jobs)).tolist()
        total, n = 0.0, 0
        bar = C.progress_bar(total=len(jobs), enabled=progress, desc=f"epoch {ep + 1}", leave=False)
        for j in perm:
            if max_steps is not None and len(step_losses) >= max_steps:
                break
            kind, idx = jobs[j]
            src = items if kind == "main" else aux
            texts = [src[i][0] for i in idx]
            chars, bis, lengths = batch_tensors(vocab, texts)
            h = net.encode(chars, bis, lengths)
            L = chars.shape[1]
            lens = [len(t) for t in texts]
            if kind == "main":
                y, mask = multilabel_targets([src[i][1] for i in idx], lens, L, cfg.max_span, K)
                scores = net.span_logits(h)
                if cfg.head == "pointer":
                    loss = pointer_loss(scores, y, mask)
                else:
                    lo = bce(scores, y).sum(-1)
                    loss = (lo * mask).sum() / mask.sum().clamp(min=1)
                rows, tgt = pair_batch(scores.detach(), [src[i][2] for i in idx], lens,
                                       subj_k, obj_ks, net.pair.n_predicates)
                if rows is not None:
                    pl = net.pair(h, rows, scores)
                    loss = loss + (multilabel_ce(pl, tgt).mean() if pair_loss == "mlce"
                                   else pair_bce(pl, tgt).sum(-1).mean())
            elif cfg.head == "pointer":
                y, mask = multilabel_targets([[(s, e, k - 1) for s, e, k in src[i][1]] for i in idx],
                                             lens, L, cfg.max_span, len(net.aux_labels))
                loss = pointer_loss(net.aux_logits(h), y, mask)
            else:
                y = span_targets([src[i][1] for i in idx], lens, L, cfg.max_span)
                lg = net.aux_logits(h)
                loss = ce(lg.reshape(-1, lg.shape[-1]), y.reshape(-1))
            C.optimizer_step(net, opt, loss, clip=5.0)
            if kind == "main":
                total += loss.item()
                n += 1
                step_losses.append(loss.item())
            bar.update(1)
        bar.close()
        return total / max(n, 1)

    return C.train_epochs(net, opt, cfg.epochs, run_epoch, out_dir, step_losses, max_steps=max_steps,
                          resume=resume, max_minutes=max_minutes, seed=seed, progress=progress,
                          scheduler=sched)


def one_subject_each(scored: dict[tuple[str, str, str], tuple]) -> list:
    """Best first, and only the best-scoring subject of each (predicate, object): the pair head
    scores pairs independently, so an object would otherwise join every subject of a text, while
    93% of the training triples' (predicate, object) have a single subject in their text."""
    seen, out = set(), []
    for (subj, pred, obj), v in sorted(scored.items(), key=lambda kv: -kv[1][0]):
        if (pred, obj) not in seen:
            seen.add((pred, obj))
            out.append(((subj, pred, obj), v))
    return out


def top_spans(scores: torch.Tensor, n: int, k: int, threshold: float | None = None,
              exclude: AbstractSet[tuple[int, int]] = frozenset()) -> list[tuple[int, int, float]]:
    """The ``k`` best spans ``(start, end, score)`` of one text's (L, W) span scores, those
    running past its ``n`` characters and those in ``exclude`` left out; only scores over
    ``threshold`` when one is given."""
    L, W = scores.shape
    end = torch.arange(L).unsqueeze(1) + torch.arange(W).unsqueeze(0) + 1
    sc = scores.masked_fill(end > n, float("-inf")).flatten()
    if threshold is not None:
        sc = sc.masked_fill(sc <= threshold, float("-inf"))
    vals, idx = sc.topk(min(k + len(exclude), sc.numel()))
    out: list[tuple[int, int, float]] = []
    for v, j in zip(vals.tolist(), idx.tolist()):
        if v == float("-inf") or len(out) >= k:
            break
        span = (j // W, j // W + j % W + 1)
        if span not in exclude:
            out.append((span[0], span[1], v))
    return out


def pair_batch(scores: torch.Tensor, infos, lens: Sequence[int], subj_k: int, obj_ks: list[int],
               n_predicates: int, hard_subjects: int = 2, hard_objects: int = 8, max_pairs: int = 160):
    """Training pairs of a batch: gold subjects and mentions plus the best-scoring wrong spans,
    so that the pair head learns to reject the mention finder's mistakes it will meet at
    prediction time. Returns ``(rows (P, 5), targets (P, n_predicates))`` or ``(None, None)``."""
    obj_scores = scores[..., obj_ks].max(-1).values
    rows, targets = [], []
    for i, (subj, ment, pos) in enumerate(infos):
        if not subj:
            continue
        n = lens[i]
        S = list(subj) + [(a, b) for a, b, _ in top_spans(scores[i, :, :, subj_k], n, hard_subjects,
                                                          exclude=set(subj))]
        O = list(ment) + [(a, b) for a, b, _ in top_spans(obj_scores[i], n, hard_objects,
                                                          exclude=set(ment))]
        cand = [(a, b) for a in S for b in O if a != b]
        neg = [c for c in cand if c[0] + c[1] not in pos]
        if len(cand) > max_pairs and neg:
            keep = max(max_pairs - (len(cand) - len(neg)), 0)
            chosen = set(torch.randperm(len(neg))[:keep].tolist())
            neg_set = {neg[j] for j in chosen}
            cand = [c for c in cand if c[0] + c[1] in pos or c in neg_set]
        for a, b in cand:
            rows.append((i, a[0], a[1], b[0], b[1]))
            t = [0.0] * n_predicates
            for k in pos.get(a + b, ()):
                t[k] = 1.0
            targets.append(t)
    if not rows:
        return None, None
    return torch.tensor(rows), torch.tensor(targets)


def dictionary_baseline(task: TaskSpec, train: Sequence[Example], held: Sequence[Example]) -> dict:
    """Every training triple whose subject and object both occur in the text."""
    known = Counter((t.subject, t.predicate, t.object, t.subject_type, t.object_type)
                    for e in train for t in e.triples)
    by_subj: dict[str, list] = {}
    for k in known:
        by_subj.setdefault(k[0], []).append(k)
    pred = []
    for e in held:
        tr = [Triple(s, p, o, st, ot, combined_for(e.text, s, o))
              for subj, ks in by_subj.items() if subj in e.text
              for s, p, o, st, ot in ks if o in e.text]
        pred.append(Example(key=e.key, index=e.index, text=e.text, triples=tr))
    ev = evaluate(task, list(held), pred, n_boot=200)
    return {"train_triple_dictionary": {
        "description": "every triple of the training part whose subject and object both occur in the text",
        "metrics": ev.metrics}}


def train(task_name: str, data_dir: str | Path, out_dir: str | Path, *, seed: int = 0,
          resume: bool = False, progress: bool = True, max_minutes: float = 30,
          overrides: dict | None = None, tried: list[str] | None = None) -> ModelCard:
    threads, task, out_dir, t0 = C.start_training(task_name, out_dir)
    train_ex, held_ex, split_info = split_data(data_dir, task)
    schemas, schema_path = load_schemas(data_dir, task, train_ex)
    params = {**DEFAULTS, **(overrides or {})}
    pos_weight = params.pop("pos_weight", 1.0)
    threshold = params.pop("threshold", 0.5)
    subject_threshold = params.pop("subject_threshold", threshold)
    aux_per_epoch = params.pop("aux_per_epoch", 3000)
    use_aux = params.pop("aux", True)
    # DEFAULTS holds every one of these: it is the only place their shipped values are written
    init_from = params.pop("init_from")
    pair_dim = params.pop("pair_dim")
    pair_scores = params.pop("pair_scores")
    pair_threshold = params.pop("pair_threshold")
    pair_loss = params.pop("pair_loss")
    pair_pos_weight = params.pop("pair_pos_weight", 1.0)
    cfg = SpanConfig(task=task.name, labels=span_labels(task, schemas), **params)
    lab = {l: i for i, l in enumerate(cfg.labels)}
    aux, aux_labels, aux_path = (aux_items(data_dir, cfg.max_chars) if use_aux and aux_per_epoch
                                 else ([], [], None))
    init = None
    if init_from:                       # start from a trained span-encoder (CMeEE) model
        from .spans import load_net
        init_net, vocab = load_net(encoder_folder(init_from))
        for k in ("char_dim", "bigram_dim", "hidden", "layers", "span_dim", "max_span", "head"):
            setattr(cfg, k, getattr(init_net.cfg, k))
        init = init_net.state_dict()
    else:
        vocab = Vocab.build([e.text for e in train_ex] + [a[0] for a in aux], cfg.min_bigram_count,
                            cfg.max_bigrams)
    cfg.vocab_size, cfg.bigram_size = len(vocab.chars), len(vocab.bigrams)
    pred_index = {p: i for i, p in enumerate(task.label_codes)}
    items: list[tuple[str, list[tuple[int, int, int]], PiecePairs]] = []
    for e in train_ex:
        items.extend((t, sp, piece_pairs(t, e.triples, pred_index, cfg.max_span))
                     for t, sp in chunk(e.text, mention_spans(e, lab, cfg.max_span), cfg.max_chars) if t)
    C.set_seed(seed)
    net = RelNet(cfg, len(task.label_codes), pair_dim, aux_labels, pair_scores)
    if init is not None:
        own = net.state_dict()
        enc = {k: v for k, v in init.items() if k.split(".")[0] in ("char", "bigram", "lstm")}
        if aux_labels and list(aux_labels) == list(init_net.cfg.labels):
            enc.update({"aux_" + k: v for k, v in init.items() if k.startswith("pointer.")
                        and "aux_" + k in own})
        net.load_state_dict(enc, strict=False)
    state = fit(net, vocab, items, aux, cfg, out_dir, seed=seed, resume=resume, progress=progress,
                max_minutes=max_minutes, pos_weight=pos_weight, aux_per_epoch=aux_per_epoch,
                pair_loss=pair_loss, pair_pos_weight=pair_pos_weight)
    save(out_dir, net, vocab, schemas, threshold, subject_threshold, pair_threshold)
    net.load_state_dict(C.load_tensors(out_dir / "model.safetensors"), strict=False)  # as shipped
    card = ModelCard(
        name=out_dir.name, task=task.name, kind=KIND, labels=list(task.label_codes),
        description=(f"CMeIE extractor: a multi-label span head (SUBJ, {len(task.label_codes)} "
                     f"predicates and {len(schemas.object_types)} object types, spans up to "
                     f"{cfg.max_span} characters) proposes subjects and objects, and a pair head "
                     f"(dimension {pair_dim}) scores every predicate for each (subject, object) pair; "
                     f"{cfg.layers}-layer character BiLSTM (hidden {cfg.hidden})"
                     + (f" initialised from the {Path(init_from).name} entity model" if init_from else
                        " trained from scratch")
                     + (", with an auxiliary CMeEE entity head" if aux else "")
                     + f"; types from the {len(schemas.rows)} schemas."))
    summary, base = {}, {}
    if held_ex:
        model = RelationModel(net, vocab, schemas, card, task, threshold, subject_threshold,
                              pair_threshold)
        pred = model.predict(held_ex)
        summary = evaluate(task, held_ex, pred).summary()
        if "held_out_indices" in split_info:
            summary["notes"] = list(summary.get("notes", [])) + [HELD_OUT_NOTE]
        base = dictionary_baseline(task, train_ex, held_ex)
        gold_comb = [(t.combined, combined_for(e.text, t.subject, t.object)) for e in held_ex for t in e.triples
                     if t.combined is not None]
        if gold_comb:
            summary.setdefault("extra", {})["combined_rule_agreement_with_gold"] = round(
                sum(a == b for a, b in gold_comb) / len(gold_comb), 4)
    card.training = {
        "data": {"train": split_info["train"], "eval": split_info["eval"],
                 "train_examples": len(train_ex), "eval_examples": len(held_ex),
                 "train_pieces": len(items), "schemas": schema_path.name if schema_path else None,
                 "auxiliary": (f"{_rel(aux_path)} ({len(aux)} pieces, {aux_per_epoch} sampled per epoch)"
                               if aux else None)},
        "split": split_info["split"],
        "held_out_indices": split_info.get("held_out_indices"),
        "command": C.command_line(task.name, data_dir, out_dir, seed, threads),
        "seed": seed, "epochs": state["epoch"], "losses": [round(v, 5) for v in state["losses"]],
        "stopped_early": state["stopped_early"], "time_s": round(state["time_s"], 1),
        "total_time_s": round(time.perf_counter() - t0, 1),
        "hyperparameters": {**{k: v for k, v in asdict(cfg).items() if k not in ("labels", "task")},
                            "pos_weight": pos_weight, "threshold": threshold,
                            "subject_threshold": subject_threshold, "init_from": init_from,
                            "pair_dim": pair_dim, "pair_scores": pair_scores, "pair_loss": pair_loss,
                            "pair_pos_weight": pair_pos_weight,
                            "pair_threshold": pair_threshold,
                            "aux_per_epoch": aux_per_epoch if aux else 0},
        "selection": "hyperparameters chosen by measurement on the held-out part (there is no "
                     "other labelled CMeIE data), so its score is slightly optimistic",
        "tried": tried or [],
        "threads": threads,
    }
    supervised, sources = list(train_ex), [f"{split_info['train']}"]
    if aux or init_from:      # the auxiliary head and the cmeee encoder both learnt CMeEE's labels
        ee_train, ee_path = C.load_split(data_dir, get_task("CMeEE"), "train")
        supervised += ee_train
        sources.append(str(_rel(ee_path)))
    C.record_training_data(out_dir, card, supervised, sources=sources)
    card.dev_metrics = summary
    card.baselines = base
    card.extra = {"chars": cfg.vocab_size, "bigrams": cfg.bigram_size,
                  "not_comparable_with_leaderboard": "held_out_indices" in split_info,
                  "weights_dtype": "float16 on disk (dev predictions identical to float32), float32 in memory"}
    if not state["stopped_early"]:         # a run cut short keeps its checkpoint for --resume
        C.Checkpoint(out_dir).clear()
    return C.finish_card(out_dir, card, readme_text(card))


def _rel(path: Path | None) -> str | None:
    return "/".join(path.parts[-2:]) if path is not None else None


def readme_text(card: ModelCard) -> str:
    tr = card.training
    d = tr["data"]
    dev = C.fmt_metric(card.dev_metrics) if card.dev_metrics else "not measured"
    base = "; ".join(f"{k} ({v['description']}): F1 {v['metrics']['f1']:.4f}"
                     for k, v in card.baselines.items()) or "n/a"
    tried = "\n".join(f"- {t}" for t in tr.get("tried", [])) or "- (not recorded)"
    warn = f"\n{NOT_COMPARABLE}\n" if card.extra.get("not_comparable_with_leaderboard") else ""
    return f"""# {card.name}: {card.task} ({card.kind})
{warn}
**Task.** {get_task(card.task).description}.

**Architecture.** {card.description}

**Data.** Train: {d['train']}. Scored on: {d['eval']}. Split: {tr['split']}. Schemas:
`{d['schemas']}`. Auxiliary entity data: {d['auxiliary'] or 'none'}. Scored with CBLUE Studio's
evaluator (micro-F1 over normalized (subject, predicate, object), 95% bootstrap interval).

**Training.** `{tr['command']}`; seed {tr['seed']}, {tr['epochs']} epochs, {tr['time_s']} s on
{tr['threads']} CPU thread(s). {tr['selection']}.

**Held-out score.** {dev}.

**Baseline.** {base}.

**What was tried.**
{tried}

**Limitations.** Trained on about 2,900 texts: rare predicates (病理分型, 相关（导致）, 发病部位 ...)
are seldom found; mentions longer than {card.training['hyperparameters']['max_span']} characters
are never proposed; ``combined`` follows the rule of the code (no `。`-separated sentence holds
both mentions), which agrees with the gold flag on about
{card.dev_metrics.get('extra', {}).get('combined_rule_agreement_with_gold', 'n/a')} of the
held-out triples (the flag is not scored). Research use only; not for clinical decisions.
"""
