"""CMeIE recipe selection on a slice of the training part (the held-out part is never read).

The shipped CMeIE model trains on 80% of the dev file (:func:`cblue_core.models.builtin.cmeie.
split_data`) and is scored on the other 20%, whose figure already made the choices its card
lists. Any further choice is made here instead: the training part is split again by a seeded
shuffle (seed 1, 80/20) into a fit part and a selection slice, written as an official-style
``CMeIE_train.json`` / ``CMeIE_dev.json`` pair in a scratch folder (beside links to the schemas
and to CMeEE for the auxiliary head), and each variant of the recipe is trained on the fit part
and scored on the selection slice.

Variants (``VARIANTS``), each one network (``members`` 1; the shipped seed ensemble is measured by
training seeds as separate runs and averaging them with ``--ensemble``):

- ``base``: the shipped recipe's network.
- ``swap``: the fit part plus one copy of each record whose mentions are swapped, each with
  probability 0.5, for another mention of the same type from the fit part (text and triples
  alike; a mention that contains another mention of the record, or is contained in one, is left
  as it is); half the epochs and twice the auxiliary sentences per epoch, so that the number of
  updates stays that of ``base``.
- ``bf16``: the shipped recipe with the BiLSTM under bf16 autocast in training (``precision``),
  which halves its step time on a CPU with AMX (refused on a CPU without native bf16); predictions
  run in fp32 as always.
- ``lexicon``: the shipped recipe whose characters also read a gazetteer of the fit part's
  subjects and objects and CMeEE's entities (:mod:`cblue_core.models.builtin.cmeie.lexicon`,
  leave-one-out while training).
- ``teacher``: the shipped recipe, self-trained: CMeEE's training sentences also carry the triples
  of a teacher model (``--teacher DIR``, e.g. an ensemble of fit-part models saved with
  ``--ensemble ... --save DIR``; :mod:`cblue_core.models.builtin.cmeie.self_training`).

    CBLUE_TRAIN_THREADS=1 nice -n 10 python bench/cmeie_selection.py --variant base --out DIR
        [--data ../shared/cblue] [--seed 0] [--max-minutes 90]
        [--teacher DIR] [--fraction F]
    python bench/cmeie_selection.py --ensemble DIR DIR [...] [--save DIR]

``--fraction``: train on that share of the fit part (a seeded sample; smaller shares inside
larger ones), for a learning curve. Prints the selection slice's F1 (and writes the model's card under ``DIR``). ``--ensemble``: the
F1 on the same slice of models trained here (each alone, then together: their span and pair
logits averaged, the shipped thresholds), which must share their vocabulary (all start from the
cmeee model); ``--save`` writes that ensemble as a model folder (a teacher).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cblue_core.models.builtin import cmeie
from cblue_core.models.builtin import common as C
from cblue_core.models.provenance import read_training_records, write_training_records
from cblue_core.runs.evaluation import evaluate
from cblue_core.tasks import get_task

SELECTION_SEED = 1
SWAP_PROBABILITY = 0.5
# One network per run: seeds are trained as separate runs and averaged with --ensemble, so that
# each member is also scored alone.
ONE = {"members": 1}
VARIANTS = {"base": ONE, "swap": {**ONE, "epochs": cmeie.DEFAULTS["epochs"] // 2, "aux_per_epoch": 6000},
            "bf16": {**ONE, "precision": "bf16"}, "lexicon": {**ONE, "lexicon": True}, "teacher": ONE}


def raw_records(path: Path) -> list[dict]:
    """The records of a CMeIE file (JSON lines) as read, in file order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def training_part(data: Path, records: list[dict]) -> list[dict]:
    """The records the shipped model trains on: all but the held-out ones that
    :func:`cmeie.split_data` names (its split, not a copy of it)."""
    _train, _held, info = cmeie.split_data(data, get_task("CMeIE"))
    held_out = set(info["held_out_indices"])
    return [r for i, r in enumerate(records) if i not in held_out]


def _value(x) -> str:
    return x["@value"] if isinstance(x, dict) else x


def mention_types(records: list[dict]) -> dict[str, list[str]]:
    """Type -> the distinct mentions of that type in ``records`` (subjects and objects), sorted."""
    found: dict[str, set[str]] = {}
    for r in records:
        for spo in r["spo_list"]:
            found.setdefault(spo["subject_type"], set()).add(spo["subject"])
            found.setdefault(_value(spo["object_type"]), set()).add(_value(spo["object"]))
    return {t: sorted(ms) for t, ms in found.items()}


def swapped(record: dict, inventory: dict[str, list[str]], rng: random.Random) -> dict | None:
    """A copy of ``record`` with some mentions swapped for others of their type; None when none
    was swapped."""
    types: dict[str, str] = {}
    for spo in record["spo_list"]:
        types.setdefault(spo["subject"], spo["subject_type"])
        types.setdefault(_value(spo["object"]), _value(spo["object_type"]))
    free = [m for m in types if m and not any(m != o and (m in o or o in m) for o in types)]
    new: dict[str, str] = {}
    for m in free:
        if rng.random() < SWAP_PROBABILITY:
            options = [o for o in inventory.get(types[m], []) if o != m and len(o) <= 25 and o not in types]
            if options:
                new[m] = rng.choice(options)
    if not new:
        return None
    text = record["text"]
    for i, m in enumerate(new):               # through placeholders: a new mention is never swapped again
        text = text.replace(m, f"\x00{i}\x00")
    for i, m in enumerate(new):
        text = text.replace(f"\x00{i}\x00", new[m])

    def moved(x):
        v = _value(x)
        v = new.get(v, v)
        return {"@value": v} if isinstance(x, dict) else v

    spo_list = [{**spo, "subject": new.get(spo["subject"], spo["subject"]), "object": moved(spo["object"])}
                for spo in record["spo_list"]]
    return {**record, "text": text, "spo_list": spo_list}


