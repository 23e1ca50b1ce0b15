"""JSON under the depth and file limits: deep nesting is a refusal with its line, never a
RecursionError; a FIFO is refused without being opened."""
from __future__ import annotations

import os

import pytest

from cblue_core.io.bounded_json import loads, read_json
from cblue_core.io.errors import FileRefused
from cblue_core.models.registry import read_card, read_config

DEEP = '{"name": "m", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"


def test_deep_json_is_refused_with_its_line():
    with pytest.raises(FileRefused, match="nested deeper than 64") as info:
        loads("\n" + DEEP, "x.json")
    assert info.value.defects[0].line == 2
    assert loads(b'{"a": [1, {"b": 2}]}', "x.json") == {"a": [1, {"b": 2}]}


def test_read_json_refuses_fifos_and_takes_a_bom(tmp_path):
    os.mkfifo(tmp_path / "p.json")
    with pytest.raises(FileRefused, match="not a regular file"):
        read_json(tmp_path / "p.json")
    (tmp_path / "b.json").write_bytes(b"\xef\xbb\xbf[1]")
    assert read_json(tmp_path / "b.json") == [1]


def test_model_cards_and_configs_are_read_under_the_limits(tmp_path):
    (tmp_path / "model_card.json").write_text(DEEP, encoding="utf-8")
    (tmp_path / "config.json").write_text(DEEP, encoding="utf-8")
    with pytest.raises(ValueError, match="nested deeper"):
        read_card(tmp_path)
    with pytest.raises(ValueError, match="nested deeper"):
        read_config(tmp_path)
