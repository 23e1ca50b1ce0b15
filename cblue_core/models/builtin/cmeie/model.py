"""The CMeIE extractor as shipped: its predictor, and its folder saved and loaded."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import torch

from ....tasks import TaskSpec, get_task
from ...base import ModelCard
from .. import common as C
from ..lexicon import Lexicon
from ..spans import SpanConfig, Vocab, batch_tensors
from .data import Schemas
from .decoding import PairHit, RelationDecoding, best_mentions
from .net import LogitAverage, RelNet
from .recipe import DEFAULTS

KIND = "span-relation"


class RelationModel(RelationDecoding, C.NetPredictor):
    batch_size = 16

    def __init__(self, net: RelNet | LogitAverage, vocab: Vocab, schemas: Schemas, card: ModelCard, task: TaskSpec,
                 threshold: float = 0.5, subject_threshold: float | None = None,
                 pair_threshold: float = 0.5, lexicon: Lexicon | None = None):
        C.NetPredictor.__init__(self, net, card, task)
        self.vocab = vocab
        if bool(net.cfg.lexicon_features) != (lexicon is not None) or (
                lexicon is not None and lexicon.n_features != net.cfg.lexicon_features):
            raise ValueError(f"the network reads {net.cfg.lexicon_features} lexicon features; the lexicon "
                             f"gives {lexicon.n_features if lexicon else 0}")
        self.lexicon = lexicon
        self.init_decoding(schemas, task.label_codes, threshold,
                           threshold if subject_threshold is None else subject_threshold, pair_threshold)

    def scored(self, texts: Sequence[str]) -> list[tuple[list[PairHit], dict[str, float], dict[str, float]]]:
        chars, bis, lengths = batch_tensors(self.vocab, texts)
        lex = (self.lexicon.features(texts, chars.shape[1]).to(self.device) if self.lexicon is not None
               else None)
        with torch.inference_mode():
            h = self.net.encode(chars.to(self.device), bis.to(self.device), lengths, lex)
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

def save(folder: Path, net: RelNet | LogitAverage, vocab: Vocab, schemas: Schemas, threshold: float,
         subject_threshold: float, pair_threshold: float = 0.5, lexicon: Lexicon | None = None) -> None:
    """The folder of a network, or of a seed ensemble (``members`` in config.json; the weights
    of member ``i`` under ``nets.<i>.`` in the one weights file), with its lexicon
    (``lexicon.json``) when it reads one."""
    folder.mkdir(parents=True, exist_ok=True)
    # the auxiliary CMeEE head is a training device only: not shipped
    sd = {k: v for k, v in net.state_dict().items() if not any(p.startswith("aux_") for p in k.split("."))}
    C.save_tensors(folder / "model.safetensors", sd, half=("",))
    one = net.first if isinstance(net, LogitAverage) else net
    pair = {"pair_dim": one.pair.subj.out_features, "n_predicates": one.pair.out[-1].out_features,
            "pair_scores": bool(one.pair.n_span_labels), "pair_threshold": pair_threshold}
    members = {"members": len(net.nets)} if isinstance(net, LogitAverage) else {}
    C.write_json(folder / "config.json", {**asdict(one.cfg), "threshold": threshold,
                                          "subject_threshold": subject_threshold, **pair, **members})
    C.write_json(folder / "vocab.json", vocab.to_json())
    if lexicon is not None:
        C.write_json(folder / "lexicon.json", lexicon.to_json())
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
    members = raw.pop("members", None)
    cfg = SpanConfig(**raw)
    v = C.read_json(folder / "vocab.json")
    net: RelNet | LogitAverage
    if members is None:
        net = RelNet(cfg, n_predicates, pair_dim, pair_scores=pair_scores)
    else:
        net = LogitAverage([RelNet(cfg, n_predicates, pair_dim, pair_scores=pair_scores) for _ in range(members)])
    net.load_state_dict(C.load_tensors(folder / "model.safetensors"))
    schemas = Schemas([(r["subject_type"], r["predicate"], r["object_type"])
                       for r in C.read_json(folder / "schemas.json")])
    lexicon = Lexicon.from_json(C.read_json(folder / "lexicon.json")) if cfg.lexicon_features else None
    return RelationModel(net, Vocab(v["chars"], v["bigrams"]), schemas, C.read_card(folder),
                         get_task(cfg.task), threshold, subject_threshold, pair_threshold, lexicon).to(device)
