"""Fixtures for the PromptCBLUE metric tests: the reference files under ``promptcblue_dir``."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import subfolder

from ._util import load_jsonl


@pytest.fixture(scope="session")
def reference_dir(promptcblue_dir: Path) -> Path:
    return subfolder(promptcblue_dir, "reference")


@pytest.fixture(scope="session")
def toy_dir(promptcblue_dir: Path) -> Path:
    return subfolder(promptcblue_dir, "toy_examples")


@pytest.fixture(scope="session")
def dev_records(reference_dir: Path) -> list[dict]:
    return load_jsonl(reference_dir / "inputs" / "dev_v2.jsonl")
