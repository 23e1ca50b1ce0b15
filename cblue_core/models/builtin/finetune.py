"""Task models on the shared character encoder: the encoder, adapters, the fine-tuning loop, folders.

A task model on the encoder (kinds ``encoder-*``, :mod:`.encoder_heads`) ships only what it
learnt: its head and a small adapter of the encoder, in ``adapter.safetensors``, with a
``config.json`` (:class:`HeadConfig`) naming the encoder folder by a path relative to the folder
holding the model (``"encoder"``: ``models/encoder`` for ``models/kuake-qic``) and the sha1 of the
encoder's weights. The 16 MB encoder (:mod:`cblue_core.models.encoder`) is shipped once.

Adapters (``HeadConfig.adapter``: "frozen", the head alone on the frozen encoder, or parts joined
by "+", e.g. ``lora+emb``):

- ``lora``: low-rank updates ``W + (alpha / r) B A`` of the encoder's linear layers named in
  ``lora_targets`` (by default all of them: attention query, key, value and output, feed-forward in
  and out); merged into the weights when a model is loaded, so prediction costs what the plain
  encoder costs;
- ``bias``: every bias and LayerNorm weight of the encoder tuned (BitFit);
- ``emb``: the word embeddings tuned (the largest part: vocabulary x hidden values).

Training (:func:`fine_tune`) holds out a fixed slice of the train file for selecting the epoch
(never the dev file), schedules the learning rate per step (linear warm-up and decay), and
checkpoints after every epoch through :func:`.common.epoch_loop` (``--resume``, ``--max-minutes``);
the best epoch so far is kept beside the checkpoint, so a resumed run selects as an
uninterrupted one would.
"""
from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ...records import Example
from ...runs.evaluation import evaluate
from ...tasks import TaskSpec, get_task
from ..base import ModelCard, folder_size
from ..registry import BUILTIN_DIR, ENCODER_KIND, ENCODER_REF, ENCODER_SHA1, find_encoder, weights_sha1
from . import common as C
from .cmeie import HELD_OUT_NOTE, NOT_COMPARABLE

ADAPTER_FILE = "adapter.safetensors"
DEFAULT_ENCODER = BUILTIN_DIR / "encoder"
ADAPTER_PARTS = ("lora", "bias", "emb")     # an adapter is "frozen" or "+"-joined parts: "lora+emb"
# Every linear layer of a BERT layer (names within encoder.layer.<i>; "output.dense" is the
# feed-forward out, "attention.output.dense" the attention's).
ALL_LINEAR = ("attention.self.query", "attention.self.key", "attention.self.value",
              "attention.output.dense", "intermediate.dense", "output.dense")
SELECTION_SEED = 20261201       # the fixed selection slice does not move with --seed


@dataclass
class HeadConfig:
    """``config.json`` of a task model on the shared encoder: what it predicts, which encoder it
    needs, its adapter and head, and the training recipe."""

    task: str
    kind: str
    labels: list[str]
    encoder: str = "encoder"          # relative to the folder holding the model (or absolute)
    encoder_sha1: str = ""
    adapter: str = "lora"             # "frozen", or "+"-joined ADAPTER_PARTS
    lora_rank: int = 8
    lora_alpha: float = 16.0
    lora_dropout: float = 0.05
    lora_targets: list[str] = field(default_factory=lambda: list(ALL_LINEAR))
    max_len: int = 128                # encoder positions ([CLS] and [SEP] included)
    head_hidden: int = 256            # classifier: hidden layer of the head
    span_dim: int = 64                # spans: size of the rotary start/end vectors
    max_span: int = 30                # spans: longest entity, in tokens
    overlap: int = 32                 # spans, relations: tokens shared by consecutive windows of a long text
    pair_dim: int = 128               # relations: width of the pair head
    pair_scores: bool = False         # relations: the span head's scores of both spans as pair features
    threshold: float = 0.5            # relations: object candidates (span-head probability)
    subject_threshold: float = 0.5    # relations: subject candidates
    pair_threshold: float = 0.5       # relations: a predicate of a candidate pair
    schemas: list[list[str]] = field(default_factory=list)   # relations: (subject type, predicate, object type)
    dropout: float = 0.1              # head dropout
    epochs: int = 5
    batch_size: int = 32
    lr: float = 2e-3                  # adapter
    head_lr: float = 2e-3
    warmup: float = 0.06              # share of the steps
    weight_decay: float = 0.01
    class_weight: float = 0.0         # classifier: 0 plain CE, 1 inverse class frequency, between: power
    select_size: int = 1000           # train examples held out for selecting the epoch (at most 10%)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HeadConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


