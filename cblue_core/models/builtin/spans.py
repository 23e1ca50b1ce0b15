"""Span-based nested NER trained from scratch (CMeEE; also the mention finder of CMeIE).

Encoder: character embeddings (plus character-bigram embeddings) -> BiLSTM. Every span of at
most ``max_span`` characters gets ``gelu(start(h_i) + end(h_j) + width(j - i))`` and a linear
layer scores "no entity" and each type, so nested entities are predicted as separate spans
(no BIO tagging, which would flatten them). Decoding keeps every span whose best class is a
type, then drops the weaker of two crossing (overlapping, not nested) spans.

Characters are normalized one by one (NFKC, lower case, one character in, one out), so
predicted offsets are offsets into the original text.
"""
from __future__ import annotations

import time
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ...records import Example, Span
from ...runs.evaluation import evaluate
from ...tasks import TaskSpec, get_task
from ..base import ModelCard
from . import common as C
from .lexicon import MIN_LEN, Lexicon

KIND = "span-encoder"
PAD, UNK = 0, 1


def norm_char(c: str) -> str:
    n = unicodedata.normalize("NFKC", c).lower()
    n = n if len(n) == 1 else c
    return "0" if n.isdigit() else n


def norm_chars(text: str) -> list[str]:
    return [norm_char(c) for c in text]


@dataclass
class SpanConfig:
    task: str
    labels: list[str]
    char_dim: int = 128
    bigram_dim: int = 32
    hidden: int = 128
    layers: int = 2
    span_dim: int = 64
    max_span: int = 25
    head: str = "mlp"             # "mlp": softmax over none + types; "pointer": GlobalPointer-style
    dropout: float = 0.3
    epochs: int = 10
    batch_size: int = 32
    lr: float = 2e-3
    max_chars: int = 160
    min_bigram_count: int = 2
    max_bigrams: int = 40000
    vocab_size: int = 2
    bigram_size: int = 2
    precision: str = "fp32"       # of training: common.PRECISIONS (the BiLSTM under autocast)
    lexicon_features: int = 0     # per-character gazetteer features added to the character embedding

    def __post_init__(self) -> None:
        C.check_precision(self.precision)


class BiLSTM(nn.Module):
    """A stacked bidirectional LSTM that is exact on right-padded batches without packing.

    Each layer runs one forward LSTM on the batch and one on every sequence reversed within its
    own length, so padding only ever follows the real characters of either direction (packed
    sequences give the same result but their backward pass is several times slower on CPU).
    """

    def __init__(self, n_in: int, hidden: int, layers: int, dropout: float):
        super().__init__()
        self.fwd = nn.ModuleList()
        self.bwd = nn.ModuleList()
        for i in range(layers):
            d = n_in if i == 0 else 2 * hidden
            self.fwd.append(nn.LSTM(d, hidden, batch_first=True))
            self.bwd.append(nn.LSTM(d, hidden, batch_first=True))
        self.drop = nn.Dropout(dropout)

    @staticmethod
    def reverse_index(lengths: torch.Tensor, L: int) -> torch.Tensor:
        t = torch.arange(L).unsqueeze(0)
        n = lengths.unsqueeze(1)
        return torch.where(t < n, n - 1 - t, t)                              # (B, L)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        _B, L, _ = x.shape
        rev = self.reverse_index(lengths.cpu(), L).to(x.device)
        for i, (f, b) in enumerate(zip(self.fwd, self.bwd)):
            if i:
                x = self.drop(x)
            hf, _ = f(x)
            xr = torch.gather(x, 1, rev.unsqueeze(-1).expand(-1, -1, x.shape[-1]))
            hb, _ = b(xr)
            hb = torch.gather(hb, 1, rev.unsqueeze(-1).expand(-1, -1, hb.shape[-1]))
            x = torch.cat([hf, hb], dim=-1)
        return x


