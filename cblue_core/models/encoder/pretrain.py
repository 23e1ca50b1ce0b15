"""Masked-language-model pretraining of the shared character encoder, on a CPU, resumable.

A stock ``BertForMaskedLM`` from a ``BertConfig``; AdamW with linear warm-up and linear decay to
zero over a fixed number of steps (the recipe, :class:`PretrainConfig`), so that a run cut by
``max_minutes`` or ``max_steps`` and resumed ends exactly where an uninterrupted one does:
the data order of each pass, the masks and the dropout of each step are seeded by the step, and
``out_dir/checkpoint/`` (``builtin.common.Checkpoint``: safetensors + JSON, never pickle) holds
the weights, the optimizer state and the progress. The held-out slice of the train text is
scored every ``eval_every`` steps; when the last step is done the model folder is exported
(:mod:`.export`).
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, NotRequired, cast

import torch

from ..builtin.common import (
    AUTO_PRECISION,
    Checkpoint,
    TrainState,
    autocast,
    check_precision,
    native_bf16,
    optimizer_step,
    progress_bar,
    training_threads,
)
from . import continuation as C
from . import data as D
from .corpus import Corpus, build_corpus
from .vocab import build_vocab, load_tokenizer, read_vocab, save_tokenizer

TOKENIZER_DIR = "tokenizer"    # out_dir/tokenizer: the vocabulary fixed at the start of a run


@dataclass
class PretrainConfig:
    """The recipe. Its defaults are the shipped encoder's; tests pass tiny ``overrides``."""

    hidden: int = 256
    layers: int = 4
    heads: int = 4
    intermediate: int = 1024
    max_len: int = 128             # tokens per packed sequence, [CLS] and [SEP]s included
    min_count: int = 2             # a piece seen fewer times in the train text is [UNK]
    max_vocab: int = 8000
    dropout: float = 0.1
    batch_size: int = 32           # sequences per step
    steps: int = 4500              # the whole run; fixed so that a resumed run ends at the same place
    warmup_steps: int = 300
    lr: float = 5e-4
    weight_decay: float = 0.01
    clip: float = 1.0
    mask_prob: float = 0.15
    eval_every: int = 250          # steps between held-out scores
    eval_sequences: int = 256      # held-out packed sequences scored (a fixed, fixed-mask set)
    log_every: int = 50
    checkpoint_minutes: float = 5.0
    precision: str = "fp32"        # common.PRECISIONS ("auto" settled first); held-out scores are always fp32

    def __post_init__(self) -> None:
        check_precision(self.precision)

    def model_config(self, vocab_size: int, sp: D.Specials):
        from transformers import BertConfig

        return BertConfig(vocab_size=vocab_size, hidden_size=self.hidden, num_hidden_layers=self.layers,
                          num_attention_heads=self.heads, intermediate_size=self.intermediate,
                          max_position_embeddings=self.max_len, type_vocab_size=2,
                          hidden_dropout_prob=self.dropout, attention_probs_dropout_prob=self.dropout,
                          pad_token_id=sp.pad, tie_word_embeddings=True)

    def lr_at(self, step: int) -> float:
        """Learning rate of update ``step`` (0-based): linear warm-up, then linear decay to 0."""
        if step < self.warmup_steps:
            return self.lr * (step + 1) / self.warmup_steps
        return self.lr * max(0.0, (self.steps - step) / max(1, self.steps - self.warmup_steps))


def make_config(overrides: dict | None = None) -> PretrainConfig:
    names = {f.name for f in fields(PretrainConfig)}
    unknown = set(overrides or {}) - names
    if unknown:
        raise ValueError(f"unknown pretraining settings: {', '.join(sorted(unknown))}")
    return PretrainConfig(**(overrides or {}))


class PretrainState(TrainState):
    """``checkpoint/state.json``: :class:`TrainState` (``epoch`` = passes begun, ``losses`` = mean
    loss of each finished pass) plus the step-level progress."""

    step: int                       # updates done
    epoch_step: int                 # batches of the current pass done
    tokens: int                     # text tokens seen ([CLS], [SEP] and padding not counted)
    masked: int                     # tokens predicted
    cpu_s: float                    # process CPU seconds, summed over resumed runs
    epoch_loss: list[float]         # [sum, count] of the current pass
    train_curve: list[list[float]]  # [step, mean training loss since the previous point, lr]
    heldout_curve: list[list[float]]  # [step, held-out loss, held-out accuracy]
    window: list[float]             # training losses since the last train_curve point
    recipe: dict[str, Any]
    seed: int
    corpus_sha1: str
    base: NotRequired[dict[str, Any]]   # a continued stage: what it kept of the encoder it started from