# ---------------------------------------------------------------------- the encoder

def build_encoder(folder: str | Path):
    """The encoder of a pretraining folder as a plain ``BertModel`` (no pooler: the masked-LM
    checkpoint has none) and its tokenizer. The weights are read with safetensors directly (the
    masked-LM head is left out), which is what ``BertModel.from_pretrained`` does, without its
    load report."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    folder = Path(folder)
    model = BertModel(BertConfig.from_pretrained(str(folder)), add_pooling_layer=False)
    tensors = C.load_tensors(folder / "model.safetensors")
    state = {k.removeprefix("bert."): v for k, v in tensors.items() if not k.startswith("cls.")}
    model.load_state_dict(state)
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    tokenizer.model_max_length = 10 ** 9    # long texts are truncated or windowed by the callers
    return model, tokenizer


def encoder_ref(encoder_dir: Path, out_dir: Path) -> str:
    """How a model in ``out_dir`` names ``encoder_dir``: relative to the folder holding the model
    when the encoder is beside it or below its parent, else absolute."""
    enc, parent = encoder_dir.resolve(), out_dir.resolve().parent
    try:
        return enc.relative_to(parent).as_posix()
    except ValueError:
        return str(enc)


def encoder_card(encoder_dir: Path) -> dict[str, Any]:
    """What a task model's card says about its encoder."""
    card = C.read_json(encoder_dir / C.CARD_FILE) if (encoder_dir / C.CARD_FILE).is_file() else {}
    if card and card.get("kind") != ENCODER_KIND:
        raise ValueError(f"{encoder_dir} is not a pretrained encoder folder (kind {card.get('kind')!r})")
    extra, training = card.get("extra", {}), card.get("training", {})
    return {"name": card.get("name", encoder_dir.name), "steps": training.get("steps"),
            "partial": extra.get("partial"), "held_out": extra.get("held_out"),
            "parameters": (extra.get("parameters") or {}).get("encoder"),
            "size_bytes": folder_size(encoder_dir)}


# ---------------------------------------------------------------------- adapters

class LoRALinear(nn.Module):
    """``base(x) + (alpha / r) B A x``: a frozen linear layer plus a trainable low-rank update
    (B starts at zero, so training starts from the pretrained encoder)."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float, dropout: float):
        super().__init__()
        self.base = base
        self.A = nn.Parameter(torch.empty(rank, base.in_features))
        self.B = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.scale = alpha / rank
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (self.drop(x) @ self.A.t() @ self.B.t()) * self.scale

    def delta(self) -> torch.Tensor:
        return (self.B @ self.A) * self.scale


def _lora_names(encoder: nn.Module, cfg: HeadConfig) -> list[str]:
    """The linear layers ``cfg.lora_targets`` names: ``encoder.layer.<i>.<target>`` exactly."""
    targets = set(cfg.lora_targets)
    names = [n for n, m in encoder.named_modules()
             if isinstance(m, nn.Linear) and (hit := re.fullmatch(r"encoder\.layer\.\d+\.(.+)", n))
             and hit.group(1) in targets]
    if not names:
        raise ValueError(f"no linear layer of the encoder matches lora_targets {cfg.lora_targets}")
    return names


def adapter_parts(cfg: HeadConfig) -> set[str]:
    """The parts of ``cfg.adapter`` ("frozen": none); ValueError for an unknown one."""
    parts = set() if cfg.adapter == "frozen" else set(cfg.adapter.split("+"))
    if not parts <= set(ADAPTER_PARTS) or (not parts and cfg.adapter != "frozen"):
        raise ValueError(f"unknown adapter {cfg.adapter!r}: 'frozen' or a '+'-joined set of "
                         f"{', '.join(ADAPTER_PARTS)}")
    return parts


def _tuned(name: str, parts: set[str]) -> bool:
    """Encoder parameters tuned in place: biases and LayerNorm weights ("bias"), the word
    embeddings ("emb")."""
    return (("bias" in parts and (name.endswith(".bias") or ".LayerNorm." in name))
            or ("emb" in parts and name == "embeddings.word_embeddings.weight"))


def add_adapter(encoder: nn.Module, cfg: HeadConfig) -> None:
    """Freeze the encoder and add ``cfg.adapter``'s trainable parts (in place)."""
    parts = adapter_parts(cfg)
    for name, p in encoder.named_parameters():
        p.requires_grad = _tuned(name, parts)
    if "lora" in parts:
        for name in _lora_names(encoder, cfg):
            parent, attr = _parent(encoder, name)
            setattr(parent, attr, LoRALinear(getattr(parent, attr), cfg.lora_rank, cfg.lora_alpha,
                                             cfg.lora_dropout))


