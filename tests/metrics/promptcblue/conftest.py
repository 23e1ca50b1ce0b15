"""Fixtures for the PromptCBLUE metric tests: the reference files under ``promptcblue_dir``."""
from __future__ import annotations

from pathlib import Path

import pytest

from ._util import load_jsonl


@pytest.fixture(scope="session")
def reference_dir(promptcblue_dir: Path) -> Path:
    path = promptcblue_dir / "reference"
    if not path.is_dir():
        pytest.skip(f"no PromptCBLUE reference folder at {path}")
    return path


@pytest.fixture(scope="session")
def toy_dir(promptcblue_dir: Path) -> Path:
    path = promptcblue_dir / "toy_examples"
    if not path.is_dir():
        pytest.skip(f"no PromptCBLUE toy examples at {path}")
    return path


@pytest.fixture(scope="session")
def dev_records(reference_dir: Path) -> list[dict]:
    return load_jsonl(reference_dir / "inputs" / "dev_v2.jsonl")
