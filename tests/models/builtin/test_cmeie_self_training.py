"""CMeIE self-training: which CMeEE sentences a teacher labels, its labels, and the guards."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from cblue_core.models.builtin import cmeie as M
from cblue_core.models.builtin.cmeie import self_training as T
from cblue_core.models.provenance import fingerprint, read_training_records
from cblue_core.records import Example, Triple
from cblue_core.tasks import get_task

pytestmark = pytest.mark.slow   # see tests/conftest.py: not in the fast loop

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_data" / "cblue"
TINY = {**M.TINY, "pair_dim": 8, "epochs": 2, "aux_per_epoch": 8}


def test_a_sentence_sharing_a_run_of_text_with_a_cmeie_text_is_left_out():
    cmeie_text = "肺炎患者常见发热、咳嗽，重者可出现呼吸困难和发绀。肺炎可并发脓胸。"
    pieces = [("其他疾病的文字，与上文毫无共同之处，长度也足够二十个字符以上。", []),
              ("前言：肺炎患者常见发热、咳嗽，重者可出现呼吸困难", []),     # 21 characters in common
              ("重者可出现呼吸困难和发绀", []),                              # shorter than a run, inside
              ("肺炎患者常见高热", []),                                      # shorter, and not inside
              ("前言：肺炎患者常见发热、咳嗽，重", [])]                      # 13 in common
    assert T.unseen(pieces, [cmeie_text], window=20) == [0, 3, 4]
    assert T.unseen(pieces, [cmeie_text], window=10) == [0, 3]


class _Teacher:
    """A teacher that finds fixed triples (teacher_labels reads only ``predict``)."""

    def __init__(self, triples: dict[str, list[Triple]]):
        self.triples = triples

    def predict(self, examples):
        return [Example(key=e.key, index=e.index, text=e.text, triples=self.triples.get(e.text, []))
                for e in examples]


def test_teacher_labels_are_the_training_targets_of_its_triples():
    text = "肺炎@肺炎患者常见发热。"
    found = [Triple("肺炎", "临床表现", "发热", "疾病", "症状")]
    lab = {"SUBJ": 0, "临床表现": 1, "T:症状": 2}
    labels = T.teacher_labels(_Teacher({text: found}), [(text, []), ("无关的句子", [])], lab, {"临床表现": 0}, 10)
    ex = Example(key="", index=0, text=text, triples=found)
    assert labels[0] == (M.mention_spans(ex, lab, 10), M.piece_pairs(text, found, {"临床表现": 0}, 10))
    assert labels[0][0] == [(0, 2, 0), (3, 5, 0), (9, 11, 1), (9, 11, 2)]
    assert labels[1] == ([], ([], [], {}))                      # nothing found: a negative sentence


@pytest.fixture(scope="module")
def teacher(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("teacher") / "t"
    M.train("CMeIE", SAMPLE, folder, progress=False, overrides=TINY)
    return folder


def test_a_teacher_must_not_have_learnt_the_scored_records(teacher, tmp_path):
    train, held, _ = M.split_data(SAMPLE, get_task("CMeIE"))
    model, folder, records = T.load_teacher(teacher, held)
    assert model.card.task == "CMeIE" and folder == teacher and records == read_training_records(teacher)
    with pytest.raises(ValueError, match=r"learnt from 6 of the 6 records this run scores"):
        T.load_teacher(teacher, train)
    # records the student learns from itself (a CMeEE sentence that is also a CMeIE text) pass
    own = frozenset(fingerprint(e) for e in train[:4])
    with pytest.raises(ValueError, match=r"learnt from 2 of the 6 records this run scores"):
        T.load_teacher(teacher, train, own)
    blind = tmp_path / "blind"
    shutil.copytree(teacher, blind)
    (blind / "training_records.sha1.gz").unlink()
    with pytest.raises(ValueError, match="does not declare the records it learnt from"):
        T.load_teacher(blind, held)
    with pytest.raises(FileNotFoundError, match="train one without a teacher first"):
        T.load_teacher(tmp_path / "no-such-model", held)
    with pytest.raises(ValueError, match="not a usable CMeIE model"):
        T.load_teacher(ROOT / "models" / "kuake-qic", held)


def test_a_self_trained_model_learns_the_teachers_labels_and_says_so(teacher, tmp_path):
    card = M.train("CMeIE", SAMPLE, tmp_path / "s", progress=False, overrides={**TINY, "teacher": str(teacher)})
    info = card.training["data"]["teacher"]
    assert info["model"] == str(teacher) and info["sentences"] + info["left_out_sharing_text"] > 0
    assert card.training["hyperparameters"]["teacher"] == str(teacher)
    assert f"triples of the teacher model {teacher.name}" in card.description
    # it learnt from the teacher's records at one remove, and says so
    assert read_training_records(teacher) <= read_training_records(tmp_path / "s")
    # the teacher's labels reach the loss through their weight and nothing else: weight 0 trains
    # the network of no teacher, bit for bit
    M.train("CMeIE", SAMPLE, tmp_path / "zero", progress=False,
            overrides={**TINY, "teacher": str(teacher), "pseudo_weight": 0.0})
    M.train("CMeIE", SAMPLE, tmp_path / "none", progress=False, overrides=TINY)
    nets = {k: M.load_model(tmp_path / k).net.state_dict() for k in ("s", "zero", "none")}
    assert all(torch.equal(nets["zero"][k], nets["none"][k]) for k in nets["none"])
    assert any(not torch.equal(nets["s"][k], nets["none"][k]) for k in nets["none"])


def test_a_teacher_needs_the_auxiliary_sentences(teacher, tmp_path):
    with pytest.raises(ValueError, match="auxiliary data"):
        M.train("CMeIE", SAMPLE, tmp_path / "s", progress=False, overrides={**TINY, "teacher": str(teacher),
                                                                           "aux": False})
