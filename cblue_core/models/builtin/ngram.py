"""fastText-style classifiers over character n-grams, for single texts and text pairs.

Single text (CHIP-CTC, KUAKE-QIC): the mean embedding of the text's character 1..3-grams feeds
a small MLP. Pairs (CHIP-STS, KUAKE-QQR, KUAKE-QTR): the two texts' bags ``a`` and ``b`` give
``[a, b, |a-b|, a*b]``, three more bags cover the n-grams the texts share and the ones only
one side has (``a&b``, ``a-b``, ``b-a``; they say what one query adds to the other), and a
dozen lexical-overlap numbers (Jaccard and containment per n-gram order, longest common
substring, lengths) join them before the MLP.

The vocabulary is explicit (``vocab.json``: the n-grams seen in at least ``min_count`` training
texts, most frequent first), so the model has no hash collisions and the folder says exactly
what it knows.
"""
from __future__ import annotations

import math
import time
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ...records import Example
from ...runs.evaluation import evaluate
from ...tasks import Kind, TaskSpec, get_task
from ..base import ModelCard
from . import common as C
from .pair_features import N_EXTRA, extra_features

KIND = "ngram-classifier"


def normalize(text: str) -> str:
    """NFKC (full-width ASCII to half-width), lower case, whitespace dropped."""
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


def char_ngrams(text: str, orders: Sequence[int]) -> list[str]:
    out: list[str] = []
    for n in orders:
        out.extend(text[i:i + n] for i in range(len(text) - n + 1))
    return out


N_DENSE = 16


def overlap_features(a: str, b: str) -> list[float]:
    """Lexical overlap of two normalized texts (N_DENSE numbers, roughly 0-1)."""
    feats: list[float] = []
    for n in (1, 2, 3):
        sa, sb = set(char_ngrams(a, (n,))), set(char_ngrams(b, (n,)))
        inter = len(sa & sb)
        union = len(sa | sb)
        feats += [inter / union if union else 0.0, inter / len(sa) if sa else 0.0,
                  inter / len(sb) if sb else 0.0]
    m = SequenceMatcher(None, a, b, autojunk=False)
    lcs = m.find_longest_match(0, len(a), 0, len(b)).size if a and b else 0
    feats += [lcs / len(a) if a else 0.0, lcs / len(b) if b else 0.0, m.ratio(),
              float(a == b), float(bool(a) and a in b), float(bool(b) and b in a),
              math.log1p(len(a)) / 4, math.log1p(len(b)) / 4]
    return feats[:N_DENSE] + [0.0] * (N_DENSE - len(feats))


@dataclass
class NgramConfig:
    task: str
    labels: list[str]
    pair: bool
    orders: list[int] = field(default_factory=lambda: [1, 2, 3])
    min_count: int = 2
    max_vocab: int = 60000
    dim: int = 32
    hidden: int = 128
    dropout: float = 0.3
    epochs: int = 10
    batch_size: int = 64
    lr: float = 3e-3
    weight_decay: float = 0.0
    class_weight: float = 0.0     # 0: plain CE; 1: inverse-frequency weights; in between: power
    set_bags: bool = True         # pairs: bags of shared and one-sided n-grams
    overlap: bool = True          # pairs: lexical-overlap numbers
    extra: bool = False           # pairs: edit distance and intent-word numbers (pair_features)
    vocab_size: int = 0


