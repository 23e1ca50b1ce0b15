"""Shared plumbing of the built-in models: data files, seeds, safetensors checkpoints, model cards.

Nothing here knows a model architecture. Every built-in model folder holds ``*.safetensors``
weights (never pickle), a ``config.json``, its vocabulary and ``model_card.json``; training
checkpoints (``out_dir/checkpoint/``) use the same formats so that resuming never unpickles.
"""
from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, NotRequired, Self, TypedDict, overload

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from ...io.atomic import write_text_atomic
from ...io.validate import load
from ...records import Example
from ...tasks import TaskSpec, get_task
from ..base import ModelCard, Predictor, folder_size

CHECKPOINT = "checkpoint"
CARD_FILE = "model_card.json"


# ---------------------------------------------------------------------- environment

def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    torch.manual_seed(seed)


DEFAULT_TRAIN_THREADS = 2


def training_threads(n: int | None = None) -> int:
    """Threads for training: ``CBLUE_TRAIN_THREADS`` (default 2, never more than 2: the
    training machine has 2 cores shared with others). On a busy machine 1 thread is faster
    than 2 (the second thread's barrier waits stall every operation), hence the variable."""
    if n is None:
        n = int(os.environ.get("CBLUE_TRAIN_THREADS", "") or DEFAULT_TRAIN_THREADS)
    n = max(1, min(DEFAULT_TRAIN_THREADS, n))
    try:
        torch.set_num_threads(n)
    except RuntimeError:  # pragma: no cover - set after parallel work started
        pass
    return n


