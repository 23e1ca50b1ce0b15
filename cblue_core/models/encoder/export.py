"""The pretrained encoder's folder: a plain Hugging Face ``BertForMaskedLM`` (``model.safetensors``,
``config.json``, ``vocab.txt`` + ``tokenizer.json`` + ``tokenizer_config.json``) with its card
(``model_card.json`` and ``README.md``: corpus, recipe, steps, tokens, time, loss curves).
Loads with ``AutoModelForMaskedLM.from_pretrained`` / ``AutoTokenizer.from_pretrained``, no
remote code.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from ...io.validate import load
from ..base import ModelCard
from ..builtin.common import find_split, finish_card
from ..registry import ENCODER_KIND
from .continuation import whole_run
from .corpus import Corpus, corpus_tasks, normalise
from .vocab import save_tokenizer


class FinishedRun(Protocol):
    """What the export reads of a finished pretraining run (``pretrain.PretrainResult``), declared
    here so that the export does not import the trainer that calls it."""

    out_dir: Path
    state: Any          # pretrain.PretrainState: step, tokens, held-out scores
    config: Any         # pretrain.PretrainConfig
    corpus: Corpus
    threads: int
    corpus_tokens: int

KIND = ENCODER_KIND
NAME = "encoder"
SELECTION = ("no dev or test text is read for training; the recipe was chosen by throughput "
             "(steps per second at 1 thread) within a 2-hour CPU budget, and the run is judged on "
             "a held-out 2% slice of the train text (masked-token loss and accuracy)")


def parameter_counts(model) -> dict[str, int]:
    total = sum(p.numel() for p in model.parameters())
    emb = sum(p.numel() for n, p in model.named_parameters() if ".embeddings." in f".{n}")
    encoder = sum(p.numel() for p in model.bert.parameters())
    return {"total": total, "encoder": encoder, "embeddings": emb, "encoder_without_embeddings": encoder - emb}


def dev_overlap(corpus: Corpus, data_dir: str | Path) -> dict[str, dict[str, int]]:
    """An audit made after training: per task and split, how many dev and test texts also occur
    verbatim in the pretraining text (the datasets repeat texts across splits; such a text was
    seen unlabelled, never its label). Reads the dev and test files only to count."""
    seen = set(corpus.train) | set(corpus.held_out)
    out: dict[str, dict[str, int]] = {}
    for task in corpus_tasks():
        for split in ("dev", "test"):
            try:
                path = find_split(data_dir, task, split)
            except FileNotFoundError:
                continue
            if path is None:
                continue
            texts = [normalise(t) for e in load(path, task).examples for t in (e.text, e.text2) if t]
            out.setdefault(task.name, {})[split] = sum(t in seen for t in texts)
            out[task.name][f"{split}_texts"] = len(texts)
    return out


def _curve_rows(curve: list[list[float]], every: int) -> list[list[float]]:
    rows = curve[::every]
    return rows if not curve or rows[-1] == curve[-1] else rows + [curve[-1]]


def _stage_lines(stages: list[dict[str, Any]] | None) -> list[str]:
    """The stages of a continued run (the recipe above is the last one's)."""
    if not stages:
        return []
    lines, at = ["- trained in stages, each continuing from the weights of the one before:"], 0
    for n, s in enumerate(stages, 1):
        hp = s["hyperparameters"]
        lines.append(f"  {n}. updates {at + 1:,}-{at + s['steps']:,}: peak learning rate {hp['lr']:g}, "
                     f"{hp['warmup_steps']} warm-up steps, linear decay to 0 over the stage; `{s['command']}`")
        at += s["steps"]
    return lines


def readme(card: ModelCard) -> str:
    t = card.training
    c = t["corpus"]
    hp = t["hyperparameters"]
    held = card.extra["held_out"]
    lines = [
        f"# {card.name}: a character BERT pretrained on the CBLUE train text (CPU)",
        "",
        card.description,
        "",
        "Load it with plain transformers (no remote code):",
        "",
        "```python",
        "from transformers import AutoModelForMaskedLM, AutoTokenizer",
        "tok = AutoTokenizer.from_pretrained(folder)",
        "model = AutoModelForMaskedLM.from_pretrained(folder)   # or AutoModel for the encoder alone",
        "```",
        "",
        "## Corpus",
        "",
        (f"{c['train_texts']:,} distinct texts ({c['train_chars']:,} characters) for training, "
        f"{c['held_out_texts']:,} ({c['held_out_chars']:,} characters) held out; "
        f"{c['duplicates_dropped']:,} repeated texts dropped. {c['normalisation']}. "
        "No dev or test file, no label."),
        "",
        "| file | kind | records | texts | characters | sha1 |",
        "|---|---|---:|---:|---:|---|",
        *(f"| {s['path']} | {s['kind']} | {s['records']:,} | {s['texts']:,} | {s['chars']:,} | "
          f"`{s['sha1'][:12]}` |" for s in c["sources"]),
        "",
        "## Training",
        "",
        f"- command: `{t['command']}`",
        (f"- stock `BertForMaskedLM`: hidden {hp['hidden']}, {hp['layers']} layers, {hp['heads']} heads, "
        f"feed-forward {hp['intermediate']}, {hp['max_len']} positions, vocabulary {card.extra['vocab_size']:,} "
        f"(pieces seen at least {hp['min_count']} times); {card.extra['parameters']['total']:,} parameters"),
        (f"- {t['steps']:,} updates of {hp['batch_size']} packed sequences ({t['tokens']:,} text tokens, "
        f"{t['masked_tokens']:,} predicted; {t['passes']:.2f} passes over the training text); dynamic "
        f"masking of {hp['mask_prob']:.0%} (80% [MASK], 10% random, 10% kept)"),
        (f"- AdamW, peak learning rate {hp['lr']:g}, {hp['warmup_steps']} warm-up steps then linear "
        f"decay to 0, weight decay {hp['weight_decay']:g}, gradient norm clipped at {hp['clip']:g}; seed {t['seed']}"),
        (f"- time: {t['cpu_s'] / 3600:.2f} CPU hours ({t['time_s'] / 3600:.2f} h wall clock) on "
        f"{t['threads']} thread(s)"),
        f"- selection: {t['selection']}",
        *_stage_lines(t.get("stages")),
        "",
        (f"Held-out masked-token loss {held['loss']:.4f}, accuracy {held['accuracy']:.4f} "
        f"(step 0: loss {t['heldout_curve'][0][1]:.4f})."),
        "",
        "### Held-out curve",
        "",
        "| step | loss | accuracy |",
        "|---:|---:|---:|",
        *(f"| {int(s):,} | {loss:.4f} | {acc:.4f} |" for s, loss, acc in t["heldout_curve"]),
        "",
        "### Training loss (mean over the preceding steps)",
        "",
        "| step | loss | learning rate |",
        "|---:|---:|---:|",
        *(f"| {int(s):,} | {loss:.4f} | {lr:.2e} |"
          for s, loss, lr in _curve_rows(t["train_curve"], max(1, len(t["train_curve"]) // 20))),
        "",
        "The full curves are in `model_card.json` (`training.train_curve`, `training.heldout_curve`).",
    ]
    overlap = card.extra.get("dev_overlap")
    if overlap:
        lines += ["", "## Dev and test texts also in the training text",
                  "", ("Counted after training (the datasets repeat texts across splits; such a text "
                  "was seen without its label):"), "",
                  "| task | dev | test |", "|---|---:|---:|",
                  *(f"| {task} | {o.get('dev', 0):,} of {o.get('dev_texts', 0):,} | "
                    f"{o.get('test', 0):,} of {o.get('test_texts', 0):,} |" for task, o in overlap.items())]
    return "\n".join(lines) + "\n"


def export(result: FinishedRun, model, tokens: list[str], *, seed: int, data_dir: str | Path,
           command: str = "") -> ModelCard:
    """Write the model folder and its card into ``result.out_dir``."""
    out, st, cfg = result.out_dir, result.state, result.config
    model.eval()
    model.save_pretrained(out)
    save_tokenizer(tokens, out, cfg.max_len)
    command = command or (f"python -m cblue_core pretrain --data {data_dir} --out {out}"
                          + (f" --seed {seed}" if seed else ""))
    stage: dict[str, Any] = {
        "corpus": result.corpus.summary(), "command": command,
        "seed": seed, "threads": result.threads, "steps": st["step"],
        "tokens": st["tokens"], "masked_tokens": st["masked"],
        "time_s": round(st["time_s"], 1), "cpu_s": round(st["cpu_s"], 1),
        "hyperparameters": asdict(cfg), "pass_losses": st["losses"],
        "train_curve": st["train_curve"], "heldout_curve": st["heldout_curve"], "selection": SELECTION,
    }
    training = whole_run(st.get("base"), stage, cfg, command)
    training["passes"] = training["tokens"] / max(1, result.corpus_tokens)
    last = training["heldout_curve"][-1]
    card = ModelCard(
        name=NAME, task="", kind=KIND,
        description=("Character encoder shared by the built-in task models: a stock BERT "
                     f"(hidden {cfg.hidden}, {cfg.layers} layers) pretrained from scratch by masked-language "
                     "modelling on the unlabelled text of the CBLUE train splits and reference lists, on "
                     "this machine's CPU."),
        training=training,
        extra={"parameters": parameter_counts(model), "vocab_size": len(tokens),
               "held_out": {"step": last[0], "loss": last[1], "accuracy": last[2]},
               "dev_overlap": dev_overlap(result.corpus, data_dir)},
    )
    card.training["passes"] = round(card.training["passes"], 3)
    if st["step"] < cfg.steps:
        done, whole = training["steps"], training["steps"] - st["step"] + cfg.steps
        card.extra["partial"] = {"steps": done, "of": whole}
        card.description += (f" PARTLY TRAINED: exported at step {done:,} of the recipe's "
                             f"{whole:,}, for trials only.")
    return finish_card(out, card, readme(card))
