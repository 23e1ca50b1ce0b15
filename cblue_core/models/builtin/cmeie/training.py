"""Training a CMeIE extractor: the encoder started from the CMeEE model, the span and pair
heads fitted with the auxiliary entity head, the card written."""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import torch
from torch import nn

from ....annotation.validation import combined_for
from ....records import Example, Triple
from ....runs.evaluation import evaluate
from ....tasks import TaskSpec, get_task
from ...base import ModelCard
from ...provenance import fingerprint
from .. import common as C
from ..lexicon import Lexicon, feature_tensor
from ..spans import (
    SpanConfig,
    Vocab,
    batch_tensors,
    chunk,
    multilabel_ce,
    multilabel_targets,
    pointer_loss,
    span_targets,
)
from .card import HELD_OUT_NOTE, readme_text
from .data import (
    SUBJ,
    PiecePairs,
    aux_items,
    load_schemas,
    mention_spans,
    piece_pairs,
    span_labels,
    split_data,
)
from .decoding import top_spans
from .lexicon import training_lexicon
from .model import KIND, RelationModel, save
from .net import LogitAverage, RelNet
from .recipe import DEFAULTS
from .self_training import TeacherLabels, label_pieces


def encoder_folder(name_or_dir: str | Path) -> Path:
    """The folder of a span-encoder model (a folder, or a built-in model's name: ``cmeee``).
    Raises FileNotFoundError (with what to do) when there is none, ValueError for another kind."""
    from ...registry import ModelNotFoundError, resolve
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


def fit(net: RelNet, vocab: Vocab, items, aux, cfg: SpanConfig, out_dir: Path, *, seed: int,
        resume: bool, progress: bool, max_minutes: float, pos_weight: float, aux_per_epoch: int,
        pair_loss: str = "mlce", pair_pos_weight: float = 1.0,
        max_steps: int | None = None, lexicon_ids: tuple[list, list] | None = None,
        pseudo: Sequence | None = None, pseudo_weight: float = 1.0) -> C.TrainState:
    """``lexicon_ids``: per main item and per auxiliary piece, its ``(position, feature)`` lexicon
    features (:meth:`.Lexicon.feature_ids`), when the network reads them. ``pseudo``: per
    auxiliary piece, a teacher's ``(spans, pairs)`` (:mod:`.self_training`), which the span and
    pair heads also learn, weighted by ``pseudo_weight``."""
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
        return C.shuffled_steps(jobs, loss_of, net, opt, step_losses, max_steps=max_steps,
                                progress=progress, desc=f"epoch {ep + 1}")

    def loss_of(job: tuple[str, list[int]]) -> tuple[torch.Tensor, bool]:
        kind, idx = job
        src = items if kind == "main" else aux
        texts = [src[i][0] for i in idx]
        chars, bis, lengths = batch_tensors(vocab, texts)
        L = chars.shape[1]
        lex = None
        if lexicon_ids is not None:
            ids = lexicon_ids[0] if kind == "main" else lexicon_ids[1]
            lex = feature_tensor([ids[i] for i in idx], L, cfg.lexicon_features)
        h = net.training_states(chars, bis, lengths, lex)
        lens = [len(t) for t in texts]
        if kind == "main":
            return relation_loss(h, [src[i][1] for i in idx], [src[i][2] for i in idx], lens), True
        # the auxiliary CMeEE head (and a teacher's triples of the same sentences): trains, not counted
        if cfg.head == "pointer":
            y, mask = multilabel_targets([[(s, e, k - 1) for s, e, k in src[i][1]] for i in idx],
                                         lens, L, cfg.max_span, len(net.aux_labels))
            loss = pointer_loss(net.aux_logits(h), y, mask)
        else:
            y = span_targets([src[i][1] for i in idx], lens, L, cfg.max_span)
            lg = net.aux_logits(h)
            loss = ce(lg.reshape(-1, lg.shape[-1]), y.reshape(-1))
        if pseudo is not None and pseudo_weight:
            loss = loss + pseudo_weight * relation_loss(h, [pseudo[i][0] for i in idx],
                                                        [pseudo[i][1] for i in idx], lens)
        return loss, False

    def relation_loss(h: torch.Tensor, spans: list, pairs: list, lens: list[int]) -> torch.Tensor:
        """The span head's and the pair head's loss on pieces with these mentions and pairs."""
        y, mask = multilabel_targets(spans, lens, h.shape[1], cfg.max_span, K)
        scores = net.span_logits(h)
        if cfg.head == "pointer":
            loss = pointer_loss(scores, y, mask)
        else:
            lo = bce(scores, y).sum(-1)
            loss = (lo * mask).sum() / mask.sum().clamp(min=1)
        rows, tgt = pair_batch(scores.detach(), pairs, lens, subj_k, obj_ks, net.pair.n_predicates)
        if rows is not None:
            pl = net.pair(h, rows, scores)
            loss = loss + (multilabel_ce(pl, tgt).mean() if pair_loss == "mlce"
                           else pair_bce(pl, tgt).sum(-1).mean())
        return loss

    return C.train_epochs(net, opt, cfg.epochs, run_epoch, out_dir, step_losses, max_steps=max_steps,
                          resume=resume, max_minutes=max_minutes, seed=seed, progress=progress,
                          scheduler=sched)