def _parent(root: nn.Module, name: str) -> tuple[nn.Module, str]:
    *path, attr = name.split(".")
    return root.get_submodule(".".join(path)) if path else root, attr


def adapter_tensors(encoder: nn.Module, cfg: HeadConfig) -> dict[str, torch.Tensor]:
    """What the adapter changed, to ship: ``lora.<layer>.A|B`` and ``tuned.<parameter>`` (the
    tuned parameters, under their names in the plain encoder)."""
    out: dict[str, torch.Tensor] = {}
    for name, m in encoder.named_modules():
        if isinstance(m, LoRALinear):
            out[f"lora.{name}.A"], out[f"lora.{name}.B"] = m.A, m.B
    parts = adapter_parts(cfg)
    for name, p in encoder.named_parameters():
        plain = name.replace(".base.", ".")
        if _tuned(plain, parts):
            out[f"tuned.{plain}"] = p
    return out


@torch.no_grad()
def merge_adapter(encoder: nn.Module, cfg: HeadConfig, tensors: dict[str, torch.Tensor]) -> None:
    """Apply a shipped adapter to a plain encoder (in place): tuned parameters replaced, low-rank
    updates added to their weights. The result is a plain ``BertModel`` again."""
    params = dict(encoder.named_parameters())
    for key, value in tensors.items():
        if key.startswith("tuned."):
            params[key.removeprefix("tuned.")].copy_(value)
    for name in _lora_names(encoder, cfg) if "lora" in adapter_parts(cfg) else []:
        A, B = tensors[f"lora.{name}.A"], tensors[f"lora.{name}.B"]
        params[f"{name}.weight"].add_((B @ A) * (cfg.lora_alpha / cfg.lora_rank))


# ---------------------------------------------------------------------- the network

class EncoderNet(nn.Module):
    """The encoder with a task head: ``head(last hidden states, attention mask)``."""

    def __init__(self, encoder: nn.Module, head: nn.Module, cfg: HeadConfig):
        super().__init__()
        self.encoder = encoder
        self.head = head
        self.cfg = cfg

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, token_type_ids=token_type_ids,
                              attention_mask=attention_mask).last_hidden_state
        return self.head(hidden, attention_mask)

    def shipped_tensors(self) -> dict[str, torch.Tensor]:
        """Head and adapter: everything the model folder holds."""
        out = {f"head.{k}": v for k, v in self.head.state_dict().items()}
        out.update(adapter_tensors(self.encoder, self.cfg))
        return {k: v.detach().clone() for k, v in out.items()}

    def load_shipped(self, tensors: dict[str, torch.Tensor]) -> None:
        """Set the head and adapter of a training net (LoRA layers still separate)."""
        self.head.load_state_dict({k.removeprefix("head."): v for k, v in tensors.items()
                                   if k.startswith("head.")})
        modules = dict(self.encoder.named_modules())
        params = {n.replace(".base.", "."): p for n, p in self.encoder.named_parameters()}
        with torch.no_grad():
            for key, value in tensors.items():
                if key.startswith("lora."):
                    name, part = key.removeprefix("lora.").rsplit(".", 1)
                    getattr(modules[name], part).copy_(value)
                elif key.startswith("tuned."):
                    params[key.removeprefix("tuned.")].copy_(value)