def selection_folder(data: Path, folder: Path, variant: str, fraction: float = 1.0) -> dict:
    """The scratch CBLUE folder of a variant: fit part as train (``fraction`` of it: a seeded
    sample, each smaller fraction inside the larger ones), selection slice as dev."""
    records = training_part(data, raw_records(data / "CMeIE" / "CMeIE_dev.json"))
    fit_idx, sel_idx = C.seeded_split(len(records), SELECTION_SEED, 0.8)
    fit, selection = [records[i] for i in fit_idx], [records[i] for i in sel_idx]
    if fraction < 1.0:
        fit = [fit[i] for i in C.seeded_split(len(fit), SELECTION_SEED, fraction)[0]]
    extra = []
    if variant == "swap":
        rng, inventory = random.Random(0), mention_types(fit)
        extra = [s for r in fit if (s := swapped(r, inventory, rng)) is not None]
    (folder / "CMeIE").mkdir(parents=True)
    for name, rows in (("CMeIE_train.json", fit + extra), ("CMeIE_dev.json", selection)):
        (folder / "CMeIE" / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                             encoding="utf-8")
    (folder / "CMeIE" / "53_schemas.json").symlink_to((data / "CMeIE" / "53_schemas.json").resolve())
    (folder / "CMeEE").symlink_to((data / "CMeEE").resolve())
    return {"training_part": len(records), "fit": len(fit), "swapped_copies": len(extra), "selection": len(selection)}


def ensemble_scores(data: Path, folders: list[Path], save: Path | None = None) -> dict:
    """F1 on the selection slice of each model in ``folders``, then of all of them together
    (saved as a model folder under ``save``, with the union of their training records)."""
    task = get_task("CMeIE")
    with tempfile.TemporaryDirectory() as tmp:
        selection_folder(data, Path(tmp), "base")
        held, _ = C.load_split(tmp, task, "dev")
    models = [cmeie.load_model(f) for f in folders]
    if any(m.vocab.chars != models[0].vocab.chars or m.vocab.bigrams != models[0].vocab.bigrams for m in models):
        raise SystemExit("the models do not share a vocabulary: train them all from the cmeee model")
    if any(m.lexicon != models[0].lexicon for m in models):
        raise SystemExit("the models do not share a lexicon: train them all with the same lexicon setting")
    out = {}
    for folder, m in zip(folders, models):
        out[folder.name] = evaluate(task, held, m.predict(held), n_boot=200).metrics["f1"]
    first = models[0]
    together = cmeie.RelationModel(cmeie.LogitAverage([m.net for m in models]), first.vocab, first.schemas,
                                   first.card, task, *first.thresholds, first.lexicon).to("cpu")
    out["+".join(f.name for f in folders)] = evaluate(task, held, together.predict(held), n_boot=200).metrics["f1"]
    if save is not None:
        cmeie.save(save, together.net, first.vocab, first.schemas, *first.thresholds, first.lexicon)
        card = dataclasses.replace(first.card, name=save.name,
                                   description=f"the models {', '.join(f.name for f in folders)}, their span "
                                               "and pair logits averaged")
        card.training = {**card.training}
        records = frozenset().union(*(read_training_records(f) or frozenset() for f in folders))
        card.training["supervised_records"] = write_training_records(save, [], sources=[str(f) for f in folders],
                                                                     also=records)
        C.finish_card(save, card)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=sorted(VARIANTS))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--ensemble", type=Path, nargs="+", metavar="DIR")
    parser.add_argument("--save", type=Path, metavar="DIR", help="with --ensemble: save it as a model folder")
    parser.add_argument("--teacher", type=Path, metavar="DIR", help="the teacher variant's teacher model")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "cblue")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fraction", type=float, default=1.0,
                        help="train on this fraction of the fit part (a learning curve)")
    parser.add_argument("--max-minutes", type=float, default=90)
    args = parser.parse_args()
    if args.ensemble:
        print(json.dumps(ensemble_scores(args.data, args.ensemble, args.save)))
        return
    if args.variant is None or args.out is None:
        parser.error("--variant and --out (or --ensemble)")
    if not 0 < args.fraction <= 1:
        parser.error("--fraction is a share of the fit part: over 0, at most 1")
    if (args.variant == "teacher") != (args.teacher is not None):
        parser.error("--teacher DIR goes with --variant teacher (and only with it)")
    overrides = {**VARIANTS[args.variant], **({"teacher": str(args.teacher)} if args.teacher else {})}
    with tempfile.TemporaryDirectory() as tmp:
        sizes = selection_folder(args.data, Path(tmp), args.variant, args.fraction)
        print(json.dumps({"variant": args.variant, **sizes}), flush=True)
        card = cmeie.train("CMeIE", tmp, args.out, seed=args.seed, progress=False,
                           max_minutes=args.max_minutes, overrides=overrides)
    m = card.dev_metrics["metrics"]
    print(json.dumps({"variant": args.variant, "seed": args.seed, "fraction": args.fraction,
                      "fit": sizes["fit"], "selection_f1": m.get("f1"),
                      "precision": m.get("precision"), "recall": m.get("recall"),
                      "epochs": card.training["epochs"], "time_s": card.training["time_s"]}), flush=True)


if __name__ == "__main__":
    main()