class SpanNet(nn.Module):
    def __init__(self, cfg: SpanConfig):
        super().__init__()
        self.cfg = cfg
        self.char = nn.Embedding(cfg.vocab_size, cfg.char_dim, padding_idx=PAD)
        n_in = cfg.char_dim
        if cfg.bigram_dim:
            self.bigram = nn.Embedding(cfg.bigram_size, cfg.bigram_dim, padding_idx=PAD)
            n_in += cfg.bigram_dim
        if cfg.lexicon_features:
            # zero at the start: a network initialised from one without a lexicon begins as it was
            self.lexicon = nn.Linear(cfg.lexicon_features, cfg.char_dim, bias=False)
            nn.init.zeros_(self.lexicon.weight)
        self.drop = nn.Dropout(cfg.dropout)
        self.lstm = BiLSTM(n_in, cfg.hidden, cfg.layers, cfg.dropout)
        if cfg.head == "pointer":
            self.pointer = PointerHead(2 * cfg.hidden, cfg.span_dim, len(cfg.labels), cfg.max_span)
        else:
            self.start = nn.Linear(2 * cfg.hidden, cfg.span_dim)
            self.end = nn.Linear(2 * cfg.hidden, cfg.span_dim)
            self.width = nn.Embedding(cfg.max_span, cfg.span_dim)
            self.out = nn.Linear(cfg.span_dim, len(cfg.labels) + 1)

    def encode(self, chars: torch.Tensor, bigrams: torch.Tensor, lengths: torch.Tensor,
               lexicon: torch.Tensor | None = None) -> torch.Tensor:
        """(B, L, 2 hidden) states; ``lexicon`` the (B, L, lexicon_features) gazetteer features,
        required when the network has them."""
        x = self.char(chars)
        if self.cfg.lexicon_features:
            if lexicon is None:
                raise ValueError("this network reads lexicon features: pass lexicon")
            x = x + self.lexicon(lexicon.to(x.dtype))
        if self.cfg.bigram_dim:
            x = torch.cat([x, self.bigram(bigrams)], dim=-1)
        return self.drop(self.lstm(self.drop(x), lengths))

    def span_logits(self, h: torch.Tensor) -> torch.Tensor:
        """Scores of the span starting at i with width w + 1: (B, L, W, K+1) softmax logits
        (class 0 = no entity) for the MLP head, (B, L, W, K) per-type scores (> 0: entity) for
        the pointer head."""
        if self.cfg.head == "pointer":
            return self.pointer(h)
        return span_scores(h, self.start, self.end, self.width, self.out, self.drop, self.cfg.max_span)

    def forward(self, chars, bigrams, lengths):
        return self.span_logits(self.encode(chars, bigrams, lengths))

    def training_states(self, chars: torch.Tensor, bigrams: torch.Tensor, lengths: torch.Tensor,
                        lexicon: torch.Tensor | None = None) -> torch.Tensor:
        """:meth:`encode` as training runs it: under the recipe's precision, the states handed on
        in float32 so that the heads and the losses stay exact."""
        with C.autocast(self.cfg.precision):
            h = self.encode(chars, bigrams, lengths, lexicon)
        return h.float()