class NgramNet(nn.Module):
    def __init__(self, cfg: NgramConfig):
        super().__init__()
        self.cfg = cfg
        self.emb = nn.EmbeddingBag(max(cfg.vocab_size, 1), cfg.dim, mode="mean")
        nn.init.normal_(self.emb.weight, std=0.1)
        n_in = cfg.dim
        if cfg.pair:
            n_in = (cfg.dim * (7 if cfg.set_bags else 4) + (N_DENSE if cfg.overlap else 0)
                    + (N_EXTRA if cfg.extra else 0))
        if cfg.hidden:
            self.mlp = nn.Sequential(nn.Dropout(cfg.dropout), nn.Linear(n_in, cfg.hidden), nn.ReLU(),
                                     nn.Dropout(cfg.dropout), nn.Linear(cfg.hidden, len(cfg.labels)))
        else:                      # fastText proper: one linear layer over the mean embedding
            self.mlp = nn.Sequential(nn.Dropout(cfg.dropout), nn.Linear(n_in, len(cfg.labels)))

    def bag(self, bags: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return self.emb(bags[0], bags[1])

    def forward(self, batch: dict) -> torch.Tensor:
        if not self.cfg.pair:
            return self.mlp(self.bag(batch["a"]))
        a, b = self.bag(batch["a"]), self.bag(batch["b"])
        parts = [a, b, (a - b).abs(), a * b]
        if self.cfg.set_bags:
            parts += [self.bag(batch["ab"]), self.bag(batch["a_b"]), self.bag(batch["b_a"])]
        if self.cfg.overlap:
            parts.append(batch["dense"])
        if self.cfg.extra:
            parts.append(batch["extra"])
        return self.mlp(torch.cat(parts, dim=-1))


class Featurizer:
    def __init__(self, vocab: list[str], orders: Sequence[int], pair: bool, extra: bool = False):
        self.vocab = vocab
        self.extra = extra
        self.index = {g: i for i, g in enumerate(vocab)}
        self.orders = list(orders)
        self.pair = pair

    @staticmethod
    def build_vocab(texts: Sequence[str], orders: Sequence[int], min_count: int, max_vocab: int) -> list[str]:
        df: Counter = Counter()
        for t in texts:
            df.update(set(char_ngrams(normalize(t), orders)))
        items = [(g, c) for g, c in df.items() if c >= min_count]
        items.sort(key=lambda gc: (-gc[1], gc[0]))
        return [g for g, _ in items[:max_vocab]]

    def ids(self, grams) -> list[int]:
        idx = self.index
        return sorted({idx[g] for g in grams if g in idx})

    def encode_one(self, text: str, text2: str = "") -> dict:
        a = normalize(text)
        ga = set(char_ngrams(a, self.orders))
        if not self.pair:
            return {"a": self.ids(ga)}
        b = normalize(text2)
        gb = set(char_ngrams(b, self.orders))
        out = {"a": self.ids(ga), "b": self.ids(gb), "ab": self.ids(ga & gb),
               "a_b": self.ids(ga - gb), "b_a": self.ids(gb - ga),
               "dense": overlap_features(a, b)}
        if self.extra:
            out["extra"] = extra_features(a, b)
        return out

    def encode(self, examples: Sequence[Example]) -> list[dict]:
        return [self.encode_one(e.text, e.text2) for e in examples]

    @staticmethod
    def collate(items: Sequence[dict]) -> dict:
        out: dict[str, torch.Tensor | tuple[torch.Tensor, torch.Tensor]] = {}
        for key in items[0]:
            if key in ("dense", "extra"):
                out[key] = torch.tensor([it[key] for it in items], dtype=torch.float32)
                continue
            lens = [len(it[key]) for it in items]
            flat = [i for it in items for i in it[key]]
            offsets = np.zeros(len(items), dtype=np.int64)
            offsets[1:] = np.cumsum(lens)[:-1]
            out[key] = (torch.tensor(flat, dtype=torch.long), torch.from_numpy(offsets))
        return out


class NgramClassifier(C.NetPredictor):
    batch_size = 256

    def __init__(self, net: NgramNet, feat: Featurizer, card: ModelCard, task: TaskSpec):
        super().__init__(net, card, task)
        self.feat = feat

    def probabilities(self, batch: Sequence[Example]) -> torch.Tensor:
        x = Featurizer.collate(self.feat.encode(batch))
        x = _to_device(x, self.device)
        with torch.inference_mode():
            return torch.softmax(self.net(x).float(), dim=-1).cpu()

    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        return C.label_predictions(batch, self.labels, self.probabilities(batch))


def _to_device(x: dict, device: str) -> dict:
    if device == "cpu":
        return x
    return {k: (tuple(t.to(device) for t in v) if isinstance(v, tuple) else v.to(device))
            for k, v in x.items()}


# ---------------------------------------------------------------------- save / load

def save(folder: Path, net: NgramNet, vocab: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    C.save_tensors(folder / "model.safetensors", net.state_dict(), half=("emb.",))
    C.write_json(folder / "config.json", asdict(net.cfg))
    C.write_json(folder / "vocab.json", vocab)


def load_model(folder: str | Path, device: str = "cpu") -> NgramClassifier:
    folder = Path(folder)
    cfg = NgramConfig(**C.read_json(folder / "config.json"))
    vocab = C.read_json(folder / "vocab.json")
    net = NgramNet(cfg)
    net.load_state_dict(C.load_tensors(folder / "model.safetensors"))
    card = C.read_card(folder)
    return NgramClassifier(net, Featurizer(vocab, cfg.orders, cfg.pair, cfg.extra), card, get_task(cfg.task)).to(device)


# ---------------------------------------------------------------------- training

# Chosen by dev measurement (see each model card's training.tried).
DEFAULTS: dict[str, dict] = {
    "CHIP-CTC": {"epochs": 12, "dim": 32, "hidden": 256, "max_vocab": 50000, "class_weight": 0.5, "dropout": 0.3},
    "KUAKE-QIC": {"epochs": 15, "dim": 48, "hidden": 128, "max_vocab": 40000, "dropout": 0.4},
    "CHIP-STS": {"epochs": 12, "dim": 32, "hidden": 128, "max_vocab": 40000},
    "KUAKE-QTR": {"epochs": 8, "dim": 32, "hidden": 128, "max_vocab": 50000},
    "KUAKE-QQR": {"epochs": 12, "dim": 32, "hidden": 128, "max_vocab": 30000},
}

TINY = {"epochs": 3, "dim": 8, "hidden": 16, "max_vocab": 2000, "min_count": 1, "dropout": 0.0, "batch_size": 8, "lr": 1e-2}


def prepare(task: TaskSpec, train: Sequence[Example], cfg: NgramConfig):
    texts = [e.text for e in train] + ([e.text2 for e in train] if cfg.pair else [])
    vocab = Featurizer.build_vocab(texts, cfg.orders, cfg.min_count, cfg.max_vocab)
    cfg.vocab_size = len(vocab)
    feat = Featurizer(vocab, cfg.orders, cfg.pair, cfg.extra)
    lab_id = {l: i for i, l in enumerate(cfg.labels)}
    gold = [(e, C.gold_label(task, e.label)) for e in train]
    keep = [(e, g) for e, g in gold if g is not None and g in lab_id]
    x = feat.encode([e for e, _ in keep])
    y = torch.tensor([lab_id[g] for _, g in keep], dtype=torch.long)
    return feat, x, y


def fit(net: NgramNet, x: list[dict], y: torch.Tensor, cfg: NgramConfig, out_dir: Path, *, seed: int,
        resume: bool, progress: bool, max_minutes: float, max_steps: int | None = None) -> C.TrainState:
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    loss_fn = C.weighted_ce(y, len(cfg.labels), cfg.class_weight)
    steps_per_epoch = math.ceil(len(x) / cfg.batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda ep: max(0.05, 1 - ep / max(cfg.epochs, 1)))
    step_losses: list[float] = []

    def run_epoch(ep: int) -> float:
        net.train()
        perm = torch.randperm(len(x)).tolist()
        total, n = 0.0, 0
        for s in range(steps_per_epoch):
            if max_steps is not None and len(step_losses) >= max_steps:
                break
            idx = perm[s * cfg.batch_size:(s + 1) * cfg.batch_size]
            batch = Featurizer.collate([x[i] for i in idx])
            loss = loss_fn(net(batch), y[idx])
            C.optimizer_step(net, opt, loss)
            total += loss.item() * len(idx)
            n += len(idx)
            step_losses.append(loss.item())
        return total / max(n, 1)

    return C.train_epochs(net, opt, cfg.epochs, run_epoch, out_dir, step_losses, max_steps=max_steps,
                          resume=resume, max_minutes=max_minutes, seed=seed, progress=progress,
                          scheduler=sched)


def majority_baseline(task: TaskSpec, train: Sequence[Example], dev: Sequence[Example]) -> dict:
    counts = Counter(C.gold_label(task, e.label) for e in train if e.label)
    top = counts.most_common(1)[0][0]
    pred = [Example(key=e.key, index=e.index, label=top) for e in dev]
    ev = evaluate(task, list(dev), pred, n_boot=200)
    return {"majority_class": {"label": top, "metrics": ev.metrics}}


def train(task_name: str, data_dir: str | Path, out_dir: str | Path, *, seed: int = 0,
          resume: bool = False, progress: bool = True, max_minutes: float = 30,
          overrides: dict | None = None, tried: list[str] | None = None) -> ModelCard:
    threads, task, out_dir, t0 = C.start_training(task_name, out_dir)
    train_ex, train_path, dev_ex, dev_path = C.load_train_dev(data_dir, task)
    pair = task.kind == Kind.PAIR
    params = dict(DEFAULTS.get(task.name, {}))
    params.update(overrides or {})
    cfg = NgramConfig(task=task.name, labels=C.task_labels(task, train_ex), pair=pair, **params)
    C.set_seed(seed)
    feat, x, y = prepare(task, train_ex, cfg)
    C.set_seed(seed)
    net = NgramNet(cfg)
    state = fit(net, x, y, cfg, out_dir, seed=seed, resume=resume, progress=progress,
                max_minutes=max_minutes)
    save(out_dir, net, feat.vocab)
    net.load_state_dict(C.load_tensors(out_dir / "model.safetensors"))   # score what is shipped
    train_time = state["time_s"]
    card = ModelCard(name=out_dir.name, task=task.name, kind=KIND, labels=list(cfg.labels),
                     description=_description(task, cfg))
    dev_summary, baselines = {}, {}
    if dev_ex:
        model = NgramClassifier(net, feat, card, task)
        pred = model.predict(dev_ex)
        dev_summary = evaluate(task, dev_ex, pred).summary()
        baselines = majority_baseline(task, train_ex, dev_ex)
    card.training = {
        "data": {"train": C.data_source(train_path), "dev": C.data_source(dev_path),
                 "train_examples": len(x), "dev_examples": len(dev_ex)},
        "split": "official train file for training; official dev file for the reported score",
        "command": C.command_line(task.name, data_dir, out_dir, seed, threads),
        "seed": seed, "epochs": state["epoch"], "losses": [round(v, 5) for v in state["losses"]],
        "stopped_early": state["stopped_early"], "time_s": round(train_time, 1),
        "total_time_s": round(time.perf_counter() - t0, 1),
        "hyperparameters": {k: v for k, v in asdict(cfg).items() if k not in ("labels", "task")},
        "selection": "hyperparameters chosen by dev-set measurement (no separate validation "
                     "split), so dev scores are slightly optimistic, as are the paper's dev scores",
        "tried": tried or [],
        "threads": threads,
    }
    C.record_training_data(out_dir, card, train_ex, sources=[str(C.data_source(train_path))])
    card.dev_metrics = dev_summary
    card.baselines = baselines
    card.extra = {"vocab_size": cfg.vocab_size, "weights_dtype": "float16 embedding, float32 MLP"}
    if not state["stopped_early"]:         # a run cut short keeps its checkpoint for --resume
        C.Checkpoint(out_dir).clear()
    return C.finish_card(out_dir, card, readme_text(card))



def _description(task: TaskSpec, cfg: NgramConfig) -> str:
    what = ("text-pair classifier: [a, b, |a-b|, a*b] of character 1-3-gram bags plus bags of "
            "shared and one-sided n-grams and lexical-overlap features, MLP"
            if cfg.pair else "text classifier: mean character 1-3-gram embedding, MLP")
    return (f"{task.name} {what}. Trained from scratch on the CBLUE train file "
            f"(vocabulary {cfg.vocab_size} n-grams, embedding {cfg.dim}, hidden {cfg.hidden}).")


def readme_text(card: ModelCard) -> str:
    tr = card.training
    dev = C.fmt_metric(card.dev_metrics) if card.dev_metrics else "not measured (no dev file)"
    base = card.baselines.get("majority_class", {})
    base_txt = (f"majority class `{base.get('label')}`: "
                + ", ".join(f"{k} {v:.4f}" for k, v in base.get("metrics", {}).items()
                            if k in ("accuracy", "macro_f1"))) if base else "n/a"
    tried = "\n".join(f"- {t}" for t in tr.get("tried", [])) or "- (not recorded)"
    return f"""# {card.name}: {card.task} ({card.kind})

**Task.** {card.task} ({get_task(card.task).description}); labels: {', '.join(card.labels)}.

**Architecture.** {card.description}

**Data.** Train: `{tr['data']['train']}` ({tr['data']['train_examples']} examples). Scored on the
official dev file `{tr['data']['dev']}` ({tr['data']['dev_examples']} examples) with CBLUE Studio's
own evaluator (95% bootstrap interval, 1000 resamples).

**Training.** `{tr['command']}`; seed {tr['seed']}, {tr['epochs']} epochs, {tr['time_s']} s on {tr['threads']} CPU
thread(s). {tr['selection']}.

**Dev score.** {dev}.

**Baseline.** {base_txt}.

**What was tried.**
{tried}

**Limitations.** A bag of character n-grams ignores word order beyond three characters and has
no pretrained knowledge: rare classes, negation and paraphrases with little character overlap
are its weak points. Research use only; not for clinical decisions.
"""