@dataclass
class PretrainResult:
    out_dir: Path
    state: PretrainState
    finished: bool                  # every step of the recipe done (and the folder exported)
    corpus: Corpus
    config: PretrainConfig
    threads: int
    corpus_tokens: int              # tokens of the training pieces (one pass), specials excluded


def corpus_fingerprint(corpus: Corpus) -> str:
    h = hashlib.sha1()
    for s in corpus.sources:
        h.update(f"{s.kind}\t{s.task}\t{s.sha1}\n".encode())
    return h.hexdigest()


def _param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict]:
    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "LayerNorm" in name else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def mlm_loss(model, input_ids: torch.Tensor, types: torch.Tensor, attn: torch.Tensor,
             labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy over the masked positions only (the vocabulary projection of the stock MLM
    head applied to those rows, not to every token). Returns ``(loss, correct predictions)``."""
    hidden = model.bert(input_ids=input_ids, token_type_ids=types, attention_mask=attn).last_hidden_state
    where = labels != -100
    logits = model.cls(hidden[where]).float()   # the softmax in fp32 under autocast
    gold = labels[where]
    loss = torch.nn.functional.cross_entropy(logits, gold)
    return loss, (logits.argmax(-1) == gold).sum()


@torch.no_grad()
def evaluate(model, batches: list[tuple[torch.Tensor, ...]]) -> tuple[float, float]:
    """Mean masked-token loss and accuracy of the held-out batches (model left in train mode)."""
    model.eval()
    total, correct, count = 0.0, 0, 0
    for input_ids, types, attn, labels in batches:
        loss, ok = mlm_loss(model, input_ids, types, attn, labels)
        n = int((labels != -100).sum())
        total += float(loss) * n
        correct += int(ok)
        count += n
    model.train()
    return total / max(count, 1), correct / max(count, 1)


def heldout_batches(corpus: Corpus, tokenizer, cfg: PretrainConfig, sp: D.Specials, seed: int
                    ) -> list[tuple[torch.Tensor, ...]]:
    """The fixed held-out set: held-out texts packed in corpus order, masked once with a fixed seed."""
    pieces = D.encode(tokenizer, corpus.held_out, cfg.max_len)
    seqs = D.pack(pieces, range(len(pieces)), cfg.max_len, sp)[:cfg.eval_sequences]
    gen = torch.Generator().manual_seed(seed + 7_000_003)
    out: list[tuple[torch.Tensor, ...]] = []
    for i in range(0, len(seqs), 64):
        input_ids, types, attn = D.collate(seqs[i:i + 64], sp.pad)
        masked, labels = D.mask_tokens(input_ids, sp, cfg.mask_prob, gen)
        out.append((masked, types, attn, labels))
    return out


def _vocabulary(out_dir: Path, corpus: Corpus, cfg: PretrainConfig, resume: bool,
                base: dict[str, Any] | None) -> list[str]:
    """The run's vocabulary: built from the train text at the start (a continued stage keeps its
    base's), re-read when resuming."""
    folder = out_dir / TOKENIZER_DIR
    if resume and (folder / "vocab.txt").is_file():
        return read_vocab(folder)
    tokens = base["vocab"] if base is not None else build_vocab(corpus.train, cfg.min_count, cfg.max_vocab)
    save_tokenizer(tokens, folder, cfg.max_len)
    return tokens


@functools.cache
def _libc():
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:   # not glibc
        return None


def release_freed_memory() -> None:
    """Hand the memory torch has freed back to the system. glibc keeps it otherwise: with batches
    of varying shapes the full run grew by about 100 MB a minute (3 GB after 9 minutes, 0.9 GB
    after a ``malloc_trim``), which would not have lasted the run."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def _log(msg: str) -> None:
    print(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] {msg}", flush=True)


def _fresh_state(cfg: PretrainConfig, seed: int, fingerprint: str) -> PretrainState:
    return {"epoch": 0, "losses": [], "time_s": 0.0, "stopped_early": False, "step": 0, "epoch_step": 0,
            "tokens": 0, "masked": 0, "cpu_s": 0.0, "epoch_loss": [0.0, 0.0], "train_curve": [],
            "heldout_curve": [], "window": [], "recipe": asdict(cfg), "seed": seed,
            "corpus_sha1": fingerprint}


def _check_same_base(state: PretrainState, base: dict[str, Any] | None) -> None:
    """A checkpoint of a continued stage resumes only as that stage, from the same weights."""
    kept = state.get("base")
    if (kept is None) != (base is None):
        raise ValueError("the checkpoint is a continued stage: resume it with --continue-from its base folder"
                         if kept is not None else
                         "the checkpoint is not a continued stage: resume it without --continue-from")
    if kept is not None:
        C.check_unchanged(kept)


# Settings that change what is logged, never the weights: they may differ on resume.
REPORTING = frozenset({"eval_every", "eval_sequences", "log_every", "checkpoint_minutes"})


def _check_resumable(state: PretrainState, cfg: PretrainConfig, seed: int, fingerprint: str) -> None:
    """A checkpoint continues only under the recipe that made it (a setting added to the recipe
    since then must keep its default; the reporting settings may change)."""
    now, then = asdict(cfg), state["recipe"]
    defaults = asdict(PretrainConfig())
    diff = sorted(k for k, v in now.items()
                  if k not in REPORTING and then.get(k, defaults[k]) != v)
    if diff:
        raise ValueError(f"the checkpoint was made with other settings ({', '.join(diff)}); "
                         "resume with the same ones or start afresh without --resume")
    if state["seed"] != seed:
        raise ValueError(f"the checkpoint was made with --seed {state['seed']}, not {seed}")
    if state["corpus_sha1"] != fingerprint:
        raise ValueError("the checkpoint was made on other data files (corpus fingerprint differs)")


def settled_overrides(overrides: dict | None, out_dir: Path, resume: bool) -> dict | None:
    """``overrides`` with an "auto" precision settled. A resumed run keeps its checkpoint's, so that
    it ends where an uninterrupted run does; a new run takes bf16 where the CPU computes it natively
    and fp32 elsewhere (emulated bf16 is 25x slower than fp32)."""
    if (overrides or {}).get("precision") != AUTO_PRECISION:
        return overrides
    ckpt = Checkpoint(out_dir)
    if resume and ckpt.exists():
        precision = cast(PretrainState, ckpt.state())["recipe"].get("precision", "fp32")
        if precision == "bf16" and not native_bf16():
            _log("warning: the checkpoint was made in bf16 and this CPU has no native bf16; each update "
                 "will be many times slower than in fp32 (start afresh to train in fp32 here)")
    else:
        precision = "bf16" if native_bf16() else "fp32"
    return {**(overrides or {}), "precision": precision}


def pretrain(data_dir: str | Path, out_dir: str | Path, *, seed: int = 0, resume: bool = False,
             max_minutes: float | None = None, max_steps: int | None = None, progress: bool = True,
             overrides: dict | None = None, command: str = "",
             init_from: str | Path | None = None) -> PretrainResult:
    """Pretrain (or continue, with ``resume``) the encoder on the train text of ``data_dir``.

    Stops, checkpointed, when this invocation has run ``max_minutes`` (wall clock) or the run
    has reached update ``max_steps`` (of this stage); ``resume`` continues from
    ``out_dir/checkpoint``. ``init_from``: a finished encoder folder this run continues as a
    new stage (its weights and vocabulary; :mod:`.continuation`). When the recipe's last step
    is done, writes the model folder into ``out_dir`` (see :func:`.export.export`)."""
    base = C.read_base(init_from) if init_from is not None else None
    overrides = settled_overrides(overrides, Path(out_dir), resume)
    if base is None:
        cfg = make_config(overrides)
    else:   # the base's recipe, its schedule replaced by the stage's
        cfg = make_config({**C.recipe_of(base), **(overrides or {})})
        C.check_base(base, asdict(cfg))
    threads = training_threads()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_start, cpu_start = time.perf_counter(), time.process_time()

    corpus = build_corpus(data_dir)
    fingerprint = corpus_fingerprint(corpus)
    tokens = _vocabulary(out_dir, corpus, cfg, resume, base)
    tokenizer = load_tokenizer(out_dir / TOKENIZER_DIR)
    if len(tokenizer) != len(tokens):
        raise RuntimeError(f"tokenizer has {len(tokenizer)} tokens, vocabulary {len(tokens)}")
    sp = D.specials_of(tokenizer)
    pieces = D.encode(tokenizer, corpus.train, cfg.max_len)
    heldout = heldout_batches(corpus, tokenizer, cfg, sp, seed)
    _log(f"corpus: {len(corpus.train)} train texts ({sum(map(len, corpus.train))} chars, "
         f"{len(pieces)} pieces, {sum(map(len, pieces))} tokens), {len(corpus.held_out)} held out; "
         f"vocabulary {len(tokens)}; {threads} thread(s), {cfg.precision}")

    from transformers import BertForMaskedLM

    torch.manual_seed(seed)
    ckpt = Checkpoint(out_dir)
    resuming = resume and ckpt.exists()
    if resuming:
        saved = cast(PretrainState, ckpt.state())
        _check_same_base(saved, base)
        _check_resumable(saved, cfg, seed, fingerprint)
    if base is not None and not resuming:
        model = BertForMaskedLM.from_pretrained(base["folder"])
    else:
        model = BertForMaskedLM(cfg.model_config(len(tokens), sp))
    model.train()
    opt = torch.optim.AdamW(_param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=(0.9, 0.98), eps=1e-6)
    state = _fresh_state(cfg, seed, fingerprint)
    if base is not None:
        state["base"] = {k: v for k, v in base.items() if k != "vocab"}
    if resuming:
        state = cast(PretrainState, ckpt.load(model, opt))
        _log(f"resumed at step {state['step']} of {cfg.steps}")
    # A continued stage counts its updates after its base's, and draws other masks and orders.
    offset = state["base"]["steps"] if "base" in state else 0
    base_wall, base_cpu = state["time_s"], state["cpu_s"]

    def save() -> None:
        state["time_s"] = base_wall + time.perf_counter() - t_start
        state["cpu_s"] = base_cpu + time.process_time() - cpu_start
        ckpt.save(model, opt, state)

    if state["step"] == 0 and not state["heldout_curve"]:
        h_loss, h_acc = evaluate(model, heldout)
        state["heldout_curve"].append([offset, round(h_loss, 5), round(h_acc, 5)])
        _log(f"held-out at step {offset}: loss {h_loss:.4f} acc {h_acc:.4f}")

    bar = progress_bar(total=cfg.steps, initial=state["step"], enabled=progress, desc="pretrain")
    seqs = D.epoch_sequences(pieces, cfg.max_len, sp, seed + offset, state["epoch"])
    window = state["window"]
    last_ckpt = t_window = time.perf_counter()
    timed = 0                            # steps since t_window (the window may predate a resume)
    step_s = 0.0
    stop = min(cfg.steps, max_steps) if max_steps is not None else cfg.steps
    while state["step"] < stop:
        if max_minutes is not None and time.perf_counter() - t_start + step_s > max_minutes * 60:
            state["stopped_early"] = True
            break
        t0 = time.perf_counter()
        start = state["epoch_step"] * cfg.batch_size
        if start >= len(seqs):           # the pass is over: record it, pack the next one
            s, n = state["epoch_loss"]
            state["losses"].append(round(s / max(n, 1), 5))
            state["epoch"] += 1
            state["epoch_step"], state["epoch_loss"] = 0, [0.0, 0.0]
            seqs = D.epoch_sequences(pieces, cfg.max_len, sp, seed + offset, state["epoch"])
            start = 0
        step = state["step"]
        input_ids, types, attn = D.collate(seqs[start:start + cfg.batch_size], sp.pad)
        gen = torch.Generator().manual_seed(seed * 1_000_003 + offset + step)
        masked, labels = D.mask_tokens(input_ids, sp, cfg.mask_prob, gen)
        torch.manual_seed(seed * 1_000_033 + offset + step)      # dropout of this step
        for group in opt.param_groups:
            group["lr"] = cfg.lr_at(step)
        with autocast(cfg.precision):
            loss, _ = mlm_loss(model, masked, types, attn, labels)
        optimizer_step(model, opt, loss, cfg.clip)
        value = loss.item()
        if not math.isfinite(value):
            raise FloatingPointError(f"loss is {value} at step {step}")
        state["step"] = step + 1
        state["epoch_step"] += 1
        state["tokens"] += int(((input_ids >= sp.first_normal) | (input_ids == sp.unk)).sum())
        state["masked"] += int((labels != -100).sum())
        state["epoch_loss"] = [state["epoch_loss"][0] + value, state["epoch_loss"][1] + 1]
        window.append(value)
        timed += 1
        step_s = time.perf_counter() - t0
        bar.update(1)
        if state["step"] % cfg.log_every == 0 or state["step"] == cfg.steps:
            mean = sum(window) / len(window)
            state["train_curve"].append([offset + state["step"], round(mean, 5), cfg.lr_at(step)])
            per_step = (time.perf_counter() - t_window) / timed
            window.clear()
            release_freed_memory()
            t_window, timed = time.perf_counter(), 0
            _log(f"step {state['step']}/{cfg.steps} loss {mean:.4f} lr {cfg.lr_at(step):.2e} "
                 f"pass {state['epoch']} tokens {state['tokens']} {per_step:.3f} s/step")
            bar.set_postfix(loss=f"{mean:.3f}")
        if state["step"] % cfg.eval_every == 0 or state["step"] == cfg.steps:
            h_loss, h_acc = evaluate(model, heldout)
            state["heldout_curve"].append([offset + state["step"], round(h_loss, 5), round(h_acc, 5)])
            _log(f"held-out at step {offset + state['step']}: loss {h_loss:.4f} acc {h_acc:.4f}")
        if time.perf_counter() - last_ckpt > cfg.checkpoint_minutes * 60:
            save()
            last_ckpt = time.perf_counter()
            _log(f"checkpoint at step {state['step']}")
    bar.close()
    finished = state["step"] >= cfg.steps
    state["stopped_early"] = not finished
    save()
    _log(f"checkpoint at step {state['step']} ({'finished' if finished else 'stopped; continue with --resume'})")
    result = PretrainResult(out_dir, state, finished, corpus, cfg, threads, sum(map(len, pieces)))
    if finished:
        from .export import export

        export(result, model, tokens, seed=seed, data_dir=data_dir, command=command)
        _log(f"exported the model folder to {out_dir}")
    return result


def export_checkpoint(run_dir: str | Path, out_dir: str | Path, data_dir: str | Path, *,
                      threads: int = 1) -> PretrainResult:
    """Export the last checkpoint of a pretraining run in ``run_dir`` (finished or not) as a model
    folder in ``out_dir``, for trials of the task models before the run ends; an unfinished one
    says so in its card (``extra.partial``). ``threads``: those the run used (the checkpoint does
    not record them). Reads ``run_dir`` only: copy a live run's folder first, since its checkpoint
    is rewritten every few minutes."""
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    ckpt = Checkpoint(run_dir)
    if not ckpt.exists():
        raise FileNotFoundError(f"no pretraining checkpoint in {run_dir / 'checkpoint'}")
    blob = json.loads((ckpt.dir / "state.json").read_text(encoding="utf-8"))
    state = cast(PretrainState, blob["state"])
    cfg = make_config({k: v for k, v in state["recipe"].items() if k in {f.name for f in fields(PretrainConfig)}})
    tokens = read_vocab(run_dir / TOKENIZER_DIR)
    tokenizer = load_tokenizer(run_dir / TOKENIZER_DIR)
    corpus = build_corpus(data_dir)
    if corpus_fingerprint(corpus) != state["corpus_sha1"]:
        raise ValueError("the checkpoint was made on other data files (corpus fingerprint differs)")
    pieces = D.encode(tokenizer, corpus.train, cfg.max_len)

    from transformers import BertForMaskedLM

    model = BertForMaskedLM(cfg.model_config(len(tokens), D.specials_of(tokenizer)))
    ckpt.load(model, None)
    out_dir.mkdir(parents=True, exist_ok=True)
    result = PretrainResult(out_dir, state, state["step"] >= cfg.steps, corpus, cfg,
                            threads, sum(map(len, pieces)))
    from .export import export

    export(result, model, tokens, seed=state["seed"], data_dir=data_dir,
           command=f"python -m cblue_core pretrain --data {data_dir} --out {run_dir}"
                   + (f" --seed {state['seed']}" if state["seed"] else ""))
    return result
