"""Built-in models: compact CBLUE 1.0 models trained from scratch on a CPU, shipped in ``models/``.

Nothing is downloaded: every model is trained here on the CBLUE files (see each folder's
``README.md`` and ``model_card.json``). One entry point trains any task::

    python -m cblue_core train --task CHIP-CTC --data /path/to/cblue --out models/chip-ctc

or, for the tasks with a head on the shared pretrained character encoder (:mod:`.encoder_heads`,
:mod:`.finetune`)::

    python -m cblue_core train --task KUAKE-QIC --data /path/to/cblue --out models/kuake-qic \
        --architecture encoder [--encoder models/encoder]

(:func:`shipped_architecture` says which of the two a task's ``train`` uses by default: the one
shipped),
and :data:`BUILTIN_LOADERS` maps each ``ModelCard.kind`` to a loader ``(folder, device) ->
Predictor``.

=============  ==========================  ========================================================
task           kind                        model
=============  ==========================  ========================================================
CMeEE          ``span-encoder``            char BiLSTM + span classifier (nested entities)
CMeIE          ``span-relation``           multi-label span BiLSTM (SUBJ + predicates) + pair head
CHIP-CDN       ``cdn-retrieval-reranker``  TF-IDF retrieval + train memory + MLP reranker
CHIP-CTC       ``ngram-classifier``        char 1-3-gram bag + MLP
KUAKE-QIC      ``ngram-classifier``        char 1-3-gram bag + MLP
CHIP-STS       ``ngram-classifier``        pair bags [a, b, |a-b|, a*b, a&b, a-b, b-a] + overlap
KUAKE-QTR      ``ngram-classifier``        (same pair model)
KUAKE-QQR      ``pair-gbm``                boosted trees over 46 overlap / edit-distance / intent numbers
=============  ==========================  ========================================================

On the shared encoder: ``encoder-classifier`` (CHIP-CTC, KUAKE-QIC; CHIP-STS, KUAKE-QQR, KUAKE-QTR
as pairs), ``encoder-spans`` (CMeEE) and ``encoder-relations`` (CMeIE, :mod:`.encoder_relations`):
a head and a small adapter per task, the encoder shipped once in ``models/encoder``; CHIP-CDN's
``encoder-cdn-reranker`` is its pipeline with two similarity features from the frozen encoder.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...records import Example
from ...tasks import get_task
from ..base import ModelCard, Predictor
from . import cdn, cmeie, common, encoder_heads, encoder_relations, ngram, ngram_ensemble, pair_gbm, spans

BUILTIN_LOADERS: dict[str, Callable[[Path, str], Predictor]] = {
    ngram.KIND: ngram.load_model,
    ngram_ensemble.KIND: ngram_ensemble.load_model,
    pair_gbm.KIND: pair_gbm.load_model,
    spans.KIND: spans.load_model,
    cdn.KIND: cdn.load_model,
    cmeie.KIND: cmeie.load_model,
    encoder_heads.KIND_CLASSIFIER: encoder_heads.load_model,
    encoder_heads.KIND_SPANS: encoder_heads.load_model,
    encoder_relations.KIND: encoder_relations.load_model,
    cdn.ENCODER_KIND: cdn.load_model,
}

TRAINERS: dict[str, Callable[..., ModelCard]] = {
    "CMeEE": spans.train,
    "CMeIE": cmeie.train,
    "CHIP-CDN": cdn.train,
    "CHIP-CTC": ngram.train,
    "KUAKE-QIC": ngram.train,
    "CHIP-STS": ngram.train,
    "KUAKE-QTR": ngram.train,
    "KUAKE-QQR": pair_gbm.train,
}

# Folder names under the repository's models/ directory.
MODEL_DIRS: dict[str, str] = {t: t.lower() for t in TRAINERS}

# The trainers of the heads on the shared encoder, and what was tried there.
ENCODER_TRAINERS: dict[str, Callable[..., ModelCard]] = {**encoder_heads.TRAINERS, **encoder_relations.TRAINERS,
                                                         "CHIP-CDN": cdn.train_on_encoder}
ENCODER_TRIED: dict[str, list[str]] = {**encoder_heads.TRIED, **encoder_relations.TRIED, **cdn.ENCODER_TRIED}

ARCHITECTURES = ("scratch", "encoder")
ENCODER_KIND_PREFIX = "encoder-"        # encoder_heads' kinds: encoder-classifier, encoder-spans...


def shipped_architecture(task: str, models_dir: Path | None = None) -> str:
    """The architecture of the model shipped for ``task`` (its card's kind), which `train` uses
    unless told otherwise: "encoder" (a head on the shared encoder, ENCODER_TRAINERS) or
    "scratch" (trained from nothing, TRAINERS; also when nothing is shipped). Read from the card,
    so shipping a model (:mod:`.shipping`) is all it takes to switch a task."""
    from ..registry import BUILTIN_DIR

    card = (models_dir or BUILTIN_DIR) / MODEL_DIRS[task] / common.CARD_FILE
    try:
        kind = common.read_json(card).get("kind", "")
    except (OSError, ValueError):
        return "scratch"
    return "encoder" if str(kind).startswith(ENCODER_KIND_PREFIX) else "scratch"


def supervised_training_data(card: ModelCard, data_dir: str | Path) -> tuple[list[Example], list[str]]:
    """The records a shipped built-in model learnt from with supervision, re-read from the
    CBLUE folder as its trainer read them: the task's training file, or for CMeIE the fixed 80%
    of dev (:func:`.cmeie.split_data`), plus for the scratch model CMeEE's training file (its
    auxiliary head and its encoder's start)."""
    task = get_task(card.task)
    if card.kind == encoder_relations.KIND:
        train_ex, _, info = cmeie.split_data(data_dir, task)
        return list(train_ex), [str(info["train"])]
    if card.kind == cmeie.KIND:
        train_ex, _, info = cmeie.split_data(data_dir, task)
        ee_train, ee_path = common.load_split(data_dir, get_task("CMeEE"), "train")
        return list(train_ex) + ee_train, [str(info["train"]), str(ee_path)]
    train_ex, train_path = common.load_split(data_dir, task, "train")
    return train_ex, [str(train_path)]


def scored_dev_data(card: ModelCard, data_dir: str | Path) -> list[Example]:
    """The examples a built-in model's card scores it on: the task's dev file, or for a model
    that trained on part of dev (CMeIE, which has no public train file) the held-out part."""
    task = get_task(card.task)
    if card.kind in (cmeie.KIND, encoder_relations.KIND):
        return list(cmeie.split_data(data_dir, task)[1])
    return common.load_split(data_dir, task, "dev")[0]


def train(task: str, data_dir: str | Path, out_dir: str | Path, *, seed: int = 0,
          resume: bool = False, progress: bool = True, max_minutes: float = 30,
          overrides: dict | None = None, architecture: str | None = None,
          encoder: str | Path | None = None) -> ModelCard:
    """Train the built-in model of ``task`` on ``data_dir`` (a CBLUE folder holding
    ``<Task>/`` subfolders, or the task folder itself) and write it to ``out_dir``.

    ``architecture`` is "scratch" or "encoder" (a head on the shared encoder in ``encoder``,
    default ``models/encoder``); by default the task's shipped one (:func:`shipped_architecture`), or
    "encoder" when ``encoder`` is given. Seeded (``seed``); checkpoints after every epoch to
    ``out_dir/checkpoint/`` (safetensors and JSON) and continues from there with ``resume``; stops
    after the epoch that would overrun ``max_minutes``; a tqdm bar on stderr when ``progress``.
    ``overrides`` replaces default hyperparameters (tests use tiny ones). Returns the model card
    written beside the weights, with the evaluator's summary on the dev file (the held-out part of
    the dev split for CMeIE).
    """
    if task not in TRAINERS:
        raise ValueError(f"no built-in model for task {task!r}; trainable: {', '.join(TRAINERS)}")
    arch = architecture or ("encoder" if encoder else shipped_architecture(task))
    if arch not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {arch!r}; one of {', '.join(ARCHITECTURES)}")
    if arch == "encoder":
        if task not in ENCODER_TRAINERS:
            raise ValueError(f"no head on the shared encoder for {task} yet; on the encoder: "
                             f"{', '.join(ENCODER_TRAINERS)}")
        return ENCODER_TRAINERS[task](task, data_dir, out_dir, seed=seed, resume=resume, progress=progress,
                                      max_minutes=max_minutes, overrides=overrides,
                                      tried=ENCODER_TRIED.get(task), encoder=encoder)
    if encoder:
        raise ValueError("--encoder is for the encoder architecture; the scratch models use none")
    return TRAINERS[task](task, data_dir, out_dir, seed=seed, resume=resume, progress=progress,
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
            cfg = ngram.NgramConfig(task=task, labels=common.task_labels(spec, train_ex),
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
            span_cfg = spans.SpanConfig(task=task, labels=list(spec.label_codes), **params)
            vocab = spans.Vocab.build([e.text for e in train_ex], span_cfg.min_bigram_count,
                                      span_cfg.max_bigrams)
            span_cfg.vocab_size, span_cfg.bigram_size = len(vocab.chars), len(vocab.bigrams)
            items = spans.examples_to_items(train_ex, span_cfg.labels, span_cfg.max_chars)
            common.set_seed(seed)
            span_net = spans.SpanNet(span_cfg)
            state = spans.fit(span_net, vocab, items, span_cfg, Path(tmp), seed=seed, resume=False,
                              progress=False, max_minutes=5, max_steps=steps)
        else:
            raise ValueError(f"loss_curve supports classification, pair and span tasks, not {task}")
    return state["step_losses"][:steps]


# What was tried per task, measured with our evaluator on the dev file (CMeIE: on the held-out
# 20%); copied into each model card's training.tried. Scores are the headline metric.
_PAIR = ("pair model: mean char 1-3-gram embeddings [a, b, |a-b|, a*b] + bags of shared / one-sided "
         "n-grams + 16 overlap numbers, MLP; trained from scratch (no pretrained weights exist here)")
TRIED: dict[str, list[str]] = {
    "CHIP-CTC": [
        ("fastText-style char 1-3-gram bag + MLP (hidden 256), class-weighted CE (inverse frequency "
        "^0.5): embedding 48 / 60k n-grams gave macro-F1 0.7248 (acc 0.7999) but 6.7 MB; the shipped "
        "embedding 32 / 50k n-grams keeps the folder under 4 MB"),
        "majority class (Disease): macro-F1 0.0082",
    ],
    "KUAKE-QIC": [
        "fastText-style char 1-3-gram bag + MLP (embedding 48, hidden 128, 15 epochs): accuracy 0.7422",
        "majority class (治疗方案): accuracy 0.3458",
    ],
    "CHIP-STS": [_PAIR + ": macro-F1 0.7824", "majority class: macro-F1 0.3321"],
    "KUAKE-QTR": [_PAIR + ": accuracy 0.5846", "majority class (3): accuracy 0.3821"],
    "KUAKE-QQR": [
        _PAIR + ": accuracy 0.7125 on dev (recipe chosen on dev, before the grouped slice existed)",
        ("from here on every choice was made on a selection slice grouped by query1 (80 of the "
         "train file's 797 query1 groups, 1516 pairs; majority class 0.5825 there), models trained "
         "on the other 13484 pairs (bench/qqr_selection.py): the pair model above, seeds 0 / 1 / 2: "
         "slice accuracy 0.6372 / 0.6504 / 0.6603 (mean 0.6493)"),
        ("+ edit distance, one-sided characters and 13 intent-word groups (30 more numbers): "
         "0.6451 / 0.6332, no better (not used)"),
        "+ those features and inverse-frequency class weights ^0.5: 0.6458 (seed 0; not used)",
        ("probability-averaged seed ensembles of the pair model: seeds 0+1 0.6517, 0+2 0.6544, "
         "1+2 0.6636, 0+1+2 0.6563 (shipped recipe: 3 members, as good as the mean pair and "
         "steadier; +0.7 over the mean single model); with the extra features 0+1 0.6478: "
         "the ensemble helps a little, the features do not"),
        ("ensemble size, from 5 seeds of the pair model (singles 0.6372-0.6603): the mean "
         "accuracy over every subset of k seeds is 0.6505 / 0.6554 / 0.6573 / 0.6575 / 0.6524 for "
         "k = 1..5 (seeds 0-4 together 0.6524): 3-4 members is the top of the curve; 3 ship"),
        ("the 2-seed ensemble with the extra features, trained on the whole train file before the "
         "slice had ruled the features out: dev accuracy 0.7119 (not used)"),
        ("the 3-seed ensemble of the pair model (3 members, seeds 0-2) on the whole train file: "
         "dev accuracy 0.7181 (shipped for a while, replaced by the trees below)"),
        ("gradient-boosted trees (scikit-learn HistGradientBoosting, 200 rounds, learning rate 0.05) "
         "over the 46 dense pair numbers alone (16 overlap + 30 edit-distance / intent), no n-gram "
         "bags: slice accuracy 0.7513 against 0.6563 for the 3-seed ensemble (0.7190 with the 16 "
         "overlap numbers only): the n-gram bags learn the training queries themselves, which a "
         "slice of unseen queries punishes; shipped as pair-gbm, trees exported to safetensors"),
        ("blends of the 3-seed ensemble's and the trees' probabilities on the slice: 0.6689 / "
         "0.6748 / 0.7071 at tree weight 0.2 / 0.3 / 0.5, all under the trees alone (not used)"),
        "majority class (0): accuracy 0.6294 on dev",
    ],
    "CHIP-CDN": [
        ("candidate recall of char TF-IDF over the 38k distinct terms: 1-2-grams top-20 0.632, "
        "top-50 0.723; 1-3-grams no better (0.622 / 0.722) and slower; 2-grams only worse "
        "(0.577 / 0.659); memory (terms of the 20 most similar train texts) 0.755"),
        ("TF-IDF top-30 + memory top-10 candidates, MLP reranker over 18 features, threshold "
        "chosen on the leave-one-out training rows: F1 0.5051"),
        "baselines: best TF-IDF term 0.3086, terms of the nearest train text 0.3889",
    ],
    "CMeEE": [
        ("char+bigram 2-layer BiLSTM (hidden 128) with a softmax span head (none + 9 types, all "
        "spans up to 25 chars, MLP over start/end/width): F1 0.5478 after 10 epochs (27 min), but "
        "ite/equ/dep were never predicted (the 'none' class swamps rare types)"),
        ("same encoder with a GlobalPointer-style head (rotary q.k + per-type start/end/width biases, "
        "multi-label categorical CE per type): F1 0.5987 after 10 epochs (21 min), every type found"),
        ("packed sequences were 3x slower in the backward pass than the padding-exact two-LSTM "
        "BiLSTM used here; 2 threads were slower than 1 on this shared machine"),
        "train-mention dictionary baseline: F1 0.3124",
    ],
    "CMeIE": [
        ("multi-label GlobalPointer span head over SUBJ + 44 predicate labels with a CMeEE "
        "auxiliary head, each object paired with the nearest preceding subject: held-out F1 about "
        "0.23 after 7 of 14 epochs (stopped): subjects were found (recall 0.82) but objects were "
        "not (recall 0.27): each predicate label had too few examples"),
        ("object-type labels added (11 types pooled over predicates; the predicate is the best one "
        "the type allows), same pairing: 0.298 at thresholds 0.5, 0.309 at the best thresholds "
        "(mentions F1 0.56, mention+predicate 0.42: pairing and predicates lost the rest)"),
        ("pairing rules measured on gold mentions (held-out upper bounds): all pairs F1 0.834, "
        "nearest subject 0.834, nearest preceding subject 0.859"),
        ("pair head (both spans' boundary states, mean state between them, signed log distance; "
        "trained on gold pairs + the span head's best-scoring wrong spans) instead of the "
        "pairing rule: 0.364 from scratch (12 epochs), 0.374 with the encoder initialised from "
        "the cmeee model"),
        ("the span head's scores of both spans as extra pair features: 0.347 from scratch, 0.362 "
        "initialised from cmeee (worse: dropped)"),
        ("pair loss: multi-label categorical cross-entropy instead of per-predicate BCE (initialised "
        "from cmeee, 14 epochs): 0.392 (shipped; 0.3945 at the best thresholds of a grid, not "
        "used); BCE with positives weighted x3 stopped at 9 epochs (loss well above the others); "
        "17 epochs planned, cut at 15 by the 30-minute limit: 0.382 (0.391 at its best thresholds)"),
        ("decoding: each (predicate, object) keeps only its best-scoring subject (93% of the "
        "training triples' (predicate, object) have one subject in their text): 0.411 at pair "
        "threshold 0.2 (shipped; was 0.392 without the rule); one predicate per (subject, "
        "object) as well: 0.412 at other thresholds, no real gain (not used)"),
        ("a seed ensemble, chosen on a selection slice cut from the training part (2,294 records "
         "to fit, 574 to select on; bench/cmeie_selection.py), never on the held-out part: one "
         "network F1 0.3554, 0.3592, 0.3614 (seeds 0, 1, 2), the three with their span and pair "
         "logits averaged 0.3718 (+1.3 over the mean network); shipped with members 3: held-out "
         "0.4191 against 0.4107 for the one-network model shipped before"),
        ("on the same slice, dropped: a copy of each record with its mentions swapped for others "
         "of their type (half the epochs, same number of updates) 0.3485 against 0.3554 for the "
         "same seed; the BiLSTM trained under bf16 autocast 0.3515, barely faster"),
        ("a lexicon read by the characters (B/I/E features of 28,764 typed terms: the training "
         "part's subjects and objects by type and CMeEE's entities by type, leave-one-out while "
         "training so that a text never sees the terms only it annotates; recipe setting lexicon): "
         "on the selection slice one network 0.3571, 0.3649, 0.3612 (seeds 0-2, against 0.3554, "
         "0.3592, 0.3614 without), the three averaged 0.3753 against 0.3718; its three-network "
         "model then scored 0.4178 (0.3857-0.4511) on the held-out part against 0.4191 for the "
         "shipped one: ship-model kept the shipped model and the setting stays off"),
        ("self-training (recipe setting teacher): CMeEE's training sentences that share no "
         "20-character run with a CMeIE text (14,258 of 15,133 on the selection slice) also carry "
         "the triples of a teacher, the three averaged lexicon networks of the slice (0.3753): it "
         "found 10,351 pairs in 3,193 of them, learnt by the span and pair heads beside the entity "
         "head (weight 1); one network 0.3533 (precision 0.336, recall 0.373) against 0.3554 for the "
         "same seed without, 2,515 s against 1,276 s: the teacher's misses teach the heads that "
         "true mentions are not, and its errors cost precision; not trained on the full part, the "
         "setting stays off"),
    ],
}


__all__ = ["ARCHITECTURES", "BUILTIN_LOADERS", "ENCODER_TRAINERS", "ENCODER_TRIED", "MODEL_DIRS",
           "TRAINERS", "TRIED", "load",
           "loss_curve", "shipped_architecture", "train"]