def rotary(x: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding over the last dimension of (B, L, d), d even."""
    _B, L, d = x.shape
    inv = 10000 ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
    ang = torch.arange(L, device=x.device, dtype=torch.float32).unsqueeze(1) * inv   # (L, d/2)
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class PointerHead(nn.Module):
    """Efficient-GlobalPointer-style scores for spans of at most ``W`` characters:
    ``q_i . k_j / sqrt(d)`` (rotary positions, shared by all types) + a per-type start bias of
    ``h_i`` + a per-type end bias of ``h_j`` + a per-type width bias. (B, L, W, K); > 0 means
    the span is an entity of that type (multi-label: a span may hold several)."""

    def __init__(self, n_in: int, d: int, K: int, W: int):
        super().__init__()
        self.d, self.K, self.W = d, K, W
        self.qk = nn.Linear(n_in, 2 * d)
        self.bias = nn.Linear(n_in, 2 * K)
        self.width_bias = nn.Parameter(torch.zeros(W, K))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        B, L, _ = h.shape
        W = self.W
        q, k = self.qk(h).chunk(2, dim=-1)
        q, k = rotary(q), rotary(k)
        bs, be = self.bias(h).chunk(2, dim=-1)                              # (B, L, K)
        idx = (torch.arange(L, device=h.device).unsqueeze(1)
               + torch.arange(W, device=h.device).unsqueeze(0))            # (L, W)
        k_pad = torch.cat([k, k.new_zeros(B, W, self.d)], dim=1)[:, idx]    # (B, L, W, d)
        be_pad = torch.cat([be, be.new_zeros(B, W, self.K)], dim=1)[:, idx]  # (B, L, W, K)
        qk = (q.unsqueeze(2) * k_pad).sum(-1) / self.d ** 0.5              # (B, L, W)
        return qk.unsqueeze(-1) + bs.unsqueeze(2) + be_pad + self.width_bias


def multilabel_ce(scores: torch.Tensor, targets: torch.Tensor,
                  valid: torch.Tensor | None = None) -> torch.Tensor:
    """Multi-label categorical cross-entropy (Su, 2020) over the last dimension, one loss per
    row: ``log(1 + sum_neg e^s) + log(1 + sum_pos e^-s)`` (entries where ``valid`` is False left
    out). Robust to many more negatives than positives; a score over 0 means "holds"."""
    big = 1e12
    ok = torch.ones_like(targets, dtype=torch.bool) if valid is None else valid
    s_neg = torch.where(ok & (targets < 0.5), scores, torch.full_like(scores, -big))
    s_pos = torch.where(ok & (targets > 0.5), -scores, torch.full_like(scores, -big))
    zeros = scores.new_zeros(*scores.shape[:-1], 1)
    return (torch.logsumexp(torch.cat([s_neg, zeros], -1), -1)
            + torch.logsumexp(torch.cat([s_pos, zeros], -1), -1))


def pointer_loss(scores: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """:func:`multilabel_ce` per text and type over all valid spans, averaged."""
    B, L, W, K = scores.shape
    s = scores.permute(0, 3, 1, 2).reshape(B, K, L * W)
    yy = y.permute(0, 3, 1, 2).reshape(B, K, L * W)
    valid = mask.reshape(B, 1, L * W).expand(B, K, L * W)
    return multilabel_ce(s, yy, valid).mean()


def multilabel_targets(spans_list, lengths, L: int, W: int, K: int):
    """(B, L, W, K) 0/1 targets (type index k, 0-based) and the (B, L, W) mask of real spans."""
    y = torch.zeros(len(lengths), L, W, K)
    end = torch.arange(L).unsqueeze(1) + torch.arange(W).unsqueeze(0)
    mask = torch.stack([end < n for n in lengths]) if len(lengths) else torch.zeros(0, L, W, dtype=torch.bool)
    for i, n in enumerate(lengths):
        for s, e, k in spans_list[i]:
            w = e - s - 1
            if 0 <= w < W and e <= n:
                y[i, s, w, k] = 1.0
    return y, mask


def span_scores(h: torch.Tensor, start: nn.Module, end: nn.Module, width: nn.Embedding,
                out: nn.Module, drop: nn.Module, W: int) -> torch.Tensor:
    """``out(gelu(start(h_i) + end(h_j) + width(j - i)))`` for every span of at most ``W``
    characters: (B, L, W, K). Spans past the end of a text are scored too (masked by callers)."""
    B, L, _ = h.shape
    s = start(h)
    e = end(h)
    e_pad = torch.cat([e, e.new_zeros(B, W, e.shape[-1])], dim=1)            # (B, L+W, d)
    idx = (torch.arange(L, device=h.device).unsqueeze(1)
           + torch.arange(W, device=h.device).unsqueeze(0))                  # (L, W) end index
    ends = e_pad[:, idx]                                                      # (B, L, W, d)
    rep = torch.nn.functional.gelu(s.unsqueeze(2) + ends + width.weight)
    return out(drop(rep))


class Vocab:
    def __init__(self, chars: list[str], bigrams: list[str]):
        self.chars = chars            # index 0, 1 are [PAD], [UNK]
        self.bigrams = bigrams
        self.c_index = {c: i for i, c in enumerate(chars)}
        self.b_index = {b: i for i, b in enumerate(bigrams)}

    @classmethod
    def build(cls, texts: Sequence[str], min_bigram: int, max_bigrams: int) -> Vocab:
        cc: Counter = Counter()
        bc: Counter = Counter()
        for t in texts:
            n = norm_chars(t)
            cc.update(n)
            bc.update(a + b for a, b in zip(n, n[1:] + ["</s>"]))
        chars = ["[PAD]", "[UNK]"] + sorted(cc, key=lambda c: (-cc[c], c))
        bis = sorted((b for b, c in bc.items() if c >= min_bigram), key=lambda b: (-bc[b], b))
        return cls(chars, ["[PAD]", "[UNK]"] + bis[:max_bigrams])

    def to_json(self) -> dict:
        return {"chars": self.chars, "bigrams": self.bigrams}

    def ids(self, text: str) -> tuple[list[int], list[int]]:
        n = norm_chars(text)
        c = [self.c_index.get(ch, UNK) for ch in n]
        b = [self.b_index.get(a + b, UNK) for a, b in zip(n, n[1:] + ["</s>"])]
        return c, b


def batch_tensors(vocab: Vocab, texts: Sequence[str]):
    ids = [vocab.ids(t) for t in texts]
    L = max(1, max(len(t) for t in texts))
    chars = torch.zeros(len(texts), L, dtype=torch.long)
    bis = torch.zeros(len(texts), L, dtype=torch.long)
    for i, (c, b) in enumerate(ids):
        if c:
            chars[i, :len(c)] = torch.tensor(c)
            bis[i, :len(b)] = torch.tensor(b)
    lengths = torch.tensor([max(len(t), 1) for t in texts])
    return chars, bis, lengths


def span_targets(spans_list: Sequence[Sequence[tuple[int, int, int]]], lengths: Sequence[int],
                 L: int, W: int) -> torch.Tensor:
    """(B, L, W) class ids: 0 none, k type k-1; -100 where the span runs past the text."""
    y = torch.zeros(len(lengths), L, W, dtype=torch.long)
    pos = torch.arange(L).unsqueeze(1) + torch.arange(W).unsqueeze(0)    # end index (incl.)
    for i, n in enumerate(lengths):
        y[i][pos >= n] = -100
        y[i, n:] = -100
        for s, e, k in spans_list[i]:
            w = e - s - 1
            if 0 <= w < W and e <= n:
                y[i, s, w] = k
    return y


def decode(logits: torch.Tensor, lengths: Sequence[int], labels: Sequence[str],
           allow_crossing: bool = False, pointer: bool = False) -> list[list[tuple[int, int, str, float]]]:
    """Spans (start, end half-open, type, prob) per text from (B, L, W, K+1) softmax logits,
    or (B, L, W, K) pointer scores (best type of a span when its score > 0; prob = sigmoid)."""
    if pointer:
        best_s, best_k = logits.float().max(dim=-1)
        best_p = torch.sigmoid(best_s)
        best = torch.where(best_s > 0, best_k + 1, torch.zeros_like(best_k))
    else:
        probs = torch.softmax(logits.float(), dim=-1)
        best_p, best = probs.max(dim=-1)
    out = []
    for i, n in enumerate(lengths):
        hits = (best[i] > 0).nonzero().tolist()
        cand = []
        for s, w in hits:
            e = s + w + 1
            if e <= n:
                cand.append((s, e, labels[int(best[i, s, w]) - 1], float(best_p[i, s, w])))
        out.append(sorted(cand) if allow_crossing else drop_crossing(cand))
    return out


def drop_crossing(cand: Sequence[tuple[int, int, str, float]]) -> list[tuple[int, int, str, float]]:
    """The spans ``(start, end, type, prob)`` left when, strongest first, a span that crosses
    (overlaps without nesting) a kept one is dropped; sorted."""
    kept: list[tuple[int, int, str, float]] = []
    for c in sorted(cand, key=lambda t: -t[3]):
        if all(not (k[0] < c[0] < k[1] < c[1] or c[0] < k[0] < c[1] < k[1]) for k in kept):
            kept.append(c)
    return sorted(kept)


class SpanModel(C.NetPredictor):
    batch_size = 16

    def __init__(self, net: SpanNet, vocab: Vocab, card: ModelCard, task: TaskSpec):
        super().__init__(net, card, task)
        self.vocab = vocab

    def spans(self, texts: Sequence[str]) -> list[list[tuple[int, int, str, float]]]:
        chars, bis, lengths = batch_tensors(self.vocab, texts)
        with torch.inference_mode():
            logits = self.net(chars.to(self.device), bis.to(self.device), lengths)
        return decode(logits.cpu(), [len(t) for t in texts], self.labels,
                      pointer=self.net.cfg.head == "pointer")

    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        return span_predictions(batch, self.spans([e.text for e in batch]))


def span_predictions(batch: Sequence[Example], found: Sequence[Sequence[tuple[int, int, str, float]]]
                     ) -> list[Example]:
    """One prediction per example from its ``(start, end, type, probability)`` spans (the
    probabilities in ``meta["span_probabilities"]``)."""
    out = []
    for ex, sp in zip(batch, found):
        spans = [Span(s, e, t, ex.text[s:e]) for s, e, t, _ in sp]
        out.append(Example(key=ex.key, index=ex.index, text=ex.text, text2=ex.text2, spans=spans,
                           meta={"span_probabilities": [round(p, 4) for *_, p in sp]}))
    return out


# ---------------------------------------------------------------------- save / load

def save(folder: Path, net: SpanNet, vocab: Vocab) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    C.save_tensors(folder / "model.safetensors", net.state_dict(), half=("",))
    C.write_json(folder / "config.json", asdict(net.cfg))
    C.write_json(folder / "vocab.json", vocab.to_json())


def load_net(folder: Path) -> tuple[SpanNet, Vocab]:
    cfg = SpanConfig(**C.read_json(folder / "config.json"))
    v = C.read_json(folder / "vocab.json")
    net = SpanNet(cfg)
    net.load_state_dict(C.load_tensors(folder / "model.safetensors"))
    return net.eval(), Vocab(v["chars"], v["bigrams"])


def load_model(folder: str | Path, device: str = "cpu") -> SpanModel:
    folder = Path(folder)
    net, vocab = load_net(folder)
    return SpanModel(net, vocab, C.read_card(folder), get_task(net.cfg.task)).to(device)


# ---------------------------------------------------------------------- training data

_CUT_AFTER = set("。；;！!？?")

# A training piece: its text and its spans ``(start, end, label id)`` within it.
Piece = tuple[str, list[tuple[int, int, int]]]


def chunk(text: str, spans: Sequence[tuple[int, int, int]], max_chars: int) -> list[Piece]:
    """Cut a long text into pieces of at most ``max_chars`` at places no span crosses,
    preferably after a sentence end; spans are shifted into their piece."""
    if len(text) <= max_chars:
        return [(text, list(spans))]
    covered = np.zeros(len(text) + 1, dtype=bool)   # covered[k]: a span crosses the cut before k
    for s, e, _ in spans:
        covered[s + 1:e] = True
    pieces: list[Piece] = []
    start = 0
    while start < len(text):
        end: int | None
        if len(text) - start <= max_chars:
            end = len(text)
        else:
            end = None
            for k in range(start + max_chars, start + max_chars // 2, -1):
                if not covered[k] and text[k - 1] in _CUT_AFTER:
                    end = k
                    break
            if end is None:
                for k in range(start + max_chars, start, -1):
                    if not covered[k]:
                        end = k
                        break
            if end is None or end <= start:
                end = start + max_chars
        inside = [(s - start, e - start, k) for s, e, k in spans if s >= start and e <= end]
        pieces.append((text[start:end], inside))
        start = end
    return pieces


def examples_to_items(examples: Sequence[Example], labels: Sequence[str], max_chars: int):
    lab = {l: i + 1 for i, l in enumerate(labels)}
    items = []
    for ex in examples:
        spans = [(s.start, s.end, lab[s.type]) for s in ex.spans
                 if s.type in lab and 0 <= s.start < s.end <= len(ex.text)]
        items.extend(chunk(ex.text, spans, max_chars))
    return [it for it in items if it[0]]


def fit(net: SpanNet, vocab: Vocab, items, cfg: SpanConfig, out_dir: Path, *, seed: int,
        resume: bool, progress: bool, max_minutes: float, max_steps: int | None = None,
        none_weight: float = 1.0) -> C.TrainState:
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda ep: max(0.1, 1 - ep / max(cfg.epochs, 1)))
    weight = torch.ones(len(cfg.labels) + 1)
    weight[0] = none_weight
    loss_fn = nn.CrossEntropyLoss(weight=weight, ignore_index=-100)
    step_losses: list[float] = []
    order = sorted(range(len(items)), key=lambda i: len(items[i][0]))

    def run_epoch(ep: int) -> float:
        net.train()
        # batches of similar length, shuffled batch order
        batches = [order[b:b + cfg.batch_size] for b in range(0, len(order), cfg.batch_size)]
        return C.shuffled_steps(batches, loss_of, net, opt, step_losses, max_steps=max_steps,
                                progress=progress, desc=f"epoch {ep + 1}")

    def loss_of(idx: list[int]) -> tuple[torch.Tensor, bool]:
        texts = [items[i][0] for i in idx]
        chars, bis, lengths = batch_tensors(vocab, texts)
        logits = net.span_logits(net.training_states(chars, bis, lengths))
        if cfg.head == "pointer":
            y, mask = multilabel_targets([[(s, e, k - 1) for s, e, k in items[i][1]] for i in idx],
                                         [len(t) for t in texts], chars.shape[1], cfg.max_span,
                                         len(cfg.labels))
            return pointer_loss(logits, y, mask), True
        y = span_targets([items[i][1] for i in idx], [len(t) for t in texts], chars.shape[1], cfg.max_span)
        return loss_fn(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)), True

    return C.train_epochs(net, opt, cfg.epochs, run_epoch, out_dir, step_losses, max_steps=max_steps,
                          resume=resume, max_minutes=max_minutes, seed=seed, progress=progress,
                          scheduler=sched)


# ---------------------------------------------------------------------- CMeEE entry point

def describe(cfg: SpanConfig) -> str:
    head = ("a GlobalPointer-style head (rotary start.end score + per-type start, end and width "
            "biases; multi-label, so a span may hold several types)" if cfg.head == "pointer"
            else "an MLP head (softmax over no entity + the types)")
    return (f"{cfg.task} span classifier over all spans up to {cfg.max_span} characters with "
            f"{head}, on a {cfg.layers}-layer character BiLSTM (hidden {cfg.hidden}, char "
            f"{cfg.char_dim} + bigram {cfg.bigram_dim} embeddings), trained from scratch; predicts "
            "nested entities.")


DEFAULTS: dict[str, dict] = {"CMeEE": {"head": "pointer"}}
TINY = {"char_dim": 16, "bigram_dim": 8, "hidden": 16, "layers": 1, "span_dim": 16, "max_span": 12,
            "dropout": 0.0, "epochs": 2, "batch_size": 4, "lr": 1e-2, "min_bigram_count": 1}


def dictionary_baseline(task: TaskSpec, train: Sequence[Example], dev: Sequence[Example]) -> dict:
    """Every train mention (with its most frequent type) found in a dev text, all occurrences."""
    types: dict[str, Counter] = {}
    for ex in train:
        for s in ex.spans:
            if s.text and len(s.text) >= 2:
                types.setdefault(s.text, Counter())[s.type] += 1
    top = {m: c.most_common(1)[0][0] for m, c in types.items()}
    classes = sorted(set(top.values()))
    cid = {t: i for i, t in enumerate(classes)}
    lex = Lexicon(classes, {m: [cid[t]] for m, t in top.items()}, max_len=max(map(len, top), default=MIN_LEN),
                  fold_case=False)
    pred = [Example(key=ex.key, index=ex.index, text=ex.text,
                    spans=[Span(i, j, classes[c], ex.text[i:j]) for i, j, c in lex.matches(ex.text)])
            for ex in dev]
    ev = evaluate(task, list(dev), pred, n_boot=200)
    return {"train_dictionary": {"description": "every train mention of 2+ characters, tagged with "
                                 "its most frequent train type, at every occurrence in the dev text",
                                 "metrics": ev.metrics}}


def train(task_name: str, data_dir: str | Path, out_dir: str | Path, *, seed: int = 0,
          resume: bool = False, progress: bool = True, max_minutes: float = 30,
          overrides: dict | None = None, tried: list[str] | None = None) -> ModelCard:
    threads, task, out_dir, t0 = C.start_training(task_name, out_dir)
    train_ex, train_path, dev_ex, dev_path = C.load_train_dev(data_dir, task)
    params = dict(DEFAULTS.get(task.name, {}))
    params.update(overrides or {})
    none_weight = params.pop("none_weight", 1.0)
    labels = list(task.label_codes)
    cfg = SpanConfig(task=task.name, labels=labels, **params)
    C.check_trainable(cfg.precision)
    vocab = Vocab.build([e.text for e in train_ex], cfg.min_bigram_count, cfg.max_bigrams)
    cfg.vocab_size, cfg.bigram_size = len(vocab.chars), len(vocab.bigrams)
    items = examples_to_items(train_ex, labels, cfg.max_chars)
    C.set_seed(seed)
    net = SpanNet(cfg)
    state = fit(net, vocab, items, cfg, out_dir, seed=seed, resume=resume, progress=progress,
                max_minutes=max_minutes, none_weight=none_weight)
    save(out_dir, net, vocab)
    net.load_state_dict(C.load_tensors(out_dir / "model.safetensors"))   # score what is shipped
    card = ModelCard(name=out_dir.name, task=task.name, kind=KIND, labels=labels,
                     description=describe(cfg))
    dev_summary, baselines = {}, {}
    if dev_ex:
        model = SpanModel(net, vocab, card, task)
        pred = model.predict(dev_ex)
        dev_summary = evaluate(task, dev_ex, pred).summary()
        baselines = dictionary_baseline(task, train_ex, dev_ex)
    card.training = {
        "data": {"train": C.data_source(train_path), "dev": C.data_source(dev_path),
                 "train_examples": len(train_ex), "train_pieces": len(items),
                 "dev_examples": len(dev_ex)},
        "split": "train file for training; official dev file for the reported score",
        "command": C.command_line(task.name, data_dir, out_dir, seed, threads),
        "seed": seed, "epochs": state["epoch"], "losses": [round(v, 5) for v in state["losses"]],
        "stopped_early": state["stopped_early"], "time_s": round(state["time_s"], 1),
        "total_time_s": round(time.perf_counter() - t0, 1),
        "hyperparameters": {**{k: v for k, v in asdict(cfg).items() if k not in ("labels", "task")},
                            "none_weight": none_weight},
        "selection": "hyperparameters chosen by dev-set measurement (no separate validation "
                     "split), so the dev score is slightly optimistic, as the paper's dev scores are",
        "tried": tried or [],
        "threads": threads,
    }
    C.record_training_data(out_dir, card, train_ex, sources=[str(C.data_source(train_path))])
    card.dev_metrics = dev_summary
    card.baselines = baselines
    card.extra = {"chars": cfg.vocab_size, "bigrams": cfg.bigram_size,
                  "weights_dtype": "float16 on disk (dev predictions identical to float32), float32 in memory"}
    if not state["stopped_early"]:         # a run cut short keeps its checkpoint for --resume
        C.Checkpoint(out_dir).clear()
    return C.finish_card(out_dir, card, readme_text(card))



def readme_text(card: ModelCard) -> str:
    tr = card.training
    dev = C.fmt_metric(card.dev_metrics) if card.dev_metrics else "not measured"
    base = card.baselines.get("train_dictionary", {})
    base_txt = (f"train-mention dictionary: F1 {base['metrics']['f1']:.4f} "
                f"(P {base['metrics']['precision']:.4f}, R {base['metrics']['recall']:.4f})"
                if base else "n/a")
    tried = "\n".join(f"- {t}" for t in tr.get("tried", [])) or "- (not recorded)"
    return f"""# {card.name}: {card.task} ({card.kind})

**Task.** {card.task}: {get_task(card.task).description}; types {', '.join(card.labels)}.

**Architecture.** {card.description}

**Data.** Train: `{tr['data']['train']}` ({tr['data']['train_examples']} sentences, cut into
{tr['data']['train_pieces']} pieces of at most {tr['hyperparameters']['max_chars']} characters at
places no entity crosses). Scored on the official dev file `{tr['data']['dev']}`
({tr['data']['dev_examples']} sentences) with CBLUE Studio's evaluator (micro-F1 over (sentence,
start, end, type), 95% bootstrap interval).

**Training.** `{tr['command']}`; seed {tr['seed']}, {tr['epochs']} epochs, {tr['time_s']} s on {tr['threads']} CPU
thread(s). {tr['selection']}.

**Dev score.** {dev}.

**Baseline.** {base_txt}.

**What was tried.**
{tried}

**Limitations.** No pretrained knowledge: rare and long entities (spans over
{tr['hyperparameters']['max_span']} characters are never predicted) and type confusions between
sym/dis and pro/ite are the main errors. Research use only; not for clinical decisions.
"""
