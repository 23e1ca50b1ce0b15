"""The pretraining corpus reads train splits and reference lists only: never a dev or test file."""
from __future__ import annotations

import shutil
import unicodedata

import pytest

from cblue_core.models.encoder import corpus as C
from tests.models.conftest import SAMPLE

DATA = SAMPLE / "cblue"


def test_sources_are_train_splits_and_reference_lists():
    corpus = C.build_corpus(DATA)
    kinds = {s.kind for s in corpus.sources}
    assert kinds == {"train", "icd10", "ctc_categories"}
    for s in corpus.sources:
        name = s.path.rsplit("/", 1)[-1]
        assert "_dev" not in name and "_test" not in name and ".pred." not in name, s.path
        if s.kind == "train":
            assert name.startswith(f"{s.task}_train"), s.path
        assert len(s.sha1) == 40 and s.records > 0 and s.texts > 0 and s.chars > 0
    # every task of the sample with a train file is read
    assert {s.task for s in corpus.sources if s.kind == "train"} == {
        p.parent.name for p in DATA.glob("*/*_train*.json")}


def test_no_dev_or_test_file_is_opened(monkeypatch):
    opened = []
    real_load = C.load

    def spy(path, task=None, **kw):
        opened.append(str(path))
        return real_load(path, task, **kw)

    monkeypatch.setattr(C, "load", spy)
    C.build_corpus(DATA)
    assert opened and all("_train" in p for p in opened)


def test_a_dev_text_is_in_the_corpus_only_when_a_train_file_or_list_holds_it_too():
    from cblue_core.io.validate import load
    from cblue_core.models.builtin.common import find_split

    corpus = C.build_corpus(DATA)
    texts = set(corpus.train) | set(corpus.held_out)
    allowed = {t for task, path in C.train_files(DATA) for t in C._texts_of_train(task, path)[1]}
    allowed |= {t for kind, _, path in C.resource_files(DATA) for t in C._texts_of_resource(kind, path)[1]}
    checked = 0
    for task in C.corpus_tasks():
        if not (DATA / task.name).is_dir():
            continue
        for split in ("dev", "test"):
            path = find_split(DATA, task, split)
            for e in load(path, task).examples if path else []:
                for t in (C.normalise(e.text), C.normalise(e.text2)):
                    checked += 1
                    assert t not in texts or t in allowed
    assert checked > 100


def test_normalised_deduplicated_and_a_fixed_disjoint_held_out_slice(tmp_path):
    corpus = C.build_corpus(DATA)
    every = corpus.train + corpus.held_out
    assert len(every) == len(set(every))
    assert all(t == unicodedata.normalize("NFC", t).strip() and t for t in every)
    assert corpus.held_out and all(C.is_held_out(t) for t in corpus.held_out)
    assert not any(C.is_held_out(t) for t in corpus.train)
    # the slice depends on the text, not on which files are read or in what order
    copy = tmp_path / "cblue"
    shutil.copytree(DATA / "KUAKE-QIC", copy / "KUAKE-QIC")
    small = C.build_corpus(copy)
    assert set(small.held_out) <= set(corpus.held_out)
    s = corpus.summary()
    assert s["texts"] == len(every) and s["train_chars"] == sum(map(len, corpus.train))


def test_a_folder_without_train_files_is_an_error(tmp_path):
    (tmp_path / "CMeEE").mkdir()
    shutil.copy(DATA / "CMeEE" / "CMeEE_dev.json", tmp_path / "CMeEE")
    with pytest.raises(FileNotFoundError):
        C.build_corpus(tmp_path)
