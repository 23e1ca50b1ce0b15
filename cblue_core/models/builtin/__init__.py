"""Built-in models: compact CBLUE 1.0 models trained from scratch on a CPU, shipped in ``models/``.

Nothing is downloaded: every model is trained here on the CBLUE files (see each folder's
``README.md`` and ``model_card.json``). One entry point trains any task::

    python -m cblue_core train --task CHIP-CTC --data /path/to/cblue --out models/chip-ctc

and :data:`BUILTIN_LOADERS` maps each ``ModelCard.kind`` to a loader ``(folder, device) ->
Predictor``.

=============  ==========================  ==============================================
task           kind                        model
=============  ==========================  ==============================================
CMeEE          ``span-encoder``            char BiLSTM + span classifier (nested entities)
CMeIE          ``span-relation``           multi-label span BiLSTM (SUBJ + predicates) + pairing
CHIP-CDN       ``cdn-retrieval-reranker``  TF-IDF retrieval + train memory + MLP reranker
CHIP-CTC       ``ngram-classifier``        char 1-3-gram bag + MLP
KUAKE-QIC      ``ngram-classifier``        char 1-3-gram bag + MLP
CHIP-STS       ``ngram-classifier``        pair bags [a, b, |a-b|, a*b, a&b, a-b, b-a] + overlap
KUAKE-QTR      ``ngram-classifier``        (same pair model)
KUAKE-QQR      ``ngram-classifier``        (same pair model)
=============  ==========================  ==============================================
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..base import ModelCard, Predictor
from . import cdn, cmeie, common, ngram, spans

BUILTIN_LOADERS: dict[str, Callable[[Path, str], Predictor]] = {
    ngram.KIND: ngram.load_model,
    spans.KIND: spans.load_model,
    cdn.KIND: cdn.load_model,
    cmeie.KIND: cmeie.load_model,
}

TRAINERS: dict[str, Callable[..., ModelCard]] = {
    "CMeEE": spans.train,
    "CMeIE": cmeie.train,
    "CHIP-CDN": cdn.train,
    "CHIP-CTC": ngram.train,
    "KUAKE-QIC": ngram.train,
    "CHIP-STS": ngram.train,
    "KUAKE-QTR": ngram.train,
    "KUAKE-QQR": ngram.train,
}

# Folder names under the repository's models/ directory.
MODEL_DIRS: dict[str, str] = {t: t.lower() for t in TRAINERS}


def train(task: str, data_dir: str | Path, out_dir: str | Path, *, seed: int = 0,
          resume: bool = False, progress: bool = True, max_minutes: float = 30,
          overrides: dict | None = None) -> ModelCard:
    """Train the built-in model of ``task`` on ``data_dir`` (a CBLUE folder holding
    ``<Task>/`` subfolders, or the task folder itself) and write it to ``out_dir``.

    Seeded (``seed``); checkpoints after every epoch to ``out_dir/checkpoint/`` (safetensors and
    JSON) and continues from there with ``resume``; stops after the epoch that would overrun
    ``max_minutes``; a tqdm bar on stderr when ``progress``. ``overrides`` replaces default
    hyperparameters (tests use tiny ones). Returns the model card written beside the weights,
    with the evaluator's summary on the dev file (the held-out part of the dev split for CMeIE).
    """
    try:
        trainer = TRAINERS[task]
    except KeyError:
        raise ValueError(f"no built-in model for task {task!r}; trainable: {', '.join(TRAINERS)}") from None
    return trainer(task, data_dir, out_dir, seed=seed, resume=resume, progress=progress,
                   max_minutes=max_minutes, overrides=overrides, tried=TRIED.get(task))


def load(folder: str | Path, device: str = "cpu") -> Predictor:
    """Load a built-in model folder by its card's ``kind``."""
    card = common.read_card(folder)
    try:
        loader = BUILTIN_LOADERS[card.kind]
    except KeyError:
        raise ValueError(f"{folder}: kind {card.kind!r} is not a built-in model kind") from None
    return loader(Path(folder), device)


def loss_curve(task: str, data_dir: str | Path, *, steps: int = 20, seed: int = 0,
               overrides: dict | None = None) -> list[float]:
    """Per-step training losses of a tiny model of ``task`` on ``data_dir`` (for tests: a few
    steps on the sample data should lower the loss). Writes nothing outside a temporary folder."""
    import tempfile

    import torch

    from ...tasks import Kind, get_task

    spec = get_task(task)
    common.training_threads()
    with tempfile.TemporaryDirectory() as tmp:
        if spec.kind in (Kind.CLASSIFICATION, Kind.PAIR):
            params = {**ngram.TINY, "epochs": 1000, **(overrides or {})}
            train_ex, _ = common.load_split(data_dir, spec, "train")
            cfg = ngram.NgramConfig(task=task, labels=ngram._labels_of(spec, train_ex),
                                    pair=spec.kind == Kind.PAIR, **params)
            common.set_seed(seed)
            _, x, y = ngram.prepare(spec, train_ex, cfg)
            torch.manual_seed(seed)
            net = ngram.NgramNet(cfg)
            state = ngram.fit(net, x, y, cfg, Path(tmp), seed=seed, resume=False, progress=False,
                              max_minutes=5, max_steps=steps)
        elif spec.kind.name == "SPANS":
            params = {**spans.TINY, "epochs": 1000, **(overrides or {})}
            train_ex, _ = common.load_split(data_dir, spec, "train")
            cfg = spans.SpanConfig(task=task, labels=list(spec.label_codes), **params)
            vocab = spans.Vocab.build([e.text for e in train_ex], cfg.min_bigram_count, cfg.max_bigrams)
            cfg.vocab_size, cfg.bigram_size = len(vocab.chars), len(vocab.bigrams)
            items = spans.examples_to_items(train_ex, cfg.labels, cfg.max_chars)
            common.set_seed(seed)
            net = spans.SpanNet(cfg)
            state = spans.fit(net, vocab, items, cfg, Path(tmp), seed=seed, resume=False,
                              progress=False, max_minutes=5, max_steps=steps)
        else:
            raise ValueError(f"loss_curve supports classification, pair and span tasks, not {task}")
    return state["step_losses"][:steps]


# What was tried per task, by dev measurement (copied into each model card's training.tried).
TRIED: dict[str, list[str]] = {}


__all__ = ["BUILTIN_LOADERS", "TRAINERS", "MODEL_DIRS", "train", "load", "loss_curve", "TRIED"]