def member_dir(out_dir: Path, i: int, members: int) -> Path:
    """Where member ``i`` keeps its checkpoint while training: the folder itself for one network."""
    return out_dir if members == 1 else out_dir / f"member-{i}"


def mean_losses(states: Sequence[C.TrainState]) -> list[float]:
    """Per epoch, the members' mean training loss (over those that reached it)."""
    epochs = max(len(st["losses"]) for st in states)
    return [round(sum(v) / len(v), 5) for v in
            ([st["losses"][e] for st in states if e < len(st["losses"])] for e in range(epochs))]


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
    members = params.pop("members")
    use_lexicon = params.pop("lexicon", False)
    teacher = params.pop("teacher", None)
    pseudo_weight = params.pop("pseudo_weight", 1.0)
    if not isinstance(members, int) or members < 1:
        raise ValueError(f"members must be a whole number of networks, 1 or more, not {members!r}")
    cfg = SpanConfig(task=task.name, labels=span_labels(task, schemas), **params)
    C.check_trainable(cfg.precision)
    lab = {l: i for i, l in enumerate(cfg.labels)}
    aux, aux_labels, aux_path = (aux_items(data_dir, cfg.max_chars) if use_aux and aux_per_epoch
                                 else ([], [], None))
    init = None
    if init_from:                       # start from a trained span-encoder (CMeEE) model
        from ..spans import load_net
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
    item_records: list[int] = []
    for r, e in enumerate(train_ex):
        pieces = [(t, sp, piece_pairs(t, e.triples, pred_index, cfg.max_span))
                  for t, sp in chunk(e.text, mention_spans(e, lab, cfg.max_span), cfg.max_chars) if t]
        items.extend(pieces)
        item_records.extend([r] * len(pieces))
    supervised, sources = list(train_ex), [f"{split_info['train']}"]
    if aux or init_from:      # the auxiliary head and the cmeee encoder both learnt CMeEE's labels
        ee_train, ee_path = C.load_split(data_dir, get_task("CMeEE"), "train")
        supervised += ee_train
        sources.append(str(C.data_source(ee_path)))
    pseudo: TeacherLabels | None = None
    teacher_records: frozenset[str] = frozenset()
    if teacher:
        if not aux:
            raise ValueError("teacher: its triples label CMeEE's training sentences (the auxiliary data), "
                             f"and there are none under {data_dir} (or aux is off)")
        pseudo, teacher_records = label_pieces(teacher, aux, list(train_ex) + list(held_ex), held_ex,
                                               frozenset(map(fingerprint, supervised)), lab, pred_index,
                                               cfg.max_span)
        aux = pseudo.pieces             # the sentences that share text with CMeIE's are left out
    lexicon: Lexicon | None = None
    lexicon_ids = None
    if use_lexicon:
        lexicon, lexicon_ids = training_lexicon(train_ex, item_records, [it[0] for it in items], aux,
                                                aux_labels, cfg.max_span)
        cfg.lexicon_features = lexicon.n_features
    def member(i: int) -> tuple[RelNet, C.TrainState]:
        """Member ``i`` of the seed ensemble (the model itself when there is one member)."""
        C.set_seed(seed + i)
        net = RelNet(cfg, len(task.label_codes), pair_dim, aux_labels, pair_scores)
        if init is not None:
            own = net.state_dict()
            enc = {k: v for k, v in init.items() if k.split(".")[0] in ("char", "bigram", "lstm")}
            if aux_labels and list(aux_labels) == list(init_net.cfg.labels):
                enc.update({"aux_" + k: v for k, v in init.items() if k.startswith("pointer.")
                            and "aux_" + k in own})
            net.load_state_dict(enc, strict=False)
        state = fit(net, vocab, items, aux, cfg, member_dir(out_dir, i, members), seed=seed + i,
                    resume=resume, progress=progress, max_minutes=max_minutes, pos_weight=pos_weight,
                    aux_per_epoch=aux_per_epoch, pair_loss=pair_loss, pair_pos_weight=pair_pos_weight,
                    lexicon_ids=lexicon_ids, pseudo=pseudo.labels if pseudo else None,
                    pseudo_weight=pseudo_weight)
        return net, state

    trained: list[tuple[RelNet, C.TrainState]] = []
    for i in range(members):            # in order; one cut short stops the run (--resume goes on)
        trained.append(member(i))
        if trained[-1][1]["stopped_early"]:
            break
    states = [st for _, st in trained]
    stopped_early = any(st["stopped_early"] for st in states) or len(trained) < members
    net = trained[0][0] if members == 1 else LogitAverage([n for n, _ in trained])
    save(out_dir, net, vocab, schemas, threshold, subject_threshold, pair_threshold, lexicon)
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
                     + (f"; the characters also read a lexicon of {len(lexicon.terms)} typed terms "
                        "(the training part's subjects and objects, CMeEE's entities; leave-one-out "
                        "in training)" if lexicon else "")
                     + (f"; self-trained: {len(pseudo.pieces)} CMeEE training sentences also carry the "
                        f"triples of the teacher model {Path(str(teacher)).name}" if pseudo else "")
                     + f"; types from the {len(schemas.rows)} schemas"
                     + (f"; a seed ensemble of {members} such networks, their span and pair logits "
                        "averaged" if members > 1 else "") + "."))
    summary, base = {}, {}
    if held_ex:
        model = RelationModel(net, vocab, schemas, card, task, threshold, subject_threshold,
                              pair_threshold, lexicon)
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
                 "auxiliary": (f"{C.data_source(aux_path)} ({len(aux)} pieces, {aux_per_epoch} sampled per epoch)"
                               if aux else None),
                 "teacher": pseudo.info if pseudo else None},
        "split": split_info["split"],
        "held_out_indices": split_info.get("held_out_indices"),
        "command": C.command_line(task.name, data_dir, out_dir, seed, threads),
        "seed": seed, "epochs": states[-1]["epoch"], "losses": mean_losses(states),
        "stopped_early": stopped_early, "time_s": round(sum(round(st["time_s"], 1) for st in states), 1),
        "total_time_s": round(time.perf_counter() - t0, 1),
        "hyperparameters": {**{k: v for k, v in asdict(cfg).items() if k not in ("labels", "task")},
                            "pos_weight": pos_weight, "threshold": threshold,
                            "subject_threshold": subject_threshold, "init_from": init_from,
                            "pair_dim": pair_dim, "pair_scores": pair_scores, "pair_loss": pair_loss,
                            "pair_pos_weight": pair_pos_weight,
                            "pair_threshold": pair_threshold,
                            "aux_per_epoch": aux_per_epoch if aux else 0, "members": members,
                            "lexicon": use_lexicon, "teacher": teacher,
                            "pseudo_weight": pseudo_weight if teacher else None},
        "selection": "hyperparameters chosen by measurement on the held-out part (there is no "
                     "other labelled CMeIE data), so its score is slightly optimistic",
        "tried": tried or [],
        "threads": threads,
    }
    if members > 1:
        card.training["members"] = [{"seed": seed + i, "epochs": st["epoch"],
                                     "losses": [round(v, 5) for v in st["losses"]],
                                     "time_s": round(st["time_s"], 1), "stopped_early": st["stopped_early"]}
                                    for i, st in enumerate(states)]
    if teacher:
        sources.append(f"the records of the teacher model {teacher}")
    C.record_training_data(out_dir, card, supervised, sources=sources, also=teacher_records)
    card.dev_metrics = summary
    card.baselines = base
    card.extra = {"chars": cfg.vocab_size, "bigrams": cfg.bigram_size,
                  "not_comparable_with_leaderboard": "held_out_indices" in split_info,
                  "weights_dtype": "float16 on disk (dev predictions identical to float32), float32 in memory"}
    if not stopped_early:         # a run cut short keeps its checkpoints for --resume
        for i in range(members):
            C.Checkpoint(member_dir(out_dir, i, members)).clear()
            if members > 1:
                member_dir(out_dir, i, members).rmdir()
    return C.finish_card(out_dir, card, readme_text(card))
