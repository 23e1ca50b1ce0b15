"""Shared fixtures: where the real benchmark files live, and the project's sample data."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = ROOT / "sample_data"


def pytest_configure(config: pytest.Config) -> None:
    """Errors that tests provoke are logged in a temporary folder, never in the project's
    ``workspace/cblue_studio.log``, where a user would later read failures that came from tests.
    Set in the environment so that the apps and commands the tests start inherit it."""
    os.environ["CBLUE_STUDIO_LOG"] = str(Path(tempfile.mkdtemp(prefix="cblue-tests-")) / "cblue_studio.log")


def shared_root() -> Path | None:
    """The read-only ``shared`` folder (real CBLUE and PromptCBLUE files), if present.

    ``CBLUE_SHARED`` overrides the default ``../shared`` beside the project.
    """
    env = os.environ.get("CBLUE_SHARED")
    path = Path(env) if env else ROOT.parent / "shared"
    return path if path.is_dir() else None


def subfolder(parent: Path, name: str) -> Path:
    """``parent/name``, or skip the test with the reason when it is absent."""
    path = parent / name
    if not path.is_dir():
        pytest.skip(f"no folder {path}")
    return path


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    path = shared_root()
    if path is None:
        pytest.skip("real benchmark files absent: set CBLUE_SHARED or place them at ../shared")
    return path


@pytest.fixture(scope="session")
def cblue_dir(shared_dir: Path) -> Path:
    return subfolder(shared_dir, "cblue")


@pytest.fixture(scope="session")
def promptcblue_dir(shared_dir: Path) -> Path:
    return subfolder(shared_dir, "promptcblue")


@pytest.fixture(scope="session")
def sample_data() -> Path:
    return SAMPLE_DATA


# The fast loop (`python -m pytest -m "not slow"`) leaves out what starts a browser, a model server
# or a Ray cluster, trains a model or scores a shipped one on a full dev set; every unit, store and
# page (AppTest) test stays in it. Tests that are slow for another reason carry the mark themselves.
SLOW_FIXTURES = frozenset({"served"})      # a real `transformers serve` (tests/models/endpoints)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        in_pages = "app_pages" in Path(str(item.path)).parts
        needs_server = not in_pages and SLOW_FIXTURES & set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("browser") or needs_server:
            item.add_marker(pytest.mark.slow)
