"""The registry: every task declared once, with what the rest of the code looks up."""
from __future__ import annotations

from dataclasses import replace

import pytest

from cblue_core.io.codecs import CODECS
from cblue_core.tasks import (
    CLIMEDBENCH_DIMENSIONS,
    CLIMEDBENCH_SCENARIOS,
    PROMPT_TASKS,
    REGISTRY,
    TASKS,
    Family,
    canonical_prompt_task,
    get_task,
    infer_split,
    infer_task,
)


def test_every_task_names_an_existing_codec_and_unique_name():
    assert len({t.name for t in TASKS}) == len(TASKS)
    for t in TASKS:
        assert t.codec in CODECS, t.name
        assert t.submission_file and t.metric and t.description


@pytest.mark.parametrize("name, size", [("CMeEE", 9), ("CMeIE", 44), ("CHIP-CTC", 44), ("KUAKE-QIC", 11),
                                        ("CHIP-STS", 2), ("KUAKE-QTR", 4), ("KUAKE-QQR", 3),
                                        ("IMCS-V2-DAC", 16), ("PromptCBLUE", 18), ("CliMedBench", 14)])
def test_label_set_sizes(name, size):
    assert len(get_task(name).labels) == size


def test_families():
    fam = {t.name: t.family for t in TASKS}
    assert sum(f is Family.CBLUE1 for f in fam.values()) == 8
    assert sum(f is Family.CBLUE2 for f in fam.values()) == 12


def test_prompt_tasks_and_old_naming():
    assert len(PROMPT_TASKS) == 18 and canonical_prompt_task("CMeIE") == "CMeIE-V2"


def test_climedbench_scenarios_and_dimensions():
    assert len(CLIMEDBENCH_SCENARIOS) == 14
    assert {s.dimension for s in CLIMEDBENCH_SCENARIOS} == set(CLIMEDBENCH_DIMENSIONS)
    kinds = {s.answer for s in CLIMEDBENCH_SCENARIOS}
    assert kinds == {"letter", "order", "text", "keywords"}


@pytest.mark.parametrize("path, task, split", [
    ("CMeEE_dev.json", "CMeEE", "dev"), ("CMeEE-V2_train.json", "CMeEE-V2", "train"),
    ("CMeIE_test.json", "CMeIE", "test"), ("KUAKE-QQR_dev.json", "KUAKE-QQR", "dev"),
    ("CHIP-CDEE_dev.json", "CHIP-CDEE", "dev"), ("IMCS-V2_dev.json", "IMCS-V2-NER", "dev"),
    ("data/CHIP-CTC/example_gold.json", "CHIP-CTC", None),
    ("CMeEE_train.from_chip2020.json", "CMeEE", "train"),
])
def test_infer_task_and_split(path, task, split):
    assert infer_task(path).name == task
    assert infer_split(path) == split


def test_unknown_task_message():
    with pytest.raises(KeyError, match="known tasks"):
        get_task("CMeEE3")


def test_display_label():
    assert REGISTRY["CMeEE"].display_label("bod") == "身体部位 / body part (bod)"
    assert REGISTRY["CMeEE"].display_label("zzz") == "zzz"


# As docs/benchmarks.md describes the files (CMeIE is JSON lines despite its .json name).
OFFICIAL_CONTAINERS = {
    "array": ["CMeEE", "CMeEE-V2", "CHIP-CDN", "CHIP-CTC", "CHIP-STS", "KUAKE-QIC", "KUAKE-QTR",
              "KUAKE-QQR", "CHIP-CDEE", "MedDG", "Text2DT", "CMedCausal"],
    "lines": ["CMeIE", "CMeIE-V2", "CHIP-MDCFNPC", "PromptCBLUE", "CliMedBench"],
    "object": ["IMCS-V2-NER", "IMCS-V2-DAC", "IMCS-V2-SR", "IMCS-V2-MRG"],
    "tsv": ["KUAKE-IR"],
}


def test_official_container_of_every_task():
    declared = {t.name: t.official_container for t in TASKS}
    assert declared == {name: c for c, names in OFFICIAL_CONTAINERS.items() for name in names}


def test_unknown_container_is_refused_when_declared():
    with pytest.raises(ValueError, match="unknown container 'xml'"):
        replace(REGISTRY["CMeEE"], container="xml")