def progress_bar(iterable: Iterable | None = None, *, enabled: bool = True, **kw):
    """A tqdm bar on stderr (a plain iterator when disabled)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not enabled, file=sys.stderr, dynamic_ncols=True,
                mininterval=1.0, **kw)


# ---------------------------------------------------------------------- data

def task_dir(data_dir: str | Path, task: TaskSpec) -> Path:
    """``data_dir/<Task>/``, or ``data_dir`` itself when it already is the task folder."""
    data_dir = Path(data_dir)
    sub = data_dir / task.name
    if sub.is_dir():
        return sub
    if any((data_dir / f).exists() for f in task.files.values()):
        return data_dir
    raise FileNotFoundError(f"no {task.name} folder under {data_dir}")


def find_split(data_dir: str | Path, task: TaskSpec, split: str) -> Path | None:
    """The official file of ``split`` (``CMeEE_train.json``), else ``<Task>_<split>*.json``
    (the rebuilt ``CMeEE_train.from_chip2020.json``), else None."""
    folder = task_dir(data_dir, task)
    name = task.files.get(split)
    if name and (folder / name).is_file():
        return folder / name
    stem = f"{task.name}_{split}"
    hits = sorted(p for p in folder.glob(f"{stem}*")
                  if p.is_file() and p.suffix in (".json", ".jsonl") and ".pred." not in p.name)
    return hits[0] if hits else None


def load_split(data_dir: str | Path, task: TaskSpec, split: str) -> tuple[list[Example], Path | None]:
    path = find_split(data_dir, task, split)
    if path is None:
        return [], None
    return load(path, task).examples, path


@overload
def gold_label(task: TaskSpec, label: str) -> str: ...
@overload
def gold_label(task: TaskSpec, label: None) -> None: ...
@overload
def gold_label(task: TaskSpec, label: str | None) -> str | None: ...


def gold_label(task: TaskSpec, label: str | None) -> str | None:
    """KUAKE-QQR dev has one ``NA``: read as ``0`` as the CBLUE baseline (and our scorer) do."""
    if label == "NA" and "0" in task.label_codes:
        return "0"
    return label


def task_labels(task: TaskSpec, examples: Sequence[Example]) -> list[str]:
    """A classifier's labels: the task's codes, else those of the training examples (sorted)."""
    return list(task.label_codes) or sorted({gold_label(task, e.label) for e in examples if e.label})


def weighted_ce(y: torch.Tensor, n_labels: int, power: float) -> torch.nn.Module:
    """Cross-entropy with class weights ``(N / count) ** power`` (normalised so that the mean
    weight of a training example is 1); plain cross-entropy when ``power <= 0``."""
    if power <= 0:
        return torch.nn.CrossEntropyLoss()
    counts = torch.bincount(y, minlength=n_labels).float().clamp(min=1)
    w = (counts.sum() / counts) ** power
    w = w / (w * counts).sum() * counts.sum()
    return torch.nn.CrossEntropyLoss(weight=w)


def label_predictions(batch: Sequence[Example], labels: Sequence[str], probs: torch.Tensor) -> list[Example]:
    """One prediction per example: the most probable label, every label's probability in
    ``meta["probabilities"]``."""
    out = []
    for ex, p in zip(batch, probs.tolist()):
        best = max(range(len(p)), key=p.__getitem__)
        out.append(Example(key=ex.key, index=ex.index, text=ex.text, text2=ex.text2, label=labels[best],
                           meta={"probabilities": {l: round(v, 6) for l, v in zip(labels, p)}}))
    return out


def seeded_split(n: int, seed: int, train_fraction: float = 0.8) -> tuple[list[int], list[int]]:
    """Indices of a fixed split: a ``numpy.random.RandomState(seed)`` permutation, first
    ``train_fraction`` for training, the rest held out (both returned sorted)."""
    perm = np.random.RandomState(seed).permutation(n)
    k = round(n * train_fraction)
    return sorted(perm[:k].tolist()), sorted(perm[k:].tolist())


# ---------------------------------------------------------------------- tensors on disk

def save_tensors(path: str | Path, tensors: dict[str, torch.Tensor], half: Sequence[str] = (),
                 metadata: dict[str, str] | None = None) -> None:
    """Save a state dict as safetensors; float tensors whose name starts with a prefix in
    ``half`` are stored as float16. A tensor sharing storage with an earlier one (tied weights,
    e.g. a masked-LM decoder and its word embeddings) is stored as a copy: safetensors refuses
    shared storage, and loading the copy into the tied parameter is harmless."""
    out = {}
    seen: set[int] = set()
    for k, v in tensors.items():
        v = v.detach().cpu().contiguous()
        ptr = v.untyped_storage().data_ptr()
        v = v.clone() if ptr in seen else v
        seen.add(ptr)
        if v.is_floating_point() and any(k.startswith(h) for h in half):
            v = v.half()
        out[k] = v
    save_file(out, str(path), metadata=metadata)


def load_tensors(path: str | Path, device: str = "cpu") -> dict[str, torch.Tensor]:
    """Load safetensors, float16 widened to float32 (CPU kernels want float32)."""
    sd = load_file(str(path), device="cpu")
    return {k: (v.float() if v.dtype == torch.float16 else v).to(device) for k, v in sd.items()}


def optimizer_to_tensors(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    sd = opt.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    for pid, st in sd["state"].items():
        for name, val in st.items():
            tensors[f"{pid}.{name}"] = val if torch.is_tensor(val) else torch.tensor(val)
    return tensors, {"param_groups": sd["param_groups"]}


def optimizer_from_tensors(opt: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], meta: dict) -> None:
    state: dict[int, dict[str, Any]] = {}
    for key, val in tensors.items():
        pid, name = key.split(".", 1)
        state.setdefault(int(pid), {})[name] = val
    opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})


class TrainState(TypedDict):
    """What :func:`epoch_loop` returns and ``checkpoint/state.json`` holds."""

    epoch: int                    # epochs done
    losses: list[float]           # mean loss per epoch
    time_s: float                 # training seconds, summed over resumed runs
    stopped_early: bool           # cut by ``max_minutes``
    scheduler: NotRequired[dict[str, Any]]    # the LR scheduler's state dict, when there is one
    step_losses: NotRequired[list[float]]     # per-step losses (:func:`train_epochs`)
    selection: NotRequired[list[float]]       # held-out score per epoch (finetune.fine_tune)
    best_epoch: NotRequired[int]              # the epoch those scores chose


class Checkpoint:
    """``out_dir/checkpoint/``: model and optimizer as safetensors, progress as JSON."""

    def __init__(self, out_dir: str | Path):
        self.dir = Path(out_dir) / CHECKPOINT

    def exists(self) -> bool:
        return (self.dir / "state.json").is_file()

    def save(self, model: torch.nn.Module, opt: torch.optim.Optimizer | None, state: TrainState) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        save_tensors(self.dir / "model.safetensors", model.state_dict())
        meta: dict = {}
        if opt is not None:
            tensors, meta = optimizer_to_tensors(opt)
            save_tensors(self.dir / "optimizer.safetensors", tensors)
        write_text_atomic(self.dir / "state.json",
                          json.dumps({"state": state, "optimizer": meta}, ensure_ascii=False))

    def state(self) -> TrainState:
        """The progress alone, to check a checkpoint before building a model for it."""
        return json.loads((self.dir / "state.json").read_text())["state"]

    def load(self, model: torch.nn.Module, opt: torch.optim.Optimizer | None) -> TrainState:
        blob = json.loads((self.dir / "state.json").read_text())
        model.load_state_dict(load_file(str(self.dir / "model.safetensors")))
        if opt is not None and (self.dir / "optimizer.safetensors").is_file():
            optimizer_from_tensors(opt, load_file(str(self.dir / "optimizer.safetensors")),
                                   blob["optimizer"])
        return blob["state"]

    def clear(self) -> None:
        if self.dir.is_dir():
            for p in self.dir.iterdir():
                p.unlink()
            self.dir.rmdir()


def epoch_loop(model: torch.nn.Module, opt: torch.optim.Optimizer, epochs: int, run_epoch,
               out_dir: str | Path, *, resume: bool, max_minutes: float, seed: int,
               progress: bool, scheduler=None, done=None) -> TrainState:
    """Run ``run_epoch(epoch) -> mean loss`` for ``epochs`` epochs, checkpointing after each and
    resuming from ``out_dir/checkpoint`` when asked. Stops early (after a whole epoch) when
    ``max_minutes`` would be exceeded by another epoch, or when ``done()`` says so. Returns the training state: epochs
    done, per-epoch losses, seconds (summed over resumed runs)."""
    ckpt = Checkpoint(out_dir)
    state: TrainState = {"epoch": 0, "losses": [], "time_s": 0.0, "stopped_early": False}
    if resume and ckpt.exists():
        state = ckpt.load(model, opt)
        if scheduler is not None and "scheduler" in state:
            scheduler.load_state_dict(state["scheduler"])
    start = time.perf_counter()
    base = state["time_s"]
    bar = progress_bar(total=epochs, initial=state["epoch"], enabled=progress, desc="epochs")
    while state["epoch"] < epochs:
        ep = state["epoch"]
        set_seed(seed * 1000 + ep)       # per-epoch seed: a resumed run shuffles the same way
        t0 = time.perf_counter()
        loss = float(run_epoch(ep))
        if scheduler is not None:
            scheduler.step()
            state["scheduler"] = scheduler.state_dict()
        state["epoch"] = ep + 1
        state["losses"].append(loss)
        state["time_s"] = base + time.perf_counter() - start
        ckpt.save(model, opt, state)
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.4f}")
        per_epoch = time.perf_counter() - t0
        if state["epoch"] < epochs and state["time_s"] + per_epoch > max_minutes * 60:
            state["stopped_early"] = True
            break
        if done is not None and done():
            break
    bar.close()
    return state


# ---------------------------------------------------------------------- cards

def write_json(path: str | Path, obj: Any) -> None:
    Path(path).write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def read_json(path: str | Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def read_card(folder: str | Path) -> ModelCard:
    d = read_json(Path(folder) / CARD_FILE)
    fields = set(ModelCard.__dataclass_fields__)
    return ModelCard(**{k: v for k, v in d.items() if k in fields})


def finish_card(folder: str | Path, card: ModelCard, readme: str | None = None) -> ModelCard:
    """Write README.md and model_card.json; ``size_bytes`` counts the shipped files (the
    checkpoint folder excluded)."""
    folder = Path(folder)
    if readme is not None:
        (folder / "README.md").write_text(readme, encoding="utf-8")
    write_json(folder / CARD_FILE, asdict(card))
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    card.size_bytes = size
    write_json(folder / CARD_FILE, asdict(card))
    # the card's own size may change by a digit; one more pass makes it exact
    size2 = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    if size2 != size:
        card.size_bytes = size2
        write_json(folder / CARD_FILE, asdict(card))
    return card


def shipped_size(folder: str | Path) -> int:
    return folder_size(folder) - (folder_size(Path(folder) / CHECKPOINT)
                                  if (Path(folder) / CHECKPOINT).is_dir() else 0)


# A training recipe's precision: "bf16" runs the heavy forward pass under CPU autocast to bfloat16
# (weights, gradients, optimizer state and losses stay float32); on a CPU with AMX it halves the
# step time of the encoders and the BiLSTMs.
PRECISIONS = ("fp32", "bf16")
# A recipe may also ask for "auto": bf16 where the CPU computes it natively, fp32 elsewhere, settled
# when a run starts (encoder.pretrain.settled_overrides).
AUTO_PRECISION = "auto"


def check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")


def native_bf16() -> bool:
    """Whether this CPU computes bfloat16 in hardware (AMX tiles or AVX-512 BF16). Without it torch
    emulates bf16 matrix products: a pretraining update took 25 s on a 2-core AVX2 EPYC, against
    0.5-0.65 s in bf16 on AMX and about 1 s in fp32."""
    # private probes of torch.cpu (no public one exists); a torch without them counts as no
    probes = (getattr(torch.cpu, name, None) for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"))
    return any(probe() for probe in probes if probe is not None)


def check_trainable(precision: str) -> None:
    """ValueError unless a recurrent network can train in ``precision`` on this CPU: without native
    bf16, oneDNN cannot build a bf16 LSTM at all (and emulated bf16 would be slower than fp32)."""
    check_precision(precision)
    if precision == "bf16" and not native_bf16():
        raise ValueError("precision bf16 needs a CPU that computes bf16 natively (AMX or AVX-512 BF16), "
                         "which this one does not: train in fp32")


def autocast(precision: str):
    """The context a training forward pass runs in under ``precision``."""
    check_precision(precision)
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16")


def optimizer_step(net: torch.nn.Module, opt: torch.optim.Optimizer, loss: torch.Tensor,
                   clip: float | None = None) -> None:
    """One update: gradients of ``loss``, clipped to norm ``clip`` when given, then a step."""
    opt.zero_grad()
    loss.backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
    opt.step()


def shuffled_steps(jobs: Sequence[Any], loss_of, net: torch.nn.Module, opt: torch.optim.Optimizer,
                   step_losses: list[float], *, max_steps: int | None, progress: bool, desc: str) -> float:
    """One epoch of optimizer steps, one per job in a random order (gradients clipped at 5),
    stopping once ``step_losses`` holds ``max_steps``. ``loss_of(job)`` returns ``(loss,
    counted)``: a counted job's loss is recorded in ``step_losses`` and in the returned mean
    (an auxiliary task's steps train without being counted)."""
    perm = torch.randperm(len(jobs)).tolist()
    total, n = 0.0, 0
    bar = progress_bar(total=len(jobs), enabled=progress, desc=desc, leave=False)
    for j in perm:
        if max_steps is not None and len(step_losses) >= max_steps:
            break
        loss, counted = loss_of(jobs[j])
        optimizer_step(net, opt, loss, clip=5.0)
        if counted:
            total += loss.item()
            n += 1
            step_losses.append(loss.item())
        bar.update(1)
    bar.close()
    return total / max(n, 1)


def train_epochs(net: torch.nn.Module, opt: torch.optim.Optimizer, epochs: int, run_epoch, out_dir,
                 step_losses: list[float], *, max_steps: int | None, **loop) -> TrainState:
    """:func:`epoch_loop` until ``epochs`` (or ``max_steps`` recorded step losses), then the net in
    eval mode; the state carries ``step_losses``."""
    state = epoch_loop(net, opt, epochs, run_epoch, out_dir,
                       done=lambda: max_steps is not None and len(step_losses) >= max_steps, **loop)
    state["step_losses"] = step_losses
    net.eval()
    return state


def start_training(task_name: str, out_dir: str | Path) -> tuple[int, TaskSpec, Path, float]:
    """The opening of every ``train``: threads set, task looked up, output folder made, clock
    started. Returns ``(threads, task, out_dir, t0)``."""
    threads = training_threads()
    task = get_task(task_name)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return threads, task, out_dir, time.perf_counter()


def load_train_dev(data_dir: str | Path, task: TaskSpec
                   ) -> tuple[list[Example], Path | None, list[Example], Path | None]:
    """``(train examples, train path, dev examples, dev path)``; no training file is an error."""
    train_ex, train_path = load_split(data_dir, task, "train")
    dev_ex, dev_path = load_split(data_dir, task, "dev")
    if not train_ex:
        raise FileNotFoundError(f"no {task.name} training file under {data_dir}")
    return train_ex, train_path, dev_ex, dev_path


def record_training_data(out_dir: Path, card: ModelCard, examples: Sequence[Example],
                         sources: list[str], also: frozenset[str] = frozenset()) -> None:
    """Fingerprint every record the model learnt from with supervision, beside its weights, and
    say so in the card (a run on those records then carries a warning; see models.provenance).
    ``also``: fingerprints learnt at one remove (a teacher model's records)."""
    from ..provenance import write_training_records

    card.training["supervised_records"] = write_training_records(out_dir, examples, sources=sources,
                                                                 also=also)


def command_line(task: str, data_dir: str | Path, out_dir: str | Path, seed: int,
                 threads: int | None = None) -> str:
    env = f"CBLUE_TRAIN_THREADS={threads} " if threads not in (None, DEFAULT_TRAIN_THREADS) else ""
    return (f"{env}python -m cblue_core train --task {task} --data {data_dir} --out {out_dir}"
            + (f" --seed {seed}" if seed else ""))


def fmt_metric(summary: dict) -> str:
    """'0.7421 [0.7222, 0.7610]' for the headline metric of an Evaluation summary."""
    h = summary["headline"]
    v = summary["metrics"].get(h)
    iv = summary.get("intervals", {}).get(h)
    if v is None:
        return "n/a"
    return f"{h} {v:.4f}" + (f" (95% CI {iv[0]:.4f}-{iv[1]:.4f})" if iv else "")


__all__ = [
    "Checkpoint",
    "TrainState",
    "command_line",
    "epoch_loop",
    "find_split",
    "finish_card",
    "fmt_metric",
    "get_task",
    "gold_label",
    "load_split",
    "load_tensors",
    "progress_bar",
    "read_card",
    "read_json",
    "save_tensors",
    "seeded_split",
    "set_seed",
    "shipped_size",
    "task_dir",
    "training_threads",
    "write_json",
]


class NetPredictor(Predictor):
    """A built-in predictor around one torch module: holds it in eval mode with its card, task
    and labels, and moves it between devices."""

    def __init__(self, net, card: ModelCard, task: TaskSpec):
        self.net = net.eval()
        self.card = card
        self.task = task
        self.labels = list(net.cfg.labels)

    def to(self, device: str) -> Self:
        self.net.to(device)
        self.device = device
        return self


def data_source(path: Path | None) -> str | None:
    """A training or dev file as a card names it: its task folder and file name, never the
    machine's path (``CMeEE/CMeEE_train.json``)."""
    return "/".join(path.parts[-2:]) if path is not None else None