def new_net(cfg: HeadConfig, encoder_dir: Path, make_head: Callable[[int, HeadConfig], nn.Module]):
    """A net to train: the encoder with its adapter added, a fresh head; and the tokenizer."""
    encoder, tokenizer = build_encoder(encoder_dir)
    add_adapter(encoder, cfg)
    return EncoderNet(encoder, make_head(encoder.config.hidden_size, cfg), cfg), tokenizer


def save_model(folder: Path, net: EncoderNet) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    C.save_tensors(folder / ADAPTER_FILE, net.shipped_tensors())
    C.write_json(folder / "config.json", asdict(net.cfg))


def load_net(folder: str | Path, make_head: Callable[[int, HeadConfig], nn.Module]):
    """A shipped model for prediction: the encoder it names (refused when its weights are not
    the ones it was trained on), the adapter merged in, the head; and the tokenizer."""
    folder = Path(folder)
    cfg = HeadConfig.from_json(C.read_json(folder / "config.json"))
    enc_dir = find_encoder(folder, cfg.encoder)
    if not (enc_dir / "model.safetensors").is_file():
        raise FileNotFoundError(f"the shared encoder {cfg.encoder!r} of {folder} is not there ({enc_dir})")
    if cfg.encoder_sha1 and weights_sha1(enc_dir) != cfg.encoder_sha1:
        raise ValueError(f"the shared encoder at {enc_dir} has other weights than {folder} was trained on")
    encoder, tokenizer = build_encoder(enc_dir)
    tensors = C.load_tensors(folder / ADAPTER_FILE)
    merge_adapter(encoder, cfg, tensors)
    head = make_head(encoder.config.hidden_size, cfg)
    head.load_state_dict({k.removeprefix("head."): v for k, v in tensors.items() if k.startswith("head.")})
    return EncoderNet(encoder, head, cfg).eval(), tokenizer


# ---------------------------------------------------------------------- batches

def collate(seqs: Sequence[tuple[Sequence[int], Sequence[int]]], pad: int):
    """``(input_ids, token_type_ids, attention_mask)`` of ``(ids, types)`` sequences, padded."""
    from ..encoder.data import collate as pad_batch

    return pad_batch([(list(i), list(t)) for i, t in seqs], pad)


def length_batches(lengths: Sequence[int], batch_size: int, gen: torch.Generator) -> list[list[int]]:
    """Shuffled batches of similar length (less padding): a random order cut into pools of 50
    batches, each pool sorted by length and cut into batches, the batches shuffled."""
    perm = torch.randperm(len(lengths), generator=gen).tolist()
    pool = batch_size * 50
    batches = []
    for p in range(0, len(perm), pool):
        chunk = sorted(perm[p:p + pool], key=lambda i: lengths[i])
        batches += [chunk[b:b + batch_size] for b in range(0, len(chunk), batch_size)]
    order = torch.randperm(len(batches), generator=gen).tolist()
    return [batches[i] for i in order]


