"""CMeIE relation extraction: predicate-labelled mention spans, then subject pairing.

CMeIE has no public training file. Without one, the model trains on a fixed split of the dev
file (a ``RandomState(0)`` permutation: first 80% train, last 20% held out) and reports its
score on the held-out 20% only; that number is **not comparable with the leaderboard** (other
data, a fifth of the size). When a ``CMeIE_train.json`` exists (e.g. the sample data), it is
used for training and the dev file for scoring.

Model: the character BiLSTM span encoder of :mod:`.spans` with a multi-label head over
``SUBJ`` + the 44 predicates. A training mention (CMeIE gives strings, no offsets) is labelled
at every occurrence in its text: subjects ``SUBJ``, objects with their triple's predicate, so a
mention that is both (a synonym that is also a subject) gets both labels. An auxiliary head
learns CMeEE's 9 entity types on the CMeEE training file (when present beside the CMeIE folder)
so that the encoder sees 15,000 more medical sentences: mention boundaries transfer, the
relation data alone is small.

Decoding: spans over the threshold give subjects and (object, predicate) pairs; each object is
paired with the nearest subject occurrence before it (else the nearest after it; with no
subject found, the topic before ``@`` when the text has one). Types come from the 53 schemas
(predicate -> subject and object type; 同义词 keeps 疾病/疾病 unless another type is the only
one listed). ``combined`` is True when no ``。``-separated sentence holds both mentions.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

import torch
from torch import nn

from ...evaluation import evaluate
from ...io.resources import read_schemas, resource_kind
from ...records import Example, Triple
from ...tasks import TaskSpec, get_task
from ..base import ModelCard, Predictor
from . import common as C
from .spans import (PointerHead, SpanConfig, SpanNet, Vocab, batch_tensors, chunk, multilabel_targets,
                    pointer_loss, span_scores, span_targets)

KIND = "span-relation"
SUBJ = "SUBJ"
SPLIT_SEED = 0
TRAIN_FRACTION = 0.8


class RelNet(SpanNet):
    """SpanNet with a multi-label main head (``labels``) and an optional softmax auxiliary head
    (``aux_labels``, CMeEE types)."""

    def __init__(self, cfg: SpanConfig, aux_labels: Sequence[str] = ()):
        super().__init__(cfg)
        self.aux_labels = list(aux_labels)
        d = 2 * cfg.hidden
        if cfg.head != "pointer":
            self.out = nn.Linear(cfg.span_dim, len(cfg.labels))     # sigmoid per label
        if self.aux_labels:
            if cfg.head == "pointer":
                self.aux_pointer = PointerHead(d, cfg.span_dim, len(self.aux_labels), cfg.max_span)
            else:
                self.aux_start = nn.Linear(d, cfg.span_dim)
                self.aux_end = nn.Linear(d, cfg.span_dim)
                self.aux_width = nn.Embedding(cfg.max_span, cfg.span_dim)
                self.aux_out = nn.Linear(cfg.span_dim, len(self.aux_labels) + 1)

    def aux_logits(self, h: torch.Tensor) -> torch.Tensor:
        if self.cfg.head == "pointer":
            return self.aux_pointer(h)
        return span_scores(h, self.aux_start, self.aux_end, self.aux_width, self.aux_out, self.drop,
                           self.cfg.max_span)


def occurrences(text: str, mention: str) -> list[int]:
    out, i = [], text.find(mention) if mention else -1
    while i >= 0:
        out.append(i)
        i = text.find(mention, i + 1)
    return out


def combined(text: str, subject: str, obj: str) -> bool:
    return not any(subject in s and obj in s for s in text.split("。"))


def mention_spans(ex: Example, lab: dict[str, int], max_span: int) -> list[tuple[int, int, int]]:
    spans = set()
    for t in ex.triples:
        for m, k in ((t.subject, lab[SUBJ]), (t.object, lab.get(t.predicate))):
            if k is None or not m or len(m) > max_span:
                continue
            for s in occurrences(ex.text, m):
                spans.add((s, s + len(m), k))
    return sorted(spans)


class Schemas:
    def __init__(self, rows: Sequence[tuple[str, str, str]]):
        self.rows = [tuple(r) for r in rows]
        self.by_pred: dict[str, list[tuple[str, str]]] = {}
        for s, p, o in self.rows:
            self.by_pred.setdefault(p, []).append((s, o))

    def types(self, predicate: str) -> tuple[str, str] | None:
        opts = self.by_pred.get(predicate)
        if not opts:
            return None
        for pair in opts:
            if pair == ("疾病", "疾病"):
                return pair
        return opts[0]


class RelationModel(C.NetPredictor):
    batch_size = 16
    max_mentions = 80

    def __init__(self, net: RelNet, vocab: Vocab, schemas: Schemas, card: ModelCard, task: TaskSpec,
                 threshold: float = 0.5):
        super().__init__(net, card, task)
        self.vocab, self.schemas, self.threshold = vocab, schemas, threshold

    def mentions(self, texts: Sequence[str]):
        chars, bis, lengths = batch_tensors(self.vocab, texts)
        with torch.inference_mode():
            h = self.net.encode(chars.to(self.device), bis.to(self.device), lengths)
            probs = torch.sigmoid(self.net.span_logits(h)).cpu()
        out = []
        for i, text in enumerate(texts):
            n = len(text)
            hits = (probs[i] > self.threshold).nonzero().tolist()
            found: dict[tuple[str, str], float] = {}
            for s, w, k in hits:
                e = s + w + 1
                if e > n:
                    continue
                key = (text[s:e], self.labels[k])
                found[key] = max(found.get(key, 0.0), float(probs[i, s, w, k]))
            if len(found) > self.max_mentions:   # an untrained model would find everything
                found = dict(sorted(found.items(), key=lambda kv: -kv[1])[:self.max_mentions])
            out.append(found)
        return out

    def triples(self, text: str, found: dict[tuple[str, str], float]) -> list[Triple]:
        subjects = [m for (m, lab) in found if lab == SUBJ]
        objects = [(m, lab) for (m, lab) in found if lab != SUBJ]
        if not subjects and "@" in text:
            topic = text.split("@", 1)[0].strip()
            subjects = [topic] if topic else []
        if not subjects:
            return []
        s_occ = {s: occurrences(text, s) or [0] for s in subjects}
        out: dict[tuple[str, str, str], Triple] = {}
        for obj, pred in objects:
            types = self.schemas.types(pred)
            if types is None:
                continue
            o_occ = occurrences(text, obj) or [0]
            best = None
            for s in subjects:
                if s == obj:
                    continue
                before = [b - a for a in s_occ[s] for b in o_occ if a <= b]
                d = min(before) if before else 10 ** 6 + min(abs(a - b) for a in s_occ[s] for b in o_occ)
                if best is None or d < best[0]:
                    best = (d, s)
            if best is None:
                continue
            subj = best[1]
            out[(subj, pred, obj)] = Triple(subj, pred, obj, types[0], types[1], combined(text, subj, obj))
        return list(out.values())

    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        found = self.mentions([e.text for e in batch])
        out = []
        for ex, f in zip(batch, found):
            out.append(Example(key=ex.key, index=ex.index, text=ex.text, text2=ex.text2,
                               triples=self.triples(ex.text, f),
                               meta={"mentions": [[m, lab, round(p, 4)] for (m, lab), p in f.items()]}))
        return out


# ---------------------------------------------------------------------- save / load

def save(folder: Path, net: RelNet, vocab: Vocab, schemas: Schemas, threshold: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    # the auxiliary CMeEE head is a training device only: not shipped
    sd = {k: v for k, v in net.state_dict().items() if not k.startswith("aux_")}
    C.save_tensors(folder / "model.safetensors", sd, half=("",))
    C.write_json(folder / "config.json", {**asdict(net.cfg), "threshold": threshold})
    C.write_json(folder / "vocab.json", vocab.to_json())
    C.write_json(folder / "schemas.json", [{"subject_type": s, "predicate": p, "object_type": o}
                                           for s, p, o in schemas.rows])


def load_model(folder: str | Path, device: str = "cpu") -> RelationModel:
    folder = Path(folder)
    raw = C.read_json(folder / "config.json")
    threshold = raw.pop("threshold", 0.5)
    cfg = SpanConfig(**raw)
    v = C.read_json(folder / "vocab.json")
    net = RelNet(cfg)
    net.load_state_dict(C.load_tensors(folder / "model.safetensors"))
    schemas = Schemas([(r["subject_type"], r["predicate"], r["object_type"])
                       for r in C.read_json(folder / "schemas.json")])
    return RelationModel(net, Vocab(v["chars"], v["bigrams"]), schemas, C.read_card(folder),
                         get_task(cfg.task), threshold).to(device)


# ---------------------------------------------------------------------- training

DEFAULTS: dict = dict(epochs=14, max_chars=320, batch_size=16, lr=2e-3)
TINY = dict(char_dim=16, bigram_dim=8, hidden=16, layers=1, span_dim=16, max_span=12, dropout=0.0,
            epochs=2, batch_size=4, lr=1e-2, min_bigram_count=1)


def find_schemas(data_dir: str | Path, task: TaskSpec) -> Path | None:
    folder = C.task_dir(data_dir, task)
    hits = sorted(p for p in folder.glob("*.json*") if resource_kind(p) == "cmeie_schemas")
    return hits[0] if hits else None


def split_data(data_dir: str | Path, task: TaskSpec):
    train_ex, train_path = C.load_split(data_dir, task, "train")
    dev_ex, dev_path = C.load_split(data_dir, task, "dev")
    if train_ex:
        return train_ex, dev_ex, {
            "train": _rel(train_path), "eval": _rel(dev_path),
            "split": "official-style train file for training, dev file for the score"}
    if not dev_ex:
        raise FileNotFoundError(f"no {task.name} train or dev file under {data_dir}")
    tr_idx, ho_idx = C.seeded_split(len(dev_ex), SPLIT_SEED, TRAIN_FRACTION)
    return [dev_ex[i] for i in tr_idx], [dev_ex[i] for i in ho_idx], {
        "train": f"{_rel(dev_path)} records numpy.random.RandomState({SPLIT_SEED}).permutation"
                 f"(n)[:round({TRAIN_FRACTION} n)] ({len(tr_idx)} records)",
        "eval": f"{_rel(dev_path)} the other {len(ho_idx)} records (held out)",
        "split": f"no CMeIE train file exists: fixed {int(TRAIN_FRACTION * 100)}/"
                 f"{100 - int(TRAIN_FRACTION * 100)} split of the dev file by a seeded shuffle "
                 f"(seed {SPLIT_SEED}, independent of the training seed); the reported score is on the "
                 "held-out part only and is NOT comparable with the leaderboard",
        "held_out_indices": ho_idx}


def aux_items(data_dir: str | Path, max_chars: int, limit: int | None = None):
    """CMeEE training sentences for the auxiliary head (none when the file is absent)."""
    try:
        ee = get_task("CMeEE")
        ex, path = C.load_split(data_dir, ee, "train")
    except FileNotFoundError:
        return [], [], None
    labels = list(ee.label_codes)
    lab = {l: i + 1 for i, l in enumerate(labels)}
    items = []
    for e in ex[:limit]:
        sp = [(s.start, s.end, lab[s.type]) for s in e.spans if s.type in lab and 0 <= s.start < s.end]
        items.extend(p for p in chunk(e.text, sp, max_chars) if p[0])
    return items, labels, path


def fit(net: RelNet, vocab: Vocab, items, aux, cfg: SpanConfig, out_dir: Path, *, seed: int,
        resume: bool, progress: bool, max_minutes: float, pos_weight: float, aux_per_epoch: int,
        max_steps: int | None = None) -> dict:
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda ep: max(0.1, 1 - ep / max(cfg.epochs, 1)))
    K = len(cfg.labels)
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.full((K,), pos_weight), reduction="none")
    ce = nn.CrossEntropyLoss(ignore_index=-100)
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
        perm = torch.randperm(len(jobs)).tolist()
        total, n = 0.0, 0
        bar = C.progress_bar(total=len(jobs), enabled=progress, desc=f"epoch {ep + 1}", leave=False)
        for j in perm:
            if max_steps is not None and len(step_losses) >= max_steps:
                break
            kind, idx = jobs[j]
            src = items if kind == "main" else aux
            texts = [src[i][0] for i in idx]
            chars, bis, lengths = batch_tensors(vocab, texts)
            h = net.encode(chars, bis, lengths)
            L = chars.shape[1]
            lens = [len(t) for t in texts]
            if kind == "main":
                y, mask = multilabel_targets([src[i][1] for i in idx], lens, L, cfg.max_span, K)
                if cfg.head == "pointer":
                    loss = pointer_loss(net.span_logits(h), y, mask)
                else:
                    lo = bce(net.span_logits(h), y).sum(-1)
                    loss = (lo * mask).sum() / mask.sum().clamp(min=1)
            elif cfg.head == "pointer":
                y, mask = multilabel_targets([[(s, e, k - 1) for s, e, k in src[i][1]] for i in idx],
                                             lens, L, cfg.max_span, len(net.aux_labels))
                loss = pointer_loss(net.aux_logits(h), y, mask)
            else:
                y = span_targets([src[i][1] for i in idx], lens, L, cfg.max_span)
                lg = net.aux_logits(h)
                loss = ce(lg.reshape(-1, lg.shape[-1]), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            if kind == "main":
                total += loss.item()
                n += 1
                step_losses.append(loss.item())
            bar.update(1)
        bar.close()
        return total / max(n, 1)

    state = C.epoch_loop(net, opt, cfg.epochs, run_epoch, out_dir, resume=resume,
                         max_minutes=max_minutes, seed=seed, progress=progress, scheduler=sched,
                         done=lambda: max_steps is not None and len(step_losses) >= max_steps)
    state["step_losses"] = step_losses
    net.eval()
    return state


def dictionary_baseline(task: TaskSpec, train: Sequence[Example], held: Sequence[Example]) -> dict:
    """Every training triple whose subject and object both occur in the text."""
    known = Counter((t.subject, t.predicate, t.object, t.subject_type, t.object_type)
                    for e in train for t in e.triples)
    by_subj: dict[str, list] = {}
    for k in known:
        by_subj.setdefault(k[0], []).append(k)
    pred = []
    for e in held:
        tr = [Triple(s, p, o, st, ot, combined(e.text, s, o))
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
    threads = C.training_threads()
    task = get_task(task_name)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    train_ex, held_ex, split_info = split_data(data_dir, task)
    schema_path = find_schemas(data_dir, task)
    rows = ([(s.subject_type, s.predicate, s.object_type) for s in read_schemas(schema_path)]
            if schema_path else sorted({(t.subject_type, t.predicate, t.object_type)
                                        for e in train_ex for t in e.triples}))
    schemas = Schemas(rows)
    params = {**DEFAULTS, **(overrides or {})}
    pos_weight = params.pop("pos_weight", 1.0)
    threshold = params.pop("threshold", 0.5)
    aux_per_epoch = params.pop("aux_per_epoch", 3000)
    use_aux = params.pop("aux", True)
    labels = [SUBJ] + [p for p in task.label_codes]
    cfg = SpanConfig(task=task.name, labels=labels, **params)
    lab = {l: i for i, l in enumerate(labels)}
    aux, aux_labels, aux_path = (aux_items(data_dir, cfg.max_chars) if use_aux and aux_per_epoch
                                 else ([], [], None))
    vocab = Vocab.build([e.text for e in train_ex] + [a[0] for a in aux], cfg.min_bigram_count,
                        cfg.max_bigrams)
    cfg.vocab_size, cfg.bigram_size = len(vocab.chars), len(vocab.bigrams)
    items = []
    for e in train_ex:
        items.extend(p for p in chunk(e.text, mention_spans(e, lab, cfg.max_span), cfg.max_chars) if p[0])
    C.set_seed(seed)
    net = RelNet(cfg, aux_labels)
    state = fit(net, vocab, items, aux, cfg, out_dir, seed=seed, resume=resume, progress=progress,
                max_minutes=max_minutes, pos_weight=pos_weight, aux_per_epoch=aux_per_epoch)
    save(out_dir, net, vocab, schemas, threshold)
    net.load_state_dict(C.load_tensors(out_dir / "model.safetensors"), strict=False)  # as shipped
    card = ModelCard(
        name=out_dir.name, task=task.name, kind=KIND, labels=list(task.label_codes),
        description=(f"CMeIE extractor: multi-label span classifier (SUBJ + {len(task.label_codes)} "
                     f"predicates, spans up to {cfg.max_span} characters) on a {cfg.layers}-layer "
                     f"character BiLSTM (hidden {cfg.hidden}) trained from scratch"
                     + (" with an auxiliary CMeEE entity head" if aux else "")
                     + "; each object is paired with the nearest preceding subject; types from the "
                     f"{len(schemas.rows)} schemas."))
    summary, base = {}, {}
    if held_ex:
        model = RelationModel(net, vocab, schemas, card, task, threshold)
        pred = model.predict(held_ex)
        summary = evaluate(task, held_ex, pred).summary()
        if "held_out_indices" in split_info:
            summary["notes"] = list(summary.get("notes", [])) + [
                "scored on the held-out part of the dev split (see training.split): NOT comparable "
                "with the leaderboard"]
        base = dictionary_baseline(task, train_ex, held_ex)
        gold_comb = [(t.combined, combined(e.text, t.subject, t.object)) for e in held_ex for t in e.triples
                     if t.combined is not None]
        if gold_comb:
            summary.setdefault("extra", {})["combined_rule_agreement_with_gold"] = round(
                sum(a == b for a, b in gold_comb) / len(gold_comb), 4)
    card.training = {
        "data": {"train": split_info["train"], "eval": split_info["eval"],
                 "train_examples": len(train_ex), "eval_examples": len(held_ex),
                 "train_pieces": len(items), "schemas": schema_path.name if schema_path else None,
                 "auxiliary": (f"{_rel(aux_path)} ({len(aux)} pieces, {aux_per_epoch} sampled per epoch)"
                               if aux else None)},
        "split": split_info["split"],
        "held_out_indices": split_info.get("held_out_indices"),
        "command": C.command_line(task.name, data_dir, out_dir, seed),
        "seed": seed, "epochs": state["epoch"], "losses": [round(v, 5) for v in state["losses"]],
        "stopped_early": state["stopped_early"], "time_s": round(state["time_s"], 1),
        "total_time_s": round(time.perf_counter() - t0, 1),
        "hyperparameters": {**{k: v for k, v in asdict(cfg).items() if k not in ("labels", "task")},
                            "pos_weight": pos_weight, "threshold": threshold,
                            "aux_per_epoch": aux_per_epoch if aux else 0},
        "selection": "hyperparameters chosen by measurement on the held-out part (there is no "
                     "other labelled CMeIE data), so its score is slightly optimistic",
        "tried": tried or [],
        "threads": threads,
    }
    card.dev_metrics = summary
    card.baselines = base
    card.extra = {"chars": cfg.vocab_size, "bigrams": cfg.bigram_size,
                  "not_comparable_with_leaderboard": "held_out_indices" in split_info,
                  "weights_dtype": "float16 on disk (dev predictions identical to float32), float32 in memory"}
    if not state["stopped_early"]:         # a run cut short keeps its checkpoint for --resume
        C.Checkpoint(out_dir).clear()
    return C.finish_card(out_dir, card, readme_text(card))


def _rel(path: Path | None) -> str | None:
    return "/".join(path.parts[-2:]) if path is not None else None


def readme_text(card: ModelCard) -> str:
    tr = card.training
    d = tr["data"]
    dev = C.fmt_metric(card.dev_metrics) if card.dev_metrics else "not measured"
    base = "; ".join(f"{k} ({v['description']}): F1 {v['metrics']['f1']:.4f}"
                     for k, v in card.baselines.items()) or "n/a"
    tried = "\n".join(f"- {t}" for t in tr.get("tried", [])) or "- (not recorded)"
    warn = ("\n> **Not comparable with the CBLUE leaderboard.** No CMeIE train file is public: this "
            "model trained on 80% of the dev file and is scored on the other 20%.\n"
            if card.extra.get("not_comparable_with_leaderboard") else "")
    return f"""# {card.name}: {card.task} ({card.kind})
{warn}
**Task.** {get_task(card.task).description}.

**Architecture.** {card.description}

**Data.** Train: {d['train']}. Scored on: {d['eval']}. Split: {tr['split']}. Schemas:
`{d['schemas']}`. Auxiliary entity data: {d['auxiliary'] or 'none'}. Scored with CBLUE Studio's
evaluator (micro-F1 over normalized (subject, predicate, object), 95% bootstrap interval).

**Training.** `{tr['command']}`; seed {tr['seed']}, {tr['epochs']} epochs, {tr['time_s']} s on
{tr['threads']} CPU thread(s). {tr['selection']}.

**Held-out score.** {dev}.

**Baseline.** {base}.

**What was tried.**
{tried}

**Limitations.** Trained on about 2,900 texts: rare predicates are seldom found; an object is
paired with one subject only (the nearest before it), so texts that discuss several diseases
lose triples; ``combined`` follows the rule above, which agrees with the gold flag on about
{card.dev_metrics.get('extra', {}).get('combined_rule_agreement_with_gold', 'n/a')} of the
held-out triples (the flag is not scored). Research use only; not for clinical decisions.
"""