def selection_split(n: int, size: int) -> tuple[list[int], list[int]]:
    """``(fit, select)`` indices: a fixed slice of ``min(size, 10%)`` train examples held out for
    choosing the epoch (the same whatever the training seed)."""
    k = min(size, n // 10)
    if k < 1:
        return list(range(n)), []
    return C.seeded_split(n, SELECTION_SEED, 1 - k / n)


# ---------------------------------------------------------------------- training

def fine_tune(net: EncoderNet, n_examples: int, lengths: Sequence[int],
              batch_loss: Callable[[list[int]], torch.Tensor], select_score: Callable[[], float | None],
              out_dir: Path, *, seed: int, resume: bool, progress: bool, max_minutes: float,
              max_steps: int | None = None) -> C.TrainState:
    """Train the head and adapter (AdamW, per-step linear warm-up and decay) for ``cfg.epochs``
    epochs of ``batch_loss(indices)``; after each epoch ``select_score()`` (higher is better, on
    the held-out slice of train; None without a slice: the last epoch is kept) and the best
    epoch's tensors are kept. Ends with those tensors loaded; the state carries ``selection``
    (score per epoch) and ``best_epoch``."""
    cfg = net.cfg
    head = [p for p in net.head.parameters() if p.requires_grad]
    adapter = [p for p in net.encoder.parameters() if p.requires_grad]
    groups = [{"params": head, "lr": cfg.head_lr, "base_lr": cfg.head_lr}]
    if adapter:
        groups.append({"params": adapter, "lr": cfg.lr, "base_lr": cfg.lr})
    opt = torch.optim.AdamW(groups, weight_decay=cfg.weight_decay)
    per_epoch = math.ceil(n_examples / cfg.batch_size)
    total = max(1, per_epoch * cfg.epochs)
    warm = max(1, round(cfg.warmup * total))
    best_file, best_json = out_dir / C.CHECKPOINT / "best.safetensors", out_dir / C.CHECKPOINT / "best.json"
    best: dict[str, Any] = {"epoch": 0, "score": -math.inf, "selection": []}
    if resume and best_json.is_file():
        best = C.read_json(best_json)
    step_losses: list[float] = []

    def factor(step: int) -> float:
        return (step + 1) / warm if step < warm else max(0.0, (total - step) / max(1, total - warm))

    def run_epoch(ep: int) -> float:
        net.train()
        gen = torch.Generator().manual_seed(seed * 1000 + ep)
        done, n = 0.0, 0
        bar = C.progress_bar(total=per_epoch, enabled=progress, desc=f"epoch {ep + 1}", leave=False)
        for i, idx in enumerate(length_batches(lengths, cfg.batch_size, gen)):
            if max_steps is not None and len(step_losses) >= max_steps:
                break
            for g in opt.param_groups:
                g["lr"] = g["base_lr"] * factor(ep * per_epoch + i)
            loss = batch_loss(idx)
            C.optimizer_step(net, opt, loss, clip=1.0)
            done += loss.item() * len(idx)
            n += len(idx)
            step_losses.append(loss.item())
            bar.update(1)
        bar.close()
        net.eval()
        score = select_score()
        best["selection"].append(None if score is None else round(score, 5))
        if score is None or score > best["score"]:
            best.update(epoch=ep + 1, score=best["score"] if score is None else score)
            best_file.parent.mkdir(parents=True, exist_ok=True)
            C.save_tensors(best_file, net.shipped_tensors())
        C.write_json(best_json, best)
        return done / max(n, 1)

    state = C.train_epochs(net, opt, cfg.epochs, run_epoch, out_dir, step_losses, max_steps=max_steps,
                           resume=resume, max_minutes=max_minutes, seed=seed, progress=progress)
    if best_file.is_file():
        net.load_shipped(C.load_tensors(best_file))
    state["selection"] = best["selection"]
    state["best_epoch"] = best["epoch"]
    return state


def selection_scorer(task: TaskSpec, gold: Sequence[Example], predict: Callable[[Sequence[Example]], list[Example]]
                     ) -> Callable[[], float | None]:
    """``score()``: the task's headline metric of ``predict(gold inputs)`` on the selection slice
    (no bootstrap); None when the slice is empty (a train file too small to spare one)."""
    from ..base import model_input

    inputs = [model_input(task, g) for g in gold]

    def score() -> float | None:
        if not gold:
            return None
        ev = evaluate(task, list(gold), predict(inputs), n_boot=0)
        return float(ev.value or 0.0)
    return score


# ---------------------------------------------------------------------- the model card

@dataclass
class Run:
    """One fine-tuning run: the task, the data it read and how it split the train file, the
    encoder, the recipe; what the card reports (``state``, ``description`` once trained)."""

    task: TaskSpec
    out_dir: Path
    cfg: HeadConfig
    encoder_dir: Path
    train: list[Example]
    train_path: Path | None
    dev: list[Example]
    dev_path: Path | None
    fit: list[Example]                # train minus the selection slice
    select: list[Example]             # the selection slice
    threads: int
    t0: float
    data_dir: str | Path
    seed: int
    tried: list[str] = field(default_factory=list)
    description: str = ""
    state: C.TrainState | None = None
    data_notes: dict[str, Any] = field(default_factory=dict)
    # CMeIE (no train file): cmeie.split_data's account of the part trained on and the part scored
    split: dict[str, Any] | None = None
    training_notes: dict[str, Any] = field(default_factory=dict)   # more for the card's training

    def command_line(self) -> str:
        cmd = C.command_line(self.task.name, self.data_dir, self.out_dir, self.seed, self.threads)
        default = self.encoder_dir.resolve() == DEFAULT_ENCODER.resolve()
        return cmd + " --architecture encoder" + ("" if default else f" --encoder {self.encoder_dir}")


def write_card(run: Run, net: EncoderNet, dev_summary: dict, baselines: dict) -> ModelCard:
    """The card and README of a task model on the shared encoder (and the fingerprints of the
    training records, :func:`.common.record_training_data`)."""
    cfg, st = net.cfg, run.state
    if st is None:
        raise ValueError("write_card before training")
    card = ModelCard(name=run.out_dir.name, task=run.task.name, kind=cfg.kind, labels=list(cfg.labels),
                     description=run.description)
    data = {"train": C.data_source(run.train_path), "dev": C.data_source(run.dev_path), "train_examples": len(run.fit),
            "selection_examples": len(run.select), "dev_examples": len(run.dev)}
    split = (f"train file minus a fixed slice of {len(run.select)} of its examples for training; "
             "that slice (never dev) chooses the epoch; the official dev file for the reported score")
    held_out = bool(run.split and "held_out_indices" in run.split)
    if run.split:
        data.update(train=run.split["train"], dev=run.split["eval"], eval_examples=len(run.dev))
        split = (f"{run.split['split']}; a fixed slice of {len(run.select)} examples of the training part "
                 "(never of the scored part) chooses the epoch")
    if held_out:
        dev_summary = {**dev_summary, "notes": list(dev_summary.get("notes", [])) + [HELD_OUT_NOTE]}
    card.training = {
        "data": {**data, **run.data_notes},
        "split": split,
        "command": run.command_line(),
        "seed": run.seed, "epochs": st["epoch"], "losses": [round(v, 5) for v in st["losses"]],
        "selection_scores": st.get("selection", []), "best_epoch": st.get("best_epoch"),
        "stopped_early": st["stopped_early"], "time_s": round(st["time_s"], 1),
        "total_time_s": round(time.perf_counter() - run.t0, 1),
        "hyperparameters": {k: v for k, v in asdict(cfg).items()
                            if k not in ("labels", "task", "kind", "encoder", "encoder_sha1", "schemas")},
        "selection": "the epoch with the best headline score on the held-out slice of the train file",
        "tried": run.tried, "threads": run.threads,
    }
    card.training.update(run.training_notes)
    if held_out and run.split is not None:
        card.training["held_out_indices"] = run.split["held_out_indices"]
    card.dev_metrics = dev_summary
    card.baselines = baselines
    enc = encoder_card(run.encoder_dir)
    card.extra = {"encoder": {"path": cfg.encoder, "sha1": cfg.encoder_sha1, **enc},
                  "adapter": cfg.adapter,
                  "adapter_parameters": sum(v.numel() for v in C.load_tensors(run.out_dir / ADAPTER_FILE).values()),
                  "weights_dtype": "float32", "not_comparable_with_leaderboard": held_out}
    C.record_training_data(run.out_dir, card, run.train, sources=[str(data["train"])])
    return C.finish_card(run.out_dir, card, readme_text(card))



def readme_text(card: ModelCard) -> str:
    tr, enc = card.training, card.extra["encoder"]
    hp = tr["hyperparameters"]
    dev = C.fmt_metric(card.dev_metrics) if card.dev_metrics else "not measured (no dev file)"
    base = "; ".join(f"{name.replace('_', ' ')}: " + ", ".join(
        f"{k} {v:.4f}" for k, v in (b.get("metrics") or {}).items() if isinstance(v, (int, float)))
        for name, b in card.baselines.items()) or "n/a"
    partial = (f" **Partly trained encoder** (step {enc['partial']['steps']:,} of {enc['partial']['of']:,}): "
               "a trial, not a shipped figure." if enc.get("partial") else "")
    described = {"lora": f"LoRA (rank {hp['lora_rank']}, alpha {hp['lora_alpha']:g}) on "
                         f"{', '.join(hp['lora_targets'])}",
                 "bias": "the encoder's biases and LayerNorm weights (BitFit)",
                 "emb": "the word embeddings"}
    parts = [p for p in card.extra["adapter"].split("+") if p in described]
    adapter = " plus ".join(described[p] for p in parts) or "none (frozen encoder, head only)"
    tried = "\n".join(f"- {t}" for t in tr.get("tried", [])) or "- (not recorded)"
    held_out = card.extra.get("not_comparable_with_leaderboard")
    dec = tr.get("decoding")
    decoding = (f" Decoding thresholds (object, subject, pair) {tuple(dec['thresholds'].values())} chosen on "
                f"the same slice from {dec['grid']} (after each epoch, the epoch at its best): F1 "
                f"{dec['selection_f1']} there." if dec else "")
    warn = f"\n{NOT_COMPARABLE}\n" if held_out else ""
    scored = (f"{tr['data']['dev']} ({tr['data']['dev_examples']} examples; split: {tr['split']})" if held_out
              else f"the official dev file `{tr['data']['dev']}` ({tr['data']['dev_examples']} examples)")
    return f"""# {card.name}: {card.task} ({card.kind})
{warn}
**Task.** {card.task} ({get_task(card.task).description}); labels: {', '.join(card.labels)}.

**Architecture.** {card.description} Encoder: `{enc['path']}` (the shared character encoder,
{(enc.get('parameters') or 0):,} parameters, sha1 `{(enc.get('sha1') or '')[:12]}`, not in this folder);
adapter: {adapter}; {card.extra['adapter_parameters']:,} parameters here.{partial}

**Data.** Train: `{tr['data']['train']}` ({tr['data']['train_examples']} examples for training,
{tr['data']['selection_examples']} held out to choose the epoch). Scored on {scored} with CBLUE
Studio's evaluator (95% bootstrap interval, 1000 resamples).

**Training.** `{tr['command']}`; seed {tr['seed']}, {tr['epochs']} epochs (best: {tr['best_epoch']};
held-out slice scores {tr['selection_scores']}), {tr['time_s']} s on {tr['threads']} CPU thread(s).{decoding}

**{'Held-out' if held_out else 'Dev'} score.** {dev}.

**Baseline.** {base}.

**What was tried.**
{tried}

**Limitations.** A small encoder pretrained only on the CBLUE train text; research use only, not for
clinical decisions.
"""


__all__ = [
    "ADAPTER_FILE",
    "ADAPTER_PARTS",
    "DEFAULT_ENCODER",
    "ENCODER_REF",
    "ENCODER_SHA1",
    "EncoderNet",
    "HeadConfig",
    "LoRALinear",
    "Run",
    "add_adapter",
    "build_encoder",
    "encoder_ref",
    "fine_tune",
    "length_batches",
    "load_net",
    "merge_adapter",
    "new_net",
    "save_model",
    "selection_scorer",
    "selection_split",
    "write_card",
]
